#pragma once
// The only place that opens files, writes output and looks at the terminal.
#include <functional>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::cli {

/// A named input: a file, or standard input for "" and "-" (named "<stdin>").
struct Input {
  std::unique_ptr<std::istream> owned;
  std::istream* stream = nullptr;
  std::string name;
  std::istream& in() { return *stream; }
};

/// Called first thing: puts /dev/null in place of a closed standard input, output or error, so that
/// no file opened later takes its number (and is read as the input or written with the messages).
/// Reading a closed standard input (open_input) and writing a closed standard output stay errors.
void hold_closed_standard_streams();

/// Keeps the command line, so that an Output refuses a file the command also reads.
void note_arguments(int argc, char** argv);

/// Throws InputError when two of `paths` are standard input ("-"; `query` also when empty): the
/// second would read what the first left, nothing, or the first would read the second's text.
void one_standard_input(const std::string& query, const std::vector<std::string>& paths);

/// Opens `path` for reading; throws InputError naming it when it cannot be read (also standard
/// input when it was closed, or was opened before).
Input open_input(const std::string& path);

/// Reads a whole input into memory (run-under --query, which searches it for one rule).
std::string read_all(Input& input);

/// Where a command's output goes: standard output ("" or "-"), or a file that appears whole
/// or not at all. A file is written to a new temporary file (O_EXCL, an unpredictable name)
/// in the target's directory, fsync'ed, and renamed over the target only by commit(); the
/// target must be a regular file or absent (a directory, device, FIFO or symbolic link is
/// refused). Without commit() — an error, an exception, SIGINT or SIGTERM — the temporary
/// file is removed. Every write is checked: a full disk or a closed pipe is an InputError
/// (exit 2) naming the output, never a truncated output and exit 0.
class Output {
 public:
  /// A file the command line also names as an input is refused (exit 2) unless
  /// `may_be_an_input`, for a command that rewrites what it read (a rolling history).
  explicit Output(const std::string& path, bool may_be_an_input = false);
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output();

  /// Buffered; hands full buffers to the file or standard output.
  void write(std::string_view text);
  /// A function that writes to this output, for the library's streaming writers.
  std::function<void(std::string_view)> sink();
  /// Flushes; for a file, fsyncs and renames it over the target.
  void commit();
  /// The output's name in messages: the path, or "<stdout>".
  const std::string& name() const { return name_; }

 private:
  void drain();
  void write_all(std::string_view text);
  [[noreturn]] void fail(const std::string& what);

  std::string name_;
  std::string target_;     ///< empty for standard output
  std::string temporary_;  ///< the file being written; empty once renamed or removed
  int fd_ = -1;
  int slot_ = -1;  ///< where the signal handler finds temporary_
  std::string buffer_;
};

/// Several files of one folder that appear together or not at all: an export's scripts and
/// manifests. Each is written to a staging folder made inside `directory` (`.gpuplan-XXXXXX`, an
/// unpredictable name); commit() syncs them to disk (one syncfs for all, not an fsync each), checks
/// that every target is a regular file or absent
/// and only then renames them all into place, with SIGINT, SIGTERM and SIGHUP held back meanwhile.
/// Without commit() (an error, an exception, one of those signals), or when a write, the check or
/// a rename fails, the folder is left as it was: the staged files go, a file already renamed over
/// an earlier one gets the earlier one back (kept by a hard link), and a new one is removed. Every
/// failure is an InputError (exit 2) naming the file.
class FolderOutput {
 public:
  /// Makes `directory` and the folders above it that are missing, which go again (when empty)
  /// unless the files are committed.
  explicit FolderOutput(const std::string& directory);
  FolderOutput(const FolderOutput&) = delete;
  FolderOutput& operator=(const FolderOutput&) = delete;
  ~FolderOutput();

  /// Stages `content` as the folder's file `name`; `executable` adds the execute bits. Returns the
  /// staged file's path, for what is made by reading it back (a plan's index).
  std::string write(const std::string& name, std::string_view content, bool executable = false);
  /// The same for content handed over in pieces: `fill` calls `put` with each, in order, so that
  /// a large file (a plan's copy) need not be held whole. What `fill` throws leaves the folder
  /// unchanged, as any other failure does.
  std::string write(const std::string& name,
                    const std::function<void(const std::function<void(std::string_view)>& put)>& fill,
                    bool executable = false);
  /// Renames every staged file into place.
  void commit();

 private:
  struct Staged {
    std::string target;
    std::string staged;
    bool existed = false;    ///< an earlier file is replaced
    bool backed_up = false;  ///< ...and kept as staged + ".old" until the commit is done
  };
  /// Throws when the file's target is there and no regular file; notes whether it is there.
  void check_target(Staged& file);
  [[noreturn]] void fail(const std::string& path, int error);
  void put_back(std::size_t renamed);
  void remove_staging();
  void abandon();

  std::vector<std::string> made_;  ///< the folders made for it, the innermost first
  std::string staging_;            ///< empty once removed
  std::vector<Staged> files_;
  int slot_ = -1;  ///< where the signal handler finds staging_ and how many files it holds
};

/// Writes `content` whole to `path` (see Output): standard output for "" or "-".
void write_output(const std::string& path, std::string_view content);

/// Throws InputError now when an Output to `path` could not be made (no such folder, not
/// writable, a directory), leaving `path` as it was: an output written only at the end of a
/// long run is found bad before the run starts.
void check_writable(const std::string& path);

/// Removes the temporary files of every Output and FolderOutput not yet committed, as the stop
/// signals' handler does: for an end that runs no destructor (std::terminate).
void remove_temporary_files();

/// Flushes std::cout and stdout and checks that everything written to them arrived;
/// throws InputError naming <stdout> when not. main calls it before exiting 0.
void check_standard_output();

struct Terminal {
  static constexpr int min_width = 40, max_width = 1000;
  int width = 80;      ///< COLUMNS, else the terminal's width, else 80; held to min_width..max_width
  bool color = false;  ///< a terminal, NO_COLOR unset, TERM not "dumb"
};
Terminal terminal_for(int fd);

}  // namespace gpuplan::cli
