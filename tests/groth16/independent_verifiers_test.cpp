// Our proofs checked by verifiers that share no code with coprove: @noble/curves from the bellman
// bytes and the `vk` file (noble_groth16_verify.mjs), and `snarkjs groth16 verify` from vk.json,
// public.json and proof.json. Valid proofs must pass all three (ours included); tampered proofs,
// wrong public inputs and another key's vk must fail all three.
//
// node and the npm packages come from scripts/setup.sh (node_modules/ at the repository root).
// When they are missing the tests fail with a message saying so, as the field layer's noble
// tests do: a cross-check that cannot run is a failure, never a silent pass.
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_witness.hpp>

#include "circom_test_support.hpp"
#include "groth16/groth16_test_support.hpp"
#include "groth16/proved_circuits.hpp"

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>

using namespace coprove;
using namespace coprove::groth16;
using field::fr;

namespace {

constexpr std::string_view setup_hint = "run scripts/setup.sh (it installs node and the npm packages)";

const std::filesystem::path source_dir = COPROVE_SOURCE_DIR;
const std::filesystem::path noble_script = std::filesystem::path(COPROVE_GROTH16_TEST_DIR) / "noble_groth16_verify.mjs";
const std::filesystem::path snarkjs_cli = source_dir / "node_modules" / "snarkjs" / "cli.js";

struct command_result {
  int status = -1;
  std::string output;
};

/// Runs a shell command, capturing stdout and stderr together.
command_result run(const std::string& command) {
  command_result out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out.output += buffer;
  const int raw = ::pclose(pipe);
  out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

/// node's path; fails the test (with the setup hint) when node or the packages are missing.
std::string require_node() {
  const auto found = run("command -v node");
  const std::string node = found.status == 0 ? found.output.substr(0, found.output.find('\n')) : "";
  if (node.empty()) FAIL("node is not on PATH: the noble and snarkjs cross-checks cannot run; " << setup_hint);
  if (!std::filesystem::exists(source_dir / "node_modules" / "@noble" / "curves" / "package.json"))
    FAIL("@noble/curves is not installed under " << (source_dir / "node_modules").string() << "; " << setup_hint);
  if (!std::filesystem::exists(snarkjs_cli))
    FAIL("snarkjs is not installed (" << snarkjs_cli.string() << " is missing); " << setup_hint);
  return node;
}

std::string quoted(const std::filesystem::path& p) {
  std::string out = "'";
  out += p.string();
  out += "'";
  return out;
}

using testing::temp_dir;

void write_json(const std::filesystem::path& p, const boost::json::value& v) {
  std::ofstream(p) << boost::json::serialize(v) << "\n";
}

std::string hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (const auto b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

/// One proof to check, with the verdict every verifier must give.
struct check_case {
  std::string name;
  proof p;
  std::vector<fr> inputs;
  bool valid;
};

/// Checks every case with our verifier, noble (one node run) and snarkjs (one run a case), snarkjs
/// with the vk.json we write or, when given, with `snarkjs_vk` (one snarkjs exported itself).
void check_with_all_verifiers(const verifying_key& vk, const std::vector<check_case>& cases,
                              const std::filesystem::path& snarkjs_vk = {}) {
  const std::string node = require_node();
  temp_dir dir("verifiers");
  write_verifying_key(vk, dir.path / "vk");
  write_verifying_key_json(vk, dir.path / "vk.json");
  const auto pvk = prepared_verifying_key::from(vk);

  boost::json::array noble_cases;
  for (const auto& c : cases) {
    noble_cases.push_back(boost::json::object{{"name", c.name},
                                              {"proof", hex(encode_proof(c.p))},
                                              {"public", public_inputs_to_snarkjs_json(c.inputs)}});
  }
  write_json(dir.path / "cases.json", noble_cases);
  const auto noble = run(node + " " + quoted(noble_script) + " " + quoted(dir.path / "vk") + " " +
                         quoted(dir.path / "cases.json"));
  INFO("noble output: " << noble.output);
  REQUIRE(noble.status == 0);
  const auto answer = boost::json::parse(noble.output.substr(noble.output.find('{')));
  const auto& results = answer.at("results").as_array();
  REQUIRE(results.size() == cases.size());

  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    INFO("case " << c.name << " (expected " << (c.valid ? "valid" : "invalid") << ")");
    const auto ours = verify(pvk, c.p, c.inputs);
    INFO("our reason: " << ours.reason);
    CHECK(ours.accepted == c.valid);
    INFO("noble: " << boost::json::serialize(results[i]));
    CHECK(results[i].at("accepted").as_bool() == c.valid);

    const auto proof_path = dir.path / ("proof_" + std::to_string(i) + ".json");
    const auto public_path = dir.path / ("public_" + std::to_string(i) + ".json");
    write_json(proof_path, proof_to_snarkjs_json(c.p));
    write_json(public_path, public_inputs_to_snarkjs_json(c.inputs));
    const auto vk_json = snarkjs_vk.empty() ? dir.path / "vk.json" : snarkjs_vk;
    const auto snarkjs = run(node + " " + quoted(snarkjs_cli) + " groth16 verify " + quoted(vk_json) +
                             " " + quoted(public_path) + " " + quoted(proof_path));
    INFO("snarkjs (status " << snarkjs.status << "): " << snarkjs.output);
    const bool snarkjs_ok = snarkjs.status == 0 && snarkjs.output.find("OK") != std::string::npos;
    CHECK(snarkjs_ok == c.valid);
    // A refusal must be snarkjs's verdict, not a crash on a file it could not read.
    if (!c.valid) CHECK(snarkjs.output.find("Invalid proof") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("noble and snarkjs accept our MiMC proofs and refuse tampered ones", "[groth16][noble][snarkjs][cpu]") {
  const auto& p = testing::mimc_proofs();
  const auto& x0 = p.witnesses[0].public_inputs;
  const auto& x1 = p.witnesses[1].public_inputs;
  const proof& good = p.proofs[0];
  const proof& other = p.proofs[1];
  check_with_all_verifiers(p.pk.vk, {
                                        {"proof 0", good, x0, true},
                                        {"proof 1", other, x1, true},
                                        {"proof 2", p.proofs[2], p.witnesses[2].public_inputs, true},
                                        {"A negated", {-good.a, good.b, good.c}, x0, false},
                                        {"A doubled", {good.a.to_jacobian().doubled().to_affine(), good.b, good.c}, x0, false},
                                        {"B of another proof", {good.a, other.b, good.c}, x0, false},
                                        {"C of another proof", {good.a, good.b, other.c}, x0, false},
                                        {"another proof's inputs", good, x1, false},
                                        {"input plus one", good, {x0[0] + fr::one()}, false},
                                    });
}

TEST_CASE("noble and snarkjs refuse our proofs under another key's vk", "[groth16][noble][snarkjs][cpu]") {
  const auto& p = testing::mimc_proofs();
  auto secrets = secret_source::insecure_seeded(1234, "another key for the cross-checks");
  const auto other_key = setup(p.matrices, secrets);
  check_with_all_verifiers(other_key.vk, {
                                             {"proof 0 under another key", p.proofs[0], p.witnesses[0].public_inputs, false},
                                             {"proof 1 under another key", p.proofs[1], p.witnesses[1].public_inputs, false},
                                         });
}

TEST_CASE("noble and snarkjs take our five public inputs in our order", "[groth16][noble][snarkjs][cpu]") {
  const auto& p = testing::products_proofs();
  const auto& x = p.witnesses[0].public_inputs;
  auto swapped = x;
  std::swap(swapped[0], swapped[4]);
  check_with_all_verifiers(p.pk.vk, {
                                        {"five inputs", p.proofs[0], x, true},
                                        {"five inputs, second witness", p.proofs[1], p.witnesses[1].public_inputs, true},
                                        {"inputs 0 and 4 swapped", p.proofs[0], swapped, false},
                                    });
}

TEST_CASE("snarkjs and noble accept our proofs from a snarkjs zkey and circom witnesses and refuse tampered ones",
          "[groth16][zkey][noble][snarkjs][cpu]") {
  const auto dir = circom_fixtures::circom_data_dir();
  const zkey key = read_zkey(dir / "poseidon_chain.zkey");
  const auto pvk = prepared_verifying_key::from(key.pk.vk);
  auto secrets = secret_source::system();
  const auto w1 = r1cs::read_wtns(dir / "poseidon_chain_1.wtns", key.num_variables());
  const auto w2 = r1cs::read_wtns(dir / "poseidon_chain_2.wtns", key.num_variables());
  const circom_proof p1 = prove_zkey(key, pvk, w1, secrets);
  const circom_proof p2 = prove_zkey(key, pvk, w2, secrets);
  auto wrong = p1.public_signals;
  wrong[1] += fr::one();
  check_with_all_verifiers(key.pk.vk,
                           {
                               {"witness 1", p1.proof, p1.public_signals, true},
                               {"witness 2", p2.proof, p2.public_signals, true},
                               {"public input plus one", p1.proof, wrong, false},
                               {"C of the other proof", {p1.proof.a, p1.proof.b, p2.proof.c}, p1.public_signals, false},
                           },
                           dir / "poseidon_chain.vk.json");
}

TEST_CASE("snarkjs also rejects a forged proof under a vk.json with gamma and delta at infinity, which we refuse to read",
          "[groth16][snarkjs][degenerate][cpu]") {
  const std::string node = require_node();
  const verifying_key good = read_zkey(circom_fixtures::circom_data_dir() / "poseidon_chain.zkey").pk.vk;
  verifying_key vk = good;
  vk.gamma_g2 = field::g2_affine::identity();
  vk.delta_g2 = field::g2_affine::identity();
  temp_dir dir("degenerate-snarkjs");
  write_verifying_key_json(vk, dir.path / "vk.json");
  CHECK_THROWS_AS(read_verifying_key_json(dir.path / "vk.json"), key_file_error);
  // With gamma and delta at infinity e(A, B) = e(alpha, beta) alone decides: A = alpha, B = beta.
  const proof forged{vk.alpha_g1, vk.beta_g2, field::g1_affine::generator()};
  write_json(dir.path / "proof.json", proof_to_snarkjs_json(forged));
  write_json(dir.path / "public.json", public_inputs_to_snarkjs_json(std::vector<fr>{fr::from_uint64(5), fr::from_uint64(7)}));
  const auto snarkjs = run(node + " " + quoted(snarkjs_cli) + " groth16 verify " + quoted(dir.path / "vk.json") + " " +
                           quoted(dir.path / "public.json") + " " + quoted(dir.path / "proof.json"));
  INFO("snarkjs (status " << snarkjs.status << "): " << snarkjs.output);
  CHECK(snarkjs.status != 0);
  CHECK(snarkjs.output.find("Invalid proof") != std::string::npos);
}
