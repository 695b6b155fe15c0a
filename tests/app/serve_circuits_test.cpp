// `coprove serve` with circom circuits (server.circuits): GET /v1/circuits lists them, a .wtns body
// POSTed to /v1/circuits/NAME/proofs becomes a job whose result snarkjs verifies with the key's
// own verification_key.json (and refuses with a changed public signal); a witness of another
// circuit, another media type or an unknown circuit are refused and the service keeps serving; a
// zkey that cannot be used stops the start with exit status 2, naming the file and the section.
#include "app_test_support.hpp"
#include "proof_report_support.hpp"

#include <thread>

using namespace coprove::test;
namespace json = boost::json;

namespace {

const std::string circom_data = source_dir + "/tests/data/circom";

std::vector<std::string> serve_argv(const std::string& socket, const std::string& circuits) {
  return {COPROVE_BINARY, "serve", "--listen", "unix:" + socket, "--backend", "host", "--log-constraints", "10",
          "--log-level", "warning", "--circuits", circuits};
}

}  // namespace

TEST_CASE("serve: circom circuits are listed, proved from a .wtns body and verified by snarkjs", "[app][serve][zkey][cpu]") {
  scratch_dir dir;
  const std::string socket = dir.file("s.sock");
  child_process server(serve_argv(socket, "poseidon=" + circom_data + "/poseidon_chain.zkey"), dir.file("serve.out"),
                       dir.file("serve.err"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (server.out().find("listening on") == std::string::npos) {
    if (!server.running() || std::chrono::steady_clock::now() > deadline) FAIL("coprove serve did not start: " << server.err());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string octets = "application/octet-stream";
  const auto listed = curl(dir, socket, "GET", "/v1/circuits");
  REQUIRE(listed.status == 200);
  const json::value listed_json = listed.json();
  const auto& circuit = listed_json.at("circuits").as_array().at(0).as_object();
  CHECK(circuit.at("name").as_string() == "poseidon");
  CHECK(circuit.at("signals").to_number<std::size_t>() == 2071);
  CHECK(circuit.at("witness_bytes").to_number<std::size_t>() == 66348);

  const std::string witness = read_file(circom_data + "/poseidon_chain_2.wtns");
  const auto submitted = curl(dir, socket, "POST", "/v1/circuits/poseidon/proofs", witness, std::chrono::seconds(60), octets);
  INFO(submitted.body);
  REQUIRE(submitted.status == 202);
  const auto id = submitted.json().at("job_id").to_number<std::uint64_t>();

  // Refusals, while the job runs.
  const auto other = curl(dir, socket, "POST", "/v1/circuits/poseidon/proofs", read_file(circom_data + "/cube.wtns"),
                          std::chrono::seconds(60), octets);
  CHECK(other.status == 422);
  CHECK(other.error_code() == "invalid_witness");
  CHECK(other.body.find("the witness has 4 values, the circuit 2071") != std::string::npos);
  CHECK(curl(dir, socket, "POST", "/v1/circuits/poseidon/proofs", witness).status == 415);
  CHECK(curl(dir, socket, "POST", "/v1/circuits/nope/proofs", witness, std::chrono::seconds(60), octets).status == 404);
  CHECK(curl(dir, socket, "POST", "/v1/circuits/poseidon/proofs", witness + "x", std::chrono::seconds(60), octets).status ==
        413);

  const auto result = curl(dir, socket, "GET", "/v1/jobs/" + std::to_string(id) + "/result?wait=60");
  INFO(result.body);
  REQUIRE(result.status == 200);
  const json::value result_json = result.json();
  const auto& partition = result_json.at("partitions").as_array().at(0).as_object();
  CHECK(partition.at("verified").as_bool());
  write_file(dir.file("proof.json"), json::serialize(partition.at("proof_snarkjs")));
  write_file(dir.file("public.json"), json::serialize(partition.at("public_inputs")));
  const std::string node = require_node(dir);
  const std::string vk = circom_data + "/poseidon_chain.vk.json";
  const auto ok = run_process({node, snarkjs_cli, "groth16", "verify", vk, dir.file("public.json"), dir.file("proof.json")}, dir);
  INFO(ok.out << ok.err);
  CHECK((ok.exit_code == 0 && ok.out.find("OK") != std::string::npos));
  auto signals = partition.at("public_inputs").as_array();
  signals[1] = "3";  // x was 12345678901234567890
  write_file(dir.file("wrong.json"), json::serialize(signals));
  const auto refused = run_process({node, snarkjs_cli, "groth16", "verify", vk, dir.file("wrong.json"), dir.file("proof.json")}, dir);
  CHECK(refused.out.find("Invalid proof") != std::string::npos);

  server.signal(SIGTERM);
  CHECK(server.wait(std::chrono::seconds(30)) == 0);
}

TEST_CASE("serve: a zkey of another protocol stops the start naming the file and section", "[app][serve][zkey][cpu]") {
  scratch_dir dir;
  const auto r = run_process(serve_argv(dir.file("s.sock"), "cube=" + circom_data + "/cube.plonk.zkey"), dir,
                             std::chrono::seconds(30));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("server.circuits (cube): " + circom_data + "/cube.plonk.zkey: section 1 (protocol): the key is for "
                   "plonk, not groth16") != std::string::npos);
}
