// Groth16 on the CPU for the MiMC circuit at 2^k constraints: setup (seeded key), writing and
// loading `params` (every point checked, all cores), the witness (synthesis, SpMV and quotient),
// one proof and one verification; the load twice, with every check and trusted (subgroup
// checks of the proving queries skipped). Prints a table and, with --json PATH, writes
// [{"log_constraints", "stage", "ms"}] plus the key's size. Wall-clock times of one run each (a
// setup at 2^20 takes minutes on a small machine).
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/prover.hpp>
#include <coprove/groth16/verifier.hpp>

#include <coprove/field/parallel.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/mimc.hpp>

#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace {

namespace groth16 = coprove::groth16;
namespace r1cs = coprove::r1cs;

double time_ms(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int run(int argc, char** argv) {
  std::vector<unsigned> logs{12};
  std::filesystem::path dir = std::filesystem::temp_directory_path();
  std::string json_path;
  std::string dir_text = dir.string();
  coprove::bench::options("bench_groth16", "Groth16 on the CPU for the MiMC circuit: setup, params, witness, prove, verify")
      .list("--logs", logs, "L,...", "log2 constraint counts (default 12)", r1cs::min_log_constraints, 24u)
      .text("--dir", dir_text, "DIR", "where params is written and read back (default: the temporary folder)")
      .text("--json", json_path, "PATH", "write the rows as JSON")
      .parse(argc, argv);
  dir = dir_text;

  boost::json::array json;
  std::printf("bench_groth16: MiMC on the CPU, %zu threads, one run per stage\n", coprove::field::parallelism());
  std::printf("%8s %-22s %12s\n", "log2 n", "stage", "ms");
  for (const unsigned log : logs) {
    const r1cs::mimc_circuit circuit(log, r1cs::mimc_circuit::preimage_for(1, 0));
    r1cs::pce_matrices matrices;
    groth16::proving_key pk;
    groth16::key_shape shape;
    groth16::witness witness;
    groth16::proof proof;
    const auto params = dir / ("bench_groth16_mimc_" + std::to_string(log) + ".params");
    std::vector<std::pair<std::string, double>> stages;
    stages.emplace_back("matrices", time_ms([&] { matrices = groth16::record_matrices(circuit); }));
    shape = groth16::key_shape::of(matrices);
    stages.emplace_back("setup", time_ms([&] {
      auto secrets = groth16::secret_source::insecure_seeded(log, "bench_groth16's setup");
      pk = groth16::setup(matrices, secrets);
    }));
    stages.emplace_back("params write", time_ms([&] { groth16::write_params(pk, shape, params); }));
    groth16::proving_key loaded;
    stages.emplace_back("params load", time_ms([&] { loaded = groth16::read_params(params, shape); }));
    stages.emplace_back("params load, trusted", time_ms([&] {
      loaded = groth16::read_params(params, shape, coprove::field::subgroup_check::skip);
    }));
    const auto file_bytes = std::filesystem::file_size(params);
    std::filesystem::remove(params);
    if (!(loaded == pk)) {
      std::cerr << "bench_groth16: the loaded key differs from the written one\n";
      return 1;
    }
    stages.emplace_back("witness", time_ms([&] { witness = groth16::compute_witness(circuit, matrices); }));
    stages.emplace_back("prove", time_ms([&] {
      auto secrets = groth16::secret_source::system();
      proof = groth16::prove(pk, witness.assignment, witness.h, secrets);
    }));
    bool accepted = false;
    stages.emplace_back("verify", time_ms([&] {
      accepted = groth16::verify(groth16::prepared_verifying_key::from(pk.vk), proof, witness.public_inputs).accepted;
    }));
    if (!accepted) {
      std::cerr << "bench_groth16: the proof does not verify\n";
      return 1;
    }
    for (const auto& [stage, ms] : stages) {
      std::printf("%8u %-22s %12.1f\n", log, stage.c_str(), ms);
      json.push_back(boost::json::object{{"log_constraints", log}, {"stage", stage}, {"ms", ms}});
    }
    std::printf("%8u %-22s %12.1f MiB in memory, %.1f MiB params file\n", log, "key size",
                static_cast<double>(pk.bytes()) / (1 << 20), static_cast<double>(file_bytes) / (1 << 20));
    json.push_back(boost::json::object{{"log_constraints", log},
                                       {"stage", "key size"},
                                       {"memory_bytes", pk.bytes()},
                                       {"params_bytes", file_bytes}});
  }
  if (!json_path.empty() && !coprove::bench::write_json_file(json_path, json, "bench_groth16")) return 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_groth16: " << e.what() << "\n";
    return 1;
  }
}
