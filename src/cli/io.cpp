#include "cli/io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "cli/progress.hpp"
#include "core/utf8.hpp"
#include "gpuplan/error.hpp"

namespace gpuplan::cli {

namespace {
bool standard_input_closed = false;
bool standard_output_closed = false;

/// Why standard output cannot be written: a closed one (`>&-`) said as such, not as EBADF.
std::string stdout_problem(int error) {
  return standard_output_closed ? "standard output is closed"
         : error != 0           ? std::strerror(error)
                                : "output error";
}
bool standard_input_taken = false;
std::vector<std::string> arguments;  ///< the command line's, for Output's check against its inputs
}  // namespace

void note_arguments(int argc, char** argv) { arguments.assign(argv + 1, argv + argc); }

void hold_closed_standard_streams() {
  // Each closed one gets /dev/null, opened at its number (open takes the lowest free one), so that
  // no file opened later takes it: with standard error closed (`2>&-`), `history summarize -o`'s
  // output file took number 2 and its warnings were written into the JSON.
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) >= 0) continue;
    // Standard input read as empty had given an empty plan with exit 0: reading it is an error.
    // Standard output opened for reading only: a write fails (EBADF) as on the closed one, and is
    // reported (exit 2). Standard error: the messages go nowhere; the exit status still tells.
    if (fd == STDIN_FILENO) standard_input_closed = true;
    if (fd == STDOUT_FILENO) standard_output_closed = true;
    // O_CLOEXEC: the processes exec and run-under start find it closed, as it was given.
    const int opened = ::open("/dev/null", (fd == STDERR_FILENO ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (opened >= 0 && opened != fd) ::close(opened);
  }
}

void one_standard_input(const std::string& query, const std::vector<std::string>& paths) {
  auto dashes = std::count(paths.begin(), paths.end(), "-") + (query.empty() || query == "-" ? 1 : 0);
  if (dashes > 1)
    throw InputError(Position{"<stdin>"},
                     "standard input is given for two inputs; give files for all but one");
}

Input open_input(const std::string& path) {
  Input input;
  if (path.empty() || path == "-") {
    input.name = "<stdin>";
    if (standard_input_closed)
      throw InputError(Position{input.name},
                       "cannot read: standard input is closed (give a file, or pipe into it)");
    // `plan - --fleet -` read the fleet from what was left of the query: nothing.
    if (standard_input_taken)
      throw InputError(Position{input.name},
                       "standard input is given for two inputs; give files for all but one");
    standard_input_taken = true;
    input.stream = &std::cin;
    return input;
  }
  input.name = escape_invalid_utf8(path);  // the name goes into messages and JSON, which need UTF-8
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(Position{input.name}, "is a directory, not a file");
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) throw InputError(Position{input.name}, fmt::format("cannot read: {}", std::strerror(errno)));
  input.stream = file.get();
  input.owned = std::move(file);
  return input;
}

std::string read_all(Input& input) {
  // A file says how much is left: the text is then allocated once and read straight into it. A
  // string grown a byte at a time held the old and the doubled buffer at once (1.5 GB for the
  // 750 MB plan of 1M units). A pipe, or a file that grew meanwhile, is read on in chunks.
  std::streambuf& in = *input.in().rdbuf();
  std::string text;
  auto here = in.pubseekoff(0, std::ios::cur, std::ios::in);
  auto end = here < 0 ? here : in.pubseekoff(0, std::ios::end, std::ios::in);
  if (end > here && in.pubseekpos(here, std::ios::in) == here) {
    text.resize(static_cast<std::size_t>(end - here));
    text.resize(static_cast<std::size_t>(in.sgetn(text.data(), static_cast<std::streamsize>(text.size()))));
  }
  std::string chunk(std::size_t{1} << 20, '\0');  // not in `text`: a full one would double it
  for (std::streamsize got; (got = in.sgetn(chunk.data(), static_cast<std::streamsize>(chunk.size()))) > 0;)
    text.append(chunk.data(), static_cast<std::size_t>(got));
  return text;
}

namespace {

constexpr std::size_t write_chunk = std::size_t{64} * 1024;

/// Makes a rename into `path`'s directory survive a power loss: the file's data was synced before
/// the rename, but the directory entry that names it is only on disk once the directory is (ext4
/// and XFS may otherwise come back from a crash with the old file or none, though the command said
/// it was written). A directory this process may not read (mode 0333), or a file system that
/// cannot sync one (EINVAL), is passed over; a failed sync (EIO) is the output's error, `name` in
/// the message.
void sync_directory_of(const std::string& path, const std::string& name) {
  auto directory = std::filesystem::path(path).parent_path();
  if (directory.empty()) directory = ".";
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  int error = ::fsync(fd) != 0 ? errno : 0;
  ::close(fd);
  if (error != 0 && error != EINVAL)
    throw InputError(Position{name},
                     fmt::format("written, but its directory {} could not be synced to disk: {}",
                                 directory.string(), std::strerror(error)));
}

// The temporary files being written, for the handler of the signals that end a run (Ctrl-C,
// kill, a closed terminal or ssh session): plain arrays, since a handler may only call
// async-signal-safe functions (unlink, rmdir, strlen, sigaction, raise).
constexpr int temporary_slots = 8;
constexpr std::size_t staged_name_room = 24;  ///< "/" and a staged file's number after a folder's path
char temporary_paths[temporary_slots][4096];
volatile std::sig_atomic_t temporary_used[temporary_slots];
/// -1: the slot's path is a file. Else a FolderOutput's staging folder holding the files named 0,
/// 1, ... up to this count less one (some perhaps not made yet).
volatile std::sig_atomic_t temporary_files[temporary_slots];
constexpr std::array<int, 3> stop_signals{SIGINT, SIGTERM, SIGHUP};
std::array<struct sigaction, stop_signals.size()> previous_stop{};
struct sigaction previous_file_size {};
int handlers_installed = 0;

void remove_temporary(int slot) {
  if (temporary_files[slot] < 0) {
    ::unlink(temporary_paths[slot]);
    return;
  }
  char path[sizeof temporary_paths[0] + staged_name_room];
  const std::size_t length = std::strlen(temporary_paths[slot]);
  std::memcpy(path, temporary_paths[slot], length);
  path[length] = '/';
  for (std::sig_atomic_t n = 0; n < temporary_files[slot]; ++n) {
    char digits[staged_name_room];
    std::size_t count = 0;
    for (auto rest = n; count == 0 || rest > 0; rest /= 10)
      digits[count++] = static_cast<char>('0' + rest % 10);
    std::size_t at = length + 1;
    while (count > 0) path[at++] = digits[--count];
    path[at] = '\0';
    ::unlink(path);
  }
  ::rmdir(temporary_paths[slot]);
}

extern "C" void remove_temporaries(int signal) {
  for (int i = 0; i < temporary_slots; ++i)
    if (temporary_used[i]) remove_temporary(i);
  // Then whatever was there before: by default the signal ends the process.
  for (std::size_t i = 0; i < stop_signals.size(); ++i)
    if (stop_signals[i] == signal) ::sigaction(signal, &previous_stop[i], nullptr);
  ::raise(signal);
}

}  // namespace

void remove_temporary_files() {
  for (int i = 0; i < temporary_slots; ++i)
    if (temporary_used[i]) remove_temporary(i);
}

namespace {

/// `folder`: the path is a FolderOutput's staging folder, its files not made yet.
int register_temporary(const std::string& path, bool folder = false) {
  if (path.size() + staged_name_room >= sizeof temporary_paths[0]) return -1;
  for (int i = 0; i < temporary_slots; ++i) {
    if (temporary_used[i]) continue;
    std::memcpy(temporary_paths[i], path.c_str(), path.size() + 1);
    temporary_files[i] = folder ? 0 : -1;
    temporary_used[i] = 1;
    if (handlers_installed++ == 0) {
      struct sigaction action {};
      action.sa_handler = remove_temporaries;
      sigemptyset(&action.sa_mask);
      for (std::size_t s = 0; s < stop_signals.size(); ++s) {
        ::sigaction(stop_signals[s], nullptr, &previous_stop[s]);
        // A signal ignored from the start (nohup, a background job's SIGINT) stays ignored.
        if (previous_stop[s].sa_handler != SIG_IGN) ::sigaction(stop_signals[s], &action, nullptr);
      }
      // Past a file size limit (ulimit -f) a write fails with EFBIG, reported and cleaned up,
      // instead of SIGXFSZ ending the process with the temporary file left behind.
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      ::sigaction(SIGXFSZ, &ignore, &previous_file_size);
    }
    return i;
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot < 0) return;
  temporary_used[slot] = 0;
  if (--handlers_installed == 0) {
    for (std::size_t s = 0; s < stop_signals.size(); ++s)
      ::sigaction(stop_signals[s], &previous_stop[s], nullptr);
    ::sigaction(SIGXFSZ, &previous_file_size, nullptr);
  }
}

/// Why a path that exists cannot be replaced by an output file; empty for a regular file.
/// The argument of the command line, or "standard input", that names the same file as `target`
/// (`status` its lstat) besides the output option's own value; empty when none does. The output
/// replaces its file only at the end, after the inputs were read: the input was lost, exit 0.
std::string also_an_input(const struct stat& status) {
  auto same = [&](const struct stat& other) {
    return other.st_dev == status.st_dev && other.st_ino == status.st_ino;
  };
  struct stat other {};
  int seen = 0;
  std::string named;
  for (std::string_view argument : arguments) {
    if (argument.starts_with("--") && argument.find('=') != std::string_view::npos)
      argument.remove_prefix(argument.find('=') + 1);  // --fleet=f.yaml
    else if (argument.size() > 2 && argument[0] == '-' && argument[1] != '-' &&
             ::access(argument.data(), F_OK) != 0)
      argument.remove_prefix(2);  // -oplan.json
    if (::stat(std::string(argument).c_str(), &other) == 0 && same(other) && ++seen == 2) named = argument;
  }
  if (!named.empty()) return named;
  if (seen == 1 && ::fstat(STDIN_FILENO, &other) == 0 && S_ISREG(other.st_mode) && same(other))
    return "standard input";
  return {};
}

std::string not_regular(const struct stat& status) {
  if (S_ISREG(status.st_mode)) return "";
  if (S_ISDIR(status.st_mode)) return "is a directory";
  if (S_ISLNK(status.st_mode)) return "is a symbolic link (name the file it points to)";
  if (S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode)) return "is a device";
  if (S_ISFIFO(status.st_mode)) return "is a FIFO";
  return "is not a regular file";
}

/// Writes all of `text` to `fd`: 0, or the error that stopped it.
int write_fully(int fd, std::string_view text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    done += static_cast<std::size_t>(n);
    progress::wrote(n);
  }
  return 0;
}

/// The permissions a new file gets: those of the file at `path` it replaces, else 0666 less the
/// umask.
mode_t new_file_mode(const std::string& path) {
  if (struct stat status{}; ::lstat(path.c_str(), &status) == 0) return status.st_mode & 07777;
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

/// The stop signals wait while this lives.
class HeldSignals {
 public:
  HeldSignals() {
    sigset_t stops;
    sigemptyset(&stops);
    for (int signal : stop_signals) sigaddset(&stops, signal);
    ::pthread_sigmask(SIG_BLOCK, &stops, &previous_);
  }
  HeldSignals(const HeldSignals&) = delete;
  HeldSignals& operator=(const HeldSignals&) = delete;
  ~HeldSignals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

 private:
  sigset_t previous_;
};

}  // namespace

Output::Output(const std::string& path, bool may_be_an_input) {
  if (path.empty() || path == "-") {
    name_ = "<stdout>";
    if (::isatty(STDOUT_FILENO)) progress::finish();  // the output and the line would mix
    std::cout.flush();
    std::fflush(stdout);
    fd_ = STDOUT_FILENO;
    return;
  }
  name_ = path;
  target_ = path;
  struct stat status {};
  if (::lstat(path.c_str(), &status) == 0) {
    if (auto why = not_regular(status); !why.empty())
      throw InputError(Position{path},
                       fmt::format("cannot write: {}; gpuplan writes only regular files", why));
    if (auto input = may_be_an_input ? std::string() : also_an_input(status); !input.empty())
      throw InputError(Position{path},
                       fmt::format("cannot write: it is also an input of this command ({}), which writing "
                                   "would replace; write the output elsewhere",
                                   input));
  } else if (errno != ENOENT) {
    throw InputError(Position{path}, fmt::format("cannot write: {}", std::strerror(errno)));
  }
  std::filesystem::path target(path);
  std::filesystem::path directory = target.parent_path();
  std::string pattern = (directory.empty() ? std::string() : directory.string() + "/") + "." +
                        target.filename().string() + ".gpuplan-XXXXXX";
  // The stop signals wait while the file is made and registered: one arriving in between would
  // end the process before its handler knew the file, and leave it behind.
  int made = 0;
  {
    HeldSignals held;
    fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);  // O_CREAT | O_EXCL: never an existing file or link
    made = errno;
    if (fd_ >= 0) {
      temporary_ = pattern;
      slot_ = register_temporary(temporary_);
    }
  }
  if (fd_ < 0) throw InputError(Position{path}, fmt::format("cannot write: {}", std::strerror(made)));
  // The permissions a new file would get (or the replaced file's), not mkstemp's 0600.
  mode_t mask = ::umask(0);
  ::umask(mask);
  mode_t mode = (status.st_mode != 0 ? status.st_mode : 0666 & ~mask) & 07777;
  if (::fchmod(fd_, mode) != 0) fail(fmt::format("cannot write: {}", std::strerror(errno)));
  buffer_.reserve(write_chunk);
}

Output::~Output() {
  if (temporary_.empty()) return;
  ::close(fd_);
  ::unlink(temporary_.c_str());
  unregister_temporary(slot_);
}

void Output::fail(const std::string& what) {
  buffer_.clear();
  if (!temporary_.empty()) {
    ::close(fd_);
    ::unlink(temporary_.c_str());
    unregister_temporary(slot_);
    temporary_.clear();
  }
  throw InputError(Position{name_}, what);
}

void Output::write(std::string_view text) {
  if (buffer_.size() + text.size() > write_chunk) drain();
  if (text.size() >= write_chunk) return write_all(text);
  buffer_ += text;
}

std::function<void(std::string_view)> Output::sink() {
  return [this](std::string_view text) { write(text); };
}

void Output::drain() {
  write_all(buffer_);
  buffer_.clear();
}

void Output::write_all(std::string_view text) {
  if (int error = write_fully(fd_, text); error != 0)
    fail(fmt::format("cannot write: {}", target_.empty() ? stdout_problem(error) : std::strerror(error)));
}

void Output::commit() {
  drain();
  if (temporary_.empty()) return;
  if (::fsync(fd_) != 0) fail(fmt::format("cannot write: {}", std::strerror(errno)));
  int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail(fmt::format("cannot write: {}", std::strerror(errno)));
  // The target may have changed while the output was written: still never over a non-file.
  if (struct stat status{}; ::lstat(target_.c_str(), &status) == 0) {
    if (auto why = not_regular(status); !why.empty())
      fail(fmt::format("cannot write: {}; gpuplan writes only regular files", why));
  }
  if (::rename(temporary_.c_str(), target_.c_str()) != 0)
    fail(fmt::format("cannot write: {}", std::strerror(errno)));
  temporary_.clear();
  unregister_temporary(slot_);
  sync_directory_of(target_, name_);
}

FolderOutput::FolderOutput(const std::string& directory) {
  namespace fs = std::filesystem;
  fs::path folder = fs::path(directory).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();  // "out/"
  std::error_code ec;
  for (fs::path missing = folder; !missing.empty(); missing = missing.parent_path()) {
    auto status = fs::symlink_status(missing, ec);  // a name not there is ENOENT in `ec`
    if (fs::exists(status) || (ec && ec != std::errc::no_such_file_or_directory)) break;
    made_.push_back(missing.string());
    if (missing == missing.parent_path()) break;
  }
  fs::create_directories(folder, ec);
  if (ec) {
    abandon();
    throw InputError(Position{directory},
                     fmt::format("cannot create the output directory: {}", ec.message()));
  }
  std::string pattern = (folder / ".gpuplan-XXXXXX").string();
  // As for Output: a signal between making the folder and registering it would leave it behind.
  HeldSignals held;
  if (::mkdtemp(pattern.data()) == nullptr) {
    const int error = errno;
    abandon();
    throw InputError(Position{directory}, fmt::format("cannot write: {}", std::strerror(error)));
  }
  staging_ = pattern;
  slot_ = register_temporary(staging_, true);
}

FolderOutput::~FolderOutput() { abandon(); }

void FolderOutput::abandon() {
  remove_staging();
  for (const auto& folder : made_) ::rmdir(folder.c_str());  // only when still empty
  made_.clear();
}

void FolderOutput::remove_staging() {
  if (staging_.empty()) return;
  for (const auto& file : files_) {
    ::unlink(file.staged.c_str());
    if (file.backed_up) ::unlink((file.staged + ".old").c_str());
  }
  ::rmdir(staging_.c_str());
  staging_.clear();
  unregister_temporary(slot_);
}

void FolderOutput::check_target(Staged& file) {
  struct stat status {};
  file.existed = ::lstat(file.target.c_str(), &status) == 0;
  if (!file.existed) return;
  if (auto why = not_regular(status); !why.empty()) {
    abandon();
    throw InputError(Position{file.target},
                     fmt::format("cannot write: {}; gpuplan writes only regular files", why));
  }
}

void FolderOutput::fail(const std::string& path, int error) {
  abandon();
  throw InputError(Position{path}, fmt::format("cannot write: {}", std::strerror(error)));
}

std::string FolderOutput::write(const std::string& name, std::string_view content, bool executable) {
  return write(
      name, [&](const std::function<void(std::string_view)>& put) { put(content); }, executable);
}

std::string FolderOutput::write(
    const std::string& name,
    const std::function<void(const std::function<void(std::string_view)>& put)>& fill, bool executable) {
  Staged file;
  file.target = (std::filesystem::path(staging_).parent_path() / name).string();
  file.staged = fmt::format("{}/{}", staging_, files_.size());
  check_target(file);  // now, not after writing them all
  files_.push_back(file);
  if (slot_ >= 0) temporary_files[slot_] = static_cast<std::sig_atomic_t>(files_.size());  // before it exists
  mode_t mode = new_file_mode(file.target) | (executable ? 0111 : 0);
  int fd = ::open(file.staged.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) fail(file.target, errno);
  int error = ::fchmod(fd, mode) != 0 ? errno : 0;
  if (error == 0) {
    try {  // a full disk stops `fill` at once
      fill([&](std::string_view piece) {
        if (int failed = write_fully(fd, piece); failed != 0) fail(file.target, failed);
      });
    } catch (...) {
      ::close(fd);
      abandon();
      throw;
    }
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) fail(file.target, error);
  return file.staged;
}

void FolderOutput::commit() {
  // The staged files reach the disk before any is renamed into place: one syncfs for them all.
  // An fsync a file took 38 s of wall time for an export of 10,000 files on ext4 (a journal commit
  // each), against 1 s for the same files with one syncfs.
  if (int fd = ::open(staging_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd < 0 || ::syncfs(fd) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    fail(std::filesystem::path(staging_).parent_path().string(), error);
  } else {
    ::close(fd);
  }
  HeldSignals held;  // else one arriving among the renames would leave some of the files, not all
  for (auto& file : files_) check_target(file);  // again: the folder may have changed meanwhile
  for (std::size_t i = 0; i < files_.size(); ++i) {
    auto& file = files_[i];
    // A folder that takes no hard links leaves the earlier file unkept: put back as far as possible.
    if (file.existed) file.backed_up = ::link(file.target.c_str(), (file.staged + ".old").c_str()) == 0;
    if (::rename(file.staged.c_str(), file.target.c_str()) != 0) {
      int error = errno;
      put_back(i);
      fail(file.target, error);
    }
  }
  const auto made = std::move(made_);  // kept now, whatever the syncs below say
  made_.clear();
  remove_staging();
  if (!files_.empty()) sync_directory_of(files_.front().target, files_.front().target);
  for (const auto& folder : made) sync_directory_of(folder, folder);  // new entries in their parents
}

void FolderOutput::put_back(std::size_t renamed) {
  for (std::size_t i = 0; i < renamed; ++i) {
    auto& file = files_[i];
    if (file.backed_up && ::rename((file.staged + ".old").c_str(), file.target.c_str()) == 0)
      file.backed_up = false;
    else if (!file.existed)
      ::unlink(file.target.c_str());
  }
}

void write_output(const std::string& path, std::string_view content) {
  Output output(path);
  output.write(content);
  output.commit();
}

void check_writable(const std::string& path) {
  if (path.empty() || path == "-") return;
  Output probe(path);  // made and removed again, uncommitted
}

void check_standard_output() {
  std::cout.flush();
  errno = 0;
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
    throw InputError(Position{"<stdout>"}, fmt::format("cannot write: {}", stdout_problem(errno)));
}

Terminal terminal_for(int fd) {
  Terminal terminal;
  bool tty = ::isatty(fd) != 0;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  terminal.color = tty && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
  // strtol, held to int: atoi wrapped a value past INT_MAX (COLUMNS=4294967376 drew 80 columns,
  // COLUMNS=2147483648 was read as negative and ignored) where the range's top is meant.
  const char* columns = std::getenv("COLUMNS");
  if (const long wanted = columns ? std::strtol(columns, nullptr, 10) : 0; wanted > 0) {
    terminal.width = static_cast<int>(std::min<long>(wanted, Terminal::max_width));
  } else if (winsize size{}; tty && ::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    terminal.width = size.ws_col;
  }
  // The range --width takes: COLUMNS=2147483647 had drawn lanes of two billion columns.
  terminal.width = std::clamp(terminal.width, Terminal::min_width, Terminal::max_width);
  return terminal;
}

}  // namespace gpuplan::cli
