// G1's constants and endomorphism test, and the one instantiation of the shared point templates
// for E(Fq). The generator is the standard one (zcash/bellman, IETF pairing-friendly-curves draft).
#include <coprove/field/g1.hpp>

#include <coprove/field/detail/short_weierstrass_impl.hpp>
#include <coprove/field/fq_constants.hpp>

namespace coprove::field {

namespace {

fq canonical(const std::array<std::uint64_t, 6>& limbs) noexcept { return *fq::from_canonical(limbs); }

}  // namespace

fq g1_curve::b() noexcept {
  static const fq value = fq::from_u64(4);
  return value;
}

fq g1_curve::b3() noexcept {
  static const fq value = fq::from_u64(12);
  return value;
}

fq g1_curve::generator_x() noexcept {
  static const fq value = canonical({0xfb3af00adb22c6bbULL, 0x6c55e83ff97a1aefULL, 0xa14e3a3f171bac58ULL,
                                     0xc3688c4f9774b905ULL, 0x2695638c4fa9ac0fULL, 0x17f1d3a73197d794ULL});
  return value;
}

fq g1_curve::generator_y() noexcept {
  static const fq value = canonical({0x0caa232946c5e7e1ULL, 0xd03cc744a2888ae4ULL, 0x00db18cb2c04b3edULL,
                                     0xfcf5e095d5d00af6ULL, 0xa09e30ed741d8ae4ULL, 0x08b3f481e3aaa0f1ULL});
  return value;
}

fq g1_endomorphism_beta() noexcept {
  // beta = 0x5f19672fdf76ce51ba69c6076a0f77eaddb3a93be6f89688de17d813620a00022e01fffffffefffe, the
  // root of x^2 + x + 1 that pairs with the eigenvalue -x^2 (the other root pairs with x^2 - 1).
  static const fq value = canonical({0x2e01fffffffefffeULL, 0xde17d813620a0002ULL, 0xddb3a93be6f89688ULL,
                                     0xba69c6076a0f77eaULL, 0x5f19672fdf76ce51ULL, 0});
  return value;
}

g1_affine g1_endomorphism(const g1_affine& p) noexcept {
  if (p.infinity) return p;
  return g1_affine::from_coordinates(p.x * g1_endomorphism_beta(), p.y);
}

bool g1_curve::is_torsion_free(const g1_affine& p) {
  // [x^2]P = [|x|]([|x|]P): x^2 is positive whatever the sign of x.
  const g1_jacobian x_p = detail::mul_sparse_u64<g1_curve>(p, constants::bls_x_abs);
  const g1_jacobian x2_p = detail::mul_sparse_u64<g1_curve>(x_p, constants::bls_x_abs);
  return -x2_p == g1_endomorphism(p);
}

std::vector<g1_affine> batch_normalize(std::span<const g1_jacobian> points) {
  return detail::batch_normalize<g1_curve>(points);
}

}  // namespace coprove::field

namespace coprove::field::detail {
template struct affine_point<g1_curve>;
template struct jacobian_point<g1_curve>;
template struct xyzz_point<g1_curve>;
template jacobian_point<g1_curve> mul_vartime(const jacobian_point<g1_curve>&, std::span<const std::uint64_t>);
template jacobian_point<g1_curve> mul_secret(const jacobian_point<g1_curve>&, const scalar_limbs&);
}  // namespace coprove::field::detail
