// The keys an engine of the binary proves with: the key directories given with --keys (each read
// with every check), or, when none is given, the development key of the workload's circuit and
// size from the key cache (made there on first use, said loudly each time).
#pragma once

#include "keys.hpp"

#include <coprove/engine/engine.hpp>

#include <boost/json/array.hpp>

#include <string>
#include <vector>

namespace coprove::app {

/// The keys handed to the engine, and what the report says about them.
struct engine_keys {
  std::vector<engine::circuit_keys> keys;
  std::vector<key_metadata> metadata;  ///< per key, in the same order
  std::vector<std::string> dirs;
  std::vector<double> load_seconds;
  bool any_development = false;

  /// [{"circuit", "log_constraints", "dir", "development", "insecure_seed", "vk_sha256", "load_s"}].
  boost::json::array to_json() const;
  /// True when a key for circuit/log_constraints is among them.
  bool has(const std::string& circuit, unsigned log_constraints) const;
};

/// Reads every directory of `dirs`; with none, the development key of (circuit, log_constraints)
/// from `cache_dir` (empty: default_key_cache_dir()). With `required` set, a key for that circuit
/// and size must be among them: otherwise a usage_error names `command`, the keys there are and how
/// to make the missing one. Key directories that cannot be read are usage errors naming the file.
/// `subgroup_test` (key_subgroup_test's) makes the proving queries' subgroup tests.
engine_keys load_engine_keys(const std::vector<std::string>& dirs, const std::string& cache_dir,
                             const std::string& circuit, unsigned log_constraints, const std::string& command,
                             bool required = true, const groth16::bulk_subgroup_test* subgroup_test = nullptr);

}  // namespace coprove::app
