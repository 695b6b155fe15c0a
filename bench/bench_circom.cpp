// Proving circom witnesses with a snarkjs zkey: the time per witness of coprove (prove_zkey on the
// CPU alone, and a batch through the engine on the chosen backend, proofs/s) beside
// `snarkjs groth16 prove` on the same zkey and witness in the same run (bench/snarkjs_prove.mjs,
// in-process, start-up left out), and the ratio. Every proof is verified (ours with the zkey's vk,
// snarkjs's by snarkjs). Run from the repository root (the defaults are its fixtures); prints a
// table and, with --json PATH, writes the rows.
#include <coprove/engine/engine.hpp>
#include <coprove/engine/host_backend.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_witness.hpp>
#ifdef COPROVE_HAVE_CUDA
#include <coprove/cuda/cuda_backend.hpp>
#endif

#include "bench_support.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace groth16 = coprove::groth16;
namespace engine = coprove::engine;
using coprove::field::fr;

void usage() {
  std::cerr << "usage: bench_circom [--zkey PATH] [--witness PATH]... [--batch N] [--runs N] [--backend host|cuda]\n"
               "                    [--snarkjs-runs N] [--node PATH] [--json PATH]\n"
               "  --zkey, --witness: default tests/data/circom/poseidon_chain.zkey and its two witnesses\n"
               "  --batch: witnesses (cycled) in the engine's job (default 16); --runs: CPU proofs timed (default 3)\n"
               "  --backend: the engine's backend (default cuda where compiled in and a GPU is seen, else host)\n"
               "  --snarkjs-runs: timed snarkjs proofs per witness (default 3; 0 leaves snarkjs out)\n";
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

struct command_result {
  int status = -1;
  std::string output;
};

command_result run_command(const std::string& command) {
  command_result out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out.output += buffer;
  out.status = ::pclose(pipe);
  return out;
}

std::unique_ptr<engine::compute_backend> make_backend(const std::string& name) {
#ifdef COPROVE_HAVE_CUDA
  if (name == "cuda" || (name.empty() && coprove::cuda::cuda_device_count() > 0))
    return coprove::cuda::make_cuda_backend({}, 3);
#endif
  if (name == "cuda") throw std::invalid_argument("bench_circom: this build has no CUDA backend");
  return engine::make_host_backend(1, 2);
}

int run(int argc, char** argv) {
  std::string zkey_path = "tests/data/circom/poseidon_chain.zkey";
  std::vector<std::string> witness_paths;
  std::size_t batch = 16, runs = 3, snarkjs_runs = 3;
  std::string backend_name, node = "node", json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&] { return coprove::bench::option_value(argc, argv, i, usage); };
    if (arg == "--zkey") zkey_path = next();
    else if (arg == "--witness") witness_paths.push_back(next());
    else if (arg == "--batch") batch = std::stoul(next());
    else if (arg == "--runs") runs = std::stoul(next());
    else if (arg == "--backend") backend_name = next();
    else if (arg == "--snarkjs-runs") snarkjs_runs = std::stoul(next());
    else if (arg == "--node") node = next();
    else if (arg == "--json") json_path = next();
    else {
      usage();
      return 1;
    }
  }
  if (witness_paths.empty())
    witness_paths = {"tests/data/circom/poseidon_chain_1.wtns", "tests/data/circom/poseidon_chain_2.wtns"};
  if (batch == 0 || runs == 0) {
    usage();
    return 1;
  }

  const auto key = std::make_shared<const groth16::zkey>(groth16::read_zkey(zkey_path));
  std::vector<std::vector<fr>> witnesses;
  for (const auto& p : witness_paths) witnesses.push_back(coprove::r1cs::read_wtns(p, key->num_variables()));
  const auto pvk = groth16::prepared_verifying_key::from(key->pk.vk);
  std::printf("bench_circom: %s (%zu signals, domain 2^%u), %zu CPU threads\n", zkey_path.c_str(),
              key->num_variables(), key->domain().log_size(), coprove::field::parallelism());

  // coprove on the CPU alone: the SpMV, the odd-coset quotient, the proof and its verification.
  std::vector<double> cpu_ms;
  auto secrets = groth16::secret_source::system();
  for (std::size_t r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    (void)groth16::prove_zkey(*key, pvk, witnesses[r % witnesses.size()], secrets);
    cpu_ms.push_back(ms_since(start));
  }
  const double cpu = coprove::bench::median(cpu_ms);

  // A batch through the engine: one job, one partition a witness.
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  double engine_ms = 0;
  std::string backend_used;
  std::size_t verified = 0;
  {
    engine::engine_config cfg;
    cfg.max_log_constraints = std::max(16u, key->domain().log_size());
    cfg.zkey_circuits = {{"circuit", key}};
    engine::engine e(io.get_executor(), cfg, make_backend(backend_name));
    backend_used = std::string(e.backend().name());
    engine::prove_request request;
    request.circuit = "circuit";
    auto batch_witnesses = std::make_shared<std::vector<std::vector<fr>>>();
    for (std::size_t i = 0; i < batch; ++i) batch_witnesses->push_back(witnesses[i % witnesses.size()]);
    request.witnesses = batch_witnesses;
    const auto start = std::chrono::steady_clock::now();
    auto [ec, result] = e.async_prove(request, boost::asio::use_future).get();
    engine_ms = ms_since(start);
    if (ec) {
      std::cerr << "bench_circom: the engine's job failed: " << ec.message() << "\n";
      guard.reset();
      io_thread.join();
      return 1;
    }
    for (const auto& p : result.partitions) verified += p.verified && p.proof && groth16::verify(pvk, *p.proof, p.public_inputs);
  }
  guard.reset();
  io_thread.join();
  if (verified != batch) {
    std::cerr << "bench_circom: " << (batch - verified) << " of " << batch << " engine proofs did not verify\n";
    return 1;
  }
  const double per_witness = engine_ms / static_cast<double>(batch);

  // snarkjs on the same zkey and witness.
  double snarkjs_ms = 0;
  std::string snarkjs_version;
  if (snarkjs_runs > 0) {
    const auto got = run_command(node + " bench/snarkjs_prove.mjs '" + zkey_path + "' '" + witness_paths[0] + "' " +
                                 std::to_string(snarkjs_runs));
    if (got.status != 0) {
      std::cerr << "bench_circom: snarkjs did not run (" << got.output << "); run from the repository root after "
                   "scripts/setup.sh, or give --snarkjs-runs 0\n";
      return 1;
    }
    const auto answer = boost::json::parse(got.output).as_object();
    std::vector<double> ms;
    for (const auto& v : answer.at("ms").as_array()) ms.push_back(v.to_number<double>());
    snarkjs_ms = coprove::bench::median(ms);
    snarkjs_version = answer.at("snarkjs").as_string().c_str();
  }

  std::printf("%-34s %12s %14s\n", "prover", "ms/witness", "snarkjs/ours");
  std::printf("%-34s %12.1f %14s\n", "coprove prove_zkey (CPU, one)", cpu,
              snarkjs_ms > 0 ? std::to_string(snarkjs_ms / cpu).substr(0, 6).c_str() : "-");
  const std::string engine_label = "coprove engine (" + backend_used + ", batch " + std::to_string(batch) + ")";
  std::printf("%-34s %12.1f %14s   %.1f proofs/s\n", engine_label.c_str(), per_witness,
              snarkjs_ms > 0 ? std::to_string(snarkjs_ms / per_witness).substr(0, 6).c_str() : "-",
              1e3 / per_witness);
  if (snarkjs_ms > 0) std::printf("%-34s %12.1f %14s\n", ("snarkjs " + snarkjs_version).c_str(), snarkjs_ms, "1");

  if (!json_path.empty()) {
    boost::json::object row{{"zkey", zkey_path},
                            {"signals", key->num_variables()},
                            {"log_domain", key->domain().log_size()},
                            {"threads", coprove::field::parallelism()},
                            {"cpu_prove_zkey_ms", cpu},
                            {"engine_backend", backend_used},
                            {"engine_batch", batch},
                            {"engine_ms_per_witness", per_witness},
                            {"engine_proofs_per_s", 1e3 / per_witness}};
    if (snarkjs_ms > 0) {
      row["snarkjs_version"] = snarkjs_version;
      row["snarkjs_ms"] = snarkjs_ms;
      row["ratio_snarkjs_over_cpu"] = snarkjs_ms / cpu;
      row["ratio_snarkjs_over_engine"] = snarkjs_ms / per_witness;
    }
    if (!coprove::bench::write_json_file(json_path, row, "bench_circom")) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_circom: " << e.what() << "\n";
    return 1;
  }
}
