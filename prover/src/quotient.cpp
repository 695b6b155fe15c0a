// The Groth16 quotient on the CPU. The transforms are chained without bit-reversal passes between
// them: the inverse DIF leaves coefficients in bit-reversed order, which is what the forward DIT
// wants, and the coset shift and 1/n ride along in the DIF's cache-block stage. Only h's final
// inverse transform pays for a bit reversal.
#include <coprove/prover/quotient.hpp>

#include <coprove/prover/detail/ntt_passes.hpp>
#include <coprove/prover/parallel.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace coprove::prover {

namespace {

constexpr std::size_t pointwise_chunk = 1 << 13;

bool overlaps(std::span<const fr> x, std::span<const fr> y) noexcept {
  if (x.empty() || y.empty()) return false;
  const auto* x0 = x.data();
  const auto* y0 = y.data();
  return std::less<const fr*>{}(x0, y0 + y.size()) && std::less<const fr*>{}(y0, x0 + x.size());
}

/// Evaluations on H (natural order) -> evaluations on g*H (natural order), out of place.
void to_coset_evaluations(std::span<const fr> in, std::span<fr> out,
                          const evaluation_domain& domain) {
  parallel_for(0, in.size(), [&](std::size_t lo, std::size_t hi) {
    std::copy(in.begin() + lo, in.begin() + hi, out.begin() + lo);
  }, pointwise_chunk);
  const detail::bitrev_scale shift{domain.size_inv(), evaluation_domain::coset_generator()};
  detail::dif(out, domain.inverse_twiddles(), &shift);
  detail::dit(out, domain.forward_twiddles(), nullptr);
}

}  // namespace

void compute_quotient(std::span<const fr> a, std::span<const fr> b, std::span<const fr> c,
                      std::span<fr> h, const evaluation_domain& domain) {
  const std::size_t n = domain.size();
  const auto check = [&](std::span<const fr> s, const char* name) {
    if (s.size() != n) {
      throw std::invalid_argument(std::string("compute_quotient: ") + name + " has " +
                                  std::to_string(s.size()) + " elements for a domain of size " +
                                  std::to_string(n));
    }
  };
  check(a, "a");
  check(b, "b");
  check(c, "c");
  check(h, "h");
  const std::span<const fr> h_const(h.data(), h.size());
  if (overlaps(h_const, a) || overlaps(h_const, b) || overlaps(h_const, c)) {
    throw std::invalid_argument("compute_quotient: h overlaps an input");
  }

  // Uninitialised scratch: every element is written by the copy before it is read.
  std::unique_ptr<fr[]> b_scratch(new fr[n]);
  std::unique_ptr<fr[]> c_scratch(new fr[n]);
  const std::span<fr> b_coset(b_scratch.get(), n);
  const std::span<fr> c_coset(c_scratch.get(), n);
  to_coset_evaluations(a, h, domain);
  to_coset_evaluations(b, b_coset, domain);
  to_coset_evaluations(c, c_coset, domain);

  const fr z_inv = domain.vanishing_on_coset_inv();
  parallel_for(0, n, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) h[i] = (h[i] * b_coset[i] - c_coset[i]) * z_inv;
  }, pointwise_chunk);

  const detail::bitrev_scale unshift{domain.size_inv(), evaluation_domain::coset_generator_inv()};
  detail::dif(h, domain.inverse_twiddles(), &unshift);
  detail::bit_reverse(h, domain.log_size());
}

}  // namespace coprove::prover
