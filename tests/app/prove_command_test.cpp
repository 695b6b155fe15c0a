// `coprove prove`: circom witnesses proved with a zkey into NAME.proof.json / NAME.public.json that
// `coprove verify` accepts; a key of another curve, another circuit's witness and (with --r1cs) a
// witness that breaks a constraint are refused before anything is proved, each naming the file
// and the problem. snarkjs's verdict on these files is in the example_circom test.
#include "app_test_support.hpp"
#include "proof_report_support.hpp"

using namespace coprove::test;

namespace {

const std::string circom_data = source_dir + "/tests/data/circom";

std::vector<std::string> prove_argv(const scratch_dir& dir, const std::string& zkey, std::vector<std::string> witnesses) {
  std::vector<std::string> argv = {COPROVE_BINARY, "prove", "--zkey", zkey, "--out", dir.file("proofs"),
                                   "--backend", "host", "--progress", "none", "--log-level", "warning", "--witness"};
  argv.insert(argv.end(), witnesses.begin(), witnesses.end());
  return argv;
}

}  // namespace

TEST_CASE("prove: circom witnesses become proof.json and public.json that coprove verify accepts",
          "[app][prove][zkey][cpu]") {
  scratch_dir dir;
  const auto r = run_process(prove_argv(dir, circom_data + "/poseidon_chain.zkey",
                                        {circom_data + "/poseidon_chain_1.wtns", circom_data + "/poseidon_chain_2.wtns"}),
                             dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* name : {"poseidon_chain_1", "poseidon_chain_2"}) {
    const auto check = run_process({COPROVE_BINARY, "verify", "--vk", circom_data + "/poseidon_chain.vk.json", "--proof",
                                    dir.file(std::string("proofs/") + name + ".proof.json"), "--public",
                                    dir.file(std::string("proofs/") + name + ".public.json")},
                                   dir);
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
  }
}

TEST_CASE("prove: bad keys and witnesses are refused before anything is proved", "[app][prove][zkey][cpu]") {
  scratch_dir dir;
  const auto bn128 = run_process(prove_argv(dir, circom_data + "/cube.bn128.zkey", {circom_data + "/cube.wtns"}), dir);
  CHECK(bn128.exit_code == 2);
  CHECK(bn128.err.find("cube.bn128.zkey: section 2 (header): the key is for bn128, not bls12381") != std::string::npos);
  const auto other = run_process(prove_argv(dir, circom_data + "/poseidon_chain.zkey", {circom_data + "/cube.wtns"}), dir);
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("cube.wtns: section 1 (header): the witness has 4 values, the circuit 2071") != std::string::npos);

  // A witness with one value changed, checked against the constraints first.
  std::string bad = read_file(circom_data + "/poseidon_chain_1.wtns");
  bad[76 + 32 * 500] ^= 1;  // after the 76-byte header: value 500's lowest byte
  write_file(dir.file("bad.wtns"), bad);
  auto argv = prove_argv(dir, circom_data + "/poseidon_chain.zkey", {dir.file("bad.wtns")});
  argv.insert(argv.end(), {"--r1cs", circom_data + "/poseidon_chain.r1cs"});
  const auto unsatisfied = run_process(argv, dir);
  CHECK(unsatisfied.exit_code == 1);
  CHECK(unsatisfied.err.find("bad.wtns: the witness does not satisfy the circuit (constraint ") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("proofs/bad.proof.json")));
}
