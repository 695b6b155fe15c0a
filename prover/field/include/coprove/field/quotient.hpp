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

}  // namespace coprove::field
