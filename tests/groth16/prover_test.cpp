// Proving and verifying on the CPU: MiMC and a circuit with several public inputs proved with
// seeded keys and accepted by the verifier (alone and in batches); tampered proofs, wrong public
// inputs, another key's vk and unsatisfied witnesses refused; the proof's byte and JSON forms.
#include <coprove/groth16/prover.hpp>
#include <coprove/groth16/verifier.hpp>

#include "groth16/groth16_test_circuits.hpp"
#include "groth16/proved_circuits.hpp"
#include "groth16/groth16_test_support.hpp"

#include <coprove/field/encoding.hpp>
#include <coprove/r1cs/mimc.hpp>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <random>
#include <vector>

using namespace coprove;
using namespace coprove::groth16;
using field::fr;

using testing::mimc_proofs;
using testing::products_proofs;

TEST_CASE("proofs of MiMC at 2^10 verify", "[groth16][prove][cpu]") {
  const auto& p = mimc_proofs();
  for (std::size_t i = 0; i < p.proofs.size(); ++i) {
    INFO("proof " << i);
    const auto& w = p.witnesses[i];
    CHECK(w.h.size() == p.matrices.domain_size);
    CHECK(w.h.back().is_zero());
    REQUIRE(w.public_inputs.size() == 1);
    const auto verdict = verify(p.pvk, p.proofs[i], w.public_inputs);
    CHECK(verdict.accepted);
    CHECK(verdict.reason.empty());
  }
  // The same proof from h without its zero top coefficient.
  const auto& w = p.witnesses[0];
  CHECK(verify(p.pvk, prove_with_blinding(p.pk, w.assignment, std::span(w.h).first(w.h.size() - 1), fr::from_uint64(5),
                                          fr::from_uint64(6)),
               w.public_inputs)
            .accepted);
}

TEST_CASE("proofs with several public inputs verify, in order", "[groth16][prove][cpu]") {
  const auto& p = products_proofs();
  for (std::size_t i = 0; i < p.proofs.size(); ++i) {
    const auto& inputs = p.witnesses[i].public_inputs;
    REQUIRE(inputs.size() == 5);
    CHECK(verify(p.pvk, p.proofs[i], inputs).accepted);
    auto swapped = inputs;
    std::swap(swapped[1], swapped[3]);
    CHECK_FALSE(verify(p.pvk, p.proofs[i], swapped).accepted);
    auto changed = inputs;
    changed[4] += fr::one();
    CHECK_FALSE(verify(p.pvk, p.proofs[i], changed).accepted);
    const auto short_inputs = std::vector<fr>(inputs.begin(), inputs.end() - 1);
    const auto verdict = verify(p.pvk, p.proofs[i], short_inputs);
    CHECK_FALSE(verdict.accepted);
    CHECK(verdict.reason.find("takes 5 public inputs") != std::string::npos);
  }
}

TEST_CASE("tampered proofs, wrong inputs and another key are refused", "[groth16][verify][cpu]") {
  const auto& p = mimc_proofs();
  const auto& inputs = p.witnesses[0].public_inputs;
  const proof& good = p.proofs[0];
  const proof& other = p.proofs[1];
  CHECK_FALSE(verify(p.pvk, proof{-good.a, good.b, good.c}, inputs).accepted);
  CHECK_FALSE(verify(p.pvk, proof{good.a, other.b, good.c}, inputs).accepted);
  CHECK_FALSE(verify(p.pvk, proof{good.a, good.b, other.c}, inputs).accepted);
  CHECK_FALSE(verify(p.pvk, other, inputs).accepted);
  CHECK_FALSE(verify(p.pvk, good, std::vector<fr>{inputs[0] + fr::one()}).accepted);
  CHECK_FALSE(verify(p.pvk, good, std::vector<fr>{}).accepted);

  // The same circuit under another key.
  auto secrets = secret_source::insecure_seeded(99, "another key");
  const auto other_key = setup(p.matrices, secrets);
  CHECK_FALSE(verify(prepared_verifying_key::from(other_key.vk), good, inputs).accepted);
}

TEST_CASE("an unsatisfied witness gives no valid proof", "[groth16][prove][cpu]") {
  const auto& p = mimc_proofs();
  const r1cs::mimc_circuit honest(10, fr::from_uint64(77));
  const r1cs::mimc_circuit lying(10, fr::from_uint64(77), honest.output() + fr::one());
  const auto w = compute_witness(lying, p.matrices);
  auto secrets = secret_source::insecure_seeded(5, "the unsatisfied proof");
  try {
    const proof bad = prove(p.pk, w.assignment, w.h, secrets);
    CHECK_FALSE(verify(p.pvk, bad, w.public_inputs).accepted);
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("does not satisfy") != std::string::npos);
  }
  // Truncating h does not help.
  const proof truncated = prove(p.pk, w.assignment, std::span(w.h).first(w.h.size() - 1), secrets);
  CHECK_FALSE(verify(p.pvk, truncated, w.public_inputs).accepted);
}

TEST_CASE("prove refuses inputs of the wrong shape", "[groth16][prove][cpu]") {
  const auto& p = mimc_proofs();
  const auto& w = p.witnesses[0];
  auto secrets = secret_source::insecure_seeded(6, "bad shapes");
  const std::vector<fr> short_assignment(w.assignment.begin(), w.assignment.end() - 1);
  CHECK_THROWS_AS(prove(p.pk, short_assignment, w.h, secrets), std::invalid_argument);
  auto no_one = w.assignment;
  no_one[0] = fr::from_uint64(2);
  CHECK_THROWS_AS(prove(p.pk, no_one, w.h, secrets), std::invalid_argument);
  CHECK_THROWS_AS(prove(p.pk, w.assignment, std::span(w.h).first(10), secrets), std::invalid_argument);
  auto top = w.h;
  top.back() = fr::one();
  CHECK_THROWS_AS(prove(p.pk, w.assignment, top, secrets), std::invalid_argument);
}

TEST_CASE("seeded proofs repeat and fresh ones differ", "[groth16][prove][cpu]") {
  const auto& p = mimc_proofs();
  const auto& w = p.witnesses[0];
  auto s1 = secret_source::insecure_seeded(40, "repeat");
  auto s2 = secret_source::insecure_seeded(40, "repeat");
  CHECK(prove(p.pk, w.assignment, w.h, s1) == prove(p.pk, w.assignment, w.h, s2));
  auto system = secret_source::system();
  const proof fresh = prove(p.pk, w.assignment, w.h, system);
  CHECK_FALSE(fresh == p.proofs[0]);
  CHECK(verify(p.pvk, fresh, w.public_inputs).accepted);
}

TEST_CASE("batch verification accepts good batches and names the bad proofs", "[groth16][verify][cpu]") {
  const auto& p = mimc_proofs();
  std::vector<std::vector<fr>> inputs;
  for (const auto& w : p.witnesses) inputs.push_back(w.public_inputs);
  auto randomness = secret_source::system();
  const auto good = verify_batch(p.pvk, p.proofs, inputs, randomness);
  CHECK(good.all_accepted);
  CHECK_FALSE(good.checked_one_by_one);
  REQUIRE(good.verdicts.size() == 3);
  for (const auto& v : good.verdicts) CHECK(v.accepted);

  auto proofs = p.proofs;
  proofs[1].c = p.proofs[2].c;
  auto bad_inputs = inputs;
  bad_inputs[2] = {inputs[2][0] + fr::one()};
  const auto bad = verify_batch(p.pvk, proofs, bad_inputs, randomness);
  CHECK_FALSE(bad.all_accepted);
  CHECK(bad.checked_one_by_one);
  CHECK(bad.verdicts[0].accepted);
  CHECK_FALSE(bad.verdicts[1].accepted);
  CHECK_FALSE(bad.verdicts[2].accepted);

  bad_inputs = inputs;
  bad_inputs[0].push_back(fr::one());
  const auto miscounted = verify_batch(p.pvk, p.proofs, bad_inputs, randomness);
  CHECK_FALSE(miscounted.all_accepted);
  CHECK_FALSE(miscounted.verdicts[0].accepted);
  CHECK(miscounted.verdicts[1].accepted);
  CHECK(miscounted.verdicts[2].accepted);

  CHECK(verify_batch(p.pvk, {}, {}, randomness).all_accepted);
  CHECK_THROWS_AS(verify_batch(p.pvk, p.proofs, std::span(inputs).first(2), randomness), std::invalid_argument);
}

TEST_CASE("the proof's 192 bytes and JSON forms round-trip and are checked", "[groth16][proof][cpu]") {
  const auto& p = mimc_proofs();
  const proof& good = p.proofs[0];
  const auto bytes = encode_proof(good);
  CHECK(bytes[0] & 0x80);
  CHECK(decode_proof(bytes) == good);
  CHECK(std::equal(bytes.begin() + 48, bytes.begin() + 144, field::encode_compressed(good.b).begin()));

  CHECK_THROWS_AS(decode_proof(std::span(bytes).first(191)), proof_format_error);
  auto flipped = bytes;
  flipped[47] ^= 1;  // A's x changes: most likely off the curve, else off the subgroup or another point
  std::optional<proof> decoded;
  try {
    decoded = decode_proof(flipped);
  } catch (const proof_format_error& e) {
    CHECK(std::string(e.what()).find("proof A") != std::string::npos);
  }
  if (decoded) CHECK_FALSE(*decoded == good);
  auto identity = bytes;
  const auto id = field::encode_compressed(field::g1_affine::identity());
  std::copy(id.begin(), id.end(), identity.begin() + 144);
  CHECK_THROWS_WITH(decode_proof(identity), Catch::Contains("proof C") && Catch::Contains("infinity"));
  std::mt19937_64 gen(50);
  field::g2_affine outside = testing::random_curve_point<field::g2_curve>(gen);
  while (outside.is_torsion_free()) outside = testing::random_curve_point<field::g2_curve>(gen);
  auto off_subgroup = bytes;
  const auto outside_bytes = field::encode_compressed(outside);
  std::copy(outside_bytes.begin(), outside_bytes.end(), off_subgroup.begin() + 48);
  CHECK_THROWS_WITH(decode_proof(off_subgroup), Catch::Contains("proof B") && Catch::Contains("subgroup"));

  const auto json = proof_to_snarkjs_json(good);
  CHECK(json.at("protocol") == "groth16");
  CHECK(json.at("curve") == "bls12381");
  CHECK(json.at("pi_a").as_array().size() == 3);
  CHECK(json.at("pi_b").as_array().at(2) == boost::json::array{"1", "0"});
  CHECK(proof_from_snarkjs_json(boost::json::parse(boost::json::serialize(json))) == good);

  const auto& inputs = p.witnesses[0].public_inputs;
  const auto public_json = public_inputs_to_snarkjs_json(inputs);
  REQUIRE(public_json.size() == 1);
  CHECK(public_json[0].as_string() == field::scalar_to_decimal(inputs[0].to_canonical()));
  CHECK(public_inputs_from_snarkjs_json(public_json) == inputs);
  CHECK_THROWS_AS(public_inputs_from_snarkjs_json(boost::json::array{"0x12"}), proof_format_error);
  CHECK_THROWS_AS(public_inputs_from_snarkjs_json(boost::json::array{field::scalar_to_decimal(field::scalar_modulus)}),
                  proof_format_error);
}
