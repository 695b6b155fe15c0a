// Fq12 multiplication, squaring, inverse, Frobenius map, the sparse line product and the
// cyclotomic squaring and exponentiation used by the final exponentiation.
#include <coprove/field/fq12.hpp>

namespace coprove::field {

namespace {

/// (a + b s)^2 in Fq4 = Fq2[s] / (s^2 - (u + 1)): three Fq2 squarings.
void fq4_square(const fq2& a, const fq2& b, fq2& out0, fq2& out1) noexcept {
  const fq2 a2 = a.square();
  const fq2 b2 = b.square();
  out0 = b2.mul_by_nonresidue() + a2;
  out1 = (a + b).square() - a2 - b2;
}

}  // namespace

fq12 fq12::operator*(const fq12& o) const noexcept {
  const fq6 t0 = c0 * o.c0;
  const fq6 t1 = c1 * o.c1;
  return {t1.mul_by_nonresidue() + t0, (c0 + c1) * (o.c0 + o.c1) - t0 - t1};
}

fq12 fq12::square() const noexcept {
  // (c0 + c1 w)^2 = c0^2 + v c1^2 + 2 c0 c1 w, with c0^2 + v c1^2 = (c0 + c1)(c0 + v c1) - t - v t.
  const fq6 t = c0 * c1;
  const fq6 r0 = (c0 + c1) * (c0 + c1.mul_by_nonresidue()) - t - t.mul_by_nonresidue();
  return {r0, t.doubled()};
}

fq12 fq12::inverse() const noexcept {
  // (c0 + c1 w)^-1 = (c0 - c1 w) / (c0^2 - v c1^2).
  const fq6 t = (c0.square() - c1.square().mul_by_nonresidue()).inverse();
  return {c0 * t, -(c1 * t)};
}

fq12 fq12::frobenius_map(unsigned power) const noexcept {
  power %= 12;
  const fq6 a = c0.frobenius_map(power);
  const fq6 b = c1.frobenius_map(power);
  const fq2 k = detail::fq2_constant(constants::fq12_frobenius_c1[power]);
  return {a, fq6{b.c0 * k, b.c1 * k, b.c2 * k}};
}

fq12 fq12::mul_by_014(const fq2& a, const fq2& b, const fq2& c) const noexcept {
  // The line is L0 + L1 w with L0 = a + b v and L1 = c v; Karatsuba over w.
  const fq6 t0 = c0.mul_by_01(a, b);
  const fq6 t1 = c1.mul_by_1(c);
  const fq6 cross = (c0 + c1).mul_by_01(a, b + c) - t0 - t1;
  return {t1.mul_by_nonresidue() + t0, cross};
}

fq12 fq12::cyclotomic_square() const noexcept {
  // Over Fq4 = Fq2[s], s = w^3, x = A + B w + C w^2 with A = (c0.c0, c1.c1), B = (c1.c0, c0.c2),
  // C = (c0.c1, c1.c2). In the cyclotomic subgroup x^2 = (3 A^2 - 2 conj A) + (3 s C^2 +
  // 2 conj B) w + (3 B^2 - 2 conj C) w^2, conj negating the s part.
  fq2 a0, a1, b0, b1, s0, s1;
  fq4_square(c0.c0, c1.c1, a0, a1);
  fq4_square(c1.c0, c0.c2, b0, b1);
  fq4_square(c0.c1, c1.c2, s0, s1);
  const fq2 sc = s1.mul_by_nonresidue();  // the constant part of s C^2
  return fq12{
      fq6{(a0 - c0.c0).doubled() + a0, (b0 - c0.c1).doubled() + b0, (s0 - c0.c2).doubled() + s0},
      fq6{(sc + c1.c0).doubled() + sc, (a1 + c1.c1).doubled() + a1, (b1 + c1.c2).doubled() + b1}};
}

fq12 fq12::cyclotomic_pow(std::uint64_t e) const noexcept {
  fq12 result = one();
  bool started = false;
  for (int bit = 63; bit >= 0; --bit) {
    if (started) result = result.cyclotomic_square();
    if ((e >> bit) & 1) {
      result = started ? result * *this : *this;
      started = true;
    }
  }
  return result;
}

fq12 fq12::pow(const std::uint64_t* e, std::size_t words) const noexcept {
  fq12 result = one();
  for (std::size_t w = words; w-- > 0;) {
    for (int bit = 63; bit >= 0; --bit) {
      result = result.square();
      if ((e[w] >> bit) & 1) result *= *this;
    }
  }
  return result;
}

}  // namespace coprove::field
