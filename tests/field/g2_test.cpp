// G2-specific tests: the endomorphism psi behind the subgroup check, points of order 13 on the
// twist (13^2 divides the cofactor), and the generator's published compressed encoding (zcash
// serialization notes / zkcrypto bls12_381, src/tests/g2_compressed_valid_test_vectors.dat, n = 1).
#include <coprove/field/g2.hpp>

#include "field/curve_test_support.hpp"

#include <coprove/field/encoding.hpp>

#include <catch2/catch.hpp>

using namespace coprove::field;
using namespace coprove::field::testing;

namespace {

/// cofactor / 13^2 for E'(Fq2) (the cofactor is 13^2 * 23^2 * 2713 * 11953 * ...), little-endian:
/// [r * cofactor / 13^2] maps the twist onto its 13-primary part.
constexpr std::array<std::uint64_t, 8> cofactor_over_169{
    0x3336b3150941cfddULL, 0xedf4046db800a837ULL, 0x45e0aef29c5e8629ULL, 0x5a5b213dcb710859ULL,
    0x81be2a9b0c648304ULL, 0x60a5f9bdc250555dULL, 0xd5a3c5663541d68bULL, 0x0008d5fc7522f6c4ULL};
constexpr std::array<std::uint64_t, 1> thirteen{13};

}  // namespace

TEST_CASE("psi multiplies G2 by x", "[field][g2][cpu]") {
  // x mod r = r - 0xd201000000010000.
  const scalar_limbs x_mod_r{0x2dfefffeffff0001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                             0x73eda753299d7d48ULL};
  auto gen = test_rng(41);
  for (int i = 0; i < 4; ++i) {
    const g2_affine p = random_subgroup_point<g2_curve>(gen);
    CHECK(g2_endomorphism(p).is_on_curve());
    CHECK(p.mul(x_mod_r) == g2_endomorphism(p));
  }
  CHECK(g2_endomorphism(g2_affine::identity()).is_identity());
  const g2_affine q = random_curve_point<g2_curve>(gen);
  CHECK(g2_endomorphism(q).is_on_curve());
  CHECK_FALSE(q.mul(x_mod_r) == g2_endomorphism(q));
}

TEST_CASE("points of order 13 on the twist fail the subgroup check and every decoder", "[field][g2][noble][cpu]") {
  auto gen = test_rng(42);
  int found = 0;
  for (int i = 0; i < 4 && found < 2; ++i) {
    const g2_jacobian q = random_curve_point<g2_curve>(gen).to_jacobian();
    g2_jacobian part = detail::mul_vartime(detail::mul_vartime(q, scalar_modulus), cofactor_over_169);
    if (part.is_identity()) continue;
    // The 13-primary part is Z/13 x Z/13 or Z/169; one more factor 13 may be needed.
    if (!detail::mul_vartime(part, thirteen).is_identity()) part = detail::mul_vartime(part, thirteen);
    const g2_affine p = part.to_affine();
    ++found;
    REQUIRE(p.is_on_curve());
    CHECK(detail::mul_vartime(p.to_jacobian(), thirteen).is_identity());
    CHECK_FALSE(p.is_torsion_free());
    const auto c = encode_compressed(p);
    const auto u = encode_uncompressed(p);
    CHECK(decode_g2_compressed(c).error == decode_error::not_in_subgroup);
    CHECK(decode_g2_uncompressed(u).error == decode_error::not_in_subgroup);
    for (const std::string& hex : {to_hex(c), to_hex(u)}) {
      const auto answer = noble_oracle::instance().call({{"op", "g2_decode"}, {"bytes", hex}});
      CHECK_FALSE(answer.at("valid").as_bool());
    }
  }
  CHECK(found > 0);
}

TEST_CASE("the G2 generator has the published compressed encoding", "[field][g2][cpu]") {
  CHECK(to_hex(encode_compressed(g2_affine::generator())) ==
        "93e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e"
        "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8");
  CHECK(g2_affine::generator().is_torsion_free());
}
