// G1: the prime-order subgroup of E(Fq): y^2 = x^3 + 4 over the base field, in affine, Jacobian and
// XYZZ coordinates (the group law is shared with G2 in detail/short_weierstrass.hpp). Subgroup
// membership uses the GLV endomorphism sigma(x, y) = (beta x, y), beta a primitive cube root of
// unity in Fq: a point P on the curve is in G1 exactly when sigma(P) = [-x^2]P, for the BLS
// parameter x (Scott, "A note on group membership tests for G1, G2 and GT on BLS pairing-friendly
// curves", ePrint 2021/1130), which costs two 64-bit multiplications instead of one by r.
#pragma once

#include <coprove/field/detail/short_weierstrass.hpp>
#include <coprove/field/fq.hpp>

namespace coprove::field {

/// The description of E(Fq): y^2 = x^3 + 4 that the point templates are instantiated with.
struct g1_curve {
  using field = fq;
  /// b = 4.
  static fq b() noexcept;
  /// 3b, for the complete formulas.
  static fq b3() noexcept;
  static fq generator_x() noexcept;
  static fq generator_y() noexcept;
  /// sigma(P) == [-x^2]P, for a point on the curve (not the identity).
  static bool is_torsion_free(const detail::affine_point<g1_curve>& p);
};

using g1_affine = detail::affine_point<g1_curve>;
using g1_jacobian = detail::jacobian_point<g1_curve>;
using g1_xyzz = detail::xyzz_point<g1_curve>;

/// beta: the cube root of unity in Fq for which sigma acts on G1 as multiplication by -x^2.
fq g1_endomorphism_beta() noexcept;
/// sigma(P) = (beta x, y).
g1_affine g1_endomorphism(const g1_affine& p) noexcept;

/// The affine forms of many G1 points with one inversion.
std::vector<g1_affine> batch_normalize(std::span<const g1_jacobian> points);

}  // namespace coprove::field

namespace coprove::field::detail {
extern template struct affine_point<g1_curve>;
extern template struct jacobian_point<g1_curve>;
extern template struct xyzz_point<g1_curve>;
extern template jacobian_point<g1_curve> mul_vartime(const jacobian_point<g1_curve>&, std::span<const std::uint64_t>);
extern template jacobian_point<g1_curve> mul_secret(const jacobian_point<g1_curve>&, const scalar_limbs&);
}  // namespace coprove::field::detail
