// Tests of the zcash byte encodings and the snarkjs JSON form: every decoder refuses truncated,
// oversized, wrong-flag, non-canonical, off-curve and off-subgroup input with the error naming
// that check, and noble refuses the same bytes; the JSON form round-trips and matches what snarkjs
// writes for the G1 generator.
#include <coprove/field/encoding.hpp>

#include "field/curve_test_support.hpp"

#include <coprove/field/fq_constants.hpp>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

using namespace coprove::field;
using namespace coprove::field::testing;

namespace {

/// p as 48 big-endian bytes: the smallest non-canonical coordinate.
std::array<std::uint8_t, 48> modulus_bytes() {
  std::array<std::uint8_t, 48> out{};
  for (std::size_t i = 0; i < 48; ++i) out[47 - i] = static_cast<std::uint8_t>(constants::fq_modulus[i / 8] >> (8 * (i % 8)));
  return out;
}

/// The G1 point (0, 2): on the curve, of order 3, so outside G1.
g1_affine g1_order_three_point() { return g1_affine::from_coordinates(fq::zero(), fq::from_u64(2)); }

template <class Result>
decode_error error_of(const Result& r) {
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.error.category() == decode_category());
  return static_cast<decode_error>(r.error.value());
}

template <class Curve>
void check_noble_refuses(std::span<const std::uint8_t> bytes) {
  const auto answer = noble_oracle::instance().call(
      {{"op", std::string(curve_traits<Curve>::name) + "_decode"}, {"bytes", to_hex(bytes)}});
  INFO("noble: " << boost::json::serialize(answer));
  CHECK_FALSE(answer.at("valid").as_bool());
}

/// A point on the curve outside the subgroup.
template <class Curve>
affine_of<Curve> off_subgroup_point() {
  auto gen = test_rng(21);
  for (;;) {
    const auto p = random_curve_point<Curve>(gen);
    if (!p.is_torsion_free()) return p;
  }
}

}  // namespace

TEST_CASE("decode errors have a category, messages and compare with their enum", "[field][encoding][cpu]") {
  const std::error_code e = decode_error::not_in_subgroup;
  CHECK(e == decode_error::not_in_subgroup);
  CHECK(e != decode_error::not_on_curve);
  CHECK(std::string(e.category().name()) == "coprove.encoding");
  CHECK(e.message() == "point not in the prime-order subgroup");
  CHECK(make_error_code(decode_error::wrong_length).message() == "encoding has the wrong length");
}

TEMPLATE_TEST_CASE("the identity encodes and decodes in both forms", "[field][encoding][cpu]", g1_curve, g2_curve) {
  using traits = curve_traits<TestType>;
  const auto id = affine_of<TestType>::identity();
  const auto c = traits::compressed(id);
  const auto u = traits::uncompressed(id);
  CHECK(c[0] == 0xc0);
  CHECK(u[0] == 0x40);
  CHECK(std::all_of(c.begin() + 1, c.end(), [](auto b) { return b == 0; }));
  CHECK(std::all_of(u.begin() + 1, u.end(), [](auto b) { return b == 0; }));
  CHECK(traits::decode_compressed(c).point.is_identity());
  CHECK(traits::decode_uncompressed(u).ok());
  CHECK(traits::decode_any(u).point.is_identity());
}

TEMPLATE_TEST_CASE("every byte decoder refuses malformed input with the error naming the check",
                   "[field][encoding][noble][cpu]", g1_curve, g2_curve) {
  using traits = curve_traits<TestType>;
  using affine = affine_of<TestType>;
  const std::size_t n = traits::compressed_size;
  auto gen = test_rng(22);
  const affine p = random_subgroup_point<TestType>(gen);
  const auto c = traits::compressed(p);
  const auto u = traits::uncompressed(p);
  auto bytes = [](const auto& a) { return std::vector<std::uint8_t>(a.begin(), a.end()); };

  SECTION("truncated and oversized") {
    for (const auto& bad : {std::vector<std::uint8_t>(c.begin(), c.end() - 1), std::vector<std::uint8_t>{}}) {
      CHECK(error_of(traits::decode_compressed(bad)) == decode_error::wrong_length);
      CHECK(error_of(traits::decode_any(bad)) == decode_error::wrong_length);
      check_noble_refuses<TestType>(bad);
    }
    auto long_c = bytes(c);
    long_c.push_back(0);
    CHECK(error_of(traits::decode_compressed(long_c)) == decode_error::wrong_length);
    CHECK(error_of(traits::decode_any(long_c)) == decode_error::wrong_length);
    check_noble_refuses<TestType>(long_c);
    const std::vector<std::uint8_t> short_u(u.begin(), u.end() - 1);
    CHECK(error_of(traits::decode_uncompressed(short_u)) == decode_error::wrong_length);
    CHECK(error_of(traits::decode_any(short_u)) == decode_error::wrong_length);
    check_noble_refuses<TestType>(short_u);
    auto long_u = bytes(u);
    long_u.push_back(0);
    CHECK(error_of(traits::decode_uncompressed(long_u)) == decode_error::wrong_length);
    check_noble_refuses<TestType>(long_u);
    // The compressed bit on an uncompressed length.
    auto flagged_u = bytes(u);
    flagged_u[0] |= 0x80;
    CHECK(error_of(traits::decode_any(flagged_u)) == decode_error::wrong_length);
    check_noble_refuses<TestType>(flagged_u);
  }

  SECTION("wrong flags") {
    auto unflagged_c = bytes(c);
    unflagged_c[0] &= 0x7f;
    CHECK(error_of(traits::decode_compressed(unflagged_c)) == decode_error::compression_flag_mismatch);
    CHECK(error_of(traits::decode_any(unflagged_c)) == decode_error::wrong_length);
    check_noble_refuses<TestType>(unflagged_c);
    auto flagged_u = bytes(u);
    flagged_u[0] |= 0x80;
    CHECK(error_of(traits::decode_uncompressed(flagged_u)) == decode_error::compression_flag_mismatch);
    auto signed_u = bytes(u);
    signed_u[0] |= 0x20;
    CHECK(error_of(traits::decode_uncompressed(signed_u)) == decode_error::sign_flag_not_allowed);
    check_noble_refuses<TestType>(signed_u);
    for (const std::uint8_t flags : {std::uint8_t{0xe0}, std::uint8_t{0x60}}) {
      auto id = flags == 0xe0 ? bytes(traits::compressed(affine::identity())) : bytes(traits::uncompressed(affine::identity()));
      id[0] = flags;
      CHECK(error_of(traits::decode_any(id)) == decode_error::sign_flag_not_allowed);
      check_noble_refuses<TestType>(id);
    }
    auto id_c = bytes(traits::compressed(affine::identity()));
    id_c[n - 1] = 1;
    CHECK(error_of(traits::decode_compressed(id_c)) == decode_error::infinity_not_canonical);
    check_noble_refuses<TestType>(id_c);
    auto id_u = bytes(traits::uncompressed(affine::identity()));
    id_u[0] |= 0x01;
    CHECK(error_of(traits::decode_uncompressed(id_u)) == decode_error::infinity_not_canonical);
    check_noble_refuses<TestType>(id_u);
    // The identity flag on a real point's bytes.
    auto inf_c = bytes(c);
    inf_c[0] = static_cast<std::uint8_t>((inf_c[0] & 0x1f) | 0xc0);
    CHECK(error_of(traits::decode_compressed(inf_c)) == decode_error::infinity_not_canonical);
    check_noble_refuses<TestType>(inf_c);
  }

  SECTION("non-canonical coordinates") {
    const auto m = modulus_bytes();
    // Each 48-byte part in turn set to p (G1: x, y; G2: x.c1, x.c0, y.c1, y.c0).
    for (std::size_t part = 0; part < 2 * n / 48; ++part) {
      auto bad = bytes(u);
      std::copy(m.begin(), m.end(), bad.begin() + static_cast<std::ptrdiff_t>(part * 48));
      INFO("part " << part);
      CHECK(error_of(traits::decode_uncompressed(bad)) == decode_error::coordinate_not_canonical);
      check_noble_refuses<TestType>(bad);
    }
    for (std::size_t part = 0; part < n / 48; ++part) {
      auto bad = bytes(c);
      std::copy(m.begin(), m.end(), bad.begin() + static_cast<std::ptrdiff_t>(part * 48));
      bad[0] |= 0x80;  // p's top bits are clear, so the flags can sit on top of it
      CHECK(error_of(traits::decode_compressed(bad)) == decode_error::coordinate_not_canonical);
      check_noble_refuses<TestType>(bad);
    }
  }

  SECTION("off the curve") {
    auto off = traits::uncompressed(affine::from_coordinates(p.x, p.y + decltype(p.y)::one()));
    CHECK(error_of(traits::decode_uncompressed(off)) == decode_error::not_on_curve);
    check_noble_refuses<TestType>(off);
    // A compressed x for which x^3 + b is not a square.
    auto x = decltype(p.x)::random(gen);
    while ((x.square() * x + TestType::b()).sqrt()) x = x + decltype(p.x)::one();
    auto no_root = traits::compressed(affine::from_coordinates(x, decltype(p.y)::one()));
    CHECK(error_of(traits::decode_compressed(no_root)) == decode_error::not_on_curve);
    check_noble_refuses<TestType>(no_root);
  }

  SECTION("off the subgroup") {
    const affine q = off_subgroup_point<TestType>();
    for (const auto& bad : {bytes(traits::compressed(q)), bytes(traits::uncompressed(q))}) {
      CHECK(error_of(traits::decode_any(bad)) == decode_error::not_in_subgroup);
      check_noble_refuses<TestType>(bad);
    }
    // Trusted input may skip the check.
    const auto skipped = traits::decode_uncompressed(traits::uncompressed(q), subgroup_check::skip);
    REQUIRE(skipped.ok());
    CHECK(skipped.point == q);
  }
}

TEST_CASE("the order-3 G1 point (0, 2) is refused as outside the subgroup", "[field][encoding][g1][noble][cpu]") {
  const g1_affine p = g1_order_three_point();
  REQUIRE(p.is_on_curve());
  CHECK(detail::mul_vartime(p.to_jacobian(), std::array<std::uint64_t, 1>{3}).is_identity());
  const auto c = encode_compressed(p);
  const auto u = encode_uncompressed(p);
  for (const auto& bad : {std::vector<std::uint8_t>(c.begin(), c.end()), std::vector<std::uint8_t>(u.begin(), u.end())}) {
    CHECK(error_of(decode_g1(bad)) == decode_error::not_in_subgroup);
    check_noble_refuses<g1_curve>(bad);
  }
}

TEST_CASE("the snarkjs JSON form of the G1 generator is the one snarkjs writes", "[field][encoding][g1][cpu]") {
  // Written by ffjavascript 0.3.1 (snarkjs 0.7.6): G1.toObject(G1.toAffine(G1.g)) in decimal.
  const auto expected = boost::json::parse(
      R"(["3685416753713387016781088315183077757961620795782546409894578378688607592378376318836054947676345821548104185464507",)"
      R"("1339506544944476473020471379941921221584933875938349620426543736416511423956333506472724655353366534992391756441569","1"])");
  CHECK(to_snarkjs_json(g1_affine::generator()) == expected);
  CHECK(to_snarkjs_json(g1_affine::identity()) == boost::json::parse(R"(["0","1","0"])"));
  CHECK(to_snarkjs_json(g2_affine::identity()) == boost::json::parse(R"([["0","0"],["1","0"],["0","0"]])"));
}

TEMPLATE_TEST_CASE("the snarkjs JSON form round-trips and refuses bad points with named errors",
                   "[field][encoding][cpu]", g1_curve, g2_curve) {
  using traits = curve_traits<TestType>;
  using affine = affine_of<TestType>;
  auto gen = test_rng(23);
  for (int i = 0; i < 4; ++i) {
    const affine p = random_subgroup_point<TestType>(gen);
    const auto back = traits::from_json(boost::json::parse(boost::json::serialize(to_snarkjs_json(p))));
    REQUIRE(back.ok());
    CHECK(back.point == p);
  }
  CHECK(traits::from_json(to_snarkjs_json(affine::identity())).point.is_identity());

  const affine p = random_subgroup_point<TestType>(gen);
  const boost::json::value good = to_snarkjs_json(p);
  auto with = [&](std::size_t index, boost::json::value v) {
    boost::json::value out = good;
    out.as_array()[index] = std::move(v);
    return out;
  };
  // A coordinate string for the field of this curve, in its JSON shape.
  auto field_json = [](std::string s) -> boost::json::value {
    if constexpr (std::is_same_v<TestType, g1_curve>) return boost::json::string(s);
    else return boost::json::array{boost::json::string(s), "0"};
  };
  const std::string p_decimal = "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559787";
  CHECK(error_of(traits::from_json(boost::json::parse("{}"))) == decode_error::json_malformed);
  CHECK(error_of(traits::from_json(boost::json::parse("[]"))) == decode_error::json_malformed);
  CHECK(error_of(traits::from_json(with(0, 5))) == decode_error::json_malformed);
  CHECK(error_of(traits::from_json(with(0, field_json("12a")))) == decode_error::json_malformed);
  CHECK(error_of(traits::from_json(with(0, field_json("-1")))) == decode_error::json_malformed);
  CHECK(error_of(traits::from_json(with(0, field_json(p_decimal)))) == decode_error::coordinate_not_canonical);
  CHECK(error_of(traits::from_json(with(2, field_json("2")))) == decode_error::json_not_affine);
  CHECK(error_of(traits::from_json(with(1, to_snarkjs_json(affine::generator()).as_array()[0])))
        == decode_error::not_on_curve);
  const auto off = to_snarkjs_json(off_subgroup_point<TestType>());
  CHECK(error_of(traits::from_json(off)) == decode_error::not_in_subgroup);
}
