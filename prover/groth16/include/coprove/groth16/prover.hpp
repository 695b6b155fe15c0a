// Groth16 proving on the CPU: from the proving key, the full assignment w (the constant one, the
// other public inputs, then the auxiliaries, in the circuit's order) and h, the coefficients of
// (A(X) B(X) - C(X)) / (X^n - 1) in natural order (degree 0 first),
//   A = alpha + sum w_i a_i + r delta                                   (G1)
//   B = beta + sum w_i b_i + s delta                                    (G2; in G1 for C)
//   C = sum_aux w_i l_i + sum_j h_j H_j + s A + r B_g1 - r s delta      (G1)
// with r, s fresh secrets, wiped after use. The five MSMs are groth16::msm (all cores); the blinding
// terms use constant-time scalar multiplication.
#pragma once

#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/constraint_matrices.hpp>

#include <span>
#include <vector>

namespace coprove::groth16 {

/// A proof with r and s drawn from `secrets`. h has n - 1 values, or n whose last is zero (as
/// field::compute_quotient writes them; a non-zero last one means the assignment does not satisfy
/// the circuit); for a key of the odd-coset form (a zkey), the n values of
/// field::compute_quotient_odd_coset. Throws std::invalid_argument on wrong lengths, an assignment whose first value
/// is not one, or a non-zero h[n-1].
proof prove(const proving_key& pk, std::span<const field::fr> assignment, std::span<const field::fr> h,
            secret_source& secrets);

/// The five MSMs of a proof, before the blinding: what a compute backend hands back when it runs
/// them (on a device, h and the witness never leave it).
///   a = sum w_i a_i, b_g1 = sum w_i b_g1_i, b_g2 = sum w_i b_g2_i, c = sum_aux w_i l_i + sum_j h_j H_j
struct msm_sums {
  field::g1_jacobian a, b_g1, c;
  field::g2_jacobian b_g2;
};

/// The MSMs on the CPU (groth16::msm, all cores), with prove()'s checks of the lengths, the
/// constant one and h's last value.
msm_sums compute_msm_sums(const proving_key& pk, std::span<const field::fr> assignment, std::span<const field::fr> h);

/// The proof from the sums with r and s drawn from `secrets` (wiped after use): the blinding
/// terms, in constant time. Equal to prove() on the same inputs when the sums are the inputs'.
proof assemble_proof(const proving_key& pk, const msm_sums& sums, secret_source& secrets);

/// The same with the blinding given.
proof assemble_proof_with_blinding(const proving_key& pk, const msm_sums& sums, const field::fr& r,
                                   const field::fr& s);

/// The same with the blinding given (r = s = 0 gives the unblinded proof, for comparing
/// backends; never publish such a proof, it leaks information about the witness).
proof prove_with_blinding(const proving_key& pk, std::span<const field::fr> assignment,
                          std::span<const field::fr> h, const field::fr& r, const field::fr& s);

/// The bytes prove() allocates besides its inputs and the key, at most (the MSMs' canonical
/// scalars, digits and buckets, one MSM at a time), for a memory plan.
std::size_t estimate_prove_working_set(std::size_t num_variables, std::size_t domain_size) noexcept;

/// The n coefficients of (A B - C) / Z from the evaluations a, b, c on the domain (each of its
/// size), by field::compute_quotient; the last is zero when a * b = c holds on every row.
std::vector<field::fr> quotient_coefficients(std::span<const field::fr> a, std::span<const field::fr> b,
                                             std::span<const field::fr> c);

/// What proving a circuit on the CPU needs besides the key.
struct witness {
  std::vector<field::fr> assignment;     ///< one, public inputs, auxiliaries
  std::vector<field::fr> public_inputs;  ///< without the constant one
  std::vector<field::fr> h;              ///< n coefficients
};

/// The circuit's assignment (witness-only synthesis), a = A w, b = B w, c = C w by the matrices,
/// and h from them. Throws std::invalid_argument when the matrices are not the circuit's.
witness compute_witness(const r1cs::circuit& circuit, const r1cs::pce_matrices& matrices);

}  // namespace coprove::groth16
