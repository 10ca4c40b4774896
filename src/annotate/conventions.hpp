#pragma once
// The built-in annotation conventions of SPEC section 2: tags and exec_properties.
#include <optional>
#include <string_view>

#include "annotate/claim.hpp"
#include "gpuplan/rules.hpp"

namespace gpuplan::annotate {

/// An annotation a built-in convention knows, read (or found malformed) by it.
struct Recognized {
  std::string_view convention;  ///< its name in convention_names()
  Reading reading;
};

/// Reads one tag; nullopt when no built-in convention knows it.
std::optional<Recognized> read_tag(std::string_view tag, const Rules& rules);

/// Reads one exec_property; besides the remote-execution keys (resources:gpu, gpu,
/// gpu_count, gpu_model, Pool, dockerRuntime), any tag convention can arrive as
/// `{"gpu-mem": "40GiB"}` (read as the tag gpu-mem:40GiB) or `{"nvlink": "true"}` (the tag nvlink).
std::optional<Recognized> read_exec_property(std::string_view key, std::string_view value,
                                             const Rules& rules);

/// Mentions GPUs ("gpu", "cuda", "nvidia", "accelerator"): worth a note when nothing reads it.
bool looks_gpu_related(std::string_view text);

}  // namespace gpuplan::annotate
