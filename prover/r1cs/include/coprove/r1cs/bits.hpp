// The bit-rotation circuit ("bits"): a witness of bits, as SHA-256 circuits have. A 64-bit state,
// each bit its own variable, goes through rounds of x <- x XOR rotl(x, k) (k cycling 13, 7, 17),
// one constraint a bit a round: (2a) * b = a + b - c, which holds for bits a, b exactly when c is
// a XOR b (and then c is a bit). The first state's bits are constrained to be bits; the last state,
// read as a 64-bit number, is the public output. Every variable but the constant one and the
// output is 0 or 1, so the proof's MSMs see the 0/1-heavy scalars that real hash circuits give.
//
// Domain layout (n = 2^log_constraints rows): rows 0..63 the first state's bit checks, then 64 a
// round for R rounds, then the packing row (sum 2^i c_i) * 1 = output, then the public-input rows
// (one, output), the rest zero padding; R = floor((n - 67) / 64).
#pragma once

#include <coprove/r1cs/circuit.hpp>
#include <coprove/field/fr.hpp>

#include <cstddef>
#include <cstdint>

namespace coprove::r1cs {

class bits_circuit final : public circuit {
 public:
  /// The state's width in bits.
  static constexpr std::size_t width = 64;

  /// Starts from `state`; construction is cheap (a circuit can be built just for its shape).
  bits_circuit(unsigned log_constraints, std::uint64_t state);

  /// The partition's first state: the first eight bytes of SHA-256("coprove/bits/state", seed,
  /// partition) (seed and partition as little-endian u64), read little-endian.
  static std::uint64_t state_for(std::uint64_t seed, std::size_t partition);
  /// The rounds that fit in 2^log_constraints rows.
  static std::size_t rounds_for(unsigned log_constraints) noexcept;
  /// The rotation of round r.
  static unsigned rotation(std::size_t round) noexcept;

  std::string_view family() const noexcept override { return "bits"; }
  unsigned log_constraints() const noexcept override { return log_constraints_; }
  circuit_shape shape() const noexcept override;
  std::uint64_t structure_digest() const noexcept override;
  void synthesize(constraint_system& cs) const override;

  std::size_t rounds() const noexcept { return rounds_; }
  /// The last state, computed natively.
  std::uint64_t output() const noexcept;

 private:
  unsigned log_constraints_;
  std::size_t rounds_;
  std::uint64_t state_;
};

}  // namespace coprove::r1cs
