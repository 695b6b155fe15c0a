// Circuit ids and the registry of circuit families by name.
#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/merkle.hpp>
#include <coprove/r1cs/mimc.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace coprove::r1cs {

circuit::~circuit() = default;

std::string circuit::id() const {
  std::string out(family());
  out += '/';
  out += std::to_string(log_constraints());
  return out;
}

namespace {

constexpr std::array<std::string_view, 2> families{"mimc", "merkle"};

std::string known_names() {
  std::string out;
  for (std::string_view f : families) {
    if (!out.empty()) out += ", ";
    out += '"';
    out += f;
    out += '"';
  }
  return out;
}

}  // namespace

std::span<const std::string_view> circuit_families() noexcept { return families; }

bool circuit_known(std::string_view name) noexcept {
  for (std::string_view f : families) {
    if (f == name) return true;
  }
  return false;
}

void validate_circuit_parameters(std::string_view name, unsigned log_constraints) {
  if (!circuit_known(name)) {
    throw std::invalid_argument("circuit: unknown circuit \"" + std::string(name) +
                                "\" (known: " + known_names() + ")");
  }
  if (log_constraints < min_log_constraints || log_constraints > max_log_constraints) {
    throw std::invalid_argument("log_constraints: " + std::to_string(log_constraints) +
                                " is out of range (allowed " + std::to_string(min_log_constraints) +
                                ".." + std::to_string(max_log_constraints) + ")");
  }
}

std::unique_ptr<circuit> make_circuit(std::string_view name, unsigned log_constraints,
                                      std::uint64_t seed, std::size_t partition) {
  validate_circuit_parameters(name, log_constraints);
  if (name == "mimc") {
    return std::make_unique<mimc_circuit>(log_constraints,
                                          mimc_circuit::preimage_for(seed, partition));
  }
  return std::make_unique<merkle_path_circuit>(log_constraints, seed, partition);
}

}  // namespace coprove::r1cs
