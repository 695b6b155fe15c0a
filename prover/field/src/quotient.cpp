// The Groth16 quotient on the CPU, in six transforms instead of the textbook seven.
//
// Textbook: h = coset_intt((A_c * B_c - C_c) / (g^n - 1)), where X_c = coset_ntt(intt(x)) are the
// evaluations on the coset g*H: seven transforms (three inverse, three coset forward, one coset
// inverse). The coset inverse transform is linear, and C has degree < n, so coset_intt(C_c) is
// C's coefficient vector exactly, which the first step already computed as intt(c). Hence
//   h = coset_intt(A_c * B_c) / (g^n - 1) - intt(c) / (g^n - 1),
// with C never evaluated on the coset: three inverse transforms, two coset forward (A and B), and
// the final coset inverse of the product, whose result has C's scaled coefficients subtracted.
// Field arithmetic is exact, so h is the same field element for element (and, all values being
// fully reduced, the same bytes) as the seven-transform sequence's, whether or not Z divides
// A*B - C.
//
// The transforms are chained without bit-reversal passes between them: the inverse DIF leaves
// coefficients in bit-reversed order, which is what the forward DIT wants, and the coset shift,
// 1/n and 1/(g^n - 1) ride along in the DIF's cache-block stage. C's coefficients stay in
// bit-reversed order, like h's before its final permutation, so the subtraction is fused into
// that one bit-reversal pass.
#include <coprove/field/quotient.hpp>

#include <coprove/field/detail/ntt_passes.hpp>
#include <coprove/field/parallel.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace coprove::field {

namespace {

constexpr std::size_t pointwise_chunk = 1 << 13;

bool overlaps(std::span<const fr> x, std::span<const fr> y) noexcept {
  if (x.empty() || y.empty()) return false;
  const auto* x0 = x.data();
  const auto* y0 = y.data();
  return std::less<const fr*>{}(x0, y0 + y.size()) && std::less<const fr*>{}(y0, x0 + x.size());
}

void copy(std::span<const fr> in, std::span<fr> out) {
  parallel_for(0, in.size(), [&](std::size_t lo, std::size_t hi) {
    std::copy(in.begin() + lo, in.begin() + hi, out.begin() + lo);
  }, pointwise_chunk);
}

/// Evaluations on H (natural order) -> evaluations on shift*H (natural order), in place.
void to_coset_evaluations(std::span<fr> values, const evaluation_domain& domain, const fr& shift) {
  const detail::bitrev_scale scale{domain.size_inv(), shift};
  detail::dif(values, domain.inverse_twiddles(), &scale);
  detail::dit(values, domain.forward_twiddles(), nullptr);
}

/// The same, out of place.
void to_coset_evaluations(std::span<const fr> in, std::span<fr> out, const evaluation_domain& domain,
                          const fr& shift) {
  copy(in, out);
  to_coset_evaluations(out, domain, shift);
}

void check_quotient_spans(const char* function, std::span<const fr> a, std::span<const fr> b,
                          std::span<const fr> c, std::span<fr> h, std::size_t n) {
  const auto check = [&](std::span<const fr> s, const char* name) {
    if (s.size() != n) {
      throw std::invalid_argument(std::string(function) + ": " + name + " has " + std::to_string(s.size()) +
                                  " elements for a domain of size " + std::to_string(n));
    }
  };
  check(a, "a");
  check(b, "b");
  if (c.data() != nullptr) check(c, "c");
  check(h, "h");
  const std::span<const fr> h_const(h.data(), h.size());
  if (overlaps(h_const, a) || overlaps(h_const, b) || overlaps(h_const, c)) {
    throw std::invalid_argument(std::string(function) + ": h overlaps an input");
  }
}

/// h = h - c, both in bit-reversed order, then h into natural order: one pass over both.
void subtract_and_bit_reverse(std::span<fr> h, std::span<const fr> c, unsigned log_n) {
  parallel_for(0, h.size(), [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      const std::size_t r = detail::reverse_bits(i, log_n);
      if (i < r) {
        const fr at_i = h[i] - c[i];
        h[i] = h[r] - c[r];
        h[r] = at_i;
      } else if (i == r) {
        h[i] -= c[i];
      }
    }
  }, 1 << 14);
}

}  // namespace

void compute_quotient(std::span<const fr> a, std::span<const fr> b, std::span<const fr> c,
                      std::span<fr> h, const evaluation_domain& domain) {
  const std::size_t n = domain.size();
  if (c.data() == nullptr && n > 0) throw std::invalid_argument("compute_quotient: c is empty");
  check_quotient_spans("compute_quotient", a, b, c, h, n);

  // Uninitialised scratch: every element is written by a copy before it is read.
  std::unique_ptr<fr[]> b_scratch(new fr[n]);
  std::unique_ptr<fr[]> c_scratch(new fr[n]);
  const std::span<fr> b_coset(b_scratch.get(), n);
  const std::span<fr> c_coeffs(c_scratch.get(), n);
  const fr z_inv = domain.vanishing_on_coset_inv();
  const fr scale = domain.size_inv() * z_inv;

  // Transforms 1-4: A and B on the coset.
  to_coset_evaluations(a, h, domain, evaluation_domain::coset_generator());
  to_coset_evaluations(b, b_coset, domain, evaluation_domain::coset_generator());
  // Transform 5: C's coefficients times 1/(g^n - 1), left in bit-reversed order.
  copy(c, c_coeffs);
  const detail::bitrev_scale c_scale{scale, fr::one()};
  detail::dif(c_coeffs, domain.inverse_twiddles(), &c_scale);

  parallel_for(0, n, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) h[i] *= b_coset[i];
  }, pointwise_chunk);

  // Transform 6: coefficients of A*B on the coset, times 1/(g^n - 1) (bit-reversed order), minus
  // C's, into natural order.
  const detail::bitrev_scale unshift{scale, evaluation_domain::coset_generator_inv()};
  detail::dif(h, domain.inverse_twiddles(), &unshift);
  subtract_and_bit_reverse(h, c_coeffs, domain.log_size());
}

const char* to_string(quotient_form form) noexcept {
  return form == quotient_form::odd_coset_evaluations ? "odd_coset_evaluations" : "coefficients";
}

void compute_quotient_odd_coset(std::span<const fr> a, std::span<const fr> b, std::span<fr> h,
                                const evaluation_domain& domain) {
  const std::size_t n = domain.size();
  check_quotient_spans("compute_quotient_odd_coset", a, b, {}, h, n);
  const fr shift = domain.odd_coset_shift();

  std::unique_ptr<fr[]> b_scratch(new fr[n]);
  std::unique_ptr<fr[]> c_scratch(new fr[n]);
  const std::span<fr> b_coset(b_scratch.get(), n);
  const std::span<fr> c_coset(c_scratch.get(), n);
  // C is a*b on the domain (snarkjs's buildABC1): the key has no C matrix.
  parallel_for(0, n, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) c_coset[i] = a[i] * b[i];
  }, pointwise_chunk);
  to_coset_evaluations(a, h, domain, shift);
  to_coset_evaluations(b, b_coset, domain, shift);
  to_coset_evaluations(c_coset, domain, shift);
  // joinABC: no division by Z, which the key's H points carry.
  parallel_for(0, n, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) h[i] = h[i] * b_coset[i] - c_coset[i];
  }, pointwise_chunk);
}

}  // namespace coprove::field
