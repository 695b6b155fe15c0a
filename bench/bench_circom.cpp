// Proving circom witnesses with a snarkjs zkey: the time per witness of coprove (prove_zkey on the
// CPU alone, and a batch through the engine on the chosen backend, proofs/s) beside
// `snarkjs groth16 prove` on the same zkey and witness in the same run (bench/snarkjs_prove.mjs,
// in-process, start-up left out), and the ratio, one group of rows a circuit: the Poseidon chain
// (2^12), SHA-256 of one block (2^15) and, once made, of two blocks (2^16) and of as many blocks as
// fill 2^16..2^20 (sha256_2e16..sha256_2e20, keyed by `coprove setup --r1cs`). Every proof is verified
// (ours with the zkey's vk, snarkjs's by snarkjs). Run from the repository root (the circuits'
// files are its fixtures, made by scripts/make_circom_fixtures.sh); prints a table and, with
// --json PATH, writes the rows.
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
#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace groth16 = coprove::groth16;
namespace engine = coprove::engine;
using coprove::field::fr;

/// A circuit to measure: its zkey and witnesses.
struct circuit_files {
  std::string name;
  std::string zkey;
  std::vector<std::string> witnesses;
  bool given = false;  ///< by --zkey (its --witness flags follow), not a fixture's name
};

/// The fixtures: NAME.zkey with NAME_1.wtns and NAME_2.wtns, in tests/data/circom (committed) or
/// build/circom-fixtures (made there, too large to commit).
std::optional<circuit_files> find_fixture(const std::string& name) {
  for (const std::string dir : {"tests/data/circom/", "build/circom-fixtures/"}) {
    circuit_files c{name, dir + name + ".zkey", {dir + name + "_1.wtns", dir + name + "_2.wtns"}, false};
    if (std::filesystem::exists(c.zkey) && std::filesystem::exists(c.witnesses[0]) &&
        std::filesystem::exists(c.witnesses[1]))
      return c;
  }
  return std::nullopt;
}

/// The fixtures measured when no circuit is named.
const std::vector<std::string> fixture_names = {"poseidon_chain", "sha256_block", "sha256_2block"};
/// The large SHA-256 circuits, measured only when named.
const std::vector<std::string> large_fixture_names = {"sha256_2e16", "sha256_2e17", "sha256_2e18", "sha256_2e19",
                                                      "sha256_2e20"};

/// The make_circom_fixtures.sh set that makes a fixture.
std::string fixture_set(const std::string& name) {
  if (name == "sha256_2block") return "sha256x2";
  if (name == "sha256_block") return "sha256";
  if (name == "poseidon_chain") return "small";
  return name;
}

struct options {
  std::size_t batch = 16, runs = 3, snarkjs_runs = 3;
  std::string backend_name, node = "node";
};

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

/// The fraction of the witness's values that are 0 or 1 (the MSMs' cheap scalars).
double zero_one_fraction(const std::vector<std::vector<fr>>& witnesses) {
  std::size_t bits = 0, all = 0;
  for (const auto& w : witnesses) {
    for (const fr& v : w) bits += v.is_zero() || v == fr::one();
    all += w.size();
  }
  return all == 0 ? 0.0 : static_cast<double>(bits) / static_cast<double>(all);
}

/// Measures one circuit, prints its rows and returns them as JSON; throws when a proof fails.
boost::json::object measure(const circuit_files& circuit, const options& opt) {
  const auto key = std::make_shared<const groth16::zkey>(groth16::read_zkey(circuit.zkey));
  std::vector<std::vector<fr>> witnesses;
  for (const auto& p : circuit.witnesses) witnesses.push_back(coprove::r1cs::read_wtns(p, key->num_variables()));
  const auto pvk = groth16::prepared_verifying_key::from(key->pk.vk);
  const double bits = zero_one_fraction(witnesses);
  std::printf("\n%s: %s (%zu signals, domain 2^%u, %.1f%% of the witness 0 or 1), %zu CPU threads\n",
              circuit.name.c_str(), circuit.zkey.c_str(), key->num_variables(), key->domain().log_size(), 100 * bits,
              coprove::field::parallelism());
  std::fflush(stdout);

  // coprove on the CPU alone: the SpMV, the odd-coset quotient, the proof and its verification.
  std::vector<double> cpu_ms;
  auto secrets = groth16::secret_source::system();
  for (std::size_t r = 0; r < opt.runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    (void)groth16::prove_zkey(*key, pvk, witnesses[r % witnesses.size()], secrets);
    cpu_ms.push_back(ms_since(start));
  }
  const double cpu = coprove::bench::median(cpu_ms);

  // A batch through the engine: one job, one partition a witness.
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  double engine_ms = 0, busy = 0;
  std::string backend_used;
  std::size_t verified = 0;
  std::string failure;
  {
    engine::engine_config cfg;
    cfg.max_log_constraints = std::max(16u, key->domain().log_size());
    cfg.zkey_circuits = {{"circuit", key}};
    engine::engine e(io.get_executor(), cfg, make_backend(opt.backend_name));
    backend_used = std::string(e.backend().name());
    engine::prove_request request;
    request.circuit = "circuit";
    auto batch_witnesses = std::make_shared<std::vector<std::vector<fr>>>();
    for (std::size_t i = 0; i < opt.batch; ++i) batch_witnesses->push_back(witnesses[i % witnesses.size()]);
    request.witnesses = batch_witnesses;
    const auto start = std::chrono::steady_clock::now();
    auto [ec, result] = e.async_prove(request, boost::asio::use_future).get();
    engine_ms = ms_since(start);
    busy = e.report_json().at("gpu_busy_fraction").to_number<double>();
    if (ec) failure = "the engine's job failed: " + ec.message();
    for (const auto& p : result.partitions) verified += p.verified && p.proof && groth16::verify(pvk, *p.proof, p.public_inputs);
  }
  guard.reset();
  io_thread.join();
  if (!failure.empty()) throw std::runtime_error(circuit.name + ": " + failure);
  if (verified != opt.batch)
    throw std::runtime_error(circuit.name + ": " + std::to_string(opt.batch - verified) + " of " +
                             std::to_string(opt.batch) + " engine proofs did not verify");
  const double per_witness = engine_ms / static_cast<double>(opt.batch);

  // snarkjs on the same zkey and witness.
  double snarkjs_ms = 0;
  std::string snarkjs_version;
  if (opt.snarkjs_runs > 0) {
    const auto got = run_command(opt.node + " bench/snarkjs_prove.mjs '" + circuit.zkey + "' '" +
                                 circuit.witnesses[0] + "' " + std::to_string(opt.snarkjs_runs));
    if (got.status != 0)
      throw std::runtime_error("snarkjs did not run (" + got.output +
                               "); run from the repository root after scripts/setup.sh, or give --snarkjs-runs 0");
    const auto answer = boost::json::parse(got.output).as_object();
    std::vector<double> ms;
    for (const auto& v : answer.at("ms").as_array()) ms.push_back(v.to_number<double>());
    snarkjs_ms = coprove::bench::median(ms);
    snarkjs_version = answer.at("snarkjs").as_string().c_str();
  }

  std::printf("%-34s %12s %14s\n", "prover", "ms/witness", "snarkjs/ours");
  std::printf("%-34s %12.1f %14s\n", "coprove prove_zkey (CPU, one)", cpu,
              snarkjs_ms > 0 ? std::to_string(snarkjs_ms / cpu).substr(0, 6).c_str() : "-");
  const std::string engine_label = "coprove engine (" + backend_used + ", batch " + std::to_string(opt.batch) + ")";
  std::printf("%-34s %12.1f %14s   %.2f proofs/s, device busy %.1f%%\n", engine_label.c_str(), per_witness,
              snarkjs_ms > 0 ? std::to_string(snarkjs_ms / per_witness).substr(0, 6).c_str() : "-",
              1e3 / per_witness, 100.0 * busy);
  if (snarkjs_ms > 0) std::printf("%-34s %12.1f %14s\n", ("snarkjs " + snarkjs_version).c_str(), snarkjs_ms, "1");
  std::fflush(stdout);

  boost::json::object row{{"circuit", circuit.name},
                          {"zkey", circuit.zkey},
                          {"signals", key->num_variables()},
                          {"log_domain", key->domain().log_size()},
                          {"witness_zero_one_fraction", bits},
                          {"threads", coprove::field::parallelism()},
                          {"cpu_runs", opt.runs},
                          {"cpu_prove_zkey_ms", cpu},
                          {"engine_backend", backend_used},
                          {"engine_batch", opt.batch},
                          {"engine_ms_per_witness", per_witness},
                          {"engine_proofs_per_s", 1e3 / per_witness},
                          {"engine_device_busy_fraction", busy}};
  if (snarkjs_ms > 0) {
    row["snarkjs_version"] = snarkjs_version;
    row["snarkjs_runs"] = opt.snarkjs_runs;
    row["snarkjs_ms"] = snarkjs_ms;
    row["ratio_snarkjs_over_cpu"] = snarkjs_ms / cpu;
    row["ratio_snarkjs_over_engine"] = snarkjs_ms / per_witness;
  }
  return row;
}

int run(int argc, char** argv) {
  options opt;
  std::vector<circuit_files> circuits;
  std::string json_path;
  std::vector<std::string> known = fixture_names;
  known.insert(known.end(), large_fixture_names.begin(), large_fixture_names.end());
  std::string known_text;
  for (const auto& name : known) known_text += (known_text.empty() ? "" : ", ") + name;
  coprove::bench::options("bench_circom", "circom witnesses proved from a snarkjs zkey, beside snarkjs groth16 prove")
      .value("--circuit", "NAME",
             "a fixture, repeatable: poseidon_chain (2^12), sha256_block (2^15), sha256_2block (2^16), "
             "sha256_2eK for K = 16..20 (default: each of the first three whose files are there)",
             [&](const std::string& name) {
               if (std::find(known.begin(), known.end(), name) == known.end())
                 throw std::invalid_argument("expected one of " + known_text + ", got '" + name + "'");
               circuits.push_back({name, "", {}, false});  // its files are found after parsing
             })
      .value("--zkey", "PATH", "another circuit's key (its --witness files follow it)",
             [&](const std::string& path) {
               circuits.push_back({std::filesystem::path(path).stem().string(), path, {}, true});
             })
      .value("--witness", "PATH", "a witness of the --zkey before it, repeatable",
             [&](const std::string& path) {
               if (circuits.empty() || !circuits.back().given)
                 throw std::invalid_argument("follows the --zkey it belongs to");
               circuits.back().witnesses.push_back(path);
             })
      .number("--batch", opt.batch, "N", "witnesses (cycled) in the engine's job (default 16)", std::size_t{1},
              std::size_t{1} << 20)
      .number("--runs", opt.runs, "N", "CPU proofs timed (default 3)", std::size_t{1}, std::size_t{10000})
      .choice("--backend", opt.backend_name, {"host", "cuda"},
              "the engine's backend (default cuda where compiled in and a GPU is seen, else host)")
      .number("--snarkjs-runs", opt.snarkjs_runs, "N", "timed snarkjs proofs a circuit (default 3; 0 leaves snarkjs out)",
              std::size_t{0}, std::size_t{10000})
      .text("--node", opt.node, "PATH", "the node that runs snarkjs (default node)")
      .text("--json", json_path, "PATH", "write the rows as JSON")
      .note("Run from the repository root: the fixtures are tests/data/circom (scripts/make_circom_fixtures.sh).")
      .parse(argc, argv);
  for (auto& c : circuits) {
    if (c.given) continue;
    const auto found = find_fixture(c.name);
    if (!found) {
      std::cerr << "bench_circom: " << c.name << ".zkey and its witnesses are in neither tests/data/circom nor "
                << "build/circom-fixtures: make them with scripts/make_circom_fixtures.sh " << fixture_set(c.name)
                << "\n";
      return 1;
    }
    c = *found;
  }
  if (circuits.empty()) {
    for (const auto& name : fixture_names)
      if (const auto found = find_fixture(name)) circuits.push_back(*found);
    if (circuits.empty()) {
      std::cerr << "bench_circom: no circuit found: run from the repository root\n";
      return 1;
    }
  }
  for (const auto& c : circuits) {
    if (c.witnesses.empty()) {
      std::cerr << "bench_circom: " << c.zkey << " has no --witness\n";
      return 1;
    }
  }

  boost::json::array rows;
  for (const auto& c : circuits) rows.push_back(measure(c, opt));
  if (!json_path.empty() && !coprove::bench::write_json_file(json_path, boost::json::object{{"rows", rows}}, "bench_circom"))
    return 1;
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
