// A circuit: a type with a stable id ("mimc/16": family and log2 of the domain size) that
// synthesizes into any constraint system. The id names the constraint structure, which every
// partition of a job shares; the witness (which preimage, which path) differs per partition.
#pragma once

#include <coprove/r1cs/constraint_system.hpp>

#include <cstddef>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace coprove::r1cs {

/// A circuit sized to a domain of 2^log_constraints rows: its own constraints, one row per public
/// input, and zero padding fill exactly that many rows.
class circuit {
 public:
  virtual ~circuit();

  /// The family name, e.g. "mimc".
  virtual std::string_view family() const noexcept = 0;
  /// log2 of the domain size n.
  virtual unsigned log_constraints() const noexcept = 0;
  /// The sizes synthesis will produce (exact, so systems can be sized up front).
  virtual circuit_shape shape() const noexcept = 0;
  /// A digest of everything that determines A, B and C (family, size, round count, constants
  /// derivation); equal digests mean equal matrices. A saved PCE is only used for a circuit whose
  /// digest matches.
  virtual std::uint64_t structure_digest() const noexcept = 0;
  /// Allocates the variables and enforces the constraints into cs.
  virtual void synthesize(constraint_system& cs) const = 0;

  /// "family/log", e.g. "mimc/16": the key of the PCE cache.
  std::string id() const;
  /// n = 2^log_constraints: the length of the a, b and c vectors.
  std::size_t domain_size() const noexcept { return std::size_t{1} << log_constraints(); }
};

/// SHA-256 of `label`, then seed and partition as little-endian u64: where a circuit family draws a
/// partition's witness from.
std::array<std::byte, 32> partition_digest(std::string_view label, std::uint64_t seed, std::size_t partition);

/// A structure digest from the words that determine a circuit's matrices (FNV-1a over their
/// little-endian bytes; not a security boundary).
std::uint64_t circuit_structure_digest(std::initializer_list<std::uint64_t> words) noexcept;

}  // namespace coprove::r1cs
