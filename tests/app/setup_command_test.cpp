// `coprove setup --r1cs`: a zkey for a circom circuit, made without a powers-of-tau file, that
// both provers accept: `coprove prove` proofs verify under snarkjs with the vk we wrote and with
// the vk snarkjs exports from the zkey, and `snarkjs groth16 prove` proofs verify under snarkjs
// and `coprove verify`. A zkey with one H point or one coefficient changed gives proofs snarkjs
// refuses, as it refuses a flipped public signal; bad input is refused with nothing written.
#include "app_test_support.hpp"
#include "proof_report_support.hpp"

#include "circom_test_support.hpp"

using namespace coprove::test;

namespace {

namespace json = boost::json;
using coprove::circom_fixtures::container;

const std::string circom_data = source_dir + "/tests/data/circom";
const std::string r1cs_path = circom_data + "/poseidon_chain.r1cs";
const std::vector<std::string> witnesses = {circom_data + "/poseidon_chain_1.wtns", circom_data + "/poseidon_chain_2.wtns"};

process_result setup_zkey(const scratch_dir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"setup", "--r1cs", r1cs_path, "--zkey", dir.file("p.zkey"), "--vk",
                                   dir.file("p.vk.json")};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_coprove(args, dir);
}

process_result coprove_prove(const scratch_dir& dir, const std::string& zkey, const std::string& out) {
  std::vector<std::string> args = {"prove", "--zkey", zkey, "--out", dir.file(out), "--backend", "host",
                                   "--progress", "none", "--witness"};
  args.insert(args.end(), witnesses.begin(), witnesses.end());
  return run_coprove(args, dir);
}

/// `snarkjs groth16 prove ZKEY WITNESS` into BASE.proof.json and BASE.public.json.
process_result snarkjs_prove(const scratch_dir& dir, const std::string& node, const std::string& zkey,
                             const std::string& witness, const std::string& base) {
  return run_process({node, snarkjs_cli, "groth16", "prove", zkey, witness, dir.file(base + ".proof.json"),
                      dir.file(base + ".public.json")},
                     dir);
}

process_result snarkjs_verify(const scratch_dir& dir, const std::string& node, const std::string& vk,
                              const std::string& public_path, const std::string& proof_path) {
  return run_process({node, snarkjs_cli, "groth16", "verify", vk, public_path, proof_path}, dir);
}

}  // namespace

TEST_CASE("setup --r1cs: coprove's proofs with the zkey verify under snarkjs with our vk and the one snarkjs exports",
          "[app][setup][zkey][cpu]") {
  scratch_dir dir;
  const std::string node = require_node(dir);
  const auto made = setup_zkey(dir, {"--insecure-seed", "5"});
  INFO(made.out << made.err);
  REQUIRE(made.exit_code == 0);
  for (const char* stage : {"  read ", "  matrices ", "  setup ", "  write ", "  vk "})
    CHECK(made.out.find(stage) != std::string::npos);
  CHECK(made.out.find("domain 2^12") != std::string::npos);
  CHECK(made.out.find("single-party setup") != std::string::npos);
  CHECK(made.err.find("single-party development key") != std::string::npos);
  CHECK(made.err.find("WARNING: --insecure-seed 5") != std::string::npos);

  const auto exported = run_process(
      {node, snarkjs_cli, "zkey", "export", "verificationkey", dir.file("p.zkey"), dir.file("exported.vk.json")}, dir);
  INFO(exported.out << exported.err);
  REQUIRE(exported.exit_code == 0);
  json::object theirs = json::parse(read_file(dir.file("exported.vk.json"))).as_object();
  theirs.erase("vk_alphabeta_12");  // snarkjs's verifier does not read it; we do not write it
  CHECK(theirs == json::parse(read_file(dir.file("p.vk.json"))).as_object());

  const auto proved = coprove_prove(dir, dir.file("p.zkey"), "proofs");
  INFO(proved.out << proved.err);
  REQUIRE(proved.exit_code == 0);
  for (const char* name : {"poseidon_chain_1", "poseidon_chain_2"}) {
    const std::string base = dir.file(std::string("proofs/") + name);
    for (const char* vk : {"p.vk.json", "exported.vk.json"}) {
      const auto check = snarkjs_verify(dir, node, dir.file(vk), base + ".public.json", base + ".proof.json");
      INFO(name << " with " << vk << ": " << check.out << check.err);
      CHECK(check.exit_code == 0);
    }
  }
  // A changed public signal (the input x = 1 made 2): refused.
  json::array flipped = json::parse(read_file(dir.file("proofs/poseidon_chain_1.public.json"))).as_array();
  REQUIRE(flipped[1].as_string() == "1");
  flipped[1] = "2";
  write_file(dir.file("flipped.public.json"), json::serialize(flipped));
  const auto refused = snarkjs_verify(dir, node, dir.file("p.vk.json"), dir.file("flipped.public.json"),
                                      dir.file("proofs/poseidon_chain_1.proof.json"));
  CHECK(refused.exit_code != 0);
  CHECK((refused.out + refused.err).find("Invalid proof") != std::string::npos);
}

TEST_CASE("setup --r1cs: snarkjs proves with the zkey, and snarkjs and coprove verify accept the proof",
          "[app][setup][zkey][cpu]") {
  scratch_dir dir;
  const std::string node = require_node(dir);
  const auto made = setup_zkey(dir);
  INFO(made.out << made.err);
  REQUIRE(made.exit_code == 0);
  CHECK(made.out.find("toxic waste from the system CSPRNG") != std::string::npos);
  const auto proved = snarkjs_prove(dir, node, dir.file("p.zkey"), witnesses[1], "s");
  INFO(proved.out << proved.err);
  REQUIRE(proved.exit_code == 0);
  const auto by_snarkjs = snarkjs_verify(dir, node, dir.file("p.vk.json"), dir.file("s.public.json"), dir.file("s.proof.json"));
  INFO(by_snarkjs.out << by_snarkjs.err);
  CHECK(by_snarkjs.exit_code == 0);
  const auto by_coprove = run_coprove({"verify", "--vk", dir.file("p.vk.json"), "--proof", dir.file("s.proof.json"),
                                       "--public", dir.file("s.public.json")},
                                      dir);
  INFO(by_coprove.out << by_coprove.err);
  CHECK(by_coprove.exit_code == 0);
}

TEST_CASE("setup --r1cs: a zkey with one H point or one coefficient changed gives proofs snarkjs refuses",
          "[app][setup][zkey][cpu]") {
  scratch_dir dir;
  const std::string node = require_node(dir);
  REQUIRE(setup_zkey(dir, {"--insecure-seed", "6"}).exit_code == 0);
  auto key = container::parse(coprove::circom_fixtures::read_bytes(dir.file("p.zkey")));

  std::string tampered;
  SECTION("H point 0 replaced by H point 1") {
    auto& h = key.section(9);
    std::copy(h.begin() + 96, h.begin() + 192, h.begin());
    tampered = dir.file("h.zkey");
  }
  SECTION("one coefficient's value replaced by another's") {
    auto& coefficients = key.section(4);
    constexpr std::size_t entry = 44;
    const auto value = [&](std::size_t i) { return coefficients.begin() + 4 + static_cast<std::ptrdiff_t>(i * entry + 12); };
    std::size_t other = 1;
    while (std::equal(value(0), value(0) + 32, value(other))) ++other;
    std::copy(value(other), value(other) + 32, value(0));
    tampered = dir.file("coefficient.zkey");
  }
  coprove::circom_fixtures::write_bytes(tampered, key.bytes());

  const auto proved = snarkjs_prove(dir, node, tampered, witnesses[0], "t");
  INFO(proved.out << proved.err);
  REQUIRE(proved.exit_code == 0);
  const auto refused = snarkjs_verify(dir, node, dir.file("p.vk.json"), dir.file("t.public.json"), dir.file("t.proof.json"));
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code != 0);
  CHECK((refused.out + refused.err).find("Invalid proof") != std::string::npos);
  // coprove's prover verifies before writing: nothing is written.
  const auto ours = coprove_prove(dir, tampered, "tampered");
  INFO(ours.out << ours.err);
  CHECK(ours.exit_code == 1);
  CHECK(ours.err.find("not proved") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("tampered/poseidon_chain_1.proof.json")));
}

TEST_CASE("setup --r1cs: a missing, truncated or bn128 r1cs, an existing output and bad flags are refused",
          "[app][setup][zkey][cpu]") {
  scratch_dir dir;
  const auto refuse = [&](std::vector<std::string> args, const std::string& message) {
    args.insert(args.begin(), "setup");
    const auto r = run_coprove(args, dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("out.zkey")));
    CHECK_FALSE(std::filesystem::exists(dir.file("out.zkey.tmp")));
  };
  auto r1cs = container::parse(coprove::circom_fixtures::read_bytes(r1cs_path));
  auto cut = r1cs;
  cut.section(2).resize(cut.section(2).size() - 7);
  coprove::circom_fixtures::write_bytes(dir.file("cut.r1cs"), cut.bytes());
  // bn128's r, little-endian, over BLS12-381's.
  const std::vector<std::uint8_t> bn128_r = {0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9,
                                             0x79, 0x48, 0xe8, 0x33, 0x28, 0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45,
                                             0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
  std::copy(bn128_r.begin(), bn128_r.end(), r1cs.section(1).begin() + 4);
  coprove::circom_fixtures::write_bytes(dir.file("bn128.r1cs"), r1cs.bytes());
  const std::string out = dir.file("out.zkey");

  refuse({"--r1cs", dir.file("absent.r1cs"), "--zkey", out}, dir.file("absent.r1cs"));
  refuse({"--r1cs", dir.file("cut.r1cs"), "--zkey", out}, "cut.r1cs: section 2 (constraints)");
  refuse({"--r1cs", dir.file("bn128.r1cs"), "--zkey", out}, "the circuit is over bn128 r, not BLS12-381's r");
  refuse({"--r1cs", circom_data + "/cube.wtns", "--zkey", out}, "cube.wtns");
  refuse({"--r1cs", r1cs_path}, "missing --zkey");
  refuse({"--r1cs", r1cs_path, "--zkey", out, "--circuit", "mimc"}, "--circuit is for a built-in circuit");
  refuse({"--r1cs", r1cs_path, "--zkey", out, "--vk", out}, "--vk and --zkey name the same file");
  refuse({"--r1cs", r1cs_path, "--zkey", dir.file("no/such/dir/out.zkey")}, "does not exist");
  refuse({"--circuit", "mimc", "--log-constraints", "10", "--out", dir.file("keys"), "--zkey", out},
         "--zkey goes with --r1cs");

  // An existing zkey or vk is left as it was.
  write_file(dir.file("kept.zkey"), "keep");
  write_file(dir.file("kept.vk.json"), "keep");
  refuse({"--r1cs", r1cs_path, "--zkey", dir.file("kept.zkey")}, "kept.zkey exists; a key is never overwritten");
  refuse({"--r1cs", r1cs_path, "--zkey", out, "--vk", dir.file("kept.vk.json")},
         "kept.vk.json exists; a key is never overwritten");
  CHECK(read_file(dir.file("kept.zkey")) == "keep");
  CHECK(read_file(dir.file("kept.vk.json")) == "keep");
}
