// Loading server.circuits (see zkey_circuits.hpp).
#include "zkey_circuits.hpp"

#include "cli.hpp"

#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_witness.hpp>
#include <coprove/runtime/input_file.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

namespace coprove::app {

std::vector<engine::zkey_circuit> load_zkey_circuits(const std::vector<std::pair<std::string, std::string>>& circuits,
                                                     const std::string& command,
                                                     const groth16::bulk_subgroup_test* subgroup_test) {
  std::vector<engine::zkey_circuit> out;
  for (const auto& [name, path] : circuits) {
    try {
      // A regular file within the limit, before the reader opens it.
      runtime::regular_file_size(path, runtime::input_limits::binary_file_bytes, "zkey");
      out.push_back({name, std::make_shared<const groth16::zkey>(groth16::read_zkey(path, subgroup_test))});
    } catch (const r1cs::circom_file_error& e) {
      throw usage_error("coprove " + command + ": server.circuits (" + name + "): " + e.what());
    } catch (const runtime::input_file_error& e) {
      throw usage_error("coprove " + command + ": server.circuits (" + name + "): " + e.what());
    }
    const auto& key = *out.back().key;
    std::cerr << "coprove " << command << ": circuit " << name << " from " << path << " (" << key.num_variables()
              << " signals, " << key.num_public << " public, domain 2^" << key.domain().log_size() << ")\n";
  }
  return out;
}

std::size_t largest_witness_bytes(const std::vector<engine::zkey_circuit>& circuits) {
  std::size_t most = 0;
  for (const auto& c : circuits) most = std::max(most, r1cs::wtns_file_bytes(c.key->num_variables()));
  return most;
}

void plan_for_zkey_circuits(engine::engine_config& cfg) {
  for (const auto& c : cfg.zkey_circuits)
    cfg.max_log_constraints = std::max(cfg.max_log_constraints, c.key->domain().log_size());
}

}  // namespace coprove::app
