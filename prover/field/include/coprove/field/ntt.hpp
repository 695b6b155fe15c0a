// Number-theoretic transforms over an evaluation_domain on the CPU, multi-threaded over the shared
// pool. Every transform takes and returns natural order: coefficients by degree, evaluations at
// omega^i (or g * omega^i on the coset, g = 7).
#pragma once

#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>

#include <span>

namespace coprove::field {

/// Coefficients -> evaluations on the domain, in place. values.size() must equal domain.size()
/// (std::invalid_argument otherwise); the same holds for the functions below.
void ntt(std::span<fr> values, const evaluation_domain& domain);
/// Evaluations on the domain -> coefficients (includes the factor 1/n), in place.
void intt(std::span<fr> values, const evaluation_domain& domain);
/// Coefficients -> evaluations on the coset g*H (g = 7), in place.
void coset_ntt(std::span<fr> values, const evaluation_domain& domain);
/// Evaluations on the coset g*H -> coefficients, in place.
void coset_intt(std::span<fr> values, const evaluation_domain& domain);

}  // namespace coprove::field
