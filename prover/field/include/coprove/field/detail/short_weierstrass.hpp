// The point types and group law shared by G1 and G2: both are curves y^2 = x^3 + b with a = 0, one
// over Fq and one over Fq2, so the formulas are written once here as templates over a curve
// description (g1_curve in g1.hpp, g2_curve in g2.hpp) and instantiated once in g1.cpp and g2.cpp
// (the bodies are in short_weierstrass_impl.hpp, which only those two files include).
//
// Representations:
//   affine_point    (x, y) or the identity flag: what encodings, tables and pairings use;
//   jacobian_point  (X, Y, Z) with x = X/Z^2, y = Y/Z^3, the identity has Z = 0: general arithmetic;
//   xyzz_point      (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2, the identity has ZZ = 0:
//                   the cheapest mixed addition, for MSM buckets.
// The constant-time multiplication works internally in homogeneous projective coordinates with the
// complete formulas of Renes, Costello and Batina (2015), which are valid for every pair of inputs
// here because neither curve group has points of order two.
#pragma once

#include <coprove/field/scalar.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace coprove::field::detail {

template <class Curve>
struct jacobian_point;
template <class Curve>
struct xyzz_point;

/// A point in affine coordinates, or the identity (infinity set; x and y are then zero).
template <class Curve>
struct affine_point {
  using field = typename Curve::field;

  field x = field::zero();
  field y = field::zero();
  bool infinity = true;

  /// The point at infinity.
  static affine_point identity() noexcept { return affine_point{}; }
  /// The standard generator of the prime-order subgroup.
  static affine_point generator() noexcept { return affine_point{Curve::generator_x(), Curve::generator_y(), false}; }
  /// The point (x, y), unchecked.
  static affine_point from_coordinates(const field& x, const field& y) noexcept { return affine_point{x, y, false}; }

  bool is_identity() const noexcept { return infinity; }
  /// Whether y^2 = x^3 + b (the identity counts as on the curve).
  bool is_on_curve() const noexcept;
  /// Whether the point is in the prime-order subgroup, by the curve's endomorphism test; the
  /// point must be on the curve.
  bool is_torsion_free() const { return infinity || Curve::is_torsion_free(*this); }

  affine_point operator-() const noexcept { return infinity ? *this : affine_point{x, -y, false}; }
  friend bool operator==(const affine_point& a, const affine_point& b) noexcept {
    if (a.infinity || b.infinity) return a.infinity == b.infinity;
    return a.x == b.x && a.y == b.y;
  }

  jacobian_point<Curve> to_jacobian() const noexcept;
  xyzz_point<Curve> to_xyzz() const noexcept;

  /// [s]P, variable time (windowed NAF): for public scalars only.
  jacobian_point<Curve> mul(const scalar_limbs& s) const;
  /// [s]P in time independent of s (see mul_secret_projective): for secret scalars.
  jacobian_point<Curve> mul_secret(const scalar_limbs& s) const;
};

/// A point in Jacobian coordinates; Z = 0 is the identity.
template <class Curve>
struct jacobian_point {
  using field = typename Curve::field;

  field x = field::one();
  field y = field::one();
  field z = field::zero();

  static jacobian_point identity() noexcept { return jacobian_point{}; }
  static jacobian_point generator() noexcept { return affine_point<Curve>::generator().to_jacobian(); }

  bool is_identity() const noexcept { return z.is_zero(); }
  /// Whether Y^2 = X^3 + b Z^6.
  bool is_on_curve() const noexcept;
  /// Subgroup membership of the affine point (one inversion, then the endomorphism test).
  bool is_torsion_free() const { return to_affine().is_torsion_free(); }

  /// 2P (Lange's dbl-2009-l).
  jacobian_point doubled() const noexcept;
  /// P + Q for any P, Q (add-2007-bl, falling back to doubling for P = Q).
  jacobian_point operator+(const jacobian_point& q) const noexcept;
  /// P + Q with Q affine (madd-2007-bl).
  jacobian_point operator+(const affine_point<Curve>& q) const noexcept;
  jacobian_point operator-(const jacobian_point& q) const noexcept { return *this + (-q); }
  jacobian_point operator-() const noexcept { return jacobian_point{x, -y, z}; }
  jacobian_point& operator+=(const jacobian_point& q) noexcept { return *this = *this + q; }
  jacobian_point& operator+=(const affine_point<Curve>& q) noexcept { return *this = *this + q; }

  /// The affine point (one inversion).
  affine_point<Curve> to_affine() const noexcept;

  /// [s]P, variable time: for public scalars only.
  jacobian_point mul(const scalar_limbs& s) const;
  /// [s]P in time independent of s: for secret scalars.
  jacobian_point mul_secret(const scalar_limbs& s) const;

  friend bool operator==(const jacobian_point& a, const jacobian_point& b) noexcept { return a.equals(b); }
  friend bool operator==(const jacobian_point& a, const affine_point<Curve>& b) noexcept { return a.equals(b); }

  bool equals(const jacobian_point& q) const noexcept;
  bool equals(const affine_point<Curve>& q) const noexcept;
};

/// A point in XYZZ coordinates; ZZ = 0 is the identity.
template <class Curve>
struct xyzz_point {
  using field = typename Curve::field;

  field x = field::one();
  field y = field::one();
  field zz = field::zero();
  field zzz = field::zero();

  static xyzz_point identity() noexcept { return xyzz_point{}; }

  bool is_identity() const noexcept { return zz.is_zero(); }

  /// 2P (dbl-2008-s-1).
  xyzz_point doubled() const noexcept;
  /// P + Q (add-2008-s, falling back to doubling for P = Q).
  xyzz_point operator+(const xyzz_point& q) const noexcept;
  /// P + Q with Q affine (madd-2008-s): the MSM bucket step.
  xyzz_point operator+(const affine_point<Curve>& q) const noexcept;
  xyzz_point operator-() const noexcept { return xyzz_point{x, -y, zz, zzz}; }
  xyzz_point& operator+=(const xyzz_point& q) noexcept { return *this = *this + q; }
  xyzz_point& operator+=(const affine_point<Curve>& q) noexcept { return *this = *this + q; }

  /// The affine point (one inversion).
  affine_point<Curve> to_affine() const noexcept;
  /// The same point in Jacobian coordinates, without an inversion.
  jacobian_point<Curve> to_jacobian() const noexcept;

  friend bool operator==(const xyzz_point& a, const xyzz_point& b) noexcept { return a.equals(b); }
  friend bool operator==(const xyzz_point& a, const affine_point<Curve>& b) noexcept { return a.equals(b); }
  friend bool operator==(const xyzz_point& a, const jacobian_point<Curve>& b) noexcept {
    return a.to_jacobian().equals(b);
  }

  bool equals(const xyzz_point& q) const noexcept;
  bool equals(const affine_point<Curve>& q) const noexcept;
};

/// The affine forms of many points with one inversion (Montgomery's trick); identities stay
/// identities.
template <class Curve>
std::vector<affine_point<Curve>> batch_normalize(std::span<const jacobian_point<Curve>> points);

/// [k]P for a k of any length (little-endian limbs), variable time: the public-scalar path, also
/// used with the BLS parameter, cofactors and r itself.
template <class Curve>
jacobian_point<Curve> mul_vartime(const jacobian_point<Curve>& p, std::span<const std::uint64_t> k);

/// [s]P with fixed 4-bit windows over all 256 bits of s, a table read that touches every entry
/// under masks, and complete projective formulas, so that neither the sequence of operations nor
/// the memory addresses depend on s. Caveats: this holds only as far as the field arithmetic is
/// itself constant-time (Montgomery multiplication with a masked final subtraction, inversion by
/// a fixed exponent) and as far as the compiler keeps the masked selects branch-free (an
/// optimisation barrier on each mask helps, but the machine code has not been checked by a tool
/// such as dudect or ctgrind); the final conversion to Jacobian is branch-free, but a later
/// to_affine() inverts a secret-derived Z through fq::inverse. Input validation (s < r) is
/// the caller's.
template <class Curve>
jacobian_point<Curve> mul_secret(const jacobian_point<Curve>& p, const scalar_limbs& s);

}  // namespace coprove::field::detail
