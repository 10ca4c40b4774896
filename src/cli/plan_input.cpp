#include "cli/plan_input.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>
#include <streambuf>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cli/io.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/json_value_error.hpp"
#include "gpuplan/run.hpp"
#include "run/os.hpp"
#include "util/json_locate.hpp"
#include "util/text.hpp"

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

/// The first `size` bytes of an open plan file as a stream, each piece read also shown to the
/// index's record scanner: the plan is parsed and its index made in one pass, the text never
/// whole (at 150k units a launch without an index held 195 MiB, 91 MiB now).
class ScanningReader : public std::streambuf {
 public:
  ScanningReader(int fd, std::uint64_t size, PlanRecordScanner& scanner, bool indexing = true)
      : fd_(fd), size_(size), scanner_(scanner), indexing_(indexing) {}
  std::uint64_t bytes_read() const { return offset_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size(), size_ - offset_));
    ssize_t got = 0;
    if (wanted == 0) return traits_type::eof();
    do got = ::pread(fd_, buffer_.data(), wanted, static_cast<off_t>(offset_));
    while (got < 0 && errno == EINTR);
    if (got <= 0) return traits_type::eof();  // an error reads as a plan cut short
    auto size = static_cast<std::size_t>(got);
    if (indexing_) scanner_.feed(std::string_view(buffer_.data(), size));
    offset_ += size;
    setg(buffer_.data(), buffer_.data(), buffer_.data() + size);
    return traits_type::to_int_type(*gptr());
  }
  /// To the start again, where parse_plan reads a plan with a wrong field once more for its
  /// line; the index is not made of that.
  pos_type seekpos(pos_type at, std::ios_base::openmode) override {
    if (at != pos_type(0)) return pos_type(off_type(-1));
    indexing_ = false;
    offset_ = 0;
    setg(nullptr, nullptr, nullptr);
    return at;
  }

 private:
  int fd_;
  std::uint64_t size_;
  PlanRecordScanner& scanner_;
  bool indexing_;
  std::uint64_t offset_ = 0;
  std::array<char, std::size_t{64} << 10> buffer_;
};

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

void order_as_written(Plan& plan, const Fleet* fleet) {
  auto& units = plan.assignments;
  std::unordered_map<std::string_view, std::size_t> node_rank;
  if (fleet)
    for (const auto& node : fleet->nodes) node_rank.try_emplace(node.name, node_rank.size());
  std::vector<std::size_t> rank(units.size());  // each unit's node's, looked up once
  for (std::size_t i = 0; i < units.size(); ++i)
    rank[i] = node_rank.try_emplace(units[i].node.str(), node_rank.size()).first->second;
  auto before = [&](std::size_t x, std::size_t y) {
    const Assignment& a = units[x];
    const Assignment& b = units[y];
    int ga = a.gpus.empty() ? -1 : a.gpus.front(), gb = b.gpus.empty() ? -1 : b.gpus.front();
    return std::tie(rank[x], a.start_s, ga, a.unit.id) < std::tie(rank[y], b.start_s, gb, b.unit.id);
  };
  std::vector<std::size_t> order(units.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (std::is_sorted(order.begin(), order.end(), before)) return;  // as gpuplan wrote it
  std::stable_sort(order.begin(), order.end(), before);
  std::vector<Assignment> sorted;
  sorted.reserve(units.size());
  for (std::size_t i : order) sorted.push_back(std::move(units[i]));
  units = std::move(sorted);
}

Plan read_plan(const std::string& path) {
  auto input = open_input(path);
  return parse_plan(input.in(), input.name);
}

std::string plan_index_path(const std::string& path) { return path + ".index"; }

namespace {

void warn_no_index(const std::exception& e) {
  std::cerr << fmt::format(
      "gpuplan: warning: no index written next to the plan ({}); run-under reads the whole plan instead\n",
      e.what());
}

std::string index_text(const std::string& path, const Plan& plan, const PlanRecords& records) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto identity = fd.fd < 0 ? std::nullopt : identity_of(fd.fd);
  if (!identity)
    throw InputError(Position{path}, fmt::format("cannot read it back: {}", std::strerror(errno)));
  return make_plan_index(plan, records, *identity);
}

}  // namespace

void write_plan_index(const std::string& path, const Plan& plan, const PlanRecords& records) {
  try {
    Output index(plan_index_path(path));
    index.write(index_text(path, plan, records));
    index.commit();
  } catch (const std::exception& e) {
    warn_no_index(e);
  }
}

std::optional<std::string> plan_index_text(const std::string& path, const Plan& plan,
                                           const PlanRecords& records) {
  try {
    return index_text(path, plan, records);
  } catch (const std::exception& e) {
    warn_no_index(e);
    return std::nullopt;
  }
}

std::string spare_index_path(const std::string& path, const std::string& dir) {
  std::error_code error;
  auto absolute = std::filesystem::absolute(path, error).lexically_normal().string();
  // The same plan path, the same file.
  return fmt::format("{}/plan-{:016x}.index", dir, util::fnv1a(error ? path : absolute));
}

namespace {

/// The index files a launch looks in, in turn.
std::vector<std::string> index_paths(const std::string& path, const std::string& spare_dir) {
  std::vector<std::string> paths{plan_index_path(path)};
  // Only a folder of this user's that not every user writes: an index there says which records to read.
  struct stat info {};
  if (!spare_dir.empty() && ::stat(spare_dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
      info.st_uid == ::geteuid() && (info.st_mode & S_IWOTH) == 0)
    paths.push_back(spare_index_path(path, spare_dir));
  return paths;
}

}  // namespace

namespace {

/// The whole plan, from the very file `identity` describes, and its index for the next launches,
/// in the first of index_paths that takes it; none when `keep_valid` and one there is of this file.
Plan read_indexing(int fd, const PlanFileIdentity& identity, const std::string& path,
                   const std::string& spare_dir, bool keep_valid) {
  PlanRecordScanner scanner;
  ScanningReader reader(fd, identity.size, scanner);
  std::istream text(&reader);
  Plan plan = parse_plan(text, path);
  if (reader.bytes_read() != identity.size) return plan;
  const auto paths = index_paths(path, spare_dir);
  for (const auto& index_path : paths) {
    if (!keep_valid) break;
    auto index = os::open_regular(index_path, O_RDONLY);  // never waits on a FIFO there
    Fd index_fd(index ? *index : -1);
    if (index_fd.fd >= 0 &&
        index_describes([&](std::uint64_t at, std::size_t n) { return read_at(index_fd.fd, at, n); },
                        identity))
      return plan;
  }
  // A plan on a read-only share, or copied without its index: the index goes to the spare place.
  for (const auto& index_path : paths) {
    try {
      Output index(index_path);
      index.write(make_plan_index(plan, scanner.records(), identity));
      index.commit();
      break;
    } catch (const std::exception&) {  // no place takes it: the next launch reads the whole plan too
    }
  }
  return plan;
}

}  // namespace

Plan read_plan_indexed(const std::string& path, const std::string& spare_dir) {
  if (path.empty() || path == "-") return read_plan(path);
  Fd plan_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (plan_fd.fd < 0) return read_plan(path);  // its message
  auto identity = identity_of(plan_fd.fd);
  if (!identity) return read_plan(path);
  return read_indexing(plan_fd.fd, *identity, path, spare_dir, true);
}

namespace {

/// "4213 bytes, ends 0123456789abcdef"; empty for standard input and what cannot be read (whose
/// reading says why).
std::string plan_file_stamp(const std::string& path) {
  if (path.empty() || path == "-") return {};
  Fd plan_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto identity = plan_fd.fd < 0 ? std::nullopt : identity_of(plan_fd.fd);
  return identity ? fmt::format("{} bytes, ends {:016x}", identity->size, identity->fingerprint)
                  : std::string();
}

}  // namespace

void belong_to_plan(os::Claims& claims, const std::string& path, double lease_s, std::string_view command) {
  auto stamp = plan_file_stamp(path);
  if (stamp.empty()) {
    std::cerr << fmt::format(
        "gpuplan {}: warning: the plan is not a file ({}): the claims directory cannot "
        "tell whether its claims are this plan's, nor give this node its first node's "
        "lease; name the plan file\n",
        command, path.empty() || path == "-" ? "standard input" : path);
    return;
  }
  if (auto lease = claims.belong_to(stamp, path))
    std::cerr << fmt::format(
        "gpuplan {}: warning: this node's lease ({} s, --lease) is not the {} s of the "
        "claims directory's first node (its plan.stamp): using {} s, as every node must "
        "(a node with a shorter lease takes the others' live units)\n",
        command, lease_s, *lease, *lease);
}

Plan read_plan_for_launch(const std::string& path, std::string_view node, std::string_view label,
                          const std::string& spare_dir) {
  if (path.empty() || path == "-") return read_plan(path);
  Fd plan_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (plan_fd.fd < 0) return read_plan(path);  // its message
  auto identity = identity_of(plan_fd.fd);
  if (!identity) return read_plan(path);
  for (const auto& index_path : index_paths(path, spare_dir)) {
    auto index = os::open_regular(index_path, O_RDONLY);  // never waits on a FIFO there
    Fd index_fd(index ? *index : -1);
    if (index_fd.fd < 0) continue;
    auto slice = plan_slice([&](std::uint64_t at, std::size_t n) { return read_at(index_fd.fd, at, n); },
                            [&](std::uint64_t at, std::size_t n) { return read_at(plan_fd.fd, at, n); },
                            *identity, node, label, path);
    if (slice) return std::move(*slice);
  }
  return read_indexing(plan_fd.fd, *identity, path, spare_dir, false);
}

std::optional<Node> read_fleet_node(const std::string& fleet_path, std::string_view node) {
  if (fleet_path.empty()) return std::nullopt;
  auto input = open_input(fleet_path);
  for (auto& n : load_fleet(input.in(), input.name).nodes)
    if (n.name == node) return std::move(n);
  throw InputError(Position{fleet_path}, fmt::format("the fleet has no node \"{}\"", node));
}

void take_pack_knobs(const Plan& plan, Rules& rules) {
  if (plan.summary.vram_headroom) rules.vram_headroom = *plan.summary.vram_headroom;
  if (plan.summary.max_tests_per_gpu) rules.max_tests_per_gpu = *plan.summary.max_tests_per_gpu;
}

void at_plan_lines(const std::function<void()>& check) {
  try {
    check();
  } catch (const JsonValueError& error) {
    const auto& file = error.position().file;
    if (error.position().line > 0 || file.empty() || file == "-" || file == "<stdin>") throw;
    auto opened = os::open_regular(file, O_RDONLY);  // never waits on a FIFO
    Fd fd(opened ? *opened : -1);
    struct stat info {};
    if (fd.fd < 0 || ::fstat(fd.fd, &info) != 0) throw;
    PlanRecordScanner unused;
    ScanningReader text(fd.fd, static_cast<std::uint64_t>(info.st_size), unused, false);
    auto spot = util::locate_json_path(text, error.json_path());
    if (!spot) throw;
    throw error.at(spot->line, spot->column);
  }
}

namespace {

/// "assignments[3]" as (assignments, 3), "unschedulable[0]" as (unschedulable, 0); else nullopt.
std::optional<std::pair<PlanSection, std::size_t>> plan_record(std::string_view json_path) {
  constexpr std::pair<std::string_view, PlanSection> lists[] = {
      {"assignments[", PlanSection::assignments}, {"unschedulable[", PlanSection::unschedulable}};
  for (auto [prefix, section] : lists) {
    if (!json_path.starts_with(prefix) || !json_path.ends_with(']')) continue;
    std::size_t n = 0;
    const char* last = json_path.data() + json_path.size() - 1;
    if (auto [end, problem] = std::from_chars(json_path.data() + prefix.size(), last, n);
        problem == std::errc() && end == last)
      return std::pair{section, n};
  }
  return std::nullopt;
}

}  // namespace

void at_slice_lines(const Plan& slice, const std::string& path, const std::function<void()>& check) {
  try {
    check();
  } catch (const JsonValueError& error) {
    // Not found in the file: the error without the slice's own index, which would name another record.
    auto unplaced = [&] { return InputError(error.position(), error.reason()); };
    const auto record = plan_record(error.json_path());
    if (path.empty() || path == "-" || !record || record->first != PlanSection::assignments ||
        record->second >= slice.assignments.size())
      throw unplaced();
    const std::size_t n = record->second;
    const auto& id = slice.assignments[n].unit.id;
    auto k =
        std::count_if(slice.assignments.begin(), slice.assignments.begin() + static_cast<std::ptrdiff_t>(n),
                      [&](const Assignment& a) { return a.unit.id == id; });
    const Plan whole = read_plan(path);
    for (std::size_t i = 0; i < whole.assignments.size(); ++i)
      if (whole.assignments[i].unit.id == id && k-- == 0)
        at_plan_lines([&] {
          throw JsonValueError(error.position(), fmt::format("assignments[{}]", i), error.reason());
        });
    throw unplaced();
  }
}

std::vector<std::optional<util::TextSpot>> locate_plan_records(const std::string& path,
                                                               const std::vector<std::string>& json_paths) {
  std::vector<std::optional<util::TextSpot>> spots(json_paths.size());
  // Each path as its list and element: "assignments[3]" is (2, 3).
  std::vector<std::pair<std::size_t, std::uint64_t>> wanted;  // (path's index, byte offset)
  std::vector<std::optional<std::pair<PlanSection, std::size_t>>> records(json_paths.size());
  for (std::size_t i = 0; i < json_paths.size(); ++i) records[i] = plan_record(json_paths[i]);
  if (path.empty() || path == "-" || path == "<stdin>" ||
      std::none_of(records.begin(), records.end(), [](const auto& r) { return r.has_value(); }))
    return spots;
  auto opened = os::open_regular(path, O_RDONLY);  // never waits on a FIFO
  Fd fd(opened ? *opened : -1);
  struct stat info {};
  if (fd.fd < 0 || ::fstat(fd.fd, &info) != 0) return spots;
  const auto size = static_cast<std::uint64_t>(info.st_size);
  // One pass for where the records lie, one for the lines up to them.
  PlanRecordScanner scanner;
  constexpr std::uint64_t chunk = std::uint64_t{64} << 10;
  auto each_piece = [&](const std::function<bool(std::string_view, std::uint64_t)>& take) {
    for (std::uint64_t at = 0; at < size;) {
      auto piece = read_at(fd.fd, at, static_cast<std::size_t>(std::min(chunk, size - at)));
      if (piece.empty() || !take(piece, at)) return;
      at += piece.size();
    }
  };
  each_piece([&](std::string_view piece, std::uint64_t) {
    scanner.feed(piece);
    return true;
  });
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (!records[i]) continue;
    const auto& extents = scanner.records().extents(records[i]->first);
    if (records[i]->second < extents.size()) wanted.emplace_back(i, extents[records[i]->second].offset);
  }
  std::ranges::sort(wanted, {}, [](const auto& w) { return w.second; });
  std::size_t next = 0;
  long line = 1;
  std::uint64_t line_start = 0;
  each_piece([&](std::string_view piece, std::uint64_t at) {
    for (std::size_t k = 0; k <= piece.size() && next < wanted.size(); ++k) {
      while (next < wanted.size() && wanted[next].second == at + k) {
        spots[wanted[next].first] =
            util::TextSpot{wanted[next].second, line, static_cast<long>(at + k - line_start) + 1};
        ++next;
      }
      if (k < piece.size() && piece[k] == '\n') {
        ++line;
        line_start = at + k + 1;
      }
    }
    return next < wanted.size();
  });
  return spots;
}

void check_exportable(const Plan& plan, const std::string& path) {
  at_plan_lines([&] {
    check_planned_once(plan, path);
    for (std::size_t i = 0; i < plan.assignments.size(); ++i) check_launchable(plan.assignments[i], path, i);
  });
}

void check_fits_fleet(const Plan& plan, const Fleet& fleet, const std::string& plan_path,
                      const std::string& fleet_path) {
  std::map<std::string_view, int> planned;  // one pass: planned_gpu_count is one a node
  for (const auto& a : plan.assignments)
    for (int gpu : a.gpus) planned[a.node.str()] = std::max(planned[a.node.str()], gpu + 1);
  for (const auto& node : fleet.nodes) {
    auto it = planned.find(node.name);
    if (it == planned.end()) continue;
    auto gpu = first_missing_gpu(it->second, node);
    if (!gpu) continue;
    // At the first unit of the node on that GPU or above, which makes exec want it.
    std::size_t index = 0;
    while (index < plan.assignments.size() &&
           (plan.assignments[index].node != node.name ||
            std::ranges::none_of(plan.assignments[index].gpus, [&](int g) { return g >= *gpu; })))
      ++index;
    at_plan_lines([&] {
      throw JsonValueError(
          Position{plan_path == "-" ? std::string("<stdin>") : plan_path},
          fmt::format("assignments[{}]", index),
          fmt::format("node {} has no GPU {} in the fleet {}, which the plan runs units on ({} here): the "
                      "plan was made for another fleet, and every job's exec would refuse it",
                      node.name, *gpu, fleet_path, plan.assignments[index].unit.id));
    });
  }
}

void check_plan_on_fleet(const Plan& plan, const std::string& plan_path, const Fleet& fleet) {
  std::map<std::string_view, int> gpus_of;
  for (const auto& node : fleet.nodes) gpus_of[node.name] = static_cast<int>(node.gpus.size());
  for (std::size_t i = 0; i < plan.assignments.size(); ++i) {
    const auto& a = plan.assignments[i];
    auto refuse = [&](const std::string& what) {
      at_plan_lines([&] {
        throw JsonValueError(
            Position{plan_path.empty() || plan_path == "-" ? std::string("<stdin>") : plan_path},
            fmt::format("assignments[{}]", i), what);
      });
    };
    auto found = gpus_of.find(a.node.str());
    if (found == gpus_of.end())
      refuse(fmt::format("the plan puts {} on node {}, which this fleet does not have ({})", a.unit.id,
                         a.node.str(), fleet.source));
    for (int gpu : a.gpus)
      if (gpu < 0 || gpu >= found->second)
        refuse(fmt::format("the plan puts {} on GPU {} of {}, which has {} GPUs in the fleet {}", a.unit.id,
                           gpu, a.node.str(), found->second, fleet.source));
  }
}

long warn_split_tests(const Plan& plan, std::string_view node, const std::string& path) {
  auto split = tests_split_over_nodes(plan, node);
  if (split.empty()) return 0;
  std::cerr << fmt::format("gpuplan: warning: {}: {}\n", path, split);
  return 1;
}

long warn_unschedulable(const Plan& plan, const std::string& path) {
  const auto& units = plan.unschedulable;
  if (units.empty()) return 0;
  constexpr std::size_t named = 3;
  std::vector<std::string> first;
  for (std::size_t i = 0; i < units.size() && i < named; ++i) first.push_back(units[i].unit.id);
  std::cerr << fmt::format(
      "gpuplan: warning: {} GPU unit{} of {} {} unschedulable and in no job: {}{}; {} not run (gpuplan "
      "show {} says why)\n",
      units.size(), units.size() == 1 ? "" : "s", path, units.size() == 1 ? "is" : "are",
      fmt::join(first, ", "), units.size() > named ? fmt::format(" and {} more", units.size() - named) : "",
      units.size() == 1 ? "it does" : "they do", path);
  return 1;
}

void print_export_totals(const ExportRemarks& said) {
  std::cerr << fmt::format("gpuplan: {}\n", diagnostic_counts({}, said.warnings, said.notes));
}

}  // namespace gpuplan::cli
