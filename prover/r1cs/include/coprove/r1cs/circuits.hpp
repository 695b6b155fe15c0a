// The registry of circuit families by name: how the engine, the CLI and the benchmarks build a
// circuit from a request ("mimc", 2^16 constraints, seed, partition).
#pragma once

#include <coprove/r1cs/circuit.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace coprove::r1cs {

/// The smallest and largest supported log2 domain sizes.
inline constexpr unsigned min_log_constraints = 10;
inline constexpr unsigned max_log_constraints = 27;

/// The known family names ("mimc", "merkle", "bits").
std::span<const std::string_view> circuit_families() noexcept;

/// True when name is a known family.
bool circuit_known(std::string_view name) noexcept;

/// The circuit of family `name` with a domain of 2^log_constraints rows whose witness is derived
/// from (seed, partition). Throws std::invalid_argument naming the field ("circuit" with the known
/// names, or "log_constraints" with the allowed range).
std::unique_ptr<circuit> make_circuit(std::string_view name, unsigned log_constraints,
                                      std::uint64_t seed, std::size_t partition);

/// Throws std::invalid_argument as make_circuit would, without building anything.
void validate_circuit_parameters(std::string_view name, unsigned log_constraints);

}  // namespace coprove::r1cs
