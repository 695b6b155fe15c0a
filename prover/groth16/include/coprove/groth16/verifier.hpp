// Groth16 verification: e(A, B) = e(alpha, beta) e(IC(x), gamma) e(C, delta), with
// IC(x) = ic_0 + sum x_i ic_i, checked as one multi-Miller loop (gamma and delta negated and
// prepared once per key) and one final exponentiation against the cached e(alpha, beta). Many
// proofs are checked together by a random linear combination, z_k random 128-bit:
//   prod_k e(z_k A_k, B_k) e(-(sum z_k) alpha, beta) e(sum z_k IC(x_k), -gamma) e(sum z_k C_k, -delta) = 1,
// one final exponentiation for the lot; only when that fails is each proof checked alone, to name
// the ones that fail.
#pragma once

#include <coprove/field/fq12.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/field/pairing.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/secret_source.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace coprove::groth16 {

/// A verifying key with its pairing work done once.
struct prepared_verifying_key {
  verifying_key vk;
  field::fq12 alpha_beta;  ///< e(alpha, beta)
  field::g2_prepared beta, minus_gamma, minus_delta;

  /// std::invalid_argument for a key that would accept forged proofs (an empty ic, or a point
  /// find_degenerate_point names): no such key is ever used to verify.
  static prepared_verifying_key from(const verifying_key& vk);
};

/// A verdict with its reason ("" when accepted).
struct verification {
  bool accepted = false;
  std::string reason;

  explicit operator bool() const noexcept { return accepted; }
};

/// Checks one proof against its public inputs (without the constant one). The proof's points
/// must be decoded (and so checked) already; a wrong input count is a rejection with that reason.
verification verify(const prepared_verifying_key& pvk, const proof& p, std::span<const field::fr> public_inputs);

/// The verdicts of a batch.
struct batch_verification {
  bool all_accepted = false;
  std::vector<verification> verdicts;  ///< per proof, in order
  bool checked_one_by_one = false;     ///< the combined check failed and each proof was checked alone
};

/// Checks proofs[k] against inputs[k] for every k with one final exponentiation; the combination's
/// coefficients come from `randomness` (the system CSPRNG in production: a prover who can predict
/// them can make an invalid batch pass). Spans of different lengths throw std::invalid_argument.
batch_verification verify_batch(const prepared_verifying_key& pvk, std::span<const proof> proofs,
                                std::span<const std::vector<field::fr>> inputs, secret_source& randomness);

}  // namespace coprove::groth16
