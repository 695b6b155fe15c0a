// Proofs the CUDA backend made on an H100 or H200 (its MSMs on the device), brought back as the run wrote
// them (tests/data/gpu: the report of `coprove run --backend cuda` and the key's bellman vk, see
// tests/data/gpu/README.md), checked here where node runs: by noble's pairing and by
// `coprove verify`; the same report with one proof's byte changed fails in both.
#include "app_test_support.hpp"
#include "proof_report_support.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace {

namespace json = boost::json;
using namespace coprove::test;

const std::string gpu_data = source_dir + "/tests/data/gpu";

}  // namespace

TEST_CASE("proofs made by the CUDA backend on an H100 verify with noble and coprove verify; a forged one fails",
          "[app][verify][gpu_made][cpu]") {
  scratch_dir dir;
  const std::string report_path = gpu_data + "/mimc14_cuda_report.json";
  const std::string vk = gpu_data + "/mimc14.vk";
  json::object report = json::parse(read_file(report_path)).as_object();
  REQUIRE(report.at("backend").as_string() == "cuda");
  const std::string devices = json::serialize(report.at("devices"));
  CHECK(devices.find("H100") != std::string::npos);
  auto& results = report.at("results").as_array();
  REQUIRE(results.size() == 2);
  std::size_t proofs = 0;
  for (const auto& job : results) proofs += job.at("partitions").as_array().size();
  CHECK(proofs == 8);

  const auto noble = noble_verify_report(dir, report_path, vk);
  INFO(noble.out << noble.err);
  CHECK(noble.exit_code == 0);
  CHECK(run_coprove({"verify", report_path, "--vk", vk}, dir).exit_code == 0);

  // One byte of one proof changed (C's x, still a valid hex string): refused by both.
  auto& proof = results[1].at("partitions").as_array()[2].at("proof").as_string();
  std::string forged(proof.c_str());
  forged[300] = forged[300] == '0' ? '1' : '0';
  proof = forged;
  write_file(dir.file("forged.json"), json::serialize(report));
  CHECK(noble_verify_report(dir, dir.file("forged.json"), vk).exit_code == 1);
  CHECK(run_coprove({"verify", dir.file("forged.json"), "--vk", vk}, dir).exit_code == 1);
}

TEST_CASE("SHA-256 proofs made by the CUDA backend on an H200 from coprove's own zkeys verify with snarkjs and "
          "coprove verify; tampered ones fail",
          "[app][verify][gpu_made][sha256][cpu]") {
  // scripts/make_circom_fixtures.sh sha256_2e16 / sha256_2e20 (circomlib's SHA-256 of 2 and 33
  // blocks), keyed on the GPU host by `coprove setup --r1cs` and proved there by `coprove prove
  // --backend cuda` (tests/data/gpu/README.md). The public signals are the digest's bits.
  scratch_dir dir;
  const std::string node = require_node(dir);
  for (const auto& [k, blocks] : {std::pair{16, 2}, std::pair{20, 33}}) {
    const std::string name = "sha256_2e" + std::to_string(k);
    INFO(name);
    const std::string vk = gpu_data + "/" + name + ".vk.json";
    const std::string proof = gpu_data + "/" + name + "_1_cuda.proof.json";
    const std::string pub = gpu_data + "/" + name + "_1_cuda.public.json";
    const auto snarkjs_verify = [&](const std::string& public_path, const std::string& proof_path) {
      return run_process({node, snarkjs_cli, "groth16", "verify", vk, public_path, proof_path}, dir);
    };
    const auto accepted = snarkjs_verify(pub, proof);
    INFO(accepted.out << accepted.err);
    CHECK(accepted.exit_code == 0);
    CHECK(run_coprove({"verify", "--vk", vk, "--proof", proof, "--public", pub}, dir).exit_code == 0);

    // The message the fixture script hashes: "coprove: SHA-256 benchmark message 1, " repeated to
    // 64 x blocks - 9 bytes; the signals are sha256sum's digest, most significant bit first.
    const std::string part = "coprove: SHA-256 benchmark message 1, ";
    std::string message;
    while (message.size() < std::size_t(64 * blocks - 9)) message += part;
    message.resize(std::size_t(64 * blocks - 9));
    const auto digest = run_process({"sh", "-c", "printf %s \"$0\" | sha256sum", message}, dir);
    REQUIRE(digest.exit_code == 0);
    std::string expected;
    for (std::size_t c = 0; c < 64; ++c) {
      const int nibble = std::stoi(digest.out.substr(c, 1), nullptr, 16);
      for (int b = 3; b >= 0; --b) expected += (nibble >> b & 1) ? '1' : '0';
    }
    json::array signals = json::parse(read_file(pub)).as_array();
    std::string got;
    for (const auto& s : signals) got += s.as_string().c_str();
    CHECK(got == expected);

    // A digest bit flipped; A's x changed in its last digit: refused by snarkjs and coprove verify.
    signals[200] = signals[200].as_string() == "0" ? "1" : "0";
    write_file(dir.file("flipped.json"), json::serialize(signals));
    json::object forged = json::parse(read_file(proof)).as_object();
    std::string ax(forged.at("pi_a").as_array()[0].as_string().c_str());
    ax.back() = ax.back() == '1' ? '2' : '1';
    forged["pi_a"].as_array()[0] = json::string(ax);
    write_file(dir.file("forged.json"), json::serialize(forged));
    for (const auto& [public_path, proof_path] :
         {std::pair{dir.file("flipped.json"), proof}, std::pair{pub, dir.file("forged.json")}}) {
      const auto refused = snarkjs_verify(public_path, proof_path);
      INFO(refused.out << refused.err);
      CHECK(refused.exit_code != 0);
      CHECK(run_coprove({"verify", "--vk", vk, "--proof", proof_path, "--public", public_path}, dir).exit_code != 0);
    }
  }
}
