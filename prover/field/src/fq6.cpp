// Fq6 multiplication, squaring, sparse products, inverse and Frobenius map.
#include <coprove/field/fq6.hpp>

namespace coprove::field {

fq6 fq6::operator*(const fq6& o) const noexcept {
  // Karatsuba: the three diagonal products, then the cross terms from sums.
  const fq2 t0 = c0 * o.c0;
  const fq2 t1 = c1 * o.c1;
  const fq2 t2 = c2 * o.c2;
  const fq2 r0 = ((c1 + c2) * (o.c1 + o.c2) - t1 - t2).mul_by_nonresidue() + t0;
  const fq2 r1 = (c0 + c1) * (o.c0 + o.c1) - t0 - t1 + t2.mul_by_nonresidue();
  const fq2 r2 = (c0 + c2) * (o.c0 + o.c2) - t0 - t2 + t1;
  return {r0, r1, r2};
}

fq6 fq6::square() const noexcept {
  // Chung-Hasan SQR2: two squares, two products and one square of a combination.
  const fq2 s0 = c0.square();
  const fq2 s1 = (c0 * c1).doubled();
  const fq2 s2 = (c0 - c1 + c2).square();
  const fq2 s3 = (c1 * c2).doubled();
  const fq2 s4 = c2.square();
  return {s3.mul_by_nonresidue() + s0, s4.mul_by_nonresidue() + s1, s1 + s2 + s3 - s0 - s4};
}

fq6 fq6::mul_by_01(const fq2& b0, const fq2& b1) const noexcept {
  const fq2 t0 = c0 * b0;
  const fq2 t1 = c1 * b1;
  const fq2 r0 = ((c1 + c2) * b1 - t1).mul_by_nonresidue() + t0;
  const fq2 r1 = (c0 + c1) * (b0 + b1) - t0 - t1;
  const fq2 r2 = (c0 + c2) * b0 - t0 + t1;
  return {r0, r1, r2};
}

fq6 fq6::mul_by_1(const fq2& b1) const noexcept {
  return {(c2 * b1).mul_by_nonresidue(), c0 * b1, c1 * b1};
}

fq6 fq6::inverse() const noexcept {
  // The adjugate over the norm to Fq2: t_i are the cofactors, c0 t0 + xi (c2 t1 + c1 t2) the norm.
  const fq2 t0 = c0.square() - (c1 * c2).mul_by_nonresidue();
  const fq2 t1 = c2.square().mul_by_nonresidue() - c0 * c1;
  const fq2 t2 = c1.square() - c0 * c2;
  const fq2 norm_inverse = (c0 * t0 + (c2 * t1 + c1 * t2).mul_by_nonresidue()).inverse();
  return {t0 * norm_inverse, t1 * norm_inverse, t2 * norm_inverse};
}

fq6 fq6::frobenius_map(unsigned power) const noexcept {
  power %= 6;
  return {c0.frobenius_map(power),
          c1.frobenius_map(power) * detail::fq2_constant(constants::fq6_frobenius_c1[power]),
          c2.frobenius_map(power) * detail::fq2_constant(constants::fq6_frobenius_c2[power])};
}

}  // namespace coprove::field
