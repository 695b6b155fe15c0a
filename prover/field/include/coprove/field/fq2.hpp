// Fq2 = Fq[u] / (u^2 + 1), the field of G2's coordinates and the bottom of the Fq12 tower. Products
// use Karatsuba (three Fq multiplications; on the MULX/ADX path three double-width products and two
// reductions) and squares the complex method (two), with the sums fed to the Fq product
// unreduced; inline because the pairing and G2 arithmetic run on them.
#pragma once

#include <coprove/field/fq.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <random>

namespace coprove::field {

/// An element c0 + c1 u of Fq2 (u^2 = -1).
struct fq2 {
  fq c0, c1;

  static constexpr fq2 zero() noexcept { return fq2{fq::zero(), fq::zero()}; }
  static fq2 one() noexcept { return fq2{fq::one(), fq::zero()}; }
  /// A uniformly random element.
  template <class URBG>
  static fq2 random(URBG& gen) {
    const fq a = fq::random(gen);
    return fq2{a, fq::random(gen)};
  }

  bool is_zero() const noexcept { return c0.is_zero() && c1.is_zero(); }
  friend bool operator==(const fq2& a, const fq2& b) noexcept = default;

  fq2 operator+(const fq2& o) const noexcept { return {c0 + o.c0, c1 + o.c1}; }
  fq2 operator-(const fq2& o) const noexcept { return {c0 - o.c0, c1 - o.c1}; }
  fq2 operator-() const noexcept { return {-c0, -c1}; }
  fq2 operator*(const fq2& o) const noexcept {
#if defined(COPROVE_FQ_HAVE_ADX_PATH)
    if (detail::fq_use_adx.load(std::memory_order_relaxed)) {
      fq2 out;
      detail::fq2_mul_adx(c0.limbs, c1.limbs, o.c0.limbs, o.c1.limbs, out.c0.limbs, out.c1.limbs);
      return out;
    }
#endif
    const fq v0 = c0 * o.c0;
    const fq v1 = c1 * o.c1;
    // The product takes the sums unreduced (below 2p).
    const fq sums{detail::mont_mul(detail::add_unreduced(c0.limbs, c1.limbs),
                                   detail::add_unreduced(o.c0.limbs, o.c1.limbs))};
    return {v0 - v1, sums - v0 - v1};
  }
  fq2& operator+=(const fq2& o) noexcept { return *this = *this + o; }
  fq2& operator-=(const fq2& o) noexcept { return *this = *this - o; }
  fq2& operator*=(const fq2& o) noexcept { return *this = *this * o; }

  /// x^2: (c0 + c1)(c0 - c1) + 2 c0 c1 u, the factors unreduced (below 2p: c0 - c1 + p for the
  /// difference), as the product accepts them.
  fq2 square() const noexcept {
    return {fq{detail::mont_mul(detail::add_unreduced(c0.limbs, c1.limbs),
                                detail::sub_unreduced(c0.limbs, c1.limbs))},
            fq{detail::mont_mul(detail::add_unreduced(c0.limbs, c0.limbs), c1.limbs)}};
  }
  /// 2x.
  fq2 doubled() const noexcept { return {c0.doubled(), c1.doubled()}; }
  /// The conjugate c0 - c1 u (the Frobenius map x^p).
  fq2 conjugate() const noexcept { return {c0, -c1}; }
  /// x (u + 1), the product by the non-residue that builds Fq6.
  fq2 mul_by_nonresidue() const noexcept { return {c0 - c1, c0 + c1}; }
  /// x times an element of the base field.
  fq2 mul_by_fq(const fq& a) const noexcept { return {c0 * a, c1 * a}; }
  /// x^(p^power): the conjugate for odd powers, x itself for even ones.
  fq2 frobenius_map(unsigned power) const noexcept { return (power & 1) ? conjugate() : *this; }
  /// The norm c0^2 + c1^2, an element of Fq.
  fq norm() const noexcept { return c0.square() + c1.square(); }
  /// x^e for an exponent of six little-endian limbs (variable time).
  fq2 pow(const std::array<std::uint64_t, 6>& e) const noexcept;
  /// The multiplicative inverse (conjugate over the norm); the inverse of zero is zero.
  fq2 inverse() const noexcept;
  /// A square root (Algorithm 9 of Adj and Rodriguez-Henriquez, "Square root computation over
  /// even extension fields", for p = 3 mod 4); nullopt when x is not a square.
  std::optional<fq2> sqrt() const noexcept;
  /// The zcash sign rule: c1 is lexicographically largest, or c1 is zero and c0 is.
  bool lexicographically_largest() const noexcept;
};

}  // namespace coprove::field
