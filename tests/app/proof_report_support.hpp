// What the key and proof-checking tests of the binary share: a seeded key directory of mimc/10, a
// report of Groth16 proofs in the engine's result format made with groth16::prove directly, hex
// helpers, and node with @noble/curves and snarkjs for the independent checks.
//
// node and the npm packages come from scripts/setup.sh (node_modules/ at the repository root).
// When they are missing the node checks fail with a message saying so, as the groth16 layer's do:
// a cross-check that cannot run is a failure, never a silent pass.
#pragma once

#include "app_test_support.hpp"
#include "keys.hpp"

#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/prover.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/r1cs/circuits.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace coprove::test {

inline const std::string source_dir = COPROVE_SOURCE_DIR;
inline const std::string noble_report_script = source_dir + "/tests/app/noble_verify_report.mjs";
inline const std::string snarkjs_cli = source_dir + "/node_modules/snarkjs/cli.js";

/// node's path; fails the test (saying how to install them) when node or the packages are missing.
inline std::string require_node(const scratch_dir& dir) {
  const auto found = run_process({"sh", "-c", "command -v node"}, dir);
  const std::string node = found.exit_code == 0 ? found.out.substr(0, found.out.find('\n')) : "";
  constexpr const char* hint = "run scripts/setup.sh (it installs node and the npm packages)";
  if (node.empty()) FAIL("node is not on PATH: the noble and snarkjs checks cannot run; " << hint);
  if (!std::filesystem::exists(source_dir + "/node_modules/@noble/curves/package.json"))
    FAIL("@noble/curves is not installed under " << source_dir << "/node_modules; " << hint);
  if (!std::filesystem::exists(snarkjs_cli)) FAIL("snarkjs is not installed (" << snarkjs_cli << " is missing); " << hint);
  return node;
}

/// Runs noble_verify_report.mjs on a report and a vk (file or key directory).
inline process_result noble_verify_report(const scratch_dir& dir, const std::string& report, const std::string& vk) {
  return run_process({require_node(dir), noble_report_script, report, vk}, dir);
}

inline std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (const auto b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

inline std::vector<std::uint8_t> from_hex(std::string_view text) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoul(std::string(text.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

/// Options for a seeded key (reproducible and quick to make; it warns, as it should).
inline app::key_options seeded_options(std::uint64_t seed) {
  app::key_options options;
  options.insecure_seed = seed;
  return options;
}

/// One job of mimc/10 proved on the CPU, as the engine reports it: {"job_id", "state",
/// "request", "vk_sha256", "partitions": [{"index", "proof", "public_inputs", "verified"}]}.
inline boost::json::object prove_job(const app::key_set& keys, std::uint64_t job_id, std::uint64_t seed,
                                     std::size_t partitions, groth16::secret_source& blinding) {
  boost::json::array entries;
  for (std::size_t p = 0; p < partitions; ++p) {
    const auto circuit = r1cs::make_circuit(keys.circuit, keys.log_constraints, seed, p);
    const auto w = groth16::compute_witness(*circuit, *keys.matrices);
    const auto proof = groth16::prove(*keys.pk, w.assignment, w.h, blinding);
    entries.push_back(boost::json::object{{"index", p},
                                          {"proof", to_hex(groth16::encode_proof(proof))},
                                          {"public_inputs", groth16::public_inputs_to_snarkjs_json(w.public_inputs)},
                                          {"verified", true}});
  }
  return {{"job_id", job_id},
          {"state", "done"},
          {"vk_sha256", keys.metadata.vk_sha256},
          {"request", boost::json::object{{"circuit", keys.circuit},
                                          {"log_constraints", keys.log_constraints},
                                          {"partitions", partitions},
                                          {"seed", seed}}},
          {"partitions", std::move(entries)}};
}

/// A key directory of mimc/10 (seeded, so the tests need no entropy) and a run report of two jobs
/// (job 1: seed 7, three partitions; job 2: seed 8, two partitions) proved with it; made once a
/// process, in a directory removed at exit.
struct proof_report_fixture {
  scratch_dir dir;
  app::key_set keys;
  boost::json::object report;
  std::string key_dir, report_path, job_path;

  proof_report_fixture() {
    key_dir = dir.file("key");
    keys = app::make_key_dir("mimc", 10, key_dir, seeded_options(11));
    auto blinding = groth16::secret_source::insecure_seeded(12, "the report fixture's proofs");
    boost::json::array results;
    results.push_back(prove_job(keys, 1, 7, 3, blinding));
    results.push_back(prove_job(keys, 2, 8, 2, blinding));
    report = {{"backend", "host"}, {"results", std::move(results)}};
    report_path = dir.file("report.json");
    write_file(report_path, boost::json::serialize(report));
    job_path = dir.file("job.json");
    write_file(job_path, boost::json::serialize(report.at("results").as_array()[0]));
  }

  static const proof_report_fixture& get() {
    static const proof_report_fixture fixture;
    return fixture;
  }
};

}  // namespace coprove::test
