// Tests that hold for both G1 and G2, written once over the curve: the group law in every
// representation, the three scalar multiplications against each other, subgroup membership
// against [r]P = O, the zkcrypto known-answer encodings of [n]G for n < 1000, and cross-checks
// of points and encodings with @noble/curves through the noble oracle.
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>

#include "field/curve_test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace coprove::field;
using namespace coprove::field::testing;

namespace {

std::vector<std::uint8_t> read_vector_file(const std::string& name) {
  const std::filesystem::path path =
      std::filesystem::path(COPROVE_SOURCE_DIR) / "tests" / "field" / "vectors" / "zkcrypto" / name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("missing test vector file " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEMPLATE_TEST_CASE("the group law holds in affine, Jacobian and XYZZ coordinates", "[field][g1][g2][cpu]", g1_curve,
                   g2_curve) {
  using affine = affine_of<TestType>;
  using jacobian = jacobian_of<TestType>;
  using xyzz = detail::xyzz_point<TestType>;
  auto gen = test_rng(11);
  REQUIRE(affine::generator().is_on_curve());
  REQUIRE(affine::generator().is_torsion_free());
  for (int round = 0; round < 8; ++round) {
    const affine a = random_subgroup_point<TestType>(gen);
    const affine b = random_subgroup_point<TestType>(gen);
    const affine c = random_subgroup_point<TestType>(gen);
    const jacobian ja = a.to_jacobian(), jb = b.to_jacobian(), jc = c.to_jacobian();
    CHECK(ja.is_on_curve());
    CHECK((ja + jb).is_on_curve());
    CHECK((ja + jb) + jc == ja + (jb + jc));
    CHECK(ja + jb == jb + ja);
    CHECK((ja + (-ja)).is_identity());
    CHECK((ja + jacobian::identity()) == ja);
    CHECK((jacobian::identity() + ja) == ja);
    CHECK(ja.doubled() == ja + ja);
    CHECK(ja.doubled() == ja + a);  // mixed add reaching the doubling case
    CHECK((ja + (-a)).is_identity());
    CHECK(ja + b == ja + jb);  // mixed = full
    CHECK((ja + jb).to_affine() == ja + jb);
    // A Jacobian point with Z != 1 in the mixed addition.
    const jacobian jab = ja + jb;
    CHECK(jab + c == jab + jc);
    // XYZZ agrees with Jacobian for every operation.
    const xyzz xa = a.to_xyzz(), xb = b.to_xyzz();
    CHECK((xa + b) == ja + jb);
    CHECK(((xa + b) + c).to_affine() == (ja + jb + jc).to_affine());
    CHECK((xa + xb) == (ja + jb));
    CHECK(xa.doubled() == ja.doubled());
    CHECK((xa + a) == ja.doubled());
    CHECK((xa + b).doubled() == (ja + jb).doubled());
    CHECK(((xa + b) + (xb + c)) == ((ja + jb) + (jb + jc)));
    CHECK((xa + (-a)).is_identity());
    CHECK((xa + xyzz::identity()) == a);
    CHECK((xyzz::identity() + a) == a);
    CHECK((xa + b).to_jacobian() == ja + jb);
    CHECK(-(ja + jb) == (-a).to_jacobian() + (-b));
    CHECK(ja != jb);
    CHECK(!((ja + jb) == a));
  }
  CHECK(jacobian::identity().to_affine().is_identity());
  CHECK(xyzz::identity().to_affine().is_identity());
  CHECK(affine::identity() == -affine::identity());
}

TEMPLATE_TEST_CASE("batch normalisation equals one inversion per point and keeps identities",
                   "[field][g1][g2][cpu]", g1_curve, g2_curve) {
  using jacobian = jacobian_of<TestType>;
  auto gen = test_rng(12);
  std::vector<jacobian> points;
  for (int i = 0; i < 9; ++i) {
    points.push_back(random_subgroup_point<TestType>(gen).to_jacobian() + jacobian::generator());
    if (i % 3 == 0) points.push_back(jacobian::identity());
  }
  const auto affine = batch_normalize(std::span<const jacobian>(points));
  REQUIRE(affine.size() == points.size());
  for (std::size_t i = 0; i < points.size(); ++i) CHECK(affine[i] == points[i].to_affine());
  CHECK(batch_normalize(std::span<const jacobian>()).empty());
}

TEMPLATE_TEST_CASE("variable-time, constant-time and double-and-add multiplication agree", "[field][g1][g2][cpu]",
                   g1_curve, g2_curve) {
  using jacobian = jacobian_of<TestType>;
  auto gen = test_rng(13);
  const jacobian g = jacobian::generator();
  std::vector<scalar_limbs> scalars{{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 0, 0, 0}, {15, 0, 0, 0}, {16, 0, 0, 0},
                                    {0xffffffffffffffffULL, 0, 0, 0}};
  scalar_limbs r_minus_1 = scalar_modulus;
  r_minus_1[0] -= 1;
  scalars.push_back(r_minus_1);
  for (int i = 0; i < 6; ++i) scalars.push_back(random_scalar(gen));
  for (const auto& s : scalars) {
    const jacobian expected = double_and_add(g, s);
    CHECK(g.mul(s) == expected);
    CHECK(g.mul_secret(s) == expected);
    CHECK(affine_of<TestType>::generator().mul(s) == expected);
    CHECK(affine_of<TestType>::generator().mul_secret(s) == expected);
  }
  CHECK(g.mul(r_minus_1) == -g);
  // A base point outside the subgroup (and so of composite order) works too.
  const jacobian off = random_curve_point<TestType>(gen).to_jacobian();
  const scalar_limbs s = random_scalar(gen);
  CHECK(off.mul(s) == double_and_add(off, s));
  CHECK(off.mul_secret(s) == double_and_add(off, s));
  CHECK(jacobian::identity().mul(s).is_identity());
  CHECK(jacobian::identity().mul_secret(s).is_identity());
}

TEMPLATE_TEST_CASE("the endomorphism subgroup check agrees with [r]P = O", "[field][g1][g2][cpu]", g1_curve,
                   g2_curve) {
  using jacobian = jacobian_of<TestType>;
  auto gen = test_rng(14);
  for (int i = 0; i < 4; ++i) {
    const auto p = random_subgroup_point<TestType>(gen);
    CHECK(detail::mul_vartime(p.to_jacobian(), scalar_modulus).is_identity());
    CHECK(p.is_torsion_free());
  }
  int outside = 0;
  for (int i = 0; i < 6; ++i) {
    const auto p = random_curve_point<TestType>(gen);
    REQUIRE(p.is_on_curve());
    const bool killed_by_r = detail::mul_vartime(p.to_jacobian(), scalar_modulus).is_identity();
    CHECK(p.is_torsion_free() == killed_by_r);
    CHECK(p.to_jacobian().is_torsion_free() == killed_by_r);
    outside += killed_by_r ? 0 : 1;
  }
  CHECK(outside > 0);  // random curve points lie outside the subgroup
  CHECK(jacobian::identity().is_torsion_free());
}

TEMPLATE_TEST_CASE("encodings of nG for n below 1000 match the zkcrypto test vectors", "[field][g1][g2][cpu]",
                   g1_curve, g2_curve) {
  // Source: zkcrypto/bls12_381 src/tests/*_valid_test_vectors.dat (tests/field/vectors/zkcrypto).
  using traits = curve_traits<TestType>;
  using jacobian = jacobian_of<TestType>;
  const std::size_t c = traits::compressed_size;
  const auto compressed = read_vector_file(std::string(traits::name) + "_compressed_valid_test_vectors.dat");
  const auto uncompressed = read_vector_file(std::string(traits::name) + "_uncompressed_valid_test_vectors.dat");
  REQUIRE(compressed.size() == 1000 * c);
  REQUIRE(uncompressed.size() == 2000 * c);
  std::vector<jacobian> multiples;
  jacobian acc = jacobian::identity();
  for (int n = 0; n < 1000; ++n) {
    multiples.push_back(acc);
    acc += jacobian::generator();
  }
  const auto affine = batch_normalize(std::span<const jacobian>(multiples));
  for (std::size_t n = 0; n < 1000; ++n) {
    INFO("n = " << n);
    const std::span<const std::uint8_t> want_c(compressed.data() + n * c, c);
    const std::span<const std::uint8_t> want_u(uncompressed.data() + 2 * n * c, 2 * c);
    const auto got_c = traits::compressed(affine[n]);
    const auto got_u = traits::uncompressed(affine[n]);
    CHECK(std::equal(got_c.begin(), got_c.end(), want_c.begin()));
    CHECK(std::equal(got_u.begin(), got_u.end(), want_u.begin()));
    const auto dc = traits::decode_compressed(want_c);
    const auto du = traits::decode_uncompressed(want_u);
    REQUIRE(dc.ok());
    REQUIRE(du.ok());
    CHECK(dc.point == affine[n]);
    CHECK(du.point == affine[n]);
  }
  // Scalar multiplication reaches the same points.
  for (std::uint64_t n : {2u, 3u, 7u, 100u, 999u}) CHECK(jacobian::generator().mul({n, 0, 0, 0}) == affine[n]);
}

TEMPLATE_TEST_CASE("random multiples of the generator and their encodings equal noble's bit for bit",
                   "[field][g1][g2][noble][cpu]", g1_curve, g2_curve) {
  using traits = curve_traits<TestType>;
  auto& oracle = noble_oracle::instance();
  auto gen = test_rng(15);
  for (int i = 0; i < 12; ++i) {
    const scalar_limbs s = random_scalar(gen);
    const auto p = jacobian_of<TestType>::generator().mul_secret(s).to_affine();
    const auto answer = oracle.call({{"op", std::string(traits::name) + "_mul"}, {"scalar", scalar_to_decimal(s)}});
    const auto c = traits::compressed(p);
    const auto u = traits::uncompressed(p);
    CHECK(answer_string(answer, "compressed") == to_hex(c));
    CHECK(answer_string(answer, "uncompressed") == to_hex(u));
    // noble decodes ours, and we decode noble's.
    const auto decoded = oracle.call({{"op", std::string(traits::name) + "_decode"}, {"bytes", to_hex(c)}});
    CHECK(decoded.at("valid").as_bool());
    const auto theirs = traits::decode_any(answer_bytes(answer, "uncompressed"));
    REQUIRE(theirs.ok());
    CHECK(theirs.point == p);
    // Addition of two encoded points.
    const auto q = random_subgroup_point<TestType>(gen);
    const auto sum = oracle.call(
        {{"op", std::string(traits::name) + "_add"}, {"a", to_hex(c)}, {"b", to_hex(traits::uncompressed(q))}});
    CHECK(answer_string(sum, "compressed") == to_hex(traits::compressed((p.to_jacobian() + q).to_affine())));
    // Multiplication of a point other than the generator.
    const scalar_limbs t = random_scalar(gen);
    const auto tq = oracle.call(
        {{"op", std::string(traits::name) + "_mul"}, {"scalar", scalar_to_decimal(t)}, {"point", to_hex(c)}});
    CHECK(answer_string(tq, "compressed") == to_hex(traits::compressed(p.mul(t).to_affine())));
  }
}

TEMPLATE_TEST_CASE("noble agrees with the subgroup check on random curve points", "[field][g1][g2][noble][cpu]",
                   g1_curve, g2_curve) {
  using traits = curve_traits<TestType>;
  auto& oracle = noble_oracle::instance();
  auto gen = test_rng(16);
  for (int i = 0; i < 6; ++i) {
    const auto p = (i % 2 == 0) ? random_curve_point<TestType>(gen) : random_subgroup_point<TestType>(gen);
    const auto answer = oracle.call({{"op", std::string(traits::name) + "_check"},
                                     {"x", traits::coordinate_json(p.x)},
                                     {"y", traits::coordinate_json(p.y)}});
    CHECK(answer.at("on_curve").as_bool());
    CHECK(answer.at("torsion_free").as_bool() == p.is_torsion_free());
    // An off-curve point: y changed.
    const auto bad = oracle.call({{"op", std::string(traits::name) + "_check"},
                                  {"x", traits::coordinate_json(p.x)},
                                  {"y", traits::coordinate_json(p.y + decltype(p.y)::one())}});
    CHECK_FALSE(bad.at("on_curve").as_bool());
    CHECK_FALSE(affine_of<TestType>::from_coordinates(p.x, p.y + decltype(p.y)::one()).is_on_curve());
  }
}

TEMPLATE_TEST_CASE("a flipped bit is refused by both decoders or gives the same other point",
                   "[field][g1][g2][noble][cpu]", g1_curve, g2_curve) {
  using traits = curve_traits<TestType>;
  auto& oracle = noble_oracle::instance();
  auto gen = test_rng(17);
  int refused = 0;
  int accepted = 0;
  for (int i = 0; i < 24; ++i) {
    const auto p = random_subgroup_point<TestType>(gen);
    std::vector<std::uint8_t> bytes;
    if (i % 2 == 0) {
      const auto c = traits::compressed(p);
      bytes.assign(c.begin(), c.end());
    } else {
      const auto u = traits::uncompressed(p);
      bytes.assign(u.begin(), u.end());
    }
    std::uniform_int_distribution<std::size_t> bit(0, bytes.size() * 8 - 1);
    // Every fourth case flips a flag bit; the others a random bit.
    const std::size_t flip = i % 4 == 1 ? static_cast<std::size_t>(i % 3) : bit(gen);
    bytes[flip / 8] ^= static_cast<std::uint8_t>(0x80u >> (flip % 8));
    const auto ours = traits::decode_any(bytes);
    const auto theirs = oracle.call({{"op", std::string(traits::name) + "_decode"}, {"bytes", to_hex(bytes)}});
    INFO("bit " << flip << " of " << to_hex(bytes));
    REQUIRE(theirs.at("valid").as_bool() == ours.ok());
    if (ours.ok()) {
      ++accepted;
      CHECK_FALSE(ours.point == p);
      CHECK(answer_string(theirs, "compressed") == to_hex(traits::compressed(ours.point)));
    } else {
      ++refused;
    }
  }
  CHECK(refused > 0);
  CHECK(refused + accepted == 24);
}
