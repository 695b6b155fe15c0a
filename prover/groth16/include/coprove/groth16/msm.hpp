// Multi-scalar multiplication sum_i s_i P_i on the CPU, for G1 and G2 over Fr scalars: the A, B, L
// and H sums of a Groth16 proof. Pippenger's bucket method with signed (Booth-style) digits, so a
// window of c bits needs 2^(c-1) buckets. Wide windows keep affine buckets, added into in batches
// whose slopes share one inversion; narrow ones accumulate in XYZZ coordinates with mixed additions
// of the affine bases. Scalars 0 and 1 never enter the buckets: witnesses of circuits
// with boolean wires are mostly 0 and 1, and those terms are a plain sum of the bases (zero
// skipped). The work is split by window (and, when there are more threads than windows, by
// ranges of points) over field::parallel_for, so field::set_parallelism decides how many cores
// it uses. Variable time: for public or already-blinded scalars (a witness is secret to the
// prover, but Groth16 proofs are computed in variable time by every common prover).
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/field/scalar.hpp>

#include <cstddef>
#include <span>

namespace coprove::groth16 {

/// Tuning knobs; the defaults suit every size.
struct msm_options {
  /// Window width in bits, 1..msm_max_window_bits; 0 picks it from the number of scalars that
  /// are neither 0 nor 1.
  unsigned window_bits = 0;
};

/// The widest window msm accepts (digits are stored as 16-bit signed values, in [-2^15, 2^15)).
inline constexpr unsigned msm_max_window_bits = 16;

/// The window width msm picks in G1 for `count` scalars other than 0 and 1.
unsigned msm_default_window_bits(std::size_t count) noexcept;
/// The same in G2, where an inversion costs fewer of the field's products, so that the affine
/// buckets of wider windows pay from fewer points.
unsigned msm_default_window_bits_g2(std::size_t count) noexcept;

/// sum_i scalars[i] * bases[i] in G1; the spans must have the same length (std::invalid_argument
/// otherwise). Bases may include the identity and repeat; an empty sum is the identity.
field::g1_jacobian msm(std::span<const field::g1_affine> bases, std::span<const field::fr> scalars,
                       const msm_options& options = {});
/// The same in G2.
field::g2_jacobian msm(std::span<const field::g2_affine> bases, std::span<const field::fr> scalars,
                       const msm_options& options = {});

/// sum_i scalars[i] * bases[i] for scalars already in canonical form (each must be below r:
/// std::invalid_argument otherwise).
field::g1_jacobian msm(std::span<const field::g1_affine> bases, std::span<const field::scalar_limbs> scalars,
                       const msm_options& options = {});
field::g2_jacobian msm(std::span<const field::g2_affine> bases, std::span<const field::scalar_limbs> scalars,
                       const msm_options& options = {});

}  // namespace coprove::groth16
