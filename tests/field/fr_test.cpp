// Tests of the BLS12-381 scalar field: its constants, known products from an independent
// big-integer computation, the field axioms on random elements and the encodings.
#include <coprove/field/fr.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <set>
#include <stdexcept>

namespace {

using coprove::field::fr;
namespace detail = coprove::field::detail;

const fr root_of_unity =
    fr::from_hex("0x16a2a19edfe81f20d09b681922c813b4b63683508c2280b93829971f439f0d2b");

/// (r - 1) / 2^k as little-endian limbs, k <= 63.
std::array<std::uint64_t, 4> r_minus_one_shifted(unsigned k) {
  auto x = detail::fr_modulus;
  x[0] -= 1;
  for (unsigned s = 0; s < k; ++s) {
    for (int i = 0; i < 4; ++i) x[i] = (x[i] >> 1) | (i < 3 ? (x[i + 1] << 63) : 0);
  }
  return x;
}

struct known_vector {
  const char *a, *b, *product, *sum, *difference, *a_inverse;
};

// Computed with Python's arbitrary-precision integers.
const known_vector known[] = {
    {"0x0b8867a927ac435a7a97c643656412a9b8a1abcd1a6916c74da4f9fc3c6da5d7",
     "0x63ceb3c946d4ac7a5c3902b38963dc6e8534f45738d048ec0f1099c6c3e1b258",
     "0x4aad619bb80baa47877225c2a5a4c0c30300775dfb5bb4e04c8334045a9e9135",
     "0x6f571b726e80efd4d6d0c8f6eec7ef183dd6a02453395fb35cb593c3004f582f",
     "0x1ba75b330a75142851989b97e5a20e40872a5b78e19729da3e946034788bf380",
     "0x66e6c0248e29d7e27323159be1b2c6151e99bf756179b2b5693e63a521358f8c"},
    {"0x03482934ed6f0b09f165c8ce36e2f24b43000de01b2ed40ed3addccb2c33be0a",
     "0x1518c3c23184ff27459142deccea264542a00403ce80c4b0a4042bb3d4341aad",
     "0x2fb53cf8dfbe6e008ba6d781475d778184e84ac5af3462d9cc851f9ffb53fc7c",
     "0x1860ecf71ef40a3136f70bad03cd189085a011e3e9af98bf77b2087f0067d8b7",
     "0x621d0cc5e587892adf0e5df7739aa40b541daddf4cac6b5d2fa9b11657ffa35e",
     "0x453dfef47d0004ed3422a8fbcca1418f5818810f5d90e40762cd25a2a7ac295c"},
    {"0x6c9c9b70daca3c06f5ff0c03bb5d7385de08caa1a08179104a25e4664f5253a0",
     "0x31a7c037abf4a07c566002249b191bf4d8441b5616332aca5f552773e14b0190",
     "0x5917610e81d88c3eebedfafc07a69f9e5060d4a19e94f4ab99cfb0601c9996ad",
     "0x2a56b4555d215f3b192536204cd4b775628f41f4b6b647dba97b0bdb309d552f",
     "0x3af4db392ed59b8a9f9f09df2044579105c4af4b8a4e4e45ead0bcf26e075210",
     "0x0f272c162831d8ee94bad791cc742397b5bf042d963be52f6b5f35d29aa45ee4"},
};

}  // namespace

TEST_CASE("the Montgomery constants are 2^256 mod r, its square and -r^-1 mod 2^64",
          "[prover][field][cpu]") {
  // -r^-1: r * inv == -1 mod 2^64.
  CHECK(detail::fr_modulus[0] * detail::fr_inv == ~std::uint64_t{0});
  // R is the Montgomery form of one, so one's canonical value is 1.
  CHECK(fr::one().limbs == detail::fr_r);
  CHECK(fr::one().to_canonical() == std::array<std::uint64_t, 4>{1, 0, 0, 0});
  // 2^256 and 2^512 computed by squaring in the field.
  const fr two = fr::from_uint64(2);
  CHECK(two.pow(256).to_canonical() == detail::fr_r);
  CHECK(two.pow(512).to_canonical() == detail::fr_r2);
  // r itself, as printed in the design notes.
  CHECK(detail::fr_modulus ==
        std::array<std::uint64_t, 4>{0xffffffff00000001ULL, 0x53bda402fffe5bfeULL,
                                     0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL});
  CHECK(fr::from_hex("0x1824b159acc5056f998c4fefecbc4ff55884b7fa0003480200000001fffffffe")
            .to_canonical() == detail::fr_r);
}

TEST_CASE("the 2^32-th root of unity has order exactly 2^32 and is 7^((r-1)/2^32)",
          "[prover][field][cpu]") {
  fr w = root_of_unity;
  for (int i = 0; i < 31; ++i) w = w.square();
  CHECK(w == -fr::one());  // order does not divide 2^31
  CHECK(w.square() == fr::one());
  CHECK(fr::from_uint64(7).pow(r_minus_one_shifted(32)) == root_of_unity);
}

TEST_CASE("7 is a quadratic non-residue, so it generates the 2-part of Fr^*",
          "[prover][field][cpu]") {
  CHECK(fr::from_uint64(7).pow(r_minus_one_shifted(1)) == -fr::one());
  // r - 1 = 2^32 * odd: the 2-adicity is exactly 32.
  const auto odd = r_minus_one_shifted(32);
  CHECK((odd[0] & 1) == 1);
}

TEST_CASE("products, sums, differences and inverses match independent big-integer values",
          "[prover][field][cpu]") {
  for (const auto& v : known) {
    const fr a = fr::from_hex(v.a), b = fr::from_hex(v.b);
    CHECK((a * b).to_hex() == v.product);
    CHECK((a + b).to_hex() == v.sum);
    CHECK((a - b).to_hex() == v.difference);
    CHECK(a.inverse().to_hex() == v.a_inverse);
  }
}

TEST_CASE("random elements satisfy the field axioms", "[prover][field][cpu]") {
  std::mt19937_64 gen(12345);
  for (int round = 0; round < 200; ++round) {
    const fr a = fr::random(gen), b = fr::random(gen), c = fr::random(gen);
    CHECK(a + b == b + a);
    CHECK(a * b == b * a);
    CHECK((a + b) + c == a + (b + c));
    CHECK((a * b) * c == a * (b * c));
    CHECK(a * (b + c) == a * b + a * c);
    CHECK(a + fr::zero() == a);
    CHECK(a * fr::one() == a);
    CHECK(a * fr::zero() == fr::zero());
    CHECK(a - a == fr::zero());
    CHECK(-a + a == fr::zero());
    CHECK((a - b) + b == a);
    CHECK(a.square() == a * a);
    if (!a.is_zero()) CHECK(a * a.inverse() == fr::one());
    fr x = a;
    x += b;
    x -= c;
    x *= a;
    CHECK(x == (a + b - c) * a);
    CHECK(a.pow(std::uint64_t{5}) == a * a * a * a * a);
    const std::uint64_t e = gen();
    CHECK(a.pow(e) == a.pow(std::array<std::uint64_t, 4>{e, 0, 0, 0}));
    // Fermat: a^(r-1) == 1.
    if (!a.is_zero()) CHECK(a.pow(r_minus_one_shifted(0)) == fr::one());
  }
}

TEST_CASE("values next to the modulus reduce correctly", "[prover][field][cpu]") {
  const fr minus_one = -fr::one();
  CHECK(minus_one.to_hex() == "0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000000");
  CHECK(minus_one + fr::one() == fr::zero());
  CHECK(minus_one * minus_one == fr::one());
  CHECK(fr::zero() - fr::one() == minus_one);
  CHECK(-fr::zero() == fr::zero());
  CHECK(minus_one.inverse() == minus_one);
  CHECK(fr::from_uint64(0) == fr::zero());
  CHECK(fr::from_uint64(1) == fr::one());
  CHECK(fr::from_uint64(~std::uint64_t{0}).to_canonical() ==
        std::array<std::uint64_t, 4>{~std::uint64_t{0}, 0, 0, 0});
}

TEST_CASE("hex and little-endian byte encodings round trip and reject values >= r",
          "[prover][field][cpu]") {
  std::mt19937_64 gen(7);
  for (int i = 0; i < 50; ++i) {
    const fr a = fr::random(gen);
    const auto hex = a.to_hex();
    CHECK(hex.size() == 66);
    CHECK(fr::from_hex(hex) == a);
    const auto bytes = a.to_bytes_le();
    CHECK(fr::from_bytes_le(bytes) == a);
    CHECK(fr::from_canonical(a.to_canonical()) == a);
  }
  CHECK(fr::from_hex("0x2a") == fr::from_uint64(42));
  CHECK(fr::from_hex("2A") == fr::from_uint64(42));
  CHECK(fr::from_uint64(0x0102).to_bytes_le()[0] == std::byte{0x02});
  CHECK(fr::from_uint64(0x0102).to_bytes_le()[1] == std::byte{0x01});
  CHECK_THROWS_AS(fr::from_hex(""), std::invalid_argument);
  CHECK_THROWS_AS(fr::from_hex("0x"), std::invalid_argument);
  CHECK_THROWS_AS(fr::from_hex("0xg1"), std::invalid_argument);
  CHECK_THROWS_AS(fr::from_hex(std::string(65, '1')), std::invalid_argument);
  CHECK_THROWS_AS(
      fr::from_hex("0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"),
      std::invalid_argument);
  CHECK_THROWS_AS(fr::from_canonical(detail::fr_modulus), std::invalid_argument);
  std::array<std::byte, 32> all_ones;
  all_ones.fill(std::byte{0xff});
  CHECK_THROWS_AS(fr::from_bytes_le(all_ones), std::invalid_argument);
  CHECK_THROWS_AS(fr::zero().inverse(), std::invalid_argument);
}

TEST_CASE("an element's bytes are the GPU's eight 32-bit Montgomery limbs",
          "[prover][field][cpu]") {
  const fr a = fr::from_hex("0x0b8867a927ac435a7a97c643656412a9b8a1abcd1a6916c74da4f9fc3c6da5d7");
  std::uint32_t words[8];
  std::memcpy(words, &a, sizeof(words));
  for (int i = 0; i < 8; ++i) {
    CHECK(words[i] == static_cast<std::uint32_t>(a.limbs[i / 2] >> (32 * (i % 2))));
  }
}

TEST_CASE("random elements are canonical and spread over the whole field", "[prover][field][cpu]") {
  std::mt19937 gen(99);  // a 32-bit generator works too
  std::set<std::array<std::uint64_t, 4>> seen;
  int top_half = 0;
  const int draws = 400;
  for (int i = 0; i < draws; ++i) {
    const fr a = fr::random(gen);
    const auto x = a.to_canonical();
    CHECK(fr::from_canonical(x) == a);
    seen.insert(x);
    if (x[3] >= detail::fr_modulus[3] / 2) ++top_half;
  }
  CHECK(seen.size() == static_cast<std::size_t>(draws));
  // About half the draws land above r/2; 400 draws make 120..280 a > 10-sigma band.
  CHECK(top_half > 120);
  CHECK(top_half < 280);
}
