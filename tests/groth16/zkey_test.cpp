// Tests of the zkey reader and of proving from a zkey on the CPU: the fixture key read and checked
// against the verification_key.json snarkjs exported from it, proofs that our verifier accepts, a
// witness that does not satisfy the circuit refused, and every refusal of a bad key naming the
// file, the section and the problem. snarkjs's own verdict on these proofs is in
// independent_verifiers_test.cpp.
#include <coprove/field/pairing.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_witness.hpp>

#include "circom_test_support.hpp"
#include "field/curve_test_support.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>

using namespace coprove;
using namespace coprove::groth16;
using coprove::field::fr;
using coprove::circom_fixtures::circom_data_dir;
using coprove::circom_fixtures::container;
using coprove::circom_fixtures::read_bytes;
using Catch::Matchers::Contains;

namespace {

const std::filesystem::path zkey_path = circom_data_dir() / "poseidon_chain.zkey";

const zkey& fixture_key() {
  static const zkey key = read_zkey(zkey_path);
  return key;
}

zkey decode(const container& c) { return decode_zkey(c.bytes(), "k.zkey"); }

/// A G1 point on the curve but outside the prime-order subgroup.
field::g1_affine non_subgroup_point() {
  for (std::uint64_t x = 1;; ++x) {
    std::array<std::uint8_t, 48> bytes{};
    for (int i = 0; i < 8; ++i) bytes[47 - i] = static_cast<std::uint8_t>(x >> (8 * i));
    bytes[0] |= 0x80;  // compressed
    const auto p = field::decode_g1_compressed(bytes, field::subgroup_check::skip);
    if (p.ok() && !p.point.is_torsion_free()) return p.point;
  }
}

}  // namespace

TEST_CASE("a snarkjs zkey reads with the verifying key that snarkjs exports from it", "[groth16][zkey][cpu]") {
  const zkey& key = fixture_key();
  CHECK(key.num_variables() == 2071);
  CHECK(key.num_public == 2);
  CHECK(key.domain_size() == 4096);
  CHECK(key.pk.h.size() == 4096);
  CHECK(key.pk.l.size() == 2071 - 3);
  CHECK(key.pk.h_form == field::quotient_form::odd_coset_evaluations);
  CHECK(key.matrices->num_rows == 2068 + 3);  // the constraints, then one row per public signal
  CHECK(key.matrices->c.nonzeros() == 0);
  // verification_key.json holds alpha1, beta2, gamma2, delta2 and IC (not beta1, delta1).
  const verifying_key exported = read_verifying_key_json(circom_data_dir() / "poseidon_chain.vk.json");
  CHECK(key.pk.vk.alpha_g1 == exported.alpha_g1);
  CHECK(key.pk.vk.beta_g2 == exported.beta_g2);
  CHECK(key.pk.vk.gamma_g2 == exported.gamma_g2);
  CHECK(key.pk.vk.delta_g2 == exported.delta_g2);
  CHECK(key.pk.vk.ic == exported.ic);
  // delta1 and beta1 are the G1 twins of delta2 and beta2: e(delta1, g2) = e(g1, delta2).
  CHECK(field::pairing(key.pk.vk.delta_g1, field::g2_affine::generator()) ==
        field::pairing(field::g1_affine::generator(), key.pk.vk.delta_g2));
  CHECK(field::pairing(key.pk.vk.beta_g1, field::g2_affine::generator()) ==
        field::pairing(field::g1_affine::generator(), key.pk.vk.beta_g2));
}

TEST_CASE("proofs from a zkey and circom witnesses verify; a witness that does not satisfy is refused",
          "[groth16][zkey][cpu]") {
  const zkey& key = fixture_key();
  const auto pvk = prepared_verifying_key::from(key.pk.vk);
  auto secrets = secret_source::system();
  for (const char* name : {"poseidon_chain_1.wtns", "poseidon_chain_2.wtns"}) {
    const auto w = r1cs::read_wtns(circom_data_dir() / name, key.num_variables());
    const circom_proof p = prove_zkey(key, pvk, w, secrets);
    CHECK(p.public_signals == std::vector<fr>{w[1], w[2]});
    CHECK(verify(pvk, p.proof, p.public_signals));
    auto wrong = p.public_signals;
    wrong[0] += fr::one();
    CHECK_FALSE(verify(pvk, p.proof, wrong));
  }
  auto w = r1cs::read_wtns(circom_data_dir() / "poseidon_chain_1.wtns");
  w[500] += fr::one();
  CHECK_THROWS_AS(prove_zkey(key, pvk, w, secrets), unsatisfied_witness);
  w.pop_back();
  CHECK_THROWS_AS(prove_zkey(key, pvk, w, secrets), std::invalid_argument);
}

TEST_CASE("a zkey of another curve or protocol, truncated, or with a section of the wrong size is refused",
          "[groth16][zkey][cpu]") {
  CHECK_THROWS_WITH(read_zkey(circom_data_dir() / "cube.bn128.zkey"),
                    Contains("cube.bn128.zkey: section 2 (header): the key is for bn128, not bls12381"));
  CHECK_THROWS_WITH(read_zkey(circom_data_dir() / "cube.plonk.zkey"),
                    Contains("cube.plonk.zkey: section 1 (protocol): the key is for plonk, not groth16"));
  const auto good = read_bytes(zkey_path);
  auto cut = good;
  cut.resize(cut.size() / 2);
  CHECK_THROWS_WITH(decode_zkey(cut, "k.zkey"), Contains("k.zkey: section type ") && Contains("truncated"));

  auto c = container::parse(good);
  SECTION("H one point short") {
    c.section(9).resize(c.section(9).size() - 96);
    CHECK_THROWS_WITH(decode(c), Contains("k.zkey: section 9 (H): holds 393120 bytes, its 4096 points need 393216 (truncated)"));
  }
  SECTION("B2 with bytes left over") {
    c.section(7).push_back(0);
    CHECK_THROWS_WITH(decode(c), Contains("section 7 (B2): holds") && Contains("points need"));
  }
  SECTION("a header with bytes left over") {
    c.section(2).push_back(0);
    CHECK_THROWS_WITH(decode(c), Contains("section 2 (header): size 965 does not match its contents"));
  }
  SECTION("the coefficients section cut") {
    c.section(4).resize(c.section(4).size() - 44);
    CHECK_THROWS_WITH(decode(c), Contains("section 4 (coefficients): holds") && Contains("(truncated)"));
  }
  SECTION("a coefficient of matrix C") {
    c.section(4)[4] = 2;  // the first coefficient's matrix
    CHECK_THROWS_WITH(decode(c), Contains("section 4 (coefficients): coefficient 0: matrix 2"));
  }
  SECTION("a missing section") {
    c.sections.erase(c.sections.begin() + 4);
    CHECK_THROWS_WITH(decode(c), Contains("missing"));
  }
  SECTION("an unknown protocol") {
    c.section(1)[0] = 7;
    CHECK_THROWS_WITH(decode(c), Contains("section 1 (protocol): the key is for unknown protocol 7, not groth16"));
  }
}

TEST_CASE("a zkey point off the curve, outside the subgroup or not canonical is refused with its index",
          "[groth16][zkey][cpu]") {
  auto c = container::parse(read_bytes(zkey_path));
  const zkey& key = fixture_key();
  SECTION("off the curve") {
    auto& a = c.section(5);
    std::size_t i = 1;
    while (key.pk.a[i].is_identity()) ++i;
    a[i * 96 + 48] ^= 1;  // y's lowest byte: still below p, no longer on the curve
    CHECK_THROWS_WITH(decode(c), Contains("k.zkey: section 5 (A): point " + std::to_string(i) + ": point not on the curve"));
  }
  SECTION("outside the subgroup") {
    const auto bytes = field::encode_lem(non_subgroup_point());
    std::copy(bytes.begin(), bytes.end(), c.section(6).begin() + 3 * 96);
    CHECK_THROWS_WITH(decode(c), Contains("k.zkey: section 6 (B1): point 3: point not in the prime-order subgroup"));
  }
  SECTION("outside the subgroup, tested in bulk") {
    // The CPU's per-point test a section at a time, as a GPU's would be handed the section.
    std::size_t sections = 0;
    const auto first_outside = [&sections](auto points) {
      ++sections;
      return field::testing::first_outside_subgroup(points);
    };
    const bulk_subgroup_test bulk{"the test's loop", first_outside, first_outside};
    const zkey good = decode_zkey(c.bytes(), "k.zkey", &bulk);
    CHECK(sections == 5);  // A, B1, B2, C and H
    CHECK(good.pk.a == key.pk.a);
    CHECK(good.pk.b_g2 == key.pk.b_g2);
    CHECK(good.pk.h == key.pk.h);
    const auto bytes = field::encode_lem(non_subgroup_point());
    std::copy(bytes.begin(), bytes.end(), c.section(8).begin() + 2 * 96);
    CHECK_THROWS_WITH(decode_zkey(c.bytes(), "k.zkey", &bulk),
                      Contains("k.zkey: section 8 (C): point 2: point not in the prime-order subgroup"));
    const bulk_subgroup_test half{"half", first_outside, {}};
    CHECK_THROWS_AS(decode_zkey(c.bytes(), "k.zkey", &half), std::invalid_argument);
  }
  SECTION("outside the subgroup in the header") {
    const auto bytes = field::encode_lem(non_subgroup_point());
    std::copy(bytes.begin(), bytes.end(), c.section(2).begin() + 100);  // alpha1
    CHECK_THROWS_WITH(decode(c), Contains("section 2 (header): alpha1: point not in the prime-order subgroup"));
  }
  SECTION("a coordinate not below p") {
    std::fill(c.section(9).begin() + 10 * 96, c.section(9).begin() + 10 * 96 + 48, 0xff);
    CHECK_THROWS_WITH(decode(c), Contains("section 9 (H): point 10: coordinate not below the field modulus"));
  }
  SECTION("the point at infinity where the verifying key needs a point") {
    std::fill(c.section(2).begin() + 100 + 96 * 2, c.section(2).begin() + 100 + 96 * 2 + 192, 0);  // beta2
    CHECK_THROWS_WITH(decode(c), Contains("section 2 (header): beta2 is the point at infinity"));
  }
}

TEST_CASE("LEM encoding round-trips and the identity is all zeros", "[groth16][zkey][cpu]") {
  std::mt19937_64 gen(5);
  const auto g1 = field::g1_affine::generator();
  const auto g2 = field::g2_affine::generator();
  CHECK(field::decode_g1_lem(field::encode_lem(g1)).point == g1);
  CHECK(field::decode_g2_lem(field::encode_lem(g2)).point == g2);
  const auto zero = field::encode_lem(field::g1_affine::identity());
  CHECK(std::all_of(zero.begin(), zero.end(), [](std::uint8_t b) { return b == 0; }));
  CHECK(field::decode_g1_lem(zero).point.is_identity());
  CHECK(field::decode_g1_lem(std::span(zero).first(95)).error == field::decode_error::wrong_length);
}
