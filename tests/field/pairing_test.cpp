// Tests of the BLS12-381 pairing: the known value e(G1, G2) from the zkcrypto bls12_381 crate
// (src/pairings.rs, Gt::generator, commit 6bb9695; its Fp limbs are Montgomery form with the same
// R, listed in coprove's fq12 order), bilinearity, order r, non-degeneracy, the identity,
// prepared G2 points and multi-pairings, and cross-checks against @noble/curves through
// noble_oracle (random pairings and final exponentiations must be equal, a tampered one must not).
#include <coprove/field/pairing.hpp>

#include "field/noble_oracle.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <random>
#include <string>
#include <vector>

namespace {

namespace field = coprove::field;
using field::fq;
using field::fq12;
using field::fq2;
using field::g1_affine;
using field::g2_affine;
using field::scalar_limbs;
using field::testing::noble_oracle;

const g1_affine g1_generator = g1_affine::generator();
const g2_affine g2_generator = g2_affine::generator();

/// e(G1, G2) as published by zkcrypto (Gt::generator): 72 Montgomery limbs in fq12 order.
fq12 zkcrypto_gt_generator() {
  constexpr std::uint64_t limbs[72] = {
      0x1972e433a01f85c5, 0x97d32b76fd772538, 0xc8ce546fc96bcdf9, 0xcef63e7366d40614,
      0xa611342781843780, 0x13f3448a3fc6d825, 0xd26331b02e9d6995, 0x9d68a482f7797e7d,
      0x9c9b29248d39ea92, 0xf4801ca2e13107aa, 0xa16c0732bdbcb066, 0x083ca4afba360478,
      0x59e261db0916b641, 0x2716b6f4b23e960d, 0xc8e55b10a0bd9c45, 0x0bdb0bd99c4deda8,
      0x8cf89ebf57fdaac5, 0x12d6b7929e777a5e, 0x5fc85188b0e15f35, 0x34a06e3a8f096365,
      0xdb3126a6e02ad62c, 0xfc6f5aa97d9a990b, 0xa12f55f5eb89c210, 0x1723703a926f8889,
      0x93588f2971828778, 0x43f65b8611ab7585, 0x3183aaf5ec279fdf, 0xfa73d7e18ac99df6,
      0x64e176a6a64c99b0, 0x179fa78c58388f1f, 0x672a0a11ca2aef12, 0x0d11b9b52aa3f16b,
      0xa44412d0699d056e, 0xc01d0177221a5ba5, 0x66e0cede6c735529, 0x05f5a71e9fddc339,
      0xd30a88a1b062c679, 0x5ac56a5d35fc8304, 0xd0c834a6a81f290d, 0xcd5430c2da3707c7,
      0xf0c27ff780500af0, 0x09245da6e2d72eae, 0x9f2e0676791b5156, 0xe2d1c8234918fe13,
      0x4c9e459f3c561bf4, 0xa3e85e53b9d3e3c1, 0x820a121e21a70020, 0x15af618341c59acc,
      0x7c95658c24993ab1, 0x73eb38721ca886b9, 0x5256d749477434bc, 0x8ba41902ea504a8b,
      0x04a3d3f80c86ce6d, 0x18a64a87fb686eaa, 0xbb83e71bb920cf26, 0x2a5277ac92a73945,
      0xfc0ee59f94f046a0, 0x7158cdf3786058f7, 0x7cc1061b82f945f6, 0x03f847aa9fdbe567,
      0x8078dba56134e657, 0x1cd7ec9a43998a6e, 0xb1aa599a1a993766, 0xc9a0f62f0842ee44,
      0x8e159be3b605dffa, 0x0c86ba0d4af13fc2, 0xe80ff2a06a52ffb1, 0x7694ca48721a906c,
      0x7583183e03b08514, 0xf567afdd40cee4e2, 0x9a6d96d2e526a5fc, 0x197e9f49861f2242};
  fq c[12];
  for (int i = 0; i < 12; ++i) {
    for (int j = 0; j < 6; ++j) c[i].limbs[j] = limbs[6 * i + j];
  }
  return fq12{field::fq6{{c[0], c[1]}, {c[2], c[3]}, {c[4], c[5]}},
              field::fq6{{c[6], c[7]}, {c[8], c[9]}, {c[10], c[11]}}};
}

/// The 12 Fq coefficients of f in the oracle's order (c0.c0.c0, c0.c0.c1, c0.c1.c0, ...).
std::array<fq, 12> coefficients(const fq12& f) {
  return {f.c0.c0.c0, f.c0.c0.c1, f.c0.c1.c0, f.c0.c1.c1, f.c0.c2.c0, f.c0.c2.c1,
          f.c1.c0.c0, f.c1.c0.c1, f.c1.c1.c0, f.c1.c1.c1, f.c1.c2.c0, f.c1.c2.c1};
}

std::string fq_hex(const fq& x) {
  std::array<std::uint8_t, 48> bytes{};
  x.to_bytes_be(bytes);
  return field::testing::to_hex(bytes);
}

fq hex_fq(std::string_view hex) {
  const auto bytes = field::testing::from_hex(hex);
  REQUIRE(bytes.size() == 48);
  const auto x = fq::from_bytes_be(std::span<const std::uint8_t, 48>(bytes.data(), 48));
  REQUIRE(x.has_value());
  return *x;
}

boost::json::array fq12_json(const fq12& f) {
  boost::json::array out;
  for (const fq& c : coefficients(f)) out.emplace_back(fq_hex(c));
  return out;
}

fq12 json_fq12(const boost::json::value& v) {
  const auto& list = v.as_array();
  REQUIRE(list.size() == 12);
  fq c[12];
  for (int i = 0; i < 12; ++i) c[i] = hex_fq(list[i].as_string());
  return fq12{field::fq6{{c[0], c[1]}, {c[2], c[3]}, {c[4], c[5]}},
              field::fq6{{c[6], c[7]}, {c[8], c[9]}, {c[10], c[11]}}};
}

/// f^e for a four-limb exponent.
fq12 pow(const fq12& f, const scalar_limbs& e) { return f.pow(e.data(), e.size()); }

/// A point [s]G of G1 and [t]G of G2 computed by noble, with their encodings for pairing requests.
struct noble_points {
  g1_affine p;
  g2_affine q;
  std::string p_hex, q_hex;
};

noble_points noble_random_points(std::mt19937_64& gen) {
  auto& oracle = noble_oracle::instance();
  const auto s = field::scalar_to_decimal(field::random_scalar(gen));
  const auto t = field::scalar_to_decimal(field::random_scalar(gen));
  const auto a = oracle.call({{"op", "g1_mul"}, {"scalar", s}});
  const auto b = oracle.call({{"op", "g2_mul"}, {"scalar", t}});
  noble_points out;
  out.p = g1_affine::from_coordinates(hex_fq(field::testing::answer_string(a, "x")),
                                      hex_fq(field::testing::answer_string(a, "y")));
  const auto& bx = b.at("x").as_array();
  const auto& by = b.at("y").as_array();
  out.q = g2_affine::from_coordinates(fq2{hex_fq(bx[0].as_string()), hex_fq(bx[1].as_string())},
                                      fq2{hex_fq(by[0].as_string()), hex_fq(by[1].as_string())});
  out.p_hex = field::testing::answer_string(a, "compressed");
  out.q_hex = field::testing::answer_string(b, "compressed");
  REQUIRE(out.p.is_on_curve());
  REQUIRE(out.q.is_on_curve());
  return out;
}

}  // namespace

TEST_CASE("e(G1, G2) equals the zkcrypto published value", "[field][pairing][cpu]") {
  const fq12 e = field::pairing(g1_generator, g2_generator);
  CHECK(e == zkcrypto_gt_generator());
  CHECK_FALSE(e.is_one());  // non-degenerate
}

TEST_CASE("the pairing is bilinear and its values have order r", "[field][pairing][cpu]") {
  std::mt19937_64 gen(41);
  const fq12 base = field::pairing(g1_generator, g2_generator);
  CHECK(pow(base, field::scalar_modulus).is_one());
  for (int i = 0; i < 3; ++i) {
    const scalar_limbs a = field::random_scalar(gen), b = field::random_scalar(gen);
    const g1_affine ap = g1_generator.mul(a).to_affine();
    const g2_affine bq = g2_generator.mul(b).to_affine();
    const fq12 lhs = field::pairing(ap, bq);
    REQUIRE(lhs == pow(pow(base, a), b));
    REQUIRE(field::pairing(ap, g2_generator) == field::pairing(g1_generator, g2_generator.mul(a).to_affine()));
    REQUIRE(pow(lhs, field::scalar_modulus).is_one());
  }
  // e(-P, Q) = e(P, Q)^-1 = e(P, -Q).
  CHECK(field::pairing(-g1_generator, g2_generator) == base.conjugate());
  CHECK(field::pairing(g1_generator, -g2_generator) == base.conjugate());
  // e(2P, Q) = e(P, Q)^2.
  const g1_affine two_p = g1_generator.to_jacobian().doubled().to_affine();
  CHECK(field::pairing(two_p, g2_generator) == base.square());
}

TEST_CASE("pairings with the identity are one", "[field][pairing][cpu]") {
  CHECK(field::pairing(g1_affine::identity(), g2_generator).is_one());
  CHECK(field::pairing(g1_generator, g2_affine::identity()).is_one());
  CHECK(field::multi_pairing({}).is_one());
  CHECK(field::final_exponentiation(fq12::one()).is_one());
}

TEST_CASE("prepared G2 points and multi-pairings give the products of single pairings",
          "[field][pairing][cpu]") {
  std::mt19937_64 gen(42);
  std::vector<std::pair<g1_affine, g2_affine>> pairs;
  fq12 product = fq12::one();
  std::vector<field::g2_prepared> prepared;
  std::vector<g1_affine> ps;
  for (int i = 0; i < 3; ++i) {
    const g1_affine p = g1_generator.mul(field::random_scalar(gen)).to_affine();
    const g2_affine q = g2_generator.mul(field::random_scalar(gen)).to_affine();
    pairs.emplace_back(p, q);
    ps.push_back(p);
    prepared.push_back(field::g2_prepared::from(q));
    product *= field::pairing(p, q);
    REQUIRE(field::miller_loop(p, prepared.back()) == field::miller_loop(p, q));
  }
  // An identity pair contributes nothing.
  pairs.emplace_back(g1_affine::identity(), g2_generator);
  ps.push_back(g1_affine::identity());
  prepared.push_back(field::g2_prepared::from(g2_generator));
  CHECK(prepared.back().lines.size() == 68);
  CHECK(field::g2_prepared::from(g2_affine::identity()).infinity);
  CHECK(field::multi_pairing(pairs) == product);
  std::vector<const field::g2_prepared*> qs;
  for (const auto& q : prepared) qs.push_back(&q);
  CHECK(field::final_exponentiation(field::multi_miller_loop(ps, qs)) == product);
  qs.pop_back();
  CHECK_THROWS_AS(field::multi_miller_loop(ps, qs), std::invalid_argument);
  // The Groth16 shape: e(aP, Q) e(-P, aQ) = 1.
  const scalar_limbs a = field::random_scalar(gen);
  const std::vector<std::pair<g1_affine, g2_affine>> check = {
      {g1_generator.mul(a).to_affine(), g2_generator}, {-g1_generator, g2_generator.mul(a).to_affine()}};
  CHECK(field::multi_pairing(check).is_one());
}

TEST_CASE("pairings of random points equal noble's", "[field][pairing][noble][cpu]") {
  auto& oracle = noble_oracle::instance();
  std::mt19937_64 gen(43);
  for (int i = 0; i < 4; ++i) {
    const noble_points pts = noble_random_points(gen);
    const fq12 ours = field::pairing(pts.p, pts.q);
    const auto answer = oracle.call({{"op", "pairing"}, {"g1", pts.p_hex}, {"g2", pts.q_hex}});
    const fq12 theirs = json_fq12(answer.at("fq12"));
    REQUIRE(ours == theirs);
    // A tampered value must not compare equal: one coefficient off by one.
    fq12 tampered = theirs;
    tampered.c1.c2.c1 += fq::one();
    REQUIRE_FALSE(ours == tampered);
  }
}

TEST_CASE("the final exponentiation of random fq12 values equals noble's", "[field][pairing][noble][cpu]") {
  auto& oracle = noble_oracle::instance();
  std::mt19937_64 gen(44);
  for (int i = 0; i < 4; ++i) {
    const fq12 f = fq12::random(gen);
    const auto answer = oracle.call({{"op", "final_exponentiation"}, {"fq12", fq12_json(f)}});
    const fq12 theirs = json_fq12(answer.at("fq12"));
    REQUIRE(field::final_exponentiation(f) == theirs);
    REQUIRE_FALSE(field::final_exponentiation(f * f) == theirs);
  }
  // And a pairing product checked by noble's pairing_check agrees with ours.
  const noble_points a = noble_random_points(gen);
  const noble_points b = noble_random_points(gen);
  const std::vector<std::pair<g1_affine, g2_affine>> pairs = {{a.p, a.q}, {b.p, b.q}};
  const auto answer = oracle.call({{"op", "pairing_check"},
                                   {"pairs", boost::json::array{boost::json::object{{"g1", a.p_hex}, {"g2", a.q_hex}},
                                                                boost::json::object{{"g1", b.p_hex}, {"g2", b.q_hex}}}}});
  CHECK(answer.at("one").as_bool() == field::multi_pairing(pairs).is_one());
  CHECK_FALSE(answer.at("one").as_bool());
}
