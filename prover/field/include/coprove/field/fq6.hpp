// Fq6 = Fq2[v] / (v^3 - (u + 1)), the middle of the Fq12 tower the pairing values live in.
// Products use Karatsuba over Fq2 (six Fq2 multiplications), squares Chung-Hasan's SQR2; the
// sparse products serve the Miller loop's line multiplication.
#pragma once

#include <coprove/field/fq2.hpp>

#include <random>

namespace coprove::field {

namespace detail {
/// An Fq2 constant from its Montgomery limbs (c0 then c1), as the Frobenius tables store them.
inline fq2 fq2_constant(const std::uint64_t (&c)[2][6]) noexcept {
  return fq2{fq{{c[0][0], c[0][1], c[0][2], c[0][3], c[0][4], c[0][5]}},
             fq{{c[1][0], c[1][1], c[1][2], c[1][3], c[1][4], c[1][5]}}};
}
}  // namespace detail

/// An element c0 + c1 v + c2 v^2 of Fq6 (v^3 = u + 1).
struct fq6 {
  fq2 c0, c1, c2;

  static constexpr fq6 zero() noexcept { return fq6{fq2::zero(), fq2::zero(), fq2::zero()}; }
  static fq6 one() noexcept { return fq6{fq2::one(), fq2::zero(), fq2::zero()}; }
  /// A uniformly random element.
  template <class URBG>
  static fq6 random(URBG& gen) {
    const fq2 a = fq2::random(gen);
    const fq2 b = fq2::random(gen);
    return fq6{a, b, fq2::random(gen)};
  }

  bool is_zero() const noexcept { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  friend bool operator==(const fq6& a, const fq6& b) noexcept = default;

  fq6 operator+(const fq6& o) const noexcept { return {c0 + o.c0, c1 + o.c1, c2 + o.c2}; }
  fq6 operator-(const fq6& o) const noexcept { return {c0 - o.c0, c1 - o.c1, c2 - o.c2}; }
  fq6 operator-() const noexcept { return {-c0, -c1, -c2}; }
  fq6 operator*(const fq6& o) const noexcept;
  fq6& operator+=(const fq6& o) noexcept { return *this = *this + o; }
  fq6& operator-=(const fq6& o) noexcept { return *this = *this - o; }
  fq6& operator*=(const fq6& o) noexcept { return *this = *this * o; }

  /// x^2.
  fq6 square() const noexcept;
  /// 2x.
  fq6 doubled() const noexcept { return {c0.doubled(), c1.doubled(), c2.doubled()}; }
  /// x v, the product by the non-residue that builds Fq12.
  fq6 mul_by_nonresidue() const noexcept { return {c2.mul_by_nonresidue(), c0, c1}; }
  /// x (b0 + b1 v): the sparse product of the line multiplication.
  fq6 mul_by_01(const fq2& b0, const fq2& b1) const noexcept;
  /// x (b1 v).
  fq6 mul_by_1(const fq2& b1) const noexcept;
  /// The multiplicative inverse; the inverse of zero is zero.
  fq6 inverse() const noexcept;
  /// x^(p^power) for power in 0..5 (taken modulo 6).
  fq6 frobenius_map(unsigned power) const noexcept;
};

}  // namespace coprove::field
