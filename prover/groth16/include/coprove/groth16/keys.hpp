// Groth16 keys in bellman's layout and meaning (zkcrypto/bellman groth16/src/{lib,generator}.rs),
// and the setup that makes them from a circuit's constraint matrices.
//
// The QAP lives on the circuit's domain of n = 2^k rows (the r1cs layer's layout: the circuit's
// constraints, then one row `input_i * 0 = 0` per public input, the constant one included, then
// zero rows). For variable i, u_i, v_i, w_i interpolate column i of A, B, C over the domain; the
// setup evaluates them at a secret tau through the Lagrange basis (a transposed product with the
// matrices) and then:
//   a_i = [u_i(tau)] G1, b_g1_i = [v_i(tau)] G1, b_g2_i = [v_i(tau)] G2 for every variable;
//   ic_i = [(beta u_i + alpha v_i + w_i)(tau) / gamma] G1 for the inputs (the one first);
//   l_i = [(beta u_i + alpha v_i + w_i)(tau) / delta] G1 for the auxiliaries;
//   h_j = [tau^j Z(tau) / delta] G1 for j = 0..n-2, Z(X) = X^n - 1 (snarkjs's zkeys hold n
//   other H points: see setup).
// In memory a, b_g1 and b_g2 hold one point per variable (the identity where the column is
// empty), so provers index them by variable; the params file drops the empty columns as bellman
// does (key_shape says which).
#pragma once

#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/field/quotient.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/constraint_matrices.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace coprove::groth16 {

/// What a key must look like for a circuit: the counts and which variables have non-empty A and
/// B columns (bellman's density; the params file holds a and b points only for those).
struct key_shape {
  std::size_t num_inputs = 0;  ///< public inputs, the constant one included
  std::size_t num_aux = 0;
  std::size_t domain_size = 0;
  std::vector<bool> a_density;  ///< per variable: column non-empty in A
  std::vector<bool> b_density;  ///< per variable: column non-empty in B

  /// The shape of the matrices' circuit.
  static key_shape of(const r1cs::pce_matrices& matrices);

  std::size_t num_variables() const noexcept { return num_inputs + num_aux; }
  /// Points in the params file's a section (non-empty A columns).
  std::size_t a_count() const noexcept;
  /// Points in the b_g1 and b_g2 sections (non-empty B columns).
  std::size_t b_count() const noexcept;
  /// Points in the h section: n - 1.
  std::size_t h_count() const noexcept { return domain_size == 0 ? 0 : domain_size - 1; }

  friend bool operator==(const key_shape&, const key_shape&) = default;
};

/// bellman's VerifyingKey.
struct verifying_key {
  field::g1_affine alpha_g1;
  field::g1_affine beta_g1;
  field::g2_affine beta_g2;
  field::g2_affine gamma_g2;
  field::g1_affine delta_g1;
  field::g2_affine delta_g2;
  std::vector<field::g1_affine> ic;  ///< one per public input, the constant one first

  /// Public inputs a proof carries (without the constant one).
  std::size_t num_public_inputs() const noexcept { return ic.empty() ? 0 : ic.size() - 1; }

  friend bool operator==(const verifying_key&, const verifying_key&) = default;
};

/// A point of a verifying key at the identity where verification needs a point of its own: with
/// gamma and delta at infinity, say, A = alpha, B = beta and any C verify for every input.
struct degenerate_point {
  const char* name;                   ///< "alpha_g1", "beta_g2", "gamma_g2", "delta_g2" or "ic"
  std::optional<std::size_t> index;   ///< the ic point's index
};

/// The first point of `vk` that verification uses (alpha_g1, beta_g2, gamma_g2, delta_g2, every ic
/// point) and that is the identity, if any; an empty ic is reported as ic with no index. beta_g1
/// and delta_g1 are not looked at: only a prover uses them, and snarkjs's verification_key.json
/// does not carry them.
std::optional<degenerate_point> find_degenerate_point(const verifying_key& vk) noexcept;

/// bellman's Parameters: the verifying key and the proving queries. A snarkjs zkey gives the same
/// queries (A, B1, B2, C as a, b_g1, b_g2, l) with H for the other quotient form: n points that
/// take (A*B - C) on the odd coset (h_form = odd_coset_evaluations).
struct proving_key {
  verifying_key vk;                     ///< alpha_g1, beta_g1, beta_g2, delta_g1, delta_g2 (and gamma_g2, ic)
  std::vector<field::g1_affine> a;      ///< per variable
  std::vector<field::g1_affine> b_g1;   ///< per variable
  std::vector<field::g2_affine> b_g2;   ///< per variable
  std::vector<field::g1_affine> l;      ///< per auxiliary variable
  std::vector<field::g1_affine> h;      ///< n - 1 points (coefficients), or n (odd_coset_evaluations)
  /// What h's points expect: bellman's coefficients of (A*B - C)/Z, or snarkjs's odd-coset values.
  field::quotient_form h_form = field::quotient_form::coefficients;

  std::size_t num_inputs() const noexcept { return vk.ic.size(); }
  std::size_t num_aux() const noexcept { return l.size(); }
  std::size_t num_variables() const noexcept { return a.size(); }
  std::size_t domain_size() const noexcept {
    return h_form == field::quotient_form::odd_coset_evaluations ? h.size() : h.size() + 1;
  }

  /// Heap bytes held by the points: sizeof(g1_affine) (a + b_g1 + l + h + ic) +
  /// sizeof(g2_affine) b_g2, the figure a memory plan charges.
  std::size_t bytes() const noexcept;
  /// The bytes a key of this shape holds, before making or loading it.
  static std::size_t estimate_bytes(std::size_t num_inputs, std::size_t num_aux, std::size_t domain_size) noexcept;

  /// Throws std::invalid_argument unless the vector lengths agree with each other and with shape
  /// (when given).
  void check_consistent(const key_shape* shape = nullptr) const;

  friend bool operator==(const proving_key&, const proving_key&) = default;
};

/// The toxic waste of a setup; wiped on destruction.
struct toxic_waste {
  field::fr tau = field::fr::zero(), alpha = field::fr::zero(), beta = field::fr::zero(),
            gamma = field::fr::zero(), delta = field::fr::zero();

  /// Zeros, for a caller that sets the values itself (tests with known waste).
  toxic_waste() = default;
  /// Draws all five (non-zero; tau also off the domain, so Z(tau) != 0).
  toxic_waste(secret_source& secrets, std::size_t domain_size);
  toxic_waste(const toxic_waste&) = delete;
  toxic_waste& operator=(const toxic_waste&) = delete;
  ~toxic_waste();
};

/// The keys of the matrices' circuit from the given toxic waste (all cores). Throws
/// std::invalid_argument for matrices that fail validate() or whose rows exceed the domain.
/// `h_form` picks bellman's keys (above) or snarkjs's: the domain on ffjavascript's roots and n
/// points h_i = [L'_(2i+1)(tau) / delta] G1, L' the Lagrange basis of the 2n-th roots (what a
/// zkey holds; zkey_new.js takes them from the odd entries of the ptau's Lagrange section).
proving_key setup(const r1cs::pce_matrices& matrices, const toxic_waste& waste,
                  field::quotient_form h_form = field::quotient_form::coefficients);

/// The keys with toxic waste drawn from `secrets` (tau off the domain, and for the odd-coset form
/// off the 2n-th roots too) and wiped before returning.
proving_key setup(const r1cs::pce_matrices& matrices, secret_source& secrets,
                  field::quotient_form h_form = field::quotient_form::coefficients);

/// The constraint matrices of a circuit, recorded from one slow synthesis (its witness for the
/// partition the circuit was made for is discarded).
r1cs::pce_matrices record_matrices(const r1cs::circuit& circuit);

}  // namespace coprove::groth16
