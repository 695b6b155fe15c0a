// Tests of the BLS12-381 base field Fq: known answers from the zkcrypto bls12_381 crate's tests
// (src/fp.rs, commit 6bb9695; its Fp limbs are Montgomery form with the same R = 2^384, so they
// are used as raw limbs here), the portable and MULX/ADX multiplications against each other on
// random and edge inputs, the field axioms on random values and the conversions.
#include <coprove/field/fq.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <random>
#include <string>
#include <vector>

namespace {

using coprove::field::fq;
namespace field = coprove::field;
namespace constants = coprove::field::constants;

using limbs = std::array<std::uint64_t, 6>;

limbs modulus() {
  const auto& p = constants::fq_modulus;
  return {p[0], p[1], p[2], p[3], p[4], p[5]};
}

/// p - 1 as canonical limbs.
limbs p_minus_one() {
  limbs v = modulus();
  v[0] -= 1;
  return v;
}

/// Edge inputs as Montgomery limbs, all below p: 0, 1, R (= one), p - 1, values just under p and
/// near 2^381, and all-ones limbs reduced mod p.
std::vector<limbs> edge_values() {
  std::vector<limbs> edges = {{0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0}, fq::one().limbs,
                              p_minus_one()};
  limbs all_ones;
  all_ones.fill(~0ULL);
  // 2^384 - 1 reduced: subtract p until below it (2^384 < 10 p).
  while (!field::detail::less_than_modulus(all_ones)) {
    std::uint64_t borrow = 0;
    for (int i = 0; i < 6; ++i) all_ones[i] = field::detail::sbb(all_ones[i], modulus()[i], borrow);
  }
  edges.push_back(all_ones);
  limbs near_top = p_minus_one();
  near_top[0] -= 0x1234;
  edges.push_back(near_top);
  edges.push_back({~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, 0x19ffffffffffffffULL});  // < p, near 2^381
  edges.push_back({0, 0, 0, 0, 0, 0x1a0111ea397fe699ULL});
  return edges;
}

/// a + b without reduction (below 2p for reduced inputs), the form the lazy products take.
limbs add_unreduced(const limbs& a, const limbs& b) {
  std::uint64_t carry = 0;
  limbs out;
  for (int i = 0; i < 6; ++i) out[i] = field::detail::adc(a[i], b[i], carry);
  return out;
}

}  // namespace

TEST_CASE("fq products, sums and negations match the zkcrypto known answers", "[field][fq][cpu]") {
  // zkcrypto bls12_381 src/fp.rs: test_squaring, test_multiplication, test_addition,
  // test_subtraction, test_negation.
  const fq sq_a{{0xd215d2768e83191bULL, 0x5085d80f8fb28261ULL, 0xce9a032ddf393a56ULL,
                 0x3e9c4fff2ca0c4bbULL, 0x6436b6f7f4d95dfbULL, 0x10606628ad4a4d90ULL}};
  const fq sq_b{{0x33d9c42a3cb3e235ULL, 0xdad11a094c4cd455ULL, 0xa2f144bd729aaebaULL,
                 0xd4150932be9ffeacULL, 0xe27bc7c47d44ee50ULL, 0x14b6a78d3ec7a560ULL}};
  const fq mul_a{{0x0397a38320170cd4ULL, 0x734c1b2c9e761d30ULL, 0x5ed255ad9a48beb5ULL,
                  0x095a3c6b22a7fcfcULL, 0x2294ce75d4e26a27ULL, 0x13338bd870011ebbULL}};
  const fq mul_b{{0xb9c3c7c5b1196af7ULL, 0x2580e2086ce335c1ULL, 0xf49aed3d8a57ef42ULL,
                  0x41f281e49846e878ULL, 0xe0762346c38452ceULL, 0x0652e89326e57dc0ULL}};
  const fq mul_c{{0xf96ef3d711ab5355ULL, 0xe8d459ea00f148ddULL, 0x53f7354a5f00fa78ULL,
                  0x9e34a4f3125c5f83ULL, 0x3fbe0c47ca74c19eULL, 0x01b06a8bbd4adfe4ULL}};
  const fq add_a{{0x5360bb5978678032ULL, 0x7dd275ae799e128eULL, 0x5c5b5071ce4f4dcfULL,
                  0xcdb21f93078dbb3eULL, 0xc32365c5e73f474aULL, 0x115a2a5489babe5bULL}};
  const fq add_b{{0x9fd287733d23dda0ULL, 0xb16bf2af738b3554ULL, 0x3e57a75bd3cc6d1dULL,
                  0x900bc0bd627fd6d6ULL, 0xd319a080efb245feULL, 0x15fdcaa4e4bb2091ULL}};
  const fq sum{{0x393442ccb58bb327ULL, 0x1092685f3bd547e3ULL, 0x3382252cab6ac4c9ULL,
                0xf94694cb76887f55ULL, 0x4b215e9093a5e071ULL, 0x0d56e30f34f5f853ULL}};
  const fq difference{{0x6d8d33e63b434d3dULL, 0xeb1282fdb766dd39ULL, 0x85347bb6f133d6d5ULL,
                       0xa21daa5a9892f727ULL, 0x3b256cfb3ad8ae23ULL, 0x155d7199de7f8464ULL}};
  const fq negation{{0x669e44a687982a79ULL, 0xa0d98a5037b5ed71ULL, 0x0ad5822f2861a854ULL,
                     0x96c52bf1ebf75781ULL, 0x87f841f05c0c658cULL, 0x08a6e795afc5283eULL}};
  for (const auto path : {field::fq_multiply_path::portable, field::fq_multiply_path::x86_64_adx}) {
    if (!field::fq_multiply_path_supported(path)) continue;
    field::set_fq_multiply_path(path);
    CHECK(sq_a.square() == sq_b);
    CHECK(mul_a * mul_b == mul_c);
  }
  field::set_fq_multiply_path(field::fq_multiply_path_supported(field::fq_multiply_path::x86_64_adx)
                                  ? field::fq_multiply_path::x86_64_adx
                                  : field::fq_multiply_path::portable);
  CHECK(add_a + add_b == sum);
  CHECK(add_a - add_b == difference);
  CHECK(-add_a == negation);
  // zkcrypto test_debug: the canonical value of add_a.
  std::array<std::uint8_t, 48> bytes{};
  add_a.to_bytes_be(bytes);
  std::string hex;
  for (auto b : bytes) {
    constexpr char digits[] = "0123456789abcdef";
    hex.push_back(digits[b >> 4]);
    hex.push_back(digits[b & 15]);
  }
  CHECK(hex ==
        "104bf052ad3bc99bcb176c24a06a6c3aad4eaf2308fc4d282e106c84a757d061052630515305e59bdddf8111"
        "bfdeb704");
}

TEST_CASE("fq inverse, square root and sign match the zkcrypto known answers", "[field][fq][cpu]") {
  // zkcrypto bls12_381 src/fp.rs: test_inversion, test_sqrt, test_lexicographic_largest.
  const fq a{{0x43b43a5078ac2076ULL, 0x1ce0763046f8962bULL, 0x724a5276486d735cULL,
              0x6f05c2a6282d48fdULL, 0x2095bd5bb4ca9331ULL, 0x03b35b3894b0f7daULL}};
  const fq a_inverse{{0x69ecd7040952148fULL, 0x985ccc2022190f55ULL, 0xe19bba36a9ad2f41ULL,
                      0x19bb16c95219dbd8ULL, 0x14dcacfdfb478693ULL, 0x115ff58afff9a8e1ULL}};
  CHECK(a.inverse() == a_inverse);
  CHECK(fq::zero().inverse() == fq::zero());

  const fq four{{0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL,
                 0xb1d37ebee6ba24d7ULL, 0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL}};
  const fq two{{0x321300000006554fULL, 0xb93c0018d6c40005ULL, 0x57605e0db0ddbb51ULL,
                0x8b256521ed1f9bcbULL, 0x6cf28d7901622c03ULL, 0x11ebab9dbb81e28cULL}};
  CHECK(four == fq::from_u64(4));
  CHECK(two == fq::from_u64(2));
  REQUIRE(four.sqrt().has_value());
  CHECK(-*four.sqrt() == two);  // zkcrypto: sqrt(4) = -2

  CHECK_FALSE(fq::zero().lexicographically_largest());
  CHECK_FALSE(fq::one().lexicographically_largest());
  CHECK_FALSE(fq{{0xa1fafffffffe5557ULL, 0x995bfff976a3fffeULL, 0x03f41d24d174ceb4ULL,
                  0xf6547998c1995dbdULL, 0x778a468f507a6034ULL, 0x020559931f7f8103ULL}}
                  .lexicographically_largest());
  CHECK(fq{{0x1804000000015554ULL, 0x855000053ab00001ULL, 0x633cb57c253c276fULL,
            0x6e22d1ec31ebb502ULL, 0xd3916126f2d14ca2ULL, 0x17fbb8571a006596ULL}}
            .lexicographically_largest());
  CHECK(fq{{0x43f5fffffffcaaaeULL, 0x32b7fff2ed47fffdULL, 0x07e83a49a2e99d69ULL,
            0xeca8f3318332bb7aULL, 0xef148d1ea0f4c069ULL, 0x040ab3263eff0206ULL}}
            .lexicographically_largest());
}

TEST_CASE("fq byte decoding accepts p - 1 and refuses p and above", "[field][fq][cpu]") {
  // zkcrypto bls12_381 src/fp.rs test_from_bytes: p - 1 decodes to -1; p + 2^376 and all-ones fail.
  std::array<std::uint8_t, 48> p_minus_1{26,  1,   17,  234, 57,  127, 230, 154, 75,  27,  167, 182,
                                         67,  75,  172, 215, 100, 119, 75,  132, 243, 133, 18,  191,
                                         103, 48,  210, 160, 246, 176, 246, 36,  30,  171, 255, 254,
                                         177, 83,  255, 255, 185, 254, 255, 255, 255, 255, 170, 170};
  REQUIRE(fq::from_bytes_be(p_minus_1).has_value());
  CHECK(*fq::from_bytes_be(p_minus_1) == -fq::one());
  auto p = p_minus_1;
  p[47] = 171;
  CHECK_FALSE(fq::from_bytes_be(p).has_value());
  auto above = p_minus_1;
  above[0] = 27;
  CHECK_FALSE(fq::from_bytes_be(above).has_value());
  std::array<std::uint8_t, 48> ones;
  ones.fill(0xff);
  CHECK_FALSE(fq::from_bytes_be(ones).has_value());

  std::mt19937_64 gen(7);
  for (int i = 0; i < 100; ++i) {
    const fq x = fq::random(gen);
    std::array<std::uint8_t, 48> b{};
    x.to_bytes_be(b);
    REQUIRE(fq::from_bytes_be(b) == x);
  }
}

TEST_CASE("fq decimal strings round-trip and out-of-range strings are refused", "[field][fq][cpu]") {
  const std::string p_decimal =
      "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629"
      "129015664037894272559787";
  const std::string p_minus_1_decimal =
      "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629"
      "129015664037894272559786";
  REQUIRE(fq::from_decimal(p_minus_1_decimal).has_value());
  CHECK(*fq::from_decimal(p_minus_1_decimal) == -fq::one());
  CHECK(fq::from_decimal(p_minus_1_decimal)->to_decimal() == p_minus_1_decimal);
  CHECK_FALSE(fq::from_decimal(p_decimal).has_value());
  CHECK_FALSE(fq::from_decimal("").has_value());
  CHECK_FALSE(fq::from_decimal("12a").has_value());
  CHECK_FALSE(fq::from_decimal("-1").has_value());
  CHECK_FALSE(fq::from_decimal(std::string(200, '9')).has_value());
  CHECK(fq::from_decimal("000042") == fq::from_u64(42));
  CHECK(fq::zero().to_decimal() == "0");
  CHECK(fq::from_u64(10000000000000000000ULL).to_decimal() == "10000000000000000000");
  std::mt19937_64 gen(11);
  for (int i = 0; i < 100; ++i) {
    const fq x = fq::random(gen);
    REQUIRE(fq::from_decimal(x.to_decimal()) == x);
  }
}

TEST_CASE("the portable and mulx/adx fq multiplications agree on random and edge inputs",
          "[field][fq][cpu]") {
  if (!field::fq_multiply_path_supported(field::fq_multiply_path::x86_64_adx)) {
    WARN("this CPU lacks BMI2/ADX: only the portable path is tested");
    return;
  }
  const std::vector<limbs> edges = edge_values();
  for (const auto& e : edges) REQUIRE(coprove::field::detail::less_than_modulus(e));
  for (const auto& a : edges) {
    for (const auto& b : edges) {
      const auto portable = field::fq_mul_portable(a, b);
      REQUIRE(portable == field::fq_mul_adx(a, b));
      REQUIRE(coprove::field::detail::less_than_modulus(portable));
    }
  }
  std::mt19937_64 gen(3);
  for (int i = 0; i < 20000; ++i) {
    const fq a = fq::random(gen), b = fq::random(gen);
    REQUIRE(field::fq_mul_portable(a.limbs, b.limbs) == field::fq_mul_adx(a.limbs, b.limbs));
  }
  // (p - 1)^2 = 1 in either path, whatever the form: check through the field type.
  const fq m1 = -fq::one();
  CHECK(m1 * m1 == fq::one());
}

TEST_CASE("the double-width fq product and its reduction give the Montgomery product",
          "[field][fq][fq2][cpu]") {
#if defined(COPROVE_FQ_HAVE_ADX_PATH)
  if (!field::fq_multiply_path_supported(field::fq_multiply_path::x86_64_adx)) {
    WARN("this CPU lacks BMI2/ADX: the double-width product is not used");
    return;
  }
  namespace detail = coprove::field::detail;
  // Reduced edge values, unreduced sums of them (up to 2p - 2) and random values.
  std::vector<limbs> inputs = edge_values();
  const std::size_t edge_count = inputs.size();
  for (std::size_t i = 0; i < edge_count; ++i) {
    for (std::size_t j = i; j < edge_count; ++j) inputs.push_back(add_unreduced(inputs[i], inputs[j]));
  }
  std::mt19937_64 gen(41);
  for (int i = 0; i < 100; ++i) inputs.push_back(fq::random(gen).limbs);
  for (const auto& a : inputs) {
    for (const auto& b : inputs) {
      REQUIRE(detail::montgomery_reduce_adx(detail::mul_wide_adx(a, b)) == field::fq_mul_portable(a, b));
    }
  }
  // The Fq2 product on unreduced components, against the schoolbook formula on the portable path.
  const auto product = [](const limbs& x, const limbs& y) { return fq{field::fq_mul_portable(x, y)}; };
  std::uniform_int_distribution<std::size_t> pick(0, inputs.size() - 1);
  for (int i = 0; i < 20000; ++i) {
    const limbs& a0 = inputs[pick(gen)];
    const limbs& a1 = inputs[pick(gen)];
    const limbs& b0 = inputs[pick(gen)];
    const limbs& b1 = inputs[pick(gen)];
    limbs c0, c1;
    detail::fq2_mul_adx(a0, a1, b0, b1, c0, c1);
    REQUIRE(fq{c0} == product(a0, b0) - product(a1, b1));
    REQUIRE(fq{c1} == product(a0, b1) + product(a1, b0));
  }
#else
  WARN("no MULX/ADX path in this build");
#endif
}

TEST_CASE("the fq products take unreduced sums below 2p and return reduced values",
          "[field][fq][cpu]") {
  std::vector<limbs> inputs;
  const std::vector<limbs> edges = edge_values();
  for (const auto& a : edges) {
    for (const auto& b : edges) inputs.push_back(add_unreduced(a, b));  // up to 2p - 2
  }
  std::mt19937_64 gen(4);
  for (int i = 0; i < 200; ++i) inputs.push_back(add_unreduced(fq::random(gen).limbs, fq::random(gen).limbs));
  const bool adx = field::fq_multiply_path_supported(field::fq_multiply_path::x86_64_adx);
  for (const auto& a : inputs) {
    for (const auto& b : inputs) {
      const auto portable = field::fq_mul_portable(a, b);
      REQUIRE(field::detail::less_than_modulus(portable));
      if (adx) REQUIRE(field::fq_mul_adx(a, b) == portable);
    }
  }
  // The value is that of the reduced inputs: (x + p) * y = x * y.
  const fq x = fq::random(gen), y = fq::random(gen);
  CHECK(fq{field::fq_mul_portable(add_unreduced(x.limbs, modulus()), y.limbs)} == x * y);
}

TEST_CASE("the assembly and portable fq sums and differences, reduced or not, agree on random and edge inputs",
          "[field][fq][cpu]") {
  std::vector<limbs> inputs = edge_values();
  std::mt19937_64 gen(6);
  for (int i = 0; i < 300; ++i) inputs.push_back(fq::random(gen).limbs);
  for (const auto& a : inputs) {
    for (const auto& b : inputs) {
      const auto sum = field::detail::add_mod_portable(a, b);
      const auto difference = field::detail::sub_mod_portable(a, b);
      REQUIRE(field::detail::less_than_modulus(sum));
      REQUIRE(field::detail::less_than_modulus(difference));
      REQUIRE(field::detail::add_mod_portable(difference, b) == a);
      // The unreduced forms: a + b and a - b + p, both below 2p.
      const auto unreduced_sum = field::detail::add_unreduced_portable(a, b);
      const auto unreduced_difference = field::detail::sub_unreduced_portable(a, b);
      REQUIRE(unreduced_sum == add_unreduced(a, b));
      REQUIRE(add_unreduced(unreduced_difference, b) == add_unreduced(a, modulus()));
#if defined(COPROVE_FQ_HAVE_X86_64_ASM)
      REQUIRE(field::detail::add_mod_x86_64(a, b) == sum);
      REQUIRE(field::detail::sub_mod_x86_64(a, b) == difference);
      REQUIRE(field::detail::add_unreduced_x86_64(a, b) == unreduced_sum);
      REQUIRE(field::detail::sub_unreduced_x86_64(a, b) == unreduced_difference);
#endif
    }
  }
}

TEST_CASE("fq satisfies the field axioms on random values", "[field][fq][cpu]") {
  std::mt19937_64 gen(5);
  for (int i = 0; i < 200; ++i) {
    const fq a = fq::random(gen), b = fq::random(gen), c = fq::random(gen);
    REQUIRE(a + b == b + a);
    REQUIRE(a * b == b * a);
    REQUIRE((a + b) + c == a + (b + c));
    REQUIRE((a * b) * c == a * (b * c));
    REQUIRE(a * (b + c) == a * b + a * c);
    REQUIRE(a - a == fq::zero());
    REQUIRE(a + (-a) == fq::zero());
    REQUIRE(a * fq::one() == a);
    REQUIRE(a.square() == a * a);
    REQUIRE(a.doubled() == a + a);
    if (!a.is_zero()) REQUIRE(a * a.inverse() == fq::one());
    const fq s = a.square();
    REQUIRE(s.legendre() == 1);
    const auto root = s.sqrt();
    REQUIRE(root.has_value());
    REQUIRE((*root == a || *root == -a));
  }
  CHECK(fq::zero().legendre() == 0);
  // -1 is a non-square since p = 3 mod 4.
  CHECK(fq::one().legendre() == 1);
  CHECK((-fq::one()).legendre() == -1);
  CHECK_FALSE((-fq::one()).sqrt().has_value());
  CHECK(fq::from_canonical(modulus()) == std::nullopt);
  CHECK(fq::from_canonical(p_minus_one())->to_canonical() == p_minus_one());
}
