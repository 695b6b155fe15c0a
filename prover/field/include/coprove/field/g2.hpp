// G2: the prime-order subgroup of the sextic twist E'(Fq2): y^2 = x^3 + 4(u + 1), in affine,
// Jacobian and XYZZ coordinates (the group law is shared with G1 in detail/short_weierstrass.hpp).
// Subgroup membership uses psi, the untwist-Frobenius-twist endomorphism
// psi(x, y) = (conj(x) c_x, conj(y) c_y) with c_x = (u + 1)^-((p - 1)/3), c_y = (u + 1)^-((p - 1)/2):
// a point P on the twist is in G2 exactly when psi(P) = [x]P for the BLS parameter
// x = -0xd201000000010000 (Scott, ePrint 2021/1130), one 64-bit multiplication instead of one by r.
#pragma once

#include <coprove/field/detail/short_weierstrass.hpp>
#include <coprove/field/fq2.hpp>

namespace coprove::field {

/// The description of E'(Fq2): y^2 = x^3 + 4(u + 1) that the point templates are instantiated with.
struct g2_curve {
  using field = fq2;
  /// b = 4(u + 1).
  static fq2 b() noexcept;
  /// 3b, for the complete formulas.
  static fq2 b3() noexcept;
  static fq2 generator_x() noexcept;
  static fq2 generator_y() noexcept;
  /// psi(P) == [x]P, for a point on the twist (not the identity).
  static bool is_torsion_free(const detail::affine_point<g2_curve>& p);
};

using g2_affine = detail::affine_point<g2_curve>;
using g2_jacobian = detail::jacobian_point<g2_curve>;
using g2_xyzz = detail::xyzz_point<g2_curve>;

/// psi(P): the untwist-Frobenius-twist endomorphism (the identity maps to itself).
g2_affine g2_endomorphism(const g2_affine& p) noexcept;

/// The affine forms of many G2 points with one inversion.
std::vector<g2_affine> batch_normalize(std::span<const g2_jacobian> points);

}  // namespace coprove::field

namespace coprove::field::detail {
extern template struct affine_point<g2_curve>;
extern template struct jacobian_point<g2_curve>;
extern template struct xyzz_point<g2_curve>;
extern template jacobian_point<g2_curve> mul_vartime(const jacobian_point<g2_curve>&, std::span<const std::uint64_t>);
extern template jacobian_point<g2_curve> mul_secret(const jacobian_point<g2_curve>&, const scalar_limbs&);
}  // namespace coprove::field::detail
