// Test keys (see test_keys.hpp).
#include <support/test_keys.hpp>

#include <coprove/groth16/secret_source.hpp>
#include <coprove/r1cs/circuits.hpp>

#include <map>
#include <mutex>
#include <tuple>

namespace coprove::test {

std::shared_ptr<const groth16::proving_key> test_key(const std::string& circuit, unsigned log_constraints,
                                                     std::uint64_t seed) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, unsigned, std::uint64_t>, std::shared_ptr<const groth16::proving_key>> made;
  std::lock_guard lock(mutex);
  auto& key = made[{circuit, log_constraints, seed}];
  if (!key) {
    const auto c = r1cs::make_circuit(circuit, log_constraints, 1, 0);
    auto secrets = groth16::secret_source::insecure_seeded(seed, "the tests' key for " + circuit);
    key = std::make_shared<const groth16::proving_key>(groth16::setup(groth16::record_matrices(*c), secrets));
  }
  return key;
}

std::vector<engine::circuit_keys> test_keys(const std::vector<std::pair<std::string, unsigned>>& circuits) {
  std::vector<engine::circuit_keys> out;
  for (const auto& [name, log] : circuits)
    out.push_back({name, log, test_key(name, log), "test key (insecure seeded setup)"});
  return out;
}

}  // namespace coprove::test
