// G1-specific tests: the endomorphism sigma behind the subgroup check, and the generator's
// coordinates and encodings as published (zcash serialization notes / zkcrypto bls12_381,
// src/tests/g1_*_valid_test_vectors.dat entry n = 1). The group law, scalar multiplication, the
// [n]G vectors and the noble cross-checks shared with G2 are in curve_group_test.cpp.
#include <coprove/field/g1.hpp>

#include "field/curve_test_support.hpp"

#include <catch2/catch.hpp>

using namespace coprove::field;
using namespace coprove::field::testing;

TEST_CASE("beta is a primitive cube root of unity and sigma multiplies G1 by -x^2", "[field][g1][cpu]") {
  const fq beta = g1_endomorphism_beta();
  CHECK(beta != fq::one());
  CHECK(beta.square() * beta == fq::one());
  // -x^2 mod r = r - 0xd201000000010000^2.
  const scalar_limbs minus_x_squared{0xfffffffe00000001ULL, 0xa7780001fffcb7fcULL, 0x3339d80809a1d804ULL,
                                     0x73eda753299d7d48ULL};
  auto gen = test_rng(31);
  for (int i = 0; i < 4; ++i) {
    const g1_affine p = random_subgroup_point<g1_curve>(gen);
    CHECK(p.mul(minus_x_squared) == g1_endomorphism(p));
  }
  CHECK(g1_endomorphism(g1_affine::identity()).is_identity());
  // Off the subgroup sigma still maps the curve to itself, but the eigenvalue no longer holds.
  const g1_affine q = random_curve_point<g1_curve>(gen);
  CHECK(g1_endomorphism(q).is_on_curve());
  CHECK_FALSE(q.mul(minus_x_squared) == g1_endomorphism(q));
}

TEST_CASE("the G1 generator has the published coordinates and encodings", "[field][g1][cpu]") {
  const g1_affine g = g1_affine::generator();
  CHECK(to_hex(encode_compressed(g)) ==
        "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb");
  CHECK(to_hex(encode_uncompressed(g)) ==
        "17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"
        "08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1");
  CHECK(g.is_on_curve());
  CHECK(g.is_torsion_free());
}
