// The Groth16 quotient on the CPU: the same math as the GPU stage, used by the host backend and by
// every correctness check of the GPU output.
#pragma once

#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>

#include <span>

namespace coprove::field {

/// Given the evaluations a, b, c of A, B, C on the domain, writes into h the coefficients of
/// (A*B - C) / (X^n - 1), computed on the coset g*H. The result equals the textbook sequence (intt,
/// coset_ntt, (a*b - c) / (g^n - 1) pointwise, coset_intt) bit for bit, in six transforms instead
/// of seven (C's coset evaluations are never needed: see quotient.cpp). All spans must have
/// domain.size() elements (std::invalid_argument otherwise); h may not overlap a, b or c. If Z does
/// not divide A*B - C, h holds the coefficients of the degree < n polynomial that agrees with
/// (A*B - C)/Z on the coset.
void compute_quotient(std::span<const fr> a, std::span<const fr> b, std::span<const fr> c,
                      std::span<fr> h, const evaluation_domain& domain);

/// What a Groth16 key's H points expect of h.
enum class quotient_form {
  /// bellman: the coefficients of (A*B - C) / (X^n - 1) (compute_quotient).
  coefficients,
  /// snarkjs: A*B - C evaluated on the odd coset, at omega_2n * omega^i for i < n, with C the
  /// interpolation of a*b taken pointwise on the domain (compute_quotient_odd_coset). The key's H
  /// points hold the division by Z (groth16_prove.js: ifft, batchApplyKey by omega_2n, fft,
  /// joinABC).
  odd_coset_evaluations,
};

/// "coefficients" or "odd_coset_evaluations".
const char* to_string(quotient_form form) noexcept;

/// The snarkjs form: from the evaluations a, b of A, B on the domain, writes into h, in natural
/// order, (A*B - C)(s omega^i) with s = domain.odd_coset_shift() and C the polynomial of degree < n
/// through a[i]*b[i]. Six transforms. With a zkey the domain must be of domain_roots::ffjavascript
/// (the key's H points are laid out on those roots). All spans must have domain.size() elements
/// (std::invalid_argument otherwise); h may not overlap a or b.
void compute_quotient_odd_coset(std::span<const fr> a, std::span<const fr> b, std::span<fr> h,
                                const evaluation_domain& domain);

}  // namespace coprove::field
