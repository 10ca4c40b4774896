#include "annotate/conventions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <iterator>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpuplan/requirements.hpp"
#include "gpuplan/size.hpp"
#include "util/suggest.hpp"
#include "util/text.hpp"

namespace gpuplan::annotate {

namespace {

Reading claim(Claim c) { return Reading{{}, std::move(c), {}}; }
/// Neither a claim nor a problem: the row's reader does not know the tag after all.
bool declined(const Reading& r) { return !r.claim && r.problem.empty(); }
Reading malformed(std::string problem) { return Reading{{}, std::nullopt, std::move(problem)}; }

Reading gpu_count(std::string_view text, Claim c = {}) {
  auto count = parse_gpu_count(text);
  if (!count) return malformed(count.problem());
  c.gpu = true;
  c.gpus = *count;
  return claim(std::move(c));
}

/// Bazel's resources:gpu:N, whose N is a float (`resources:<name>:<float>`): "1.0" is 1 GPU, and a
/// share of a GPU ("0.5") is a whole one, noted (gpuplan hands out whole GPUs): a GPU test either
/// way, where "0.5" made it a CPU test with a warning.
Reading bazel_gpu_amount(std::string_view text) {
  auto point = text.find('.');
  if (point == std::string_view::npos) return gpu_count(text);
  auto whole = text.substr(0, point), fraction = text.substr(point + 1);
  whole.remove_prefix(std::min(whole.find_first_not_of('0'), whole.size()));  // "001.5" is 1.5
  auto digits = [](std::string_view s) {
    return s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (fraction.empty() || !digits(whole) || !digits(fraction) || whole.size() > 4)
    return gpu_count(whole.size() > 4 && digits(whole) ? whole : text);  // its message
  int count = 0;
  std::from_chars(whole.data(), whole.data() + whole.size(), count);
  if (fraction.find_first_not_of('0') == std::string_view::npos) return gpu_count(std::to_string(count));
  auto reading = gpu_count(std::to_string(count + 1));  // a share of a GPU more: a whole one
  if (reading.claim)
    reading.caveat = fmt::format("asks for {} GPUs: gpuplan hands out whole GPUs, so {}", text, count + 1);
  return reading;
}

Reading vendor_gpu(std::string_view vendor) {
  return claim(Claim{.gpu = true, .vendor = std::string(vendor)});
}

/// The part after "cuda"/"gpu-cc": ":12.4" (meaning ≥), ">=12.4", "<13", "==9.0", comma-joined.
Reading constraints(std::string_view rest, bool is_cuda) {
  bool colon = rest.starts_with(':');
  auto parsed = parse_version_constraints(colon ? rest.substr(1) : rest, colon,
                                          is_cuda ? VersionOf::cuda : VersionOf::compute_capability);
  if (!parsed) return malformed(parsed.problem());
  Claim c;
  (is_cuda ? c.cuda : c.compute_capability) = *parsed;
  return claim(std::move(c));
}

/// XLA's requires-gpu-smXY[-full][-only][:N], `rest` being what follows "requires-gpu-sm".
/// `-full` (a whole GPU rather than a MIG slice, in Google's CI) asks for nothing more here:
/// gpuplan hands out whole GPUs. CUDA's target suffixes are read too: smXYa (code for exactly
/// that architecture, as sm_90a) and smXYf (its family, as sm_100f: X.Y up to the next major).
Reading xla_compute_capability(std::string_view rest) {
  auto digits = rest.find_first_not_of("0123456789");
  auto number = rest.substr(0, digits);
  rest.remove_prefix(number.size());
  const bool arch_specific = util::strip_prefix(rest, "a");
  const bool family = !arch_specific && util::strip_prefix(rest, "f");
  util::strip_prefix(rest, "-full");
  bool only = util::strip_prefix(rest, "-only") || arch_specific;
  if (number.size() < 2 || number.size() > 4 || (!rest.empty() && !rest.starts_with(':')))
    return malformed(
        "write requires-gpu-smXY, requires-gpu-smXY-only or requires-gpu-smXY-full-only (XY: compute "
        "capability X.Y, e.g. sm80), optionally with :N for N GPUs");
  auto version = Version::parse(fmt::format("{}.{}", number.substr(0, number.size() - 1), number.back()));
  Claim c{.gpu = true, .vendor = "nvidia"};
  c.compute_capability.push_back({only ? VersionConstraint::Op::eq : VersionConstraint::Op::ge, *version});
  if (family && !only)
    c.compute_capability.push_back(
        {VersionConstraint::Op::lt, *Version::parse(fmt::format("{}.0", version->parts.front() + 1))});
  if (rest.starts_with(':')) return gpu_count(rest.substr(1), std::move(c));
  return claim(std::move(c));
}

/// The backends of XLA's xla_test (xla/tests/build_defs.bzl), each tagged xla_<backend>.
Reading xla_backend(std::string_view backend) {
  static constexpr std::array<std::string_view, 3> cpu = {"cpu", "interpreter", "cpu_parallel"};
  static constexpr std::array<std::string_view, 9> nvidia = {
      "nvgpu_any", "p100", "v100", "a100", "h100", "b200", "gb200", "gb300", "rtx6000pro"};
  // XLA's lit_device_test (xla/lit.bzl) tags each backend's tests xla_device_BACKEND beside
  // xla_BACKEND: the same backend (build_tools/lint/tags.py: "Runs on an h100"), not a model ask.
  util::strip_prefix(backend, "device_");
  if (std::ranges::find(cpu, backend) != cpu.end()) return claim(Claim{.backend = Backend::cpu});
  // The older spellings (xla_test until 2025): gpu_any and gpu_MODEL NVIDIA's, gpu_amd_any AMD's.
  if (backend == "gpu_any") backend = "nvgpu_any";
  if (backend == "gpu_amd_any") backend = "amdgpu_any";
  if (backend.starts_with("gpu_") && std::ranges::find(nvidia, backend.substr(4)) != nvidia.end())
    backend.remove_prefix(4);
  if (std::ranges::find(nvidia, backend) != nvidia.end())
    return claim(Claim{.gpu = true, .vendor = "nvidia", .backend = Backend::gpu});
  if (backend == "amdgpu_any") return claim(Claim{.gpu = true, .vendor = "amd", .backend = Backend::gpu});
  if (backend == "intelgpu_any") return claim(Claim{.gpu = true, .vendor = "intel", .backend = Backend::gpu});
  if (backend == "gpu") return claim(Claim{.gpu = true, .backend = Backend::gpu});
  if (backend == "tpu") return claim(Claim{.backend = Backend::tpu});
  return {};  // a plugin backend gpuplan does not know: not this convention's tag
}

/// A GPU test whose runtime does not read CUDA_VISIBLE_DEVICES, the only list `exec` and
/// `run-under` hand out: it sees every GPU of its node and takes the first, so it holds the node.
Reading sees_every_gpu(std::optional<std::string> vendor, std::string_view runtime) {
  auto reading = claim(Claim{.gpu = true, .exclusive = true, .vendor = std::move(vendor)});
  reading.caveat = fmt::format(
      "holds the whole node: {} does not read CUDA_VISIBLE_DEVICES, so the test would see every GPU "
      "and use the first whatever GPU it was given (a rule whose tag regex matches the tag reads it "
      "instead, for a team that confines the test otherwise)",
      runtime);
  return reading;
}

/// IREE's drivers: build_tools/bazel/iree_check_test.bzl tags each test driver=DRIVER, and its CI
/// (build_test_all.sh) leaves out driver=cuda, hip, amdgpu and vulkan where no GPU is enabled.
/// The amdgpu driver is IREE's own on the HSA runtime, which reads ROCR_VISIBLE_DEVICES only.
Reading iree_driver(std::string_view driver) {
  if (driver == "cuda") return vendor_gpu("nvidia");
  if (driver == "hip") return vendor_gpu("amd");
  if (driver == "amdgpu") return sees_every_gpu("amd", "IREE's amdgpu driver (the HSA runtime)");
  if (driver == "vulkan") return sees_every_gpu(std::nullopt, "Vulkan");
  return {};  // local-task, local-sync, vmvx: CPU drivers; metal: Apple's, not a Linux fleet's
}

/// IREE's AMD architecture tags (requires-gpu-cdna3, -rdna4, -gfx1250; its ctest_all.sh and
/// build_test_all.sh leave each out where no such GPU is), `arch` being what follows
/// "requires-gpu-", optionally with :N for N GPUs. gpuplan's fleet knows models, not
/// architectures: a CDNA generation (or its gfx target) is the Instinct models that have it, from
/// AMD's data sheets; any other (RDNA's Radeon parts, gfx1250) is any AMD GPU, with a note.
Reading amd_architecture(std::string_view tag_rest) {
  auto arch = tag_rest.substr(0, tag_rest.find(':'));
  auto count = tag_rest.substr(arch.size());
  auto digits_from = [&](std::size_t at) {
    return arch.size() > at && arch.find_first_not_of("0123456789abcdef", at) == std::string_view::npos;
  };
  bool known_shape = (arch.starts_with("cdna") && (arch.size() == 4 || digits_from(4))) ||
                     (arch.starts_with("rdna") && digits_from(4)) ||
                     (arch.starts_with("gfx") && digits_from(3));
  if (!known_shape) return {};
  static const std::vector<std::pair<std::vector<std::string_view>, std::vector<std::string>>> instinct = {
      {{"cdna", "cdna1", "gfx908"}, {"mi100"}},
      {{"cdna2", "gfx90a"}, {"mi210", "mi250", "mi250x"}},
      {{"cdna3", "gfx942"}, {"mi300a", "mi300x", "mi325x"}},
      {{"cdna4", "gfx950"}, {"mi350x", "mi355x"}},
  };
  Claim c{.gpu = true, .vendor = "amd"};
  for (const auto& [names, models] : instinct)
    if (std::ranges::find(names, arch) != names.end()) c.gpu_models = models;
  auto reading = count.empty() ? claim(c) : gpu_count(count.substr(1), c);
  if (reading.claim && !reading.claim->gpu_models)
    reading.caveat = fmt::format(
        "asks for an AMD GPU of architecture {}, which no fleet field says, so any AMD GPU may be given; "
        "a rule that sets gpu_models for this tag says which models have it",
        arch);
  return reading;
}

Reading gpu_mem(std::string_view size) {
  auto mib = parse_size_mib(size);
  if (!mib) return malformed(mib.problem());
  return claim(Claim{.gpu_mem_mib = *mib});
}

Reading gpu_model(std::string_view text) {
  auto models = parse_models(text);
  if (!models) return malformed(models.problem());
  return claim(Claim{.gpu_models = *models});
}

/// A remote-execution pool whose name says GPU ("gpu-pool") is 1 GPU, of the vendor it names
/// ("amd-gpu"); one that names a GPU model ("gpu-h100", "h100-pool", "gpu-t4", "gpu-a100-80gb") 1
/// GPU of that model, or as many as a count before the model says ("8xh100-pool": 8). One named
/// only after a vendor's GPU stack ("cuda", "rocm-pool", "xpu") is 1 GPU of that vendor, with a
/// warning: such a pool may as well be one that builds with the toolkit and has no GPU, but a
/// GPU test read as a CPU test would run on a CPU runner.
Reading gpu_pool(std::string_view value) {
  auto named = named_gpus(value, true);
  const bool says_gpu = !named.models.empty() || util::lower(value).find("gpu") != std::string::npos;
  auto vendor = says_gpu ? named_gpu_vendor(value) : gpu_stack_vendor(value);
  if (!says_gpu && vendor.empty()) return {};
  Claim c{.gpu = true, .gpus = named.count};
  if (!named.models.empty()) c.gpu_models = *parse_models(named.models);
  if (!vendor.empty() && vendor != "apple") c.vendor = vendor;
  auto reading = claim(std::move(c));
  if (!says_gpu) {
    reading.caveat = fmt::format(
        "names {}'s GPU stack but not a GPU, so it is read as 1 {} GPU (a pool that only builds with the "
        "toolkit has none: a rule whose tag regex matches Pool:{} can say so, or which GPU)",
        vendor_display(vendor), vendor_display(vendor), value);
    reading.caveat_warns = true;
  }
  return reading;
}

/// The vendor a GPU worker class's name says by how it is written, where no model of the catalog
/// matches it: a GPU stack's word with its version ("MI308X-ROCM7": rocm), AMD's Instinct "MI"
/// and a number (MI308X), NVIDIA's compute capability ("SM100_ARM"), RTX, and its data-center
/// parts' one letter and a number ("H20", "L20D"); empty when none.
std::string worker_class_vendor(std::string_view value) {
  auto lower = util::lower(value);
  auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  auto is_alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  std::string_view all = lower;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t end = i;
    while (end < all.size() && is_alnum(all[end])) ++end;
    auto word = all.substr(i, end - i);
    i = end + 1;
    auto unversioned = word.substr(0, word.find_last_not_of("0123456789") + 1);
    if (auto stack = gpu_stack_vendor(unversioned); !stack.empty()) return stack;
    auto letters_then_digit = [&](std::string_view letters) {
      return word.size() > letters.size() && word.starts_with(letters) && is_digit(word[letters.size()]);
    };
    if (letters_then_digit("mi")) return "amd";
    if (letters_then_digit("sm") || word.starts_with("rtx")) return "nvidia";
    if (word.size() > 1 && std::string_view("abhlptv").find(word[0]) != std::string_view::npos &&
        is_digit(word[1]))
      return "nvidia";
  }
  return {};
}

/// A count of accelerators, of whatever backend the test runs on: GPUs only on a GPU variant.
Reading counted(int count, std::optional<std::vector<std::string>> models = std::nullopt) {
  return claim(
      Claim{.gpu = true, .gpus = count, .gpu_models = std::move(models), .counts_accelerators = true});
}

Reading backend_variant(Backend backend) {
  Claim c{.backend = backend};
  c.gpu = backend == Backend::gpu;
  return claim(std::move(c));
}

/// How a row recognises a tag.
enum class Match {
  exact,       ///< the tag is the spelling
  prefix,      ///< the tag starts with the spelling; the reader gets what follows
  constraint,  ///< the spelling, then one of ":<>="; the reader gets the rest from that character
};

using Reader = Reading (*)(std::string_view rest, const Rules& rules);

/// One spelling of a built-in convention: README's annotation table has a line for each `name`.
struct Row {
  std::string_view name;      ///< what `disable:` in a rules file calls it
  std::string_view spelling;  ///< the tag, or its fixed start
  Match match;
  Reader read;
  bool typo_target = true;  ///< near misses of it get a did-you-mean (not for words as short as `gpu`)
};

// The table. Order matters only where spellings overlap: the first row that matches reads the tag.
const std::vector<Row>& tag_rows() {
  static const std::vector<Row> rows = {
      {"cpu-only", "cpu-only", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.cpu_only = true}); }},
      {"cpu-only", "no_gpu", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.cpu_only = true}); }, false},
      {"cpu-only", "nogpu", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.cpu_only = true}); }, false},
      {"cpu-only", "no-gpu", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.cpu_only = true}); }, false},
      {"gpu", "gpu", Match::exact, [](std::string_view, const Rules&) { return claim(Claim{.gpu = true}); },
       false},
      {"gpu", "gpu:", Match::prefix, [](std::string_view rest, const Rules&) { return gpu_count(rest); },
       false},
      {"gpu", "gpu_only", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.gpu = true}); }},
      // PyTorch's BUILD.bazel tags its CUDA cc_tests gpu-required (its CPU CI filters them out).
      {"gpu", "gpu-required", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.gpu = true}); }},
      {"resources:gpu", "resources:gpu:", Match::prefix,
       [](std::string_view rest, const Rules&) { return bazel_gpu_amount(rest); }},
      {"resources:gpu", "resources:gpu", Match::exact,
       [](std::string_view, const Rules&) {
         return malformed("the GPU count is missing (write resources:gpu:N)");
       }},
      {"gpu-mem", "gpu-mem:", Match::prefix,
       [](std::string_view rest, const Rules&) { return gpu_mem(rest); }},
      {"gpu-mem", "gpu_mem:", Match::prefix,
       [](std::string_view rest, const Rules&) { return gpu_mem(rest); }, false},
      {"cuda", "cuda", Match::constraint,
       [](std::string_view rest, const Rules&) { return constraints(rest, true); }, false},
      {"gpu-model", "gpu-model:", Match::prefix,
       [](std::string_view rest, const Rules&) { return gpu_model(rest); }},
      {"gpu-cc", "gpu-cc", Match::constraint,
       [](std::string_view rest, const Rules&) { return constraints(rest, false); }},
      {"nvlink", "nvlink", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.nvlink = true}); }},
      {"gpu-exclusive", "gpu-exclusive", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.exclusive = true}); }},
      {"exclusive", "exclusive", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.exclusive = true, .qualifies_only = true}); },
       false},
      {"exclusive", "exclusive-if-local", Match::exact,
       [](std::string_view, const Rules&) {
         return claim(Claim{.exclusive = true, .qualifies_only = true});
       }},
      {"requires-gpu", "requires-gpu", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.gpu = true}); }},
      {"requires-gpu", "remote-gpu", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.gpu = true}); }},
      // google/android-cuttlefish tags its GPU e2e tests requires_gpu (e2etests/cvd/*/BUILD.bazel,
      // beside exclusive), and its CI (tools/testutils/runcvde2etests.sh) runs
      // --test_tag_filters=requires_gpu on GPU machines, -requires_gpu elsewhere. Before, a near
      // miss of requires-gpu: CPU tests with a warning.
      {"requires-gpu", "requires_gpu", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.gpu = true}); }, false},
      // google/gapid and its successor google/agi tag the integration tests that replay on the
      // machine's GPU needs_gpu (test/integration/*/BUILD.bazel), and their CI
      // (kokoro/linux-test/test.sh) runs --test_tag_filters=-needs_gpu on its GPU-less machines.
      // Before, a near miss of gpu: CPU tests with a warning.
      {"requires-gpu", "needs_gpu", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.gpu = true}); }, false},
      // TensorFlow's dtensor_test (tensorflow/dtensor/build_defs.bzl) tags its NAME_2gpus variant
      // ("2 Physical GPUs") requires-gpu:2 beside gpu. Before, a near miss: 1 GPU, for gpu.
      {"requires-gpu", "requires-gpu:", Match::prefix,
       [](std::string_view rest, const Rules&) { return gpu_count(rest); }},
      {"requires-gpu-nvidia", "requires-gpu-nvidia", Match::exact,
       [](std::string_view, const Rules&) { return vendor_gpu("nvidia"); }},
      {"requires-gpu-nvidia", "requires-gpu-nvidia:", Match::prefix,
       [](std::string_view rest, const Rules&) { return gpu_count(rest, Claim{.vendor = "nvidia"}); }},
      {"requires-gpu-nvidia", "requires-gpu-cuda", Match::exact,
       [](std::string_view, const Rules&) { return vendor_gpu("nvidia"); }},
      // SGLang's bazel/integration/BUILD.bazel tags its CUDA tests requires-cuda (beside
      // requires-gpu), and its CI (bazel/ci/affected_tests.py) sorts tests into CUDA, ROCm and CPU
      // runs by requires-cuda and requires-rocm. Before, each was a near miss of requires-gpu: a
      // CUDA test planned on AMD GPUs, a ROCm test alone on the CPU runners.
      {"requires-gpu-nvidia", "requires-cuda", Match::exact,
       [](std::string_view, const Rules&) { return vendor_gpu("nvidia"); }},
      {"requires-gpu-amd", "requires-gpu-amd", Match::exact,
       [](std::string_view, const Rules&) { return vendor_gpu("amd"); }},
      {"requires-gpu-amd", "requires-gpu-amd:", Match::prefix,
       [](std::string_view rest, const Rules&) { return gpu_count(rest, Claim{.vendor = "amd"}); }},
      {"requires-gpu-amd", "requires-gpu-rocm", Match::exact,
       [](std::string_view, const Rules&) { return vendor_gpu("amd"); }},
      {"requires-gpu-amd", "requires-rocm", Match::exact,
       [](std::string_view, const Rules&) { return vendor_gpu("amd"); }},
      {"requires-gpu-intel", "requires-gpu-intel", Match::exact,
       [](std::string_view, const Rules&) { return vendor_gpu("intel"); }},
      {"requires-gpu-intel", "requires-gpu-intel:", Match::prefix,
       [](std::string_view rest, const Rules&) { return gpu_count(rest, Claim{.vendor = "intel"}); }},
      {"requires-gpu-sm", "requires-gpu-sm", Match::prefix,
       [](std::string_view rest, const Rules&) { return xla_compute_capability(rest); }},
      {"requires-gpu", "requires-gpu-vulkan", Match::exact,
       [](std::string_view, const Rules&) { return sees_every_gpu(std::nullopt, "Vulkan"); }},
      {"requires-gpu-amd-arch", "requires-gpu-", Match::prefix,
       [](std::string_view rest, const Rules&) { return amd_architecture(rest); }, false},
      {"iree-driver", "driver=", Match::prefix,
       [](std::string_view rest, const Rules&) { return iree_driver(rest); }, false},
      {"vendor-only", "cuda-only", Match::exact,
       [](std::string_view, const Rules&) {
         return claim(Claim{.vendor = "nvidia", .qualifies_only = true});
       }},
      // JAX's tests/BUILD: CUDA-only tests its ROCm CI leaves out (-config-cuda-only).
      {"vendor-only", "config-cuda-only", Match::exact,
       [](std::string_view, const Rules&) {
         return claim(Claim{.vendor = "nvidia", .qualifies_only = true});
       }},
      // ZKX (fractalyze/zkx) tags its CUDA tests cuda_only beside gpu (zkx/backends/gpu/codegen/
      // BUILD.bazel), and its .bazelrc leaves -cuda_only,-gpu out of the builds without
      // --config=cuda. Before, a near miss of cuda-only: the tests were planned on AMD GPUs too.
      {"vendor-only", "cuda_only", Match::exact,
       [](std::string_view, const Rules&) {
         return claim(Claim{.vendor = "nvidia", .qualifies_only = true});
       }},
      // TensorFlow's no_rocm: its ROCm CI leaves such a test out (--test_tag_filters=...,-no_rocm),
      // as TF-TRT's tftrt_py_test (TensorRT is NVIDIA's) tags every test; its GPU variant's
      // tf_gpu_tests_tags() names no vendor. Before, a note: the test was planned on AMD GPUs too.
      {"vendor-only", "no_rocm", Match::exact,
       [](std::string_view, const Rules&) {
         return claim(Claim{.vendor = "nvidia", .qualifies_only = true});
       },
       false},
      {"vendor-only", "rocm-only", Match::exact,
       [](std::string_view, const Rules&) { return claim(Claim{.vendor = "amd", .qualifies_only = true}); }},
      {"vendor-only", "oneapi-only", Match::exact,
       [](std::string_view, const Rules&) {
         return claim(Claim{.vendor = "intel", .qualifies_only = true});
       }},
      // XLA's no-oneapi ("not configured for the oneAPI backend", build_tools/lint/tags.py): its
      // oneAPI CI leaves such tests out (build_tools/sycl/ci_test_xla.sh: -no-oneapi), but
      // xla_test still makes their intelgpu_any copy. Before, that copy was an Intel GPU test.
      {"vendor-only", "no-oneapi", Match::exact,
       [](std::string_view, const Rules&) {
         return claim(Claim{.excluded_vendor = "intel", .qualifies_only = true});
       },
       false},
      {"multi_gpu", "multi_gpu", Match::exact,
       [](std::string_view, const Rules& rules) { return counted(rules.multi_gpu_count); }},
      {"multi_gpu", "multigpu", Match::exact,
       [](std::string_view, const Rules& rules) { return counted(rules.multi_gpu_count); }},
      {"multi_gpu", "multi_gpu_h100", Match::exact,
       [](std::string_view, const Rules& rules) {
         return counted(rules.multi_gpu_count, std::vector<std::string>{"h100"});
       }},
      {"multiaccelerator", "multiaccelerator", Match::exact,
       [](std::string_view, const Rules& rules) { return counted(rules.multiaccelerator_count); }},
      {"jax-backend", "jax_test_cpu", Match::exact,
       [](std::string_view, const Rules&) { return backend_variant(Backend::cpu); }},
      {"jax-backend", "jax_test_gpu", Match::exact,
       [](std::string_view, const Rules&) { return backend_variant(Backend::gpu); }},
      {"jax-backend", "jax_test_tpu", Match::exact,
       [](std::string_view, const Rules&) { return backend_variant(Backend::tpu); }},
      // A TPU test (requires-tpu, requires-tpu-v5lite, ...: what TPU repositories' macros tag,
      // and the wild card their process_accelerator_tags adds): neither a GPU nor a CPU runner's.
      {"requires-tpu", "requires-tpu", Match::prefix,
       [](std::string_view, const Rules&) { return backend_variant(Backend::tpu); }, false},
      // TensorFlow's tpu_py_test (tensorflow/python/tpu/tpu_test_wrapper.bzl) tags its tests
      // tpu, no_gpu, local: TensorFlow's CPU suites leave out -tpu, its GPU suites -no_gpu. Read
      // as no_gpu alone, they went to the CPU runners.
      {"requires-tpu", "tpu", Match::exact,
       [](std::string_view, const Rules&) { return backend_variant(Backend::tpu); }, false},
      {"xla-backend", "xla_", Match::prefix,
       [](std::string_view rest, const Rules&) { return xla_backend(rest); }, false},
      // TensorFlow's tf_xla_py_test tags each backend's copy tf_xla_BACKEND (its plugin backends'
      // are not read).
      {"tf-xla-backend", "tf_xla_cpu", Match::exact,
       [](std::string_view, const Rules&) { return backend_variant(Backend::cpu); }, false},
      {"tf-xla-backend", "tf_xla_gpu", Match::exact,
       [](std::string_view, const Rules&) { return backend_variant(Backend::gpu); }, false},
  };
  return rows;
}

/// The exec_properties keys remote execution uses (the rest are read as tags, see read_exec_property).
struct PropertyRow {
  std::string_view name;
  std::string_view key;
  Reading (*read)(std::string_view value);
};

const std::vector<PropertyRow>& property_rows() {
  static const std::vector<PropertyRow> rows = {
      {"resources:gpu", "resources:gpu", [](std::string_view value) { return bazel_gpu_amount(value); }},
      {"exec-gpu-count", "gpu",
       [](std::string_view value) {
         if (is_truthy(value) && !value.empty()) return claim(Claim{.gpu = true});
         // A model or vendor where a count goes ({"gpu": "H20"}, as alibaba/rtp-llm's smoke tests
         // route to H20 workers): a GPU test of it, where "not a GPU count" made it a CPU test.
         auto count = gpu_count(value);
         if (count.claim) return count;
         if (auto vendor = util::lower(value); vendor == "nvidia" || vendor == "amd" || vendor == "intel")
           return vendor_gpu(vendor);
         auto named = named_gpus(value, true);
         if (!named.models.empty()) {  // "A10", "2xA100"
           Claim c{.gpu = true, .gpus = named.count};
           c.gpu_models = *parse_models(named.models);
           return claim(std::move(c));
         }
         // No GPU: empty, a negation or another device ("none", "off", "cpu").
         static constexpr std::string_view no_gpu[] = {"",        "none", "off", "disabled",
                                                       "disable", "cpu",  "null"};
         if (is_falsy(value) || std::ranges::find(no_gpu, util::lower(value)) != std::end(no_gpu))
           return count;
         // A worker class of the team's own ("L20D"): the key still says GPU; which one is a guess,
         // but its vendor its naming says (rtp-llm's MI308X-ROCM7 workers are AMD's: read as any
         // vendor's, its tests were planned on NVIDIA GPUs, and its H20 ones on AMD GPUs).
         auto vendor = worker_class_vendor(value);
         Claim c{.gpu = true};
         if (!vendor.empty()) c.vendor = vendor;
         return Reading{
             {},
             std::move(c),
             {},
             fmt::format("is neither a GPU count nor a model gpuplan knows: read as 1 {}GPU of any "
                         "model{} (a rule whose tag regex matches gpu:VALUE can say which)",
                         vendor.empty() ? "" : vendor_display(vendor) + " ",
                         vendor.empty() ? "" : ", as its name is written"),
             true};
       }},
      {"exec-gpu-count", "gpu_count",
       [](std::string_view value) {
         return is_truthy(value) && !value.empty() ? claim(Claim{.gpu = true}) : gpu_count(value);
       }},
      {"exec-gpu-model", "gpu_model",
       [](std::string_view value) {
         auto r = gpu_model(value);
         if (r.claim) r.claim->gpu = true;
         return r;
       }},
      {"exec-pool", "Pool", gpu_pool},
      {"exec-pool", "pool", gpu_pool},
      // Buildfarm's queue routing (its docs' execution properties; its queues' example splits
      // gpu_queue from cpu_queue), which it takes in place of a pool.
      {"exec-pool", "choose-queue", gpu_pool},
      {"exec-docker-runtime", "dockerRuntime",
       [](std::string_view value) {
         return util::lower(value) != "nvidia" ? Reading{} : vendor_gpu("nvidia");
       }},
  };
  return rows;
}

/// The macros that expand one test into a variant per backend, named NAME_BACKEND: JAX's
/// jax_multiplatform_test and jax_multiprocess_test (jaxlib/jax.bzl), its older jax_test, XLA's
/// xla_test, and TensorFlow's GPU test macros (tensorflow/tensorflow.bzl: NAME_cpu with the
/// macro's tags, NAME_gpu with tf_gpu_tests_tags() added; TSL's tsl_gpu_cc_test likewise), with
/// the wrappers TensorFlow's BUILD files call them through (cuda_py_strict_test from
/// tensorflow.default.bzl; distribute_py_test, core/platform/distribute.bzl) and
/// tf_xla_py_test (compiler/tests/build_defs.bzl: NAME_cpu and NAME_gpu, tagged tf_xla_BACKEND).
constexpr std::array<std::string_view, 13> variant_macros = {"jax_multiplatform_test",
                                                             "jax_multiprocess_test",
                                                             "jax_test",
                                                             "xla_test",
                                                             "gpu_py_test",
                                                             "cuda_py_test",
                                                             "tf_gpu_cc_test",
                                                             "tf_cuda_cc_test",
                                                             "tsl_gpu_cc_test",
                                                             "cuda_py_strict_test",
                                                             "distribute_py_test",
                                                             "distribute_py_strict_test",
                                                             "tf_xla_py_test"};
/// What TensorFlow's macros append after the backend: tf_py_test's TFRT copy (NAME_cpu_tfrt),
/// tf_xla_py_test's MLIR bridge copy (NAME_cpu_mlir_bridge_test).
constexpr std::array<std::string_view, 2> variant_decorations = {"_tfrt", "_mlir_bridge_test"};
constexpr std::string_view variant_name_convention = "variant-name";

bool row_matches(const Row& row, std::string_view tag) {
  switch (row.match) {
    case Match::exact: return tag == row.spelling;
    case Match::prefix: return tag.starts_with(row.spelling);
    case Match::constraint:
      return tag.starts_with(row.spelling) && tag.size() > row.spelling.size() &&
             std::string_view(":<>=").find(tag[row.spelling.size()]) != std::string_view::npos;
  }
  return false;
}

std::optional<Recognized> read_tag_row(std::string_view tag, const Rules& rules) {
  for (const Row& row : tag_rows()) {
    if (!row_matches(row, tag)) continue;
    auto reading =
        row.read(row.match == Match::exact ? std::string_view{} : tag.substr(row.spelling.size()), rules);
    if (declined(reading)) continue;
    return Recognized{row.name, std::move(reading)};
  }
  return std::nullopt;
}

/// `text` with the characters that look like ASCII written as ASCII: Cyrillic and Greek letters
/// that look like Latin ones (gрu with a Cyrillic р), the Unicode hyphens, dashes and minus,
/// full-width forms (gpu：2), ≥ and ≤. A tag written so reads as nothing, and its GPU word hid it
/// from the near-miss check too.
std::string ascii_lookalikes(std::string_view text) {
  static const std::pair<std::string_view, std::string_view> lookalikes[] = {
      {"а", "a"}, {"с", "c"},  {"е", "e"},  {"і", "i"},     {"ј", "j"}, {"о", "o"}, {"р", "p"},
      {"ѕ", "s"}, {"у", "y"},  {"х", "x"},  {"ԁ", "d"},     {"һ", "h"}, {"ο", "o"}, {"α", "a"},
      {"ν", "v"}, {"κ", "k"},  {"‐", "-"},  {"‑", "-"},     {"‒", "-"}, {"–", "-"}, {"—", "-"},
      {"−", "-"}, {"≥", ">="}, {"≤", "<="}, {"\u00a0", " "}};
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return std::string(text);
  std::string out;
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    // Full-width forms U+FF01..U+FF5E (EF BC 81 .. EF BD 9E) are ASCII 0x21..0x7E.
    if (c == 0xEF && i + 2 < text.size()) {
      auto b1 = static_cast<unsigned char>(text[i + 1]), b2 = static_cast<unsigned char>(text[i + 2]);
      int code = ((b1 & 0x3F) << 6) | (b2 & 0x3F);  // low 12 bits of U+Fxxx
      if ((b1 == 0xBC || b1 == 0xBD) && code >= 0xF01 && code <= 0xF5E) {
        out += static_cast<char>(code - 0xF01 + 0x21);
        i += 3;
        continue;
      }
    }
    bool replaced = false;
    for (auto [from, to] : lookalikes)
      if (text.substr(i).starts_with(from)) {
        out += to;
        i += from.size();
        replaced = true;
        break;
      }
    if (!replaced) out += text[i++];
  }
  return out;
}

/// What a count written after an exact row's spelling meant (`requires-cuda:2`): the row of its
/// convention that takes a count, if it reads the same vendor and node as the row
/// (`requires-gpu-nvidia:2`); nullopt when none does. The closest spelling alone
/// (`requires-gpu:2`) would drop the vendor.
std::optional<std::string> with_count(const Row& exact, std::string_view rest) {
  auto plain = exact.read({}, Rules{});
  if (!plain.claim || !rest.starts_with(':')) return std::nullopt;
  for (const Row& row : tag_rows()) {
    if (row.name != exact.name || row.match != Match::prefix || !row.spelling.ends_with(':')) continue;
    auto counted = row.read(rest.substr(1), Rules{});
    if (counted.claim && counted.claim->vendor == plain.claim->vendor &&
        counted.claim->exclusive == plain.claim->exclusive)
      return fmt::format("{}{}", row.spelling, rest.substr(1));
  }
  return std::nullopt;
}

/// `tag` in the form near misses are compared in: lower case, '_' as '-'.
std::string folded(std::string_view tag) {
  std::string out = util::lower(tag);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

/// Splits "gpus:2" into the word ("gpus") and what follows (":2"), at the first of ":<>=".
std::pair<std::string_view, std::string_view> word_and_rest(std::string_view tag) {
  auto at = tag.find_first_of(":<>=");
  if (at == std::string_view::npos) return {tag, {}};
  return {tag.substr(0, at), tag.substr(at)};
}

}  // namespace

bool is_truthy(std::string_view value) {
  auto word = util::lower(value);
  return word.empty() || word == "true" || word == "yes" || word == "1";
}

bool is_falsy(std::string_view value) {
  auto word = util::lower(value);
  return word == "false" || word == "no" || word == "0";
}

std::optional<Recognized> read_tag(std::string_view tag, const Rules& rules) {
  auto recognized = read_tag_row(tag, rules);
  if (recognized) recognized->reading.source = fmt::format("tag {}", tag);
  if (recognized && recognized->reading.claim) recognized->reading.claim->source = recognized->reading.source;
  return recognized;
}

std::string exec_property_tag(std::string_view key, std::string_view value) {
  util::strip_prefix(key, "test.");
  return fmt::format("{}:{}", key, value);
}

std::optional<Recognized> read_exec_property(std::string_view key, std::string_view value,
                                             const Rules& rules) {
  auto source = fmt::format("exec_properties {}={}", key, value);
  // "test.KEY" is KEY for the exec group of the test action, the one that runs the test (Bazel's
  // exec groups; Modular's {"test.resources:gpu-2": ...}): the same ask as KEY, for gpuplan.
  util::strip_prefix(key, "test.");
  std::optional<Recognized> recognized;
  for (const auto& row : property_rows()) {
    if (row.key != key) continue;
    auto reading = row.read(value);
    if (declined(reading)) return std::nullopt;
    recognized = Recognized{row.name, std::move(reading)};
    break;
  }
  if (!recognized) {
    recognized = is_truthy(value) ? read_tag_row(key, rules) : std::nullopt;
    if (!recognized) recognized = read_tag_row(exec_property_tag(key, value), rules);
  }
  if (!recognized) return std::nullopt;
  recognized->reading.source = source;
  if (recognized->reading.claim) recognized->reading.claim->source = source;
  return recognized;
}

std::optional<std::string> property_near_miss(std::string_view key) {
  util::strip_prefix(key, "test.");
  auto folded_key = [](std::string_view text) {
    auto out = util::lower(text);
    std::ranges::replace(out, '-', '_');
    return out;
  };
  // A key gpuplan reads as written is none, even where another is one case away from it: BuildBuddy's
  // `Pool` and `pool` are both read, and Pool=default is a CPU pool, no near miss of pool=default.
  const auto& rows = property_rows();
  if (std::ranges::any_of(rows, [&](const PropertyRow& row) { return row.key == key; })) return std::nullopt;
  const auto written = folded_key(key);
  for (const auto& row : rows)
    if (folded_key(row.key) == written) return std::string(row.key);
  return std::nullopt;
}

std::optional<Recognized> read_variant_name(std::string_view label, std::string_view generator_function) {
  if (std::ranges::find(variant_macros, generator_function) == variant_macros.end()) return std::nullopt;
  auto name = label.substr(label.find_last_of(":/") + 1);
  for (std::string_view decoration : variant_decorations)
    if (name.ends_with(decoration)) name.remove_suffix(decoration.size());
  for (std::string_view backend : {"_cpu", "_gpu", "_tpu"}) {
    if (!name.ends_with(backend)) continue;
    Backend b = backend == "_cpu" ? Backend::cpu : backend == "_gpu" ? Backend::gpu : Backend::tpu;
    auto reading = backend_variant(b);
    reading.source = fmt::format("name suffix {} ({} variant)", backend, generator_function);
    reading.claim->source = reading.source;
    return Recognized{variant_name_convention, std::move(reading)};
  }
  for (const auto& row : tag_rows()) {
    if (row.name != "xla-backend") continue;
    for (auto at = name.find('_'); at != std::string_view::npos; at = name.find('_', at + 1)) {
      auto reading = xla_backend(name.substr(at + 1));
      if (declined(reading)) continue;
      reading.source = fmt::format("name suffix {} ({} variant)", name.substr(at), generator_function);
      reading.claim->source = reading.source;
      return Recognized{variant_name_convention, std::move(reading)};
    }
  }
  return std::nullopt;
}

bool is_backend_variant(std::string_view convention) {
  return convention == "jax-backend" || convention == "xla-backend" || convention == "tf-xla-backend" ||
         convention == variant_name_convention;
}

std::optional<std::string> near_miss(std::string_view written) {
  const std::string plain = ascii_lookalikes(written);
  if (plain != written) return read_tag_row(plain, Rules{}) ? std::optional(plain) : near_miss(plain);
  std::string_view tag = written;
  // Blanks inside it ("cuda >=12.4"), or a flag given a value ("nvlink:true", "gpu-exclusive=1").
  std::string squeezed;
  std::copy_if(tag.begin(), tag.end(), std::back_inserter(squeezed),
               [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
  if (squeezed != tag && !squeezed.empty() && read_tag_row(squeezed, Rules{})) return squeezed;
  for (std::string_view value : {":true", "=true", ":1", "=1", ":yes", "=yes"})
    if (util::lower(tag).ends_with(value) && tag.size() > value.size() &&
        read_tag_row(tag.substr(0, tag.size() - value.size()), Rules{}))
      return std::string(tag.substr(0, tag.size() - value.size()));
  auto trimmed = tag;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front())))
    trimmed.remove_prefix(1);
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())))
    trimmed.remove_suffix(1);
  if (trimmed.empty()) return std::nullopt;
  if (trimmed.size() != tag.size() && read_tag_row(trimmed, Rules{})) return std::string(trimmed);
  auto fixed = folded(trimmed);
  auto word = word_and_rest(fixed).first;
  auto rest = trimmed.substr(word.size());  // as written: "40GB" stays "40GB"
  std::vector<std::string_view> words;
  for (const auto& row : tag_rows()) {
    auto spelled = word_and_rest(row.spelling).first;
    if (row.match == Match::exact && folded(row.spelling) == fixed) return std::string(row.spelling);
    if (row.match == Match::exact && !rest.empty() && folded(row.spelling) == word)
      if (auto counted = with_count(row, rest)) return counted;
    if (row.match != Match::exact && !rest.empty() && folded(spelled) == word &&
        read_tag_row(fmt::format("{}{}", spelled, rest), Rules{}))
      return fmt::format("{}{}", spelled, rest);
    if (row.typo_target && (row.match == Match::exact) == rest.empty()) words.push_back(spelled);
  }
  // Other words for "a GPU test", which `gpu` says: a CPU runner would run such a test without one.
  static constexpr std::string_view asks_for_a_gpu[] = {"gpu-test", "needs-gpu", "need-gpu",  "uses-gpu",
                                                        "use-gpu",  "with-gpu",  "run-on-gpu"};
  if (rest.empty() && std::ranges::find(asks_for_a_gpu, fixed) != std::end(asks_for_a_gpu)) return "gpu";
  if (word.size() > 1 && word.ends_with('s')) {  // gpus:2 → gpu:2
    auto singular = fmt::format("{}{}", word.substr(0, word.size() - 1), rest);
    if (read_tag_row(singular, Rules{})) return singular;
  }
  std::string joined;  // "nv-link" hints at nvlink too
  std::ranges::copy_if(word, std::back_inserter(joined), [](char c) { return c != '-'; });
  bool hinted = std::ranges::any_of(
      std::array<std::string_view, 8>{"gpu", "cuda", "nvid", "accel", "rocm", "nvl", "oneapi", "multi"},
      [&](std::string_view hint) { return joined.find(hint) != std::string::npos; });
  if (word.size() < 5 || !hinted) return std::nullopt;
  auto close = util::closest_match(word, words);
  if (!close) return std::nullopt;
  return fmt::format("{}{}", *close, rest);
}

namespace {

/// The model named_gpus found: its families and where its name starts and ends in the lowered text.
struct FoundModel {
  std::string families;
  std::size_t begin = 0, end = 0;
};

std::optional<FoundModel> find_gpu_model_word(std::string_view all, bool short_names) {
  // Every family of the fleet's catalog but t4, l4 and a10 (a unit test checks), and a few more. A
  // name written short stands for the families it may mean, as `gpu-model:` takes them (MI355 is
  // the MI355X; MI300 the MI300A or the MI300X).
  static constexpr std::pair<std::string_view, std::string_view> models[] = {
      {"v100", "v100"},       {"a100", "a100"},      {"a800", "a800"},     {"a10g", "a10g"},
      {"a6000", "a6000"},     {"l40", "l40"},        {"l40s", "l40s"},     {"h100", "h100"},
      {"h800", "h800"},       {"h200", "h200"},      {"gh200", "gh200"},   {"b200", "b200"},
      {"gb200", "gb200"},     {"b300", "b300"},      {"gb300", "gb300"},   {"mi100", "mi100"},
      {"mi210", "mi210"},     {"mi250", "mi250"},    {"mi250x", "mi250x"}, {"mi300", "mi300a|mi300x"},
      {"mi300a", "mi300a"},   {"mi300x", "mi300x"},  {"mi325", "mi325x"},  {"mi325x", "mi325x"},
      {"mi350", "mi350x"},    {"mi350x", "mi350x"},  {"mi355", "mi355x"},  {"mi355x", "mi355x"},
      {"max1100", "max1100"}, {"max1550", "max1550"}};
  // Names other words share (a tier, a network layer, a percentile): read only where the text
  // says it is a GPU (a pool's name, requires-gpu-X).
  static constexpr std::string_view shared_names[] = {"t4", "l4", "a10", "a30", "a40", "p40", "p100"};
  // `whole`: the word is all of its run of letters and digits; a shared name must be (t4g is an
  // AWS Graviton CPU machine, not a T4).
  auto known = [&](std::string_view word, bool whole) -> std::optional<std::string> {
    for (const auto& [name, families] : models)
      if (name == word) return std::string(families);
    if (short_names && whole && std::ranges::find(shared_names, word) != std::end(shared_names))
      return std::string(word);
    return std::nullopt;
  };
  auto is_alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  // A model is a whole run of letters, the digits after it and any letters after those
  // ("mi300x"), or without those letters ("h100" of "h100sxm").
  for (std::size_t i = 0; i < all.size();) {
    if (!is_alpha(all[i])) {
      ++i;
      continue;
    }
    std::size_t letters_end = i;
    while (letters_end < all.size() && is_alpha(all[letters_end])) ++letters_end;
    std::size_t digits_end = letters_end;
    while (digits_end < all.size() && is_digit(all[digits_end])) ++digits_end;
    std::size_t end = digits_end;
    while (end < all.size() && is_alpha(all[end])) ++end;
    // A count before the model ("8xh100", "4xA100-80GB", as cloud machine types write it).
    if (all[i] == 'x' && i > 0 && is_digit(all[i - 1]) && letters_end > i + 1) ++i;
    if (digits_end > letters_end) {
      if (auto model = known(all.substr(i, end - i), true)) return FoundModel{*model, i, end};
      // Whole also before a count after it (t4x2, l4x8), not before other letters (t4g).
      bool whole = end == digits_end || (all.substr(digits_end, end - digits_end) == "x" &&
                                         end < all.size() && is_digit(all[end]));
      if (auto model = known(all.substr(i, digits_end - i), whole)) return FoundModel{*model, i, digits_end};
    }
    i = digits_end;
  }
  return std::nullopt;
}

}  // namespace

std::string named_gpu_model(std::string_view text) {
  auto found = find_gpu_model_word(util::lower(text), false);
  return found ? found->families : std::string();
}

NamedGpus named_gpus(std::string_view text, bool short_names) {
  std::string lower = util::lower(text);
  std::string_view all = lower;
  auto found = find_gpu_model_word(all, short_names);
  if (!found) return {};
  auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  NamedGpus named;
  // A memory after the name ("a100-80gb", "h100_80g"): each family with it, as gpu-model: takes it.
  std::string_view after = all.substr(found->end);
  if (!after.empty() && (after[0] == '-' || after[0] == '_')) after.remove_prefix(1);
  std::size_t digits = 0;
  while (digits < after.size() && is_digit(after[digits])) ++digits;
  std::string memory;
  // Not a MIG profile's slices ("a100-1g.5gb", "h100-3g.40gb": 1 and 3 compute slices).
  for (std::string_view unit : {"gb", "gib", "g"}) {
    auto rest = after.substr(digits);
    if (digits > 0 && digits <= 4 && rest.starts_with(unit) &&
        (rest.size() == unit.size() ||
         (!std::isalnum(static_cast<unsigned char>(rest[unit.size()])) && rest[unit.size()] != '.'))) {
      memory = fmt::format("-{}gb", after.substr(0, digits));
      break;
    }
  }
  for (std::string_view families = found->families; !families.empty();) {
    auto bar = std::min(families.find('|'), families.size());
    named.models += (named.models.empty() ? "" : "|") + std::string(families.substr(0, bar)) + memory;
    families.remove_prefix(std::min(bar + 1, families.size()));
  }
  // A count before it ("8xh100", "4x-a100"): the GPUs of a machine type.
  std::size_t x = found->begin;
  if (x > 0 && (all[x - 1] == '-' || all[x - 1] == '_')) --x;
  if (x > 1 && all[x - 1] == 'x' && is_digit(all[x - 2])) {
    std::size_t start = x - 1;
    while (start > 0 && is_digit(all[start - 1])) --start;
    int count = 0;
    std::from_chars(all.data() + start, all.data() + x - 1, count);
    if (count >= 1 && count <= 1024) named.count = count;
  }
  return named;
}

namespace {

using VendorWords = std::span<const std::pair<std::string_view, std::string_view>>;

/// The vendor of the first word of `text` (a run of letters and digits) that `words` names.
std::string vendor_word(std::string_view text, VendorWords words) {
  std::string lower = util::lower(text);
  std::string_view all = lower;
  auto is_alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < all.size();) {
    std::size_t end = i;
    while (end < all.size() && is_alnum(all[end])) ++end;
    for (const auto& [word, vendor] : words)
      if (all.substr(i, end - i) == word) return std::string(vendor);
    i = end + 1;
  }
  return {};
}

/// The words for a vendor's GPU software stack, which name no CPU: CUDA, ROCm and HIP, and
/// PyTorch's xpu (Intel's GPUs).
constexpr std::pair<std::string_view, std::string_view> gpu_stack_words[] = {
    {"cuda", "nvidia"}, {"nvidia", "nvidia"}, {"nvgpu", "nvidia"},   {"rocm", "amd"},
    {"hip", "amd"},     {"amdgpu", "amd"},    {"intelgpu", "intel"}, {"xpu", "intel"}};

}  // namespace

std::string gpu_stack_vendor(std::string_view text) { return vendor_word(text, gpu_stack_words); }

std::string named_gpu_vendor(std::string_view text) {
  static constexpr std::pair<std::string_view, std::string_view> vendors[] = {
      {"amd", "amd"}, {"intel", "intel"}, {"oneapi", "intel"}, {"apple", "apple"}, {"metal", "apple"}};
  auto stack = gpu_stack_vendor(text);
  return stack.empty() ? vendor_word(text, vendors) : stack;
}

bool looks_gpu_related(std::string_view text) {
  auto word = util::lower(text);
  for (std::string_view hint : {"gpu", "cuda", "nvidia", "rocm", "accelerator"})
    if (word.find(hint) != std::string::npos) return true;
  // hip and xpu only as words of their own: "chip" and "ship" say nothing.
  static constexpr std::pair<std::string_view, std::string_view> short_words[] = {{"hip", "amd"},
                                                                                  {"xpu", "intel"}};
  if (!vendor_word(text, short_words).empty()) return true;
  return !named_gpu_model(text).empty();
}

std::string GpuMarking::tags() const {
  if (model.empty() && !vendor.empty()) {
    auto tag = fmt::format("requires-gpu-{}", vendor);
    return gpus ? fmt::format("{}:{}", tag, *gpus) : tag;
  }
  std::string count = gpus ? fmt::format("gpu:{}", *gpus) : std::string("gpu");
  if (model.empty()) return count;
  return gpus ? fmt::format("{} and gpu-model:{}", count, model) : "gpu-model:" + model;
}

std::string GpuMarking::rule_set() const {
  std::string count = fmt::format("gpus: {}", gpus.value_or(1));
  if (model.empty()) return vendor.empty() ? count : fmt::format("{}, vendor: {}", count, vendor);
  return gpus ? fmt::format("{}, gpu_models: {}", count, model) : "gpu_models: " + model;
}

std::optional<GpuMarking> marks_gpu_tests(std::string_view tag) {
  // Words: runs of letters or of digits ("train_v2_gpu" → train, v, 2, gpu; "4gpus" → 4, gpus), each
  // with the part between separators it is in.
  struct Word {
    std::string text;
    std::size_t part;
  };
  std::vector<Word> words;
  std::size_t parts = 0;
  auto kind = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalpha(u) ? 1 : std::isdigit(u) ? 2 : 0;
  };
  for (std::size_t i = 0; i < tag.size();) {
    int k = kind(tag[i]);
    std::size_t j = i + 1;
    while (j < tag.size() && kind(tag[j]) == k) ++j;
    if (k == 0)
      ++parts;
    else
      words.push_back({util::lower(tag.substr(i, j - i)), parts});
    i = j;
  }
  constexpr std::string_view gpu_words[] = {"gpu", "gpus", "cuda", "nvidia", "rocm", "hip", "xpu"};
  constexpr std::string_view other_devices[] = {"cpu", "tpu", "cpus", "tpus", "host"};
  // Words that negate it (an exec_property's value too: gpu:false, gpu_count:0), or say the GPU is
  // welcome but not needed (gpu_friendly, gpu_optional); "deviceless": JAX's
  // gpu_mlir_deviceless_test, GPU compiler tests that run on CPU runners; "fake": RLlib's
  // fake_gpus tests, which its CI runs on CPU machines (rllib.rayci.yml, --only-tags fake_gpus).
  constexpr std::string_view negations[] = {
      "skip",         "disable", "disabled", "exclude",  "without",    "broken", "unsupported",
      "incompatible", "false",   "0",        "friendly", "optional",   "ok",     "capable",
      "compatible",   "aware",   "if",       "allowed",  "deviceless", "fake",   "mock"};
  // "no", "not", "non" and those run into a device word or TensorFlow's tap (nogpu, nocuda,
  // notap): not every word that starts so (gpu_nodes, multi_node_gpu).
  auto negates = [&](std::string_view word) {
    for (std::string_view prefix : {"non", "not", "no"}) {
      if (!word.starts_with(prefix)) continue;
      auto rest = word.substr(prefix.size());
      if (rest.empty() || rest == "tap" || std::ranges::find(gpu_words, rest) != std::end(gpu_words) ||
          std::ranges::find(other_devices, rest) != std::end(other_devices))
        return true;
    }
    return false;
  };
  bool gpu = false;
  std::optional<int> count;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::string& word = words[w].text;
    if (negates(word) || std::ranges::find(other_devices, word) != std::end(other_devices) ||
        std::ranges::find(negations, word) != std::end(negations))
      return std::nullopt;
    if (std::ranges::find(gpu_words, word) == std::end(gpu_words)) continue;
    gpu = true;
    if (!word.starts_with("gpu")) continue;
    // A number beside "gpu(s)" that is not part of another word ("v2" is a version): a count.
    for (std::size_t n : {w - 1, w + 1}) {
      if (n >= words.size() || !std::isdigit(static_cast<unsigned char>(words[n].text.front())) ||
          words[n].text.size() > 4)
        continue;
      const std::size_t part = words[n].part;
      const bool alone = std::ranges::count_if(words, [&](const Word& x) { return x.part == part; }) == 1;
      if (alone || part == words[w].part) count = std::stoi(words[n].text);
    }
  }
  GpuMarking marking;
  auto named = named_gpus(tag, false);  // with its memory and count ("4xa100_80gb")
  marking.model = named.models;
  for (const auto& word : words)  // its words, so that a version after it counts too (cuda11)
    if (marking.vendor.empty()) marking.vendor = gpu_stack_vendor(word.text);
  if (!count) count = named.count;
  if (!gpu && marking.model.empty()) return std::nullopt;
  if (count && *count > 0 && *count <= 1024) marking.gpus = count;
  return marking;
}

}  // namespace gpuplan::annotate

namespace gpuplan {

const std::vector<std::string_view>& convention_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> all;
    auto add = [&](std::string_view name) {
      if (std::ranges::find(all, name) == all.end()) all.push_back(name);
    };
    for (const auto& row : annotate::tag_rows()) add(row.name);
    for (const auto& row : annotate::property_rows()) add(row.name);
    add(annotate::variant_name_convention);
    return all;
  }();
  return names;
}

}  // namespace gpuplan
