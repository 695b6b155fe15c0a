// G2's constants and endomorphism test, and the one instantiation of the shared point templates
// for the twist E'(Fq2). The generator is the standard one (zcash/bellman, IETF
// pairing-friendly-curves draft); the psi coefficients are computed once from their definition.
#include <coprove/field/g2.hpp>

#include <coprove/field/detail/short_weierstrass_impl.hpp>
#include <coprove/field/fq_constants.hpp>

namespace coprove::field {

namespace {

fq canonical(const std::array<std::uint64_t, 6>& limbs) noexcept { return *fq::from_canonical(limbs); }

/// (p - 1) / 3 (p = 1 mod 3).
constexpr std::array<std::uint64_t, 6> p_minus_1_div_3{0x9354ffffffffe38eULL, 0x0a395554e5c6aaaaULL,
                                                       0xcd104635a790520cULL, 0xcc27c3d6fbd7063fULL,
                                                       0x190937e76bc3e447ULL, 0x08ab05f8bdd54cdeULL};

struct psi_coefficients {
  fq2 x;
  fq2 y;
};

const psi_coefficients& psi() noexcept {
  static const psi_coefficients value = [] {
    const fq2 xi = fq2{fq::one(), fq::one()};  // u + 1
    std::array<std::uint64_t, 6> half;
    for (std::size_t i = 0; i < 6; ++i) half[i] = constants::fq_p_minus_1_div_2[i];
    return psi_coefficients{xi.pow(p_minus_1_div_3).inverse(), xi.pow(half).inverse()};
  }();
  return value;
}

}  // namespace

fq2 g2_curve::b() noexcept {
  static const fq2 value{fq::from_u64(4), fq::from_u64(4)};
  return value;
}

fq2 g2_curve::b3() noexcept {
  static const fq2 value{fq::from_u64(12), fq::from_u64(12)};
  return value;
}

fq2 g2_curve::generator_x() noexcept {
  static const fq2 value{
      canonical({0xd48056c8c121bdb8ULL, 0x0bac0326a805bbefULL, 0xb4510b647ae3d177ULL, 0xc6e47ad4fa403b02ULL,
                 0x260805272dc51051ULL, 0x024aa2b2f08f0a91ULL}),
      canonical({0xe5ac7d055d042b7eULL, 0x334cf11213945d57ULL, 0xb5da61bbdc7f5049ULL, 0x596bd0d09920b61aULL,
                 0x7dacd3a088274f65ULL, 0x13e02b6052719f60ULL})};
  return value;
}

fq2 g2_curve::generator_y() noexcept {
  static const fq2 value{
      canonical({0xe193548608b82801ULL, 0x923ac9cc3baca289ULL, 0x6d429a695160d12cULL, 0xadfd9baa8cbdd3a7ULL,
                 0x8cc9cdc6da2e351aULL, 0x0ce5d527727d6e11ULL}),
      canonical({0xaaa9075ff05f79beULL, 0x3f370d275cec1da1ULL, 0x267492ab572e99abULL, 0xcb3e287e85a763afULL,
                 0x32acd2b02bc28b99ULL, 0x0606c4a02ea734ccULL})};
  return value;
}

g2_affine g2_endomorphism(const g2_affine& p) noexcept {
  if (p.infinity) return p;
  // The p-power Frobenius of Fq2 is conjugation.
  return g2_affine::from_coordinates(p.x.conjugate() * psi().x, p.y.conjugate() * psi().y);
}

bool g2_curve::is_torsion_free(const g2_affine& p) {
  // [x]P = -[|x|]P, x being negative.
  static_assert(constants::bls_x_is_negative);
  return -detail::mul_sparse_u64<g2_curve>(p, constants::bls_x_abs) == g2_endomorphism(p);
}

std::vector<g2_affine> batch_normalize(std::span<const g2_jacobian> points) {
  return detail::batch_normalize<g2_curve>(points);
}

}  // namespace coprove::field

namespace coprove::field::detail {
template struct affine_point<g2_curve>;
template struct jacobian_point<g2_curve>;
template struct xyzz_point<g2_curve>;
template jacobian_point<g2_curve> mul_vartime(const jacobian_point<g2_curve>&, std::span<const std::uint64_t>);
template jacobian_point<g2_curve> mul_secret(const jacobian_point<g2_curve>&, const scalar_limbs&);
}  // namespace coprove::field::detail
