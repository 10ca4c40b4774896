#pragma once
// Names a launcher takes for a node's objects (Kubernetes object names, Buildkite step keys),
// made from node names that it may not take.
#include <cstddef>
#include <string>

namespace gpuplan {

/// `prefix`, the node's name lower-cased with every character but a letter or digit made '-',
/// then `tail`, at most `limit` characters in all (runs of '-' made one, none at the end). A name
/// that this changes, or that is too long to fit before the tail, ends in '-' and 8 hex digits of
/// a hash of the original, so two nodes never share one; a name it leaves alone is kept as it is.
/// `tail` is empty or a '-' and what a launcher takes; `limit` leaves room for the hash.
std::string hashed_name(const std::string& prefix, const std::string& node, const std::string& tail,
                        std::size_t limit);

}  // namespace gpuplan
