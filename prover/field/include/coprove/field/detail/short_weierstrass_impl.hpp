// Bodies of the templates in short_weierstrass.hpp. Only g1.cpp and g2.cpp include this file and
// instantiate it for their curve, so that the formulas are compiled twice in all, not in every
// translation unit that uses a point. The addition formulas are the a = 0 cases in the Explicit-
// Formulas Database (hyperelliptic.org/EFD, "g1p/auto-shortw-jacobian-0" and "-xyzz"); the
// complete ones are Algorithms 7 and 9 of Renes, Costello and Batina, "Complete addition formulas
// for prime order elliptic curves" (EUROCRYPT 2016).
#pragma once

#include <coprove/field/detail/short_weierstrass.hpp>

#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace coprove::field::detail {

template <class Curve>
bool affine_point<Curve>::is_on_curve() const noexcept {
  if (infinity) return true;
  return y.square() == x.square() * x + Curve::b();
}

template <class Curve>
jacobian_point<Curve> affine_point<Curve>::to_jacobian() const noexcept {
  if (infinity) return jacobian_point<Curve>::identity();
  return jacobian_point<Curve>{x, y, field::one()};
}

template <class Curve>
xyzz_point<Curve> affine_point<Curve>::to_xyzz() const noexcept {
  if (infinity) return xyzz_point<Curve>::identity();
  return xyzz_point<Curve>{x, y, field::one(), field::one()};
}

template <class Curve>
jacobian_point<Curve> affine_point<Curve>::mul(const scalar_limbs& s) const {
  return to_jacobian().mul(s);
}

template <class Curve>
jacobian_point<Curve> affine_point<Curve>::mul_secret(const scalar_limbs& s) const {
  return to_jacobian().mul_secret(s);
}

// ---- Jacobian ------------------------------------------------------------------------------

template <class Curve>
bool jacobian_point<Curve>::is_on_curve() const noexcept {
  if (is_identity()) return true;
  const field z2 = z.square();
  const field z6 = z2.square() * z2;
  return y.square() == x.square() * x + Curve::b() * z6;
}

template <class Curve>
jacobian_point<Curve> jacobian_point<Curve>::doubled() const noexcept {
  if (is_identity()) return *this;
  const field a = x.square();
  const field b = y.square();
  const field c = b.square();
  const field d = ((x + b).square() - a - c).doubled();
  const field e = a.doubled() + a;
  const field f = e.square();
  jacobian_point out;
  out.x = f - d.doubled();
  out.y = e * (d - out.x) - c.doubled().doubled().doubled();
  out.z = (y * z).doubled();
  return out;
}

template <class Curve>
jacobian_point<Curve> jacobian_point<Curve>::operator+(const jacobian_point& q) const noexcept {
  if (is_identity()) return q;
  if (q.is_identity()) return *this;
  const field z1z1 = z.square();
  const field z2z2 = q.z.square();
  const field u1 = x * z2z2;
  const field u2 = q.x * z1z1;
  const field s1 = y * q.z * z2z2;
  const field s2 = q.y * z * z1z1;
  const field h = u2 - u1;
  const field r = (s2 - s1).doubled();
  if (h.is_zero()) return r.is_zero() ? doubled() : identity();
  const field i = h.doubled().square();
  const field j = h * i;
  const field v = u1 * i;
  jacobian_point out;
  out.x = r.square() - j - v.doubled();
  out.y = r * (v - out.x) - (s1 * j).doubled();
  out.z = ((z + q.z).square() - z1z1 - z2z2) * h;
  return out;
}

template <class Curve>
jacobian_point<Curve> jacobian_point<Curve>::operator+(const affine_point<Curve>& q) const noexcept {
  if (q.infinity) return *this;
  if (is_identity()) return q.to_jacobian();
  const field z1z1 = z.square();
  const field u2 = q.x * z1z1;
  const field s2 = q.y * z * z1z1;
  const field h = u2 - x;
  const field r = (s2 - y).doubled();
  if (h.is_zero()) return r.is_zero() ? doubled() : identity();
  const field hh = h.square();
  const field i = hh.doubled().doubled();
  const field j = h * i;
  const field v = x * i;
  jacobian_point out;
  out.x = r.square() - j - v.doubled();
  out.y = r * (v - out.x) - (y * j).doubled();
  out.z = (z + h).square() - z1z1 - hh;
  return out;
}

template <class Curve>
affine_point<Curve> jacobian_point<Curve>::to_affine() const noexcept {
  if (is_identity()) return affine_point<Curve>::identity();
  const field zinv = z.inverse();
  const field zinv2 = zinv.square();
  return affine_point<Curve>{x * zinv2, y * zinv2 * zinv, false};
}

template <class Curve>
bool jacobian_point<Curve>::equals(const jacobian_point& q) const noexcept {
  if (is_identity() || q.is_identity()) return is_identity() == q.is_identity();
  const field z1z1 = z.square();
  const field z2z2 = q.z.square();
  return x * z2z2 == q.x * z1z1 && y * z2z2 * q.z == q.y * z1z1 * z;
}

template <class Curve>
bool jacobian_point<Curve>::equals(const affine_point<Curve>& q) const noexcept {
  if (is_identity() || q.infinity) return is_identity() == q.infinity;
  const field z2 = z.square();
  return x == q.x * z2 && y == q.y * z2 * z;
}

template <class Curve>
jacobian_point<Curve> jacobian_point<Curve>::mul(const scalar_limbs& s) const {
  return mul_vartime(*this, std::span<const std::uint64_t>(s));
}

template <class Curve>
jacobian_point<Curve> jacobian_point<Curve>::mul_secret(const scalar_limbs& s) const {
  return detail::mul_secret(*this, s);
}

// ---- XYZZ ----------------------------------------------------------------------------------

template <class Curve>
xyzz_point<Curve> xyzz_point<Curve>::doubled() const noexcept {
  if (is_identity()) return *this;
  const field u = y.doubled();
  const field v = u.square();
  const field w = u * v;
  const field s = x * v;
  const field x2 = x.square();
  const field m = x2.doubled() + x2;
  xyzz_point out;
  out.x = m.square() - s.doubled();
  out.y = m * (s - out.x) - w * y;
  out.zz = v * zz;
  out.zzz = w * zzz;
  return out;
}

template <class Curve>
xyzz_point<Curve> xyzz_point<Curve>::operator+(const xyzz_point& q) const noexcept {
  if (is_identity()) return q;
  if (q.is_identity()) return *this;
  const field u1 = x * q.zz;
  const field u2 = q.x * zz;
  const field s1 = y * q.zzz;
  const field s2 = q.y * zzz;
  const field p = u2 - u1;
  const field r = s2 - s1;
  if (p.is_zero()) return r.is_zero() ? doubled() : identity();
  const field pp = p.square();
  const field ppp = p * pp;
  const field qq = u1 * pp;
  xyzz_point out;
  out.x = r.square() - ppp - qq.doubled();
  out.y = r * (qq - out.x) - s1 * ppp;
  out.zz = zz * q.zz * pp;
  out.zzz = zzz * q.zzz * ppp;
  return out;
}

template <class Curve>
xyzz_point<Curve> xyzz_point<Curve>::operator+(const affine_point<Curve>& q) const noexcept {
  if (q.infinity) return *this;
  if (is_identity()) return q.to_xyzz();
  const field u2 = q.x * zz;
  const field s2 = q.y * zzz;
  const field p = u2 - x;
  const field r = s2 - y;
  if (p.is_zero()) return r.is_zero() ? q.to_xyzz().doubled() : identity();
  const field pp = p.square();
  const field ppp = p * pp;
  const field qq = x * pp;
  xyzz_point out;
  out.x = r.square() - ppp - qq.doubled();
  out.y = r * (qq - out.x) - y * ppp;
  out.zz = zz * pp;
  out.zzz = zzz * ppp;
  return out;
}

template <class Curve>
affine_point<Curve> xyzz_point<Curve>::to_affine() const noexcept {
  if (is_identity()) return affine_point<Curve>::identity();
  // One inversion of ZZ * ZZZ gives both 1/ZZ = ZZZ / (ZZ ZZZ) and 1/ZZZ = ZZ / (ZZ ZZZ).
  const field inv = (zz * zzz).inverse();
  return affine_point<Curve>{x * zzz * inv, y * zz * inv, false};
}

template <class Curve>
jacobian_point<Curve> xyzz_point<Curve>::to_jacobian() const noexcept {
  if (is_identity()) return jacobian_point<Curve>::identity();
  // Z = ZZ * ZZZ gives X' = X ZZ ZZZ^2 and Y' = Y ZZZ^4, using ZZ^3 = ZZZ^2.
  const field zzz2 = zzz.square();
  return jacobian_point<Curve>{x * zz * zzz2, y * zzz2.square(), zz * zzz};
}

template <class Curve>
bool xyzz_point<Curve>::equals(const xyzz_point& q) const noexcept {
  if (is_identity() || q.is_identity()) return is_identity() == q.is_identity();
  return x * q.zz == q.x * zz && y * q.zzz == q.y * zzz;
}

template <class Curve>
bool xyzz_point<Curve>::equals(const affine_point<Curve>& q) const noexcept {
  if (is_identity() || q.infinity) return is_identity() == q.infinity;
  return x == q.x * zz && y == q.y * zzz;
}

// ---- batch normalisation -------------------------------------------------------------------

template <class Curve>
std::vector<affine_point<Curve>> batch_normalize(std::span<const jacobian_point<Curve>> points) {
  using field = typename Curve::field;
  std::vector<affine_point<Curve>> out(points.size());
  // prefix[i] = product of the Z of the non-identity points before i.
  std::vector<field> prefix(points.size());
  field running = field::one();
  for (std::size_t i = 0; i < points.size(); ++i) {
    prefix[i] = running;
    if (!points[i].is_identity()) running *= points[i].z;
  }
  field inverse = running.inverse();  // 1 / (product of all the Z)
  for (std::size_t i = points.size(); i-- > 0;) {
    const auto& p = points[i];
    if (p.is_identity()) continue;  // out[i] stays the identity
    const field zinv = inverse * prefix[i];
    inverse *= p.z;
    const field zinv2 = zinv.square();
    out[i] = affine_point<Curve>{p.x * zinv2, p.y * zinv2 * zinv, false};
  }
  return out;
}

// ---- variable-time multiplication ----------------------------------------------------------

/// The width-5 NAF digits of k, least significant first: each is 0 or odd in [-15, 15], and a
/// non-zero digit is followed by at least four zeros.
inline std::vector<int> wnaf_digits(std::span<const std::uint64_t> k) {
  constexpr int width = 5;
  std::vector<std::uint64_t> rest(k.begin(), k.end());
  rest.push_back(0);  // room for the carry of a negative digit
  std::vector<int> digits;
  digits.reserve(rest.size() * 64 + 1);
  auto is_zero = [&] {
    for (const auto limb : rest)
      if (limb != 0) return false;
    return true;
  };
  while (!is_zero()) {
    int digit = 0;
    if (rest[0] & 1) {
      digit = static_cast<int>(rest[0] & ((1u << width) - 1));
      if (digit >= (1 << (width - 1))) digit -= 1 << width;
      // rest -= digit, which clears the low `width` bits.
      if (digit > 0) {
        std::uint64_t borrow = static_cast<std::uint64_t>(digit);
        for (auto& limb : rest) {
          const std::uint64_t before = limb;
          limb -= borrow;
          borrow = limb > before ? 1 : 0;
          if (borrow == 0) break;
        }
      } else {
        std::uint64_t carry = static_cast<std::uint64_t>(-digit);
        for (auto& limb : rest) {
          limb += carry;
          carry = limb < carry ? 1 : 0;
          if (carry == 0) break;
        }
      }
    }
    digits.push_back(digit);
    for (std::size_t i = 0; i < rest.size(); ++i) {
      rest[i] = (rest[i] >> 1) | (i + 1 < rest.size() ? rest[i + 1] << 63 : 0);
    }
  }
  return digits;
}

/// [k]P for a public 64-bit k with few bits set (the BLS parameter |x| of the subgroup tests:
/// 0xd201000000010000, six bits), left to right without a table or an allocation: 63 doublings and
/// an addition a further set bit, mixed when P is affine. The additions handle P = Q and P = -Q,
/// which points outside the subgroup reach.
template <class Curve, class Base>
jacobian_point<Curve> mul_sparse_u64(const Base& p, std::uint64_t k) noexcept {
  if (k == 0) return jacobian_point<Curve>::identity();
  const int top = 63 - std::countl_zero(k);
  jacobian_point<Curve> acc;
  if constexpr (std::is_same_v<Base, affine_point<Curve>>)
    acc = p.to_jacobian();
  else
    acc = p;
  for (int bit = top - 1; bit >= 0; --bit) {
    acc = acc.doubled();
    if ((k >> bit) & 1u) acc += p;
  }
  return acc;
}

template <class Curve>
jacobian_point<Curve> mul_vartime(const jacobian_point<Curve>& p, std::span<const std::uint64_t> k) {
  const std::vector<int> digits = wnaf_digits(k);
  if (digits.empty() || p.is_identity()) return jacobian_point<Curve>::identity();
  // odd[i] = (2i + 1) P.
  std::array<jacobian_point<Curve>, 8> odd;
  odd[0] = p;
  const jacobian_point<Curve> twice = p.doubled();
  for (std::size_t i = 1; i < odd.size(); ++i) odd[i] = odd[i - 1] + twice;
  jacobian_point<Curve> acc = jacobian_point<Curve>::identity();
  for (std::size_t i = digits.size(); i-- > 0;) {
    acc = acc.doubled();
    const int d = digits[i];
    if (d > 0) acc += odd[static_cast<std::size_t>(d / 2)];
    if (d < 0) acc += -odd[static_cast<std::size_t>(-d / 2)];
  }
  return acc;
}

// ---- constant-time multiplication ----------------------------------------------------------

/// A point in homogeneous projective coordinates (x = X/Z, y = Y/Z; the identity is (0 : 1 : 0)),
/// used only inside mul_secret for the complete formulas.
template <class Curve>
struct projective_point {
  using field = typename Curve::field;
  field x = field::zero();
  field y = field::one();
  field z = field::zero();

  static projective_point from_jacobian(const jacobian_point<Curve>& p) noexcept {
    if (p.is_identity()) return projective_point{};  // depends on the base only
    return projective_point{p.x * p.z, p.y, p.z.square() * p.z};
  }
  jacobian_point<Curve> to_jacobian() const noexcept {
    // (X Z, Y Z^2, Z): no branch, and Z = 0 stays the identity.
    return jacobian_point<Curve>{x * z, y * z.square(), z};
  }

  /// P + Q for all P, Q (Algorithm 7 of Renes-Costello-Batina, a = 0).
  projective_point operator+(const projective_point& q) const noexcept {
    field t0 = x * q.x;
    field t1 = y * q.y;
    field t2 = z * q.z;
    field t3 = (x + y) * (q.x + q.y) - (t0 + t1);
    field t4 = (y + z) * (q.y + q.z) - (t1 + t2);
    field y3 = (x + z) * (q.x + q.z) - (t0 + t2);
    t0 = t0.doubled() + t0;
    t2 = Curve::b3() * t2;
    field z3 = t1 + t2;
    t1 = t1 - t2;
    y3 = Curve::b3() * y3;
    projective_point out;
    out.x = t3 * t1 - t4 * y3;
    out.y = t1 * z3 + y3 * t0;
    out.z = z3 * t4 + t0 * t3;
    return out;
  }

  /// 2P for all P (Algorithm 9 of Renes-Costello-Batina, a = 0).
  projective_point doubled() const noexcept {
    const field t0 = y.square();
    const field z8 = t0.doubled().doubled().doubled();
    const field t1 = y * z;
    const field t2 = Curve::b3() * z.square();
    projective_point out;
    const field x3 = t2 * z8;
    const field y3 = t0 + t2;
    out.z = t1 * z8;
    const field t0b = t0 - (t2.doubled() + t2);
    out.y = x3 + t0b * y3;
    out.x = (t0b * (x * y)).doubled();
    return out;
  }
};

/// All ones when a == b, else zero, without a branch.
inline std::uint64_t equal_mask(std::uint64_t a, std::uint64_t b) noexcept {
  const std::uint64_t d = a ^ b;
  // (d | -d) has its top bit set exactly when d != 0.
  std::uint64_t mask = ((d | (0 - d)) >> 63) - 1;
#if defined(__GNUC__) || defined(__clang__)
  __asm__("" : "+r"(mask));  // keep the compiler from turning the select into a branch
#endif
  return mask;
}

template <class Curve>
jacobian_point<Curve> mul_secret(const jacobian_point<Curve>& p, const scalar_limbs& s) {
  using point = projective_point<Curve>;
  static_assert(sizeof(point) % sizeof(std::uint64_t) == 0);
  constexpr std::size_t words = sizeof(point) / sizeof(std::uint64_t);
  using raw = std::array<std::uint64_t, words>;

  // table[i] = [i]P, i = 0..15, built without looking at s.
  std::array<raw, 16> table;
  const point base = point::from_jacobian(p);
  point entry{};
  for (std::size_t i = 0; i < table.size(); ++i) {
    table[i] = std::bit_cast<raw>(entry);
    entry = entry + base;
  }

  point acc{};
  for (int window = 63; window >= 0; --window) {
    acc = acc.doubled().doubled().doubled().doubled();
    const std::uint64_t digit = (s[static_cast<std::size_t>(window / 16)] >> ((window % 16) * 4)) & 15;
    raw selected{};
    for (std::size_t i = 0; i < table.size(); ++i) {
      const std::uint64_t mask = equal_mask(i, digit);
      for (std::size_t w = 0; w < words; ++w) selected[w] |= table[i][w] & mask;
    }
    acc = acc + std::bit_cast<point>(selected);
  }
  return acc.to_jacobian();
}

}  // namespace coprove::field::detail
