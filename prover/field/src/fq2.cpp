// Fq2 operations off the hot path: exponentiation, inverse and square root.
#include <coprove/field/fq2.hpp>

namespace coprove::field {

fq2 fq2::pow(const std::array<std::uint64_t, 6>& e) const noexcept {
  fq2 result = one();
  for (int limb = 5; limb >= 0; --limb) {
    for (int bit = 63; bit >= 0; --bit) {
      result = result.square();
      if ((e[limb] >> bit) & 1) result *= *this;
    }
  }
  return result;
}

fq2 fq2::inverse() const noexcept {
  // (c0 + c1 u)^-1 = (c0 - c1 u) / (c0^2 + c1^2); the norm is zero only for zero.
  const fq t = norm().inverse();
  return {c0 * t, -(c1 * t)};
}

std::optional<fq2> fq2::sqrt() const noexcept {
  const auto& k = constants::fq_p_minus_3_div_4;
  const fq2 a1 = pow({k[0], k[1], k[2], k[3], k[4], k[5]});  // a^((p-3)/4)
  const fq2 x0 = a1 * *this;                                  // a^((p+1)/4)
  const fq2 alpha = a1 * x0;                                  // a^((p-1)/2)
  const fq2 minus_one = -one();
  // alpha^p * alpha = a^((p^2-1)/2), the quadratic character of a.
  if (alpha.conjugate() * alpha == minus_one) return std::nullopt;
  fq2 x;
  if (alpha == minus_one) {
    x = fq2{-x0.c1, x0.c0};  // u * x0
  } else {
    const auto& h = constants::fq_p_minus_1_div_2;
    const fq2 b = (one() + alpha).pow({h[0], h[1], h[2], h[3], h[4], h[5]});
    x = b * x0;
  }
  if (x.square() != *this) return std::nullopt;
  return x;
}

bool fq2::lexicographically_largest() const noexcept {
  return c1.lexicographically_largest() || (c1.is_zero() && c0.lexicographically_largest());
}

}  // namespace coprove::field
