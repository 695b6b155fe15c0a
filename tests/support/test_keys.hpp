// Groth16 keys for the tests: made once per circuit and size with an insecure seeded setup (said
// at warning), cached for the process, and handed to engines as engine_config::keys.
#pragma once

#include <coprove/engine/engine.hpp>
#include <coprove/groth16/keys.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace coprove::test {

/// The key of circuit/log_constraints (setup seeded with `seed`), made on first use.
std::shared_ptr<const groth16::proving_key> test_key(const std::string& circuit, unsigned log_constraints,
                                                     std::uint64_t seed = 1);

/// engine_config::keys for these circuits and sizes.
std::vector<engine::circuit_keys> test_keys(const std::vector<std::pair<std::string, unsigned>>& circuits);

}  // namespace coprove::test
