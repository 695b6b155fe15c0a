// The circom circuits of `coprove serve` (server.circuits): each zkey read with every check at
// start, for the engine's zkey_circuits.
#pragma once

#include <coprove/engine/engine.hpp>
#include <coprove/groth16/key_files.hpp>

#include <string>
#include <utility>
#include <vector>

namespace coprove::app {

/// Reads each (name, zkey path); a key that cannot be used throws usage_error naming the
/// configuration key, the circuit, the file, the section and the problem. `subgroup_test`
/// (key_subgroup_test's) makes the proving sections' subgroup tests.
std::vector<engine::zkey_circuit> load_zkey_circuits(const std::vector<std::pair<std::string, std::string>>& circuits,
                                                     const std::string& command,
                                                     const groth16::bulk_subgroup_test* subgroup_test = nullptr);

/// The largest .wtns file among the circuits (0 for none): the body limit of their proof requests.
std::size_t largest_witness_bytes(const std::vector<engine::zkey_circuit>& circuits);

/// Raises the memory plan's max_log_constraints to the largest circuit's domain.
void plan_for_zkey_circuits(engine::engine_config& cfg);

}  // namespace coprove::app
