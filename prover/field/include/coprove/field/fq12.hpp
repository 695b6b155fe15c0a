// Fq12 = Fq6[w] / (w^2 - v), where pairing values live. Besides the field operations it has what
// the pairing needs: the Frobenius maps, the sparse product by a Miller-loop line (the 0, 1, 4
// shape of BLS12-381's M-type twist: 1, v and v w), and Granger-Scott squaring and exponentiation
// by the BLS parameter in the cyclotomic subgroup.
#pragma once

#include <coprove/field/fq6.hpp>

#include <array>
#include <cstdint>
#include <random>

namespace coprove::field {

/// An element c0 + c1 w of Fq12 (w^2 = v).
struct fq12 {
  fq6 c0, c1;

  static constexpr fq12 zero() noexcept { return fq12{fq6::zero(), fq6::zero()}; }
  static fq12 one() noexcept { return fq12{fq6::one(), fq6::zero()}; }
  /// A uniformly random element.
  template <class URBG>
  static fq12 random(URBG& gen) {
    const fq6 a = fq6::random(gen);
    return fq12{a, fq6::random(gen)};
  }

  bool is_zero() const noexcept { return c0.is_zero() && c1.is_zero(); }
  bool is_one() const noexcept { return *this == one(); }
  friend bool operator==(const fq12& a, const fq12& b) noexcept = default;

  fq12 operator+(const fq12& o) const noexcept { return {c0 + o.c0, c1 + o.c1}; }
  fq12 operator-(const fq12& o) const noexcept { return {c0 - o.c0, c1 - o.c1}; }
  fq12 operator-() const noexcept { return {-c0, -c1}; }
  fq12 operator*(const fq12& o) const noexcept;
  fq12& operator+=(const fq12& o) noexcept { return *this = *this + o; }
  fq12& operator-=(const fq12& o) noexcept { return *this = *this - o; }
  fq12& operator*=(const fq12& o) noexcept { return *this = *this * o; }

  /// x^2 (complex squaring over Fq6, two Fq6 products).
  fq12 square() const noexcept;
  /// The conjugate c0 - c1 w, which is x^(p^6) and, in the cyclotomic subgroup, the inverse.
  fq12 conjugate() const noexcept { return {c0, -c1}; }
  /// The multiplicative inverse; the inverse of zero is zero.
  fq12 inverse() const noexcept;
  /// x^(p^power) (power taken modulo 12).
  fq12 frobenius_map(unsigned power) const noexcept;
  /// x (a + b v + c v w): the product by a Miller-loop line, 13 Fq2 products instead of 54.
  fq12 mul_by_014(const fq2& a, const fq2& b, const fq2& c) const noexcept;
  /// x^2 for x in the cyclotomic subgroup (x^(p^4 - p^2 + 1) = 1), Granger and Scott's formula
  /// from three Fq4 squarings; wrong for other x.
  fq12 cyclotomic_square() const noexcept;
  /// x^e for x in the cyclotomic subgroup, square and multiply with cyclotomic squarings.
  fq12 cyclotomic_pow(std::uint64_t e) const noexcept;
  /// x^e for any x and an exponent of `words` little-endian 64-bit limbs (variable time; tests).
  fq12 pow(const std::uint64_t* e, std::size_t words) const noexcept;
};

}  // namespace coprove::field
