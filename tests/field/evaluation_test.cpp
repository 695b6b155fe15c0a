// Tests of evaluation records: SHA-256 vectors, zeta derivation, barycentric and Horner evaluation,
// verify on honest and tampered records, and the JSON form.
#include <coprove/field/evaluation.hpp>

#include <coprove/field/ntt.hpp>
#include <coprove/field/quotient.hpp>
#include <coprove/field/sha256.hpp>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace coprove::field;

std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::string hex(const sha256::digest& d) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (auto b : d) {
    out.push_back(digits[std::to_integer<int>(b) >> 4]);
    out.push_back(digits[std::to_integer<int>(b) & 0xf]);
  }
  return out;
}

std::vector<fr> random_vector(std::size_t n, std::mt19937_64& gen) {
  std::vector<fr> v(n);
  for (auto& x : v) x = fr::random(gen);
  return v;
}

}  // namespace

TEST_CASE("sha256 matches the FIPS 180-4 test vectors", "[prover][evaluation][cpu]") {
  CHECK(hex(sha256::hash(as_bytes(""))) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex(sha256::hash(as_bytes("abc"))) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex(sha256::hash(as_bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // The same 1000-byte message fed in uneven pieces.
  const std::string message(1000, 'a');
  sha256 hasher;
  std::size_t at = 0;
  for (std::size_t piece : {1, 63, 64, 65, 7, 300}) {
    hasher.update(std::string_view(message).substr(at, piece));
    at += piece;
  }
  hasher.update(std::string_view(message).substr(at));
  CHECK(hex(hasher.finish()) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  CHECK(hex(hasher.finish()) == hex(sha256::hash(as_bytes(""))));  // finish resets
}

TEST_CASE("zeta is a deterministic hash of the transcript reduced mod r",
          "[prover][evaluation][cpu]") {
  // Independently: int.from_bytes(sha256(b"coprove.zeta\0" + t) + sha256(b"coprove.zeta\1" + t),
  // "little") % r.
  CHECK(derive_zeta(as_bytes("partition-7")).to_hex() ==
        "0x4dab3f48153417a195a66639185f9da7fa88cf5ec2fe5556190021b30e3b6e3a");
  CHECK(derive_zeta(as_bytes("partition-7")) == derive_zeta(as_bytes("partition-7")));
  CHECK(derive_zeta(as_bytes("partition-8")) != derive_zeta(as_bytes("partition-7")));
}

TEST_CASE("barycentric evaluation agrees with Horner on the interpolated coefficients",
          "[prover][evaluation][cpu]") {
  std::mt19937_64 gen(11);
  for (std::size_t n : {std::size_t{1}, std::size_t{4}, std::size_t{1} << 10, std::size_t{1} << 14}) {
    const evaluation_domain domain(n);
    const auto evals = random_vector(n, gen);
    auto coeffs = evals;
    intt(coeffs, domain);
    const fr zeta = fr::random(gen);
    CHECK(evaluate_lagrange(evals, domain, zeta) == evaluate_coefficients(coeffs, zeta));
    // A point of the domain gives the matching entry back.
    const std::size_t i = n / 3;
    CHECK(evaluate_lagrange(evals, domain, domain.omega().pow(static_cast<std::uint64_t>(i))) ==
          evals[i]);
  }
  CHECK(evaluate_coefficients({}, fr::one()) == fr::zero());
  std::vector<fr> wrong(3);
  CHECK_THROWS_AS(evaluate_lagrange(wrong, evaluation_domain(4), fr::one()), std::invalid_argument);
}

TEST_CASE("evaluating several polynomials at once equals evaluating each alone",
          "[prover][evaluation][cpu]") {
  std::mt19937_64 gen(17);
  for (std::size_t n : {std::size_t{1}, std::size_t{8}, std::size_t{1} << 13}) {
    const evaluation_domain domain(n);
    const auto a = random_vector(n, gen), b = random_vector(n, gen), c = random_vector(n, gen);
    const std::span<const fr> abc[] = {a, b, c};
    const fr outside = fr::random(gen);
    const fr inside = domain.omega().pow(static_cast<std::uint64_t>(n / 2));
    for (const fr& zeta : {outside, inside}) {
      const auto values = evaluate_lagrange_many(abc, domain, zeta);
      REQUIRE(values.size() == 3);
      CHECK(values[0] == evaluate_lagrange(a, domain, zeta));
      CHECK(values[1] == evaluate_lagrange(b, domain, zeta));
      CHECK(values[2] == evaluate_lagrange(c, domain, zeta));
    }
  }
  const evaluation_domain domain(16);
  const std::vector<fr> short_vector(15, fr::one()), full(16, fr::one());
  const std::span<const fr> mixed[] = {full, short_vector};
  CHECK_THROWS_AS(evaluate_lagrange_many(mixed, domain, fr::from_uint64(3)), std::invalid_argument);
}

TEST_CASE("an honest evaluation record verifies and any perturbed value does not",
          "[prover][evaluation][cpu]") {
  const evaluation_domain domain(1 << 12);
  std::mt19937_64 gen(12);
  const auto a = random_vector(domain.size(), gen), b = random_vector(domain.size(), gen);
  std::vector<fr> c(domain.size()), h(domain.size());
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = a[i] * b[i];
  compute_quotient(a, b, c, h, domain);
  const fr zeta = derive_zeta(as_bytes("record test"));
  const auto record = make_evaluation_record(a, b, c, h, domain, zeta);
  CHECK(record.zeta == zeta);
  CHECK(verify(record, domain.size()));
  CHECK_FALSE(verify(record, domain.size() * 2));
  for (fr evaluation_record::*field : {&evaluation_record::zeta, &evaluation_record::a,
                                       &evaluation_record::b, &evaluation_record::c,
                                       &evaluation_record::h}) {
    auto tampered = record;
    tampered.*field += fr::one();
    CHECK_FALSE(verify(tampered, domain.size()));
  }
  // A quotient of different vectors does not verify against these.
  auto other_c = c;
  other_c[5] += fr::one();
  std::vector<fr> other_h(domain.size());
  compute_quotient(a, b, other_c, other_h, domain);
  CHECK_FALSE(verify(make_evaluation_record(a, b, other_c, other_h, domain, zeta), domain.size()));
}

TEST_CASE("evaluation records round trip through JSON with canonical hex strings",
          "[prover][evaluation][cpu]") {
  std::mt19937_64 gen(13);
  const evaluation_record record{fr::random(gen), fr::random(gen), fr::random(gen),
                                 fr::random(gen), fr::random(gen)};
  const auto json = to_json(record);
  CHECK(json.at("zeta").as_string() == record.zeta.to_hex());
  CHECK(json.at("h").as_string() == record.h.to_hex());
  const auto text = boost::json::serialize(json);
  CHECK(record_from_json(boost::json::parse(text)) == record);
}

TEST_CASE("malformed JSON records are refused with the offending field named",
          "[prover][evaluation][cpu]") {
  const evaluation_record record{fr::one(), fr::one(), fr::one(), fr::zero(), fr::one()};
  const auto expect_error = [](const boost::json::value& value, const std::string& needle) {
    try {
      (void)record_from_json(value);
      FAIL("accepted " << boost::json::serialize(value));
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(e.what(), Catch::Contains(needle));
    }
  };
  expect_error(boost::json::value(42), "not a JSON object");
  expect_error(boost::json::array{}, "not a JSON object");
  for (const char* field : {"zeta", "a", "b", "c", "h"}) {
    auto missing = to_json(record);
    missing.erase(field);
    expect_error(missing, std::string("\"") + field + "\"");
    auto number = to_json(record);
    number[field] = 7;
    expect_error(number, std::string("\"") + field + "\"");
    auto not_hex = to_json(record);
    not_hex[field] = "0xnothex";
    expect_error(not_hex, std::string("\"") + field + "\"");
    auto too_big = to_json(record);
    too_big[field] = "0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001";
    expect_error(too_big, std::string("\"") + field + "\"");
  }
}
