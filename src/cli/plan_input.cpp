#include "cli/plan_input.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli/io.hpp"
#include "gpuplan/error.hpp"

namespace gpuplan::cli {

namespace {

/// An open file, closed when it goes.
struct Fd {
  int fd = -1;
  explicit Fd(int value) : fd(value) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string read_at(int fd, std::uint64_t offset, std::size_t length) {
  std::string bytes(length, '\0');
  std::size_t done = 0;
  while (done < length) {
    ssize_t got = ::pread(fd, bytes.data() + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  return bytes;
}

/// The identity of an open plan file: size and modification time from fstat, the fingerprint
/// from its ends.
std::optional<PlanFileIdentity> identity_of(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  PlanFileIdentity id;
  id.size = static_cast<std::uint64_t>(info.st_size);
  id.mtime_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  std::size_t span = static_cast<std::size_t>(std::min<std::uint64_t>(fingerprint_span, id.size));
  id.fingerprint = plan_fingerprint(read_at(fd, 0, span), read_at(fd, id.size - span, span));
  return id;
}

}  // namespace

Plan read_plan(const std::string& path) {
  auto input = open_input(path);
  return parse_plan(input.in(), input.name);
}

std::string plan_index_path(const std::string& path) { return path + ".index"; }

void write_plan_index(const std::string& path, const Plan& plan, const PlanRecords& records) {
  try {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    auto identity = fd.fd < 0 ? std::nullopt : identity_of(fd.fd);
    if (!identity)
      throw InputError(Position{path}, fmt::format("cannot read it back: {}", std::strerror(errno)));
    Output index(plan_index_path(path));
    index.write(make_plan_index(plan, records, *identity));
    index.commit();
  } catch (const std::exception& e) {
    std::cerr << fmt::format(
        "gpuplan: warning: no index written next to the plan ({}); run-under reads the whole plan instead\n",
        e.what());
  }
}

Plan read_plan_for_launch(const std::string& path, std::string_view node, std::string_view label) {
  if (path.empty() || path == "-") return read_plan(path);
  Fd plan_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (plan_fd.fd < 0) return read_plan(path);  // its message
  auto identity = identity_of(plan_fd.fd);
  if (!identity) return read_plan(path);
  Fd index_fd(::open(plan_index_path(path).c_str(), O_RDONLY | O_CLOEXEC));
  if (index_fd.fd >= 0) {
    auto slice = plan_slice([&](std::uint64_t at, std::size_t n) { return read_at(index_fd.fd, at, n); },
                            [&](std::uint64_t at, std::size_t n) { return read_at(plan_fd.fd, at, n); },
                            *identity, node, label, path);
    if (slice) return std::move(*slice);
  }
  // The whole plan, from the very file the identity describes, and its index for the next launches.
  std::string text = read_at(plan_fd.fd, 0, identity->size);
  Plan plan = parse_plan(text, path);
  if (text.size() == identity->size) {
    try {
      PlanRecordScanner scanner;
      scanner.feed(text);
      Output index(plan_index_path(path));
      index.write(make_plan_index(plan, scanner.records(), *identity));
      index.commit();
    } catch (const std::exception&) {  // a read-only folder: the next launch reads the whole plan too
    }
  }
  return plan;
}

}  // namespace gpuplan::cli
