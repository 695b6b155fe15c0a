// `coprove prove`: circom witnesses proved with a zkey into NAME.proof.json / NAME.public.json that
// `coprove verify` accepts; a key of another curve is refused before anything is proved; another
// circuit's witness and a witness that breaks a constraint (found by --r1cs, or by its proof not
// verifying) fail only themselves, named with the problem, while the rest of the batch is proved
// and snarkjs accepts those proofs.
#include "app_test_support.hpp"
#include "proof_report_support.hpp"

#include <coprove/r1cs/circom_witness.hpp>

using namespace coprove::test;

namespace {

namespace json = boost::json;

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

TEST_CASE("prove: a key of another curve is refused before anything is proved", "[app][prove][zkey][cpu]") {
  scratch_dir dir;
  const auto bn128 = run_process(prove_argv(dir, circom_data + "/cube.bn128.zkey", {circom_data + "/cube.wtns"}), dir);
  CHECK(bn128.exit_code == 2);
  CHECK(bn128.err.find("cube.bn128.zkey: section 2 (header): the key is for bn128, not bls12381") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("proofs")));
}

TEST_CASE("prove: a bad witness fails alone; the batch's good witnesses are proved and snarkjs accepts them",
          "[app][prove][zkey][cpu]") {
  scratch_dir dir;
  // A witness with one value changed: it breaks a constraint, so its proof would not verify.
  std::string bad = read_file(circom_data + "/poseidon_chain_1.wtns");
  bad[76 + 32 * 500] ^= 1;  // after the 76-byte header: value 500's lowest byte
  write_file(dir.file("bad.wtns"), bad);
  const std::vector<std::string> batch = {circom_data + "/poseidon_chain_1.wtns", dir.file("bad.wtns"),
                                          circom_data + "/cube.wtns", circom_data + "/poseidon_chain_2.wtns"};
  const std::string node = require_node(dir);

  SECTION("without --r1cs: the bad witness's proof does not verify") {
    const auto r = run_process(prove_argv(dir, circom_data + "/poseidon_chain.zkey", batch), dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("bad.wtns: not proved: ") != std::string::npos);
    CHECK(r.err.find("the witness does not satisfy the circuit (its proof does not verify with ") != std::string::npos);
    CHECK(r.out.find("not proved: " + dir.file("bad.wtns")) != std::string::npos);
  }
  SECTION("with --r1cs: the bad witness breaks a constraint and is not proved") {
    auto argv = prove_argv(dir, circom_data + "/poseidon_chain.zkey", batch);
    argv.insert(argv.end(), {"--r1cs", circom_data + "/poseidon_chain.r1cs", "--json", dir.file("report.json")});
    const auto r = run_process(argv, dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("bad.wtns: not proved: the witness does not satisfy the circuit (constraint ") != std::string::npos);
    const json::value report = json::parse(read_file(dir.file("report.json")));
    CHECK(report.at("verified").to_number<int>() == 2);
    CHECK(report.at("failed").to_number<int>() == 2);
    const auto& results = report.at("results").as_array();
    REQUIRE(results.size() == 4);
    CHECK(results[0].at("state") == "done");
    CHECK(results[1].at("state") == "failed");
    CHECK(results[1].at("witness").as_string() == dir.file("bad.wtns"));
    CHECK(results[2].at("error").as_string().find("the witness has 4 values, the circuit 2071") != std::string::npos);
    CHECK(results[3].at("state") == "done");
  }
  // In both: another circuit's witness is named with its problem; the bad ones write nothing; the
  // good ones are written and snarkjs accepts them.
  CHECK(std::filesystem::exists(dir.file("proofs")));
  CHECK_FALSE(std::filesystem::exists(dir.file("proofs/bad.proof.json")));
  CHECK_FALSE(std::filesystem::exists(dir.file("proofs/bad.public.json")));
  CHECK_FALSE(std::filesystem::exists(dir.file("proofs/cube.proof.json")));
  for (const char* name : {"poseidon_chain_1", "poseidon_chain_2"}) {
    const auto check = run_process({node, snarkjs_cli, "groth16", "verify", circom_data + "/poseidon_chain.vk.json",
                                    dir.file(std::string("proofs/") + name + ".public.json"),
                                    dir.file(std::string("proofs/") + name + ".proof.json")},
                                   dir);
    INFO(name << ": " << check.out << check.err);
    CHECK(check.exit_code == 0);
  }
}

TEST_CASE("prove: SHA-256 of one block proves on the host backend; snarkjs accepts the proofs and refuses tampered ones",
          "[app][prove][zkey][sha256][cpu]") {
  // circomlib's Sha256(256) (scripts/make_circom_fixtures.sh sha256): 31209 signals, a 2^15 domain,
  // and a witness that is all bits (the adders' sums and carries too): every MSM scalar is 0 or 1.
  scratch_dir dir;
  const std::string node = require_node(dir);
  const std::string zkey = circom_data + "/sha256_block.zkey";
  const std::string vk = circom_data + "/sha256_block.vk.json";
  const std::vector<std::string> messages = {"coprove: SHA-256 of one block #1", "coprove: SHA-256 of one block #2"};

  for (const char* name : {"sha256_block_1.wtns", "sha256_block_2.wtns"}) {
    const auto witness = coprove::r1cs::read_wtns(circom_data + "/" + name);
    std::size_t bits = 0;
    for (const auto& v : witness) bits += v.is_zero() || v == coprove::field::fr::one();
    CHECK(witness.size() == 31209);
    CHECK(bits == witness.size());
  }

  const auto r = run_process(
      prove_argv(dir, zkey, {circom_data + "/sha256_block_1.wtns", circom_data + "/sha256_block_2.wtns"}), dir,
      std::chrono::seconds(300));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);

  const auto snarkjs_verify = [&](const std::string& public_path, const std::string& proof_path) {
    return run_process({node, snarkjs_cli, "groth16", "verify", vk, public_path, proof_path}, dir);
  };
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::string base = dir.file("proofs/sha256_block_" + std::to_string(i + 1));
    const auto check = snarkjs_verify(base + ".public.json", base + ".proof.json");
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);

    // The public signals are the digest's bits, most significant first: sha256sum's digest.
    const auto digest = run_process({"sh", "-c", "printf %s \"$0\" | sha256sum", messages[i]}, dir);
    REQUIRE(digest.exit_code == 0);
    std::string expected;
    for (std::size_t c = 0; c < 64; ++c) {
      const int nibble = std::stoi(digest.out.substr(c, 1), nullptr, 16);
      for (int b = 3; b >= 0; --b) expected += (nibble >> b & 1) ? '1' : '0';
    }
    const json::value public_signals = json::parse(read_file(base + ".public.json"));
    std::string signals;
    for (const auto& s : public_signals.as_array()) signals += s.as_string().c_str();
    CHECK(signals == expected);
  }

  // A digest bit flipped, and the first proof's C in the second proof: snarkjs refuses both.
  const std::string first = dir.file("proofs/sha256_block_1");
  json::array flipped = json::parse(read_file(first + ".public.json")).as_array();
  flipped[7] = flipped[7].as_string() == "0" ? "1" : "0";
  write_file(dir.file("flipped.public.json"), json::serialize(flipped));
  json::object mixed = json::parse(read_file(dir.file("proofs/sha256_block_2.proof.json"))).as_object();
  mixed["pi_c"] = json::parse(read_file(first + ".proof.json")).at("pi_c");
  write_file(dir.file("mixed.proof.json"), json::serialize(mixed));
  for (const auto& [public_path, proof_path] :
       {std::pair{dir.file("flipped.public.json"), first + ".proof.json"},
        std::pair{dir.file("proofs/sha256_block_2.public.json"), dir.file("mixed.proof.json")}}) {
    const auto refused = snarkjs_verify(public_path, proof_path);
    INFO(refused.out << refused.err);
    CHECK(refused.exit_code != 0);
    CHECK((refused.out + refused.err).find("Invalid proof") != std::string::npos);
  }
}
