// Tests of the zkey writer: a key made from a circom r1cs with the odd-coset H form is written,
// read back point for point by the zkey reader, and its header and coefficients are byte for byte
// what snarkjs wrote for the same circuit (the fixture zkey); proofs made with it verify; a key of
// the other H form or of other matrices is refused with nothing written. snarkjs's own prover and
// verifier on these keys are in tests/app/setup_command_test.cpp.
#include <coprove/groth16/zkey.hpp>

#include <coprove/groth16/verifier.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>
#include <coprove/r1cs/circom_witness.hpp>

#include "circom_test_support.hpp"
#include "groth16/groth16_test_support.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>

using namespace coprove;
using namespace coprove::groth16;
using coprove::field::fr;
using coprove::circom_fixtures::circom_data_dir;
using coprove::circom_fixtures::container;
using coprove::circom_fixtures::read_bytes;
using coprove::groth16::testing::temp_dir;

namespace {

struct written_key {
  r1cs::pce_matrices matrices;
  proving_key pk;
};

const written_key& poseidon_key() {
  static const written_key key = [] {
    written_key k;
    k.matrices = r1cs::circom_r1cs::read(circom_data_dir() / "poseidon_chain.r1cs").matrices();
    auto secrets = secret_source::insecure_seeded(21, "the zkey writer tests' setup");
    k.pk = setup(k.matrices, secrets, field::quotient_form::odd_coset_evaluations);
    return k;
  }();
  return key;
}

/// The key written into `dir` and read back.
zkey write_and_read(const temp_dir& dir) {
  const auto path = dir.path / "p.zkey";
  write_zkey(poseidon_key().pk, poseidon_key().matrices, path);
  return read_zkey(path);
}

}  // namespace

TEST_CASE("a zkey written from a circom r1cs reads back as its key, with snarkjs's header and coefficients",
          "[groth16][zkey][cpu]") {
  const written_key& made = poseidon_key();
  temp_dir dir("zkey-writer");
  const zkey key = write_and_read(dir);
  const auto path = dir.path / "p.zkey";
  CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  CHECK(key.num_public == 2);
  CHECK(key.domain_size() == 4096);
  CHECK(key.pk == made.pk);
  // The coefficients read back as A and B: the same a and b for a witness.
  const auto w = r1cs::read_wtns(circom_data_dir() / "poseidon_chain_1.wtns");
  std::vector<fr> a(4096), b(4096), c(4096), a_read(4096), b_read(4096), c_read(4096);
  made.matrices.evaluate(w, a, b, c);
  key.matrices->evaluate(w, a_read, b_read, c_read);
  CHECK(a_read == a);
  CHECK(b_read == b);

  // snarkjs's zkey of the same circuit (scripts/make_circom_fixtures.sh): the protocol, the header
  // up to the points (n8q, q, n8r, r, nVars, nPublic, domainSize) and the coefficients are the
  // same bytes; every point section has the same size.
  auto ours = container::parse(read_bytes(path));
  auto theirs = container::parse(read_bytes(circom_data_dir() / "poseidon_chain.zkey"));
  CHECK(ours.magic == "zkey");
  CHECK(ours.version == 1);
  REQUIRE(ours.sections.size() == 10);
  CHECK(ours.section(1) == theirs.section(1));
  const auto& header = ours.section(2);
  REQUIRE(header.size() == theirs.section(2).size());
  CHECK(std::vector<std::uint8_t>(header.begin(), header.begin() + 100) ==
        std::vector<std::uint8_t>(theirs.section(2).begin(), theirs.section(2).begin() + 100));
  CHECK(ours.section(4) == theirs.section(4));
  for (std::uint32_t type : {3u, 5u, 6u, 7u, 8u, 9u}) CHECK(ours.section(type).size() == theirs.section(type).size());
  // Section 10: a zero circuit hash and no contribution.
  CHECK(ours.section(10) == std::vector<std::uint8_t>(68, 0));
}

TEST_CASE("proofs made with a written zkey verify; a key of the other H form or other matrices is not written",
          "[groth16][zkey][cpu]") {
  const written_key& made = poseidon_key();
  temp_dir dir("zkey-writer");
  const zkey key = write_and_read(dir);
  const auto pvk = prepared_verifying_key::from(key.pk.vk);
  auto secrets = secret_source::system();
  for (const char* name : {"poseidon_chain_1.wtns", "poseidon_chain_2.wtns"}) {
    const auto w = r1cs::read_wtns(circom_data_dir() / name, key.num_variables());
    const circom_proof p = prove_zkey(key, pvk, w, secrets);
    CHECK(verify(pvk, p.proof, p.public_signals));
    auto wrong = p.public_signals;
    wrong[1] += fr::one();
    CHECK_FALSE(verify(pvk, p.proof, wrong));
  }

  const auto refused = dir.path / "refused.zkey";
  auto seeded = secret_source::insecure_seeded(22, "the zkey writer tests' bellman setup");
  const proving_key bellman = setup(made.matrices, seeded);
  CHECK_THROWS_WITH(write_zkey(bellman, made.matrices, refused),
                    Catch::Matchers::Contains("the key's H points are for coefficients"));
  auto other = made.matrices;
  other.domain_size *= 2;
  CHECK_THROWS_WITH(write_zkey(made.pk, other, refused),
                    Catch::Matchers::Contains("a domain of 4096, the matrices 3, 2068 and 8192"));
  CHECK_FALSE(std::filesystem::exists(refused));
  CHECK_FALSE(std::filesystem::exists(refused.string() + ".tmp"));
}
