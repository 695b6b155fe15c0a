// `coprove run`: proves the workload's jobs with an engine on a single-threaded control io_context
// (keys from --keys directories, or the development key of the workload from the key cache), shows
// progress, checks every partition's proof again itself (one batched pairing check), prints the
// report and writes it (with every proof) as JSON, the proofs in snarkjs's JSON and the Chrome
// trace when asked.
#include "backend.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "progress.hpp"
#include "report.hpp"

#include "config.hpp"
#include "engine_keys.hpp"
#include <coprove/engine/engine.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/spin_runner.hpp>
#include <coprove/runtime/trace.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace coprove::app {
using r1cs::circuit;


namespace asio = boost::asio;
namespace json = boost::json;

namespace {

const std::vector<extra_flag> run_flags = {
    {"json", "PATH", "write the report, with every proof, as JSON (check it with coprove verify --vk)"},
    {"keys", "DIR", "prove with the keys `coprove setup` wrote to DIR (repeatable); without it, a development key "
                    "from the key cache (keys.cache_dir), made there on first use"},
    {"snarkjs", "DIR", "also write vk.json and proof_J_P.json / public_J_P.json per partition for snarkjs"},
    {"trace", "PATH", "write a Chrome trace of every stage (open in https://ui.perfetto.dev)"},
    {"progress", "MODE", "auto (an updating line on a terminal, a line per step otherwise), line, plain or none"},
};

struct job_outcome {
  std::uint64_t id = 0;
  std::error_code error;
  std::string message;
  engine::prove_result result;
};

// Writes vk.json and, per proved partition, proof_J_P.json and public_J_P.json into dir.
std::size_t write_snarkjs_files(const std::filesystem::path& dir, const groth16::verifying_key& vk,
                                const std::vector<job_outcome>& outcomes) {
  std::filesystem::create_directories(dir);
  groth16::write_verifying_key_json(vk, dir / "vk.json");
  std::size_t written = 0;
  auto write = [](const std::filesystem::path& path, const json::value& value) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << json::serialize(value) << "\n";
    if (!out) throw std::runtime_error("cannot write '" + path.string() + "'");
  };
  for (const auto& outcome : outcomes) {
    for (const auto& p : outcome.result.partitions) {
      if (!p.proof) continue;
      const std::string suffix = std::to_string(outcome.id) + "_" + std::to_string(p.index) + ".json";
      write(dir / ("proof_" + suffix), groth16::proof_to_snarkjs_json(*p.proof));
      write(dir / ("public_" + suffix), groth16::public_inputs_to_snarkjs_json(p.public_inputs));
      ++written;
    }
  }
  return written;
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  command_line cl = parse_command_line("run", args, run_flags, true, 0);
  if (cl.help) {
    std::cout << command_help("run", "[flags]", run_flags, true);
    return exit_ok;
  }
  const app::app_config& cfg = cl.config;
  const std::string json_path = cl.extra("json");
  const std::string trace_path = cl.extra("trace");
  const std::string progress = cl.extra("progress", "auto");
  if (progress != "auto" && progress != "line" && progress != "plain" && progress != "none") {
    throw usage_error("coprove run: --progress must be auto, line, plain or none, got '" + progress + "'");
  }
  if (cl.has("json") && json_path.empty()) throw usage_error("coprove run: --json needs a path");
  if (cl.has("trace") && trace_path.empty()) throw usage_error("coprove run: --trace needs a path");
  const std::string snarkjs_dir = cl.extra("snarkjs");
  if (cl.has("snarkjs") && snarkjs_dir.empty()) throw usage_error("coprove run: --snarkjs needs a directory");
  init_logging(cfg);

  const auto subgroup_test = key_subgroup_test(cfg);
  const engine_keys keys = load_engine_keys(cl.values("keys"), cfg.key_cache_dir, cfg.workload.circuit,
                                            cfg.workload.log_constraints, "run", true,
                                            subgroup_test ? &*subgroup_test : nullptr);
  for (std::size_t i = 0; i < keys.keys.size(); ++i)
    std::cerr << "coprove run: keys " << keys.keys[i].source << "\n";

  asio::io_context io(1);
  engine::engine_config engine_cfg = app::effective_engine_config(cfg);
  engine_cfg.trace = !trace_path.empty();
  engine_cfg.keys = keys.keys;
  std::unique_ptr<engine::engine> engine = make_engine(io.get_executor(), cfg, engine_cfg, "coprove run");

  const auto& backend = engine->backend();
  std::cerr << "coprove run: " << cfg.workload.jobs << " job(s) x " << cfg.workload.partitions << " partitions of "
            << cfg.workload.circuit << " 2^" << cfg.workload.log_constraints << " on the " << backend.name()
            << " backend (" << backend.device_count() << " device(s) x " << backend.worker_slots_per_device()
            << " slots), dispatch " << engine::to_string(engine_cfg.policy) << ", depth "
            << engine->depth_per_device() << " per device"
            << (engine_cfg.depth_per_device == 0 ? " to start (measured as partitions end)" : "") << "\n";

  // Warm before work: the first partition is admitted only once the pool holds the buffers the
  // depth needs, so that no partition page-locks memory on its way (the wait is its own line).
  const json::object warmup = wait_for_warm_pool(*engine);

  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < cfg.workload.jobs; ++i) {
    engine::prove_request request;
    request.circuit = cfg.workload.circuit;
    request.log_constraints = cfg.workload.log_constraints;
    request.partitions = cfg.workload.partitions;
    request.seed = cfg.workload.seed + i;
    try {
      ids.push_back(engine->submit(request));
    } catch (const std::invalid_argument& e) {
      throw usage_error(std::string("coprove run: invalid workload: ") + e.what());
    }
  }

  std::vector<job_outcome> outcomes;
  bool finished = false;
  bool interrupted = false;
  const bool interactive = progress == "line" || (progress == "auto" && ::isatty(STDERR_FILENO));
  const auto started = std::chrono::steady_clock::now();

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    interrupted = true;
    COPROVE_LOG(warning, "app") << "signal " << signal << ": cancelling the run";
    for (auto id : ids) engine->cancel(id);
  });

  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (auto id : ids) {
          auto [ec, result] = co_await engine->async_await(id, asio::as_tuple(asio::use_awaitable));
          job_outcome outcome;
          outcome.id = id;
          outcome.error = ec;
          if (ec) {
            const auto status = engine->status(id);
            outcome.message = status && !status->error.empty() ? status->error : ec.message();
          }
          outcome.result = std::move(result);
          outcomes.push_back(std::move(outcome));
        }
        finished = true;
        co_await engine->async_shutdown(true, asio::use_awaitable);
        signals.cancel();
      },
      [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
      });
  if (progress != "none") {
    asio::co_spawn(io, show_progress(*engine, ids, cfg.workload.jobs * cfg.workload.partitions, interactive, finished),
                   [](std::exception_ptr) {});
  }
  // Spin briefly after each handler before blocking, polling the backend's completion bridges
  // meanwhile: a GPU completion that arrives during a burst then resumes its coroutine on this
  // thread, with neither the ~7 us wake-up of a sleeping io thread nor a hop from the bridge's.
  coprove::runtime::spin_stats spin_stats;
  coprove::runtime::run_spinning(io, coprove::runtime::default_spin_window, spin_stats,
                                 engine->backend().completion_source());
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  // Every proof is checked here again with the workload's verifying key, all of them in one
  // batched pairing check (each alone only when that fails), as `coprove verify` would: the run
  // passes only if the proofs it reports verify.
  const std::size_t n = std::size_t{1} << cfg.workload.log_constraints;
  const groth16::verifying_key* vk = nullptr;
  std::string vk_sha256;
  for (std::size_t i = 0; i < keys.keys.size(); ++i)
    if (keys.keys[i].circuit == cfg.workload.circuit && keys.keys[i].log_constraints == cfg.workload.log_constraints) {
      vk = &keys.keys[i].pk->vk;
      vk_sha256 = keys.metadata[i].vk_sha256;
    }
  const auto pvk = groth16::prepared_verifying_key::from(*vk);
  std::vector<groth16::proof> proofs;
  std::vector<std::vector<field::fr>> inputs;
  for (const auto& outcome : outcomes)
    for (const auto& partition : outcome.result.partitions)
      if (partition.proof) {
        proofs.push_back(*partition.proof);
        inputs.push_back(partition.public_inputs);
      }
  const auto verify_start = std::chrono::steady_clock::now();
  auto randomness = groth16::secret_source::system();
  const groth16::batch_verification checked = groth16::verify_batch(pvk, proofs, inputs, randomness);
  const double verify_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - verify_start).count();
  std::size_t verified = 0;
  std::size_t mismatched = 0;
  json::array results;
  std::size_t cancelled = 0;
  std::size_t proof_index = 0;
  std::vector<std::string> rejected;
  for (const auto& outcome : outcomes) {
    std::size_t job_verified = 0;
    for (const auto& partition : outcome.result.partitions) {
      bool ok = false;
      if (partition.proof) {
        const auto& verdict = checked.verdicts[proof_index++];
        ok = verdict.accepted;
        if (!ok)
          rejected.push_back("job " + std::to_string(outcome.id) + " partition " + std::to_string(partition.index) +
                             ": " + verdict.reason);
      }
      if (ok) ++job_verified;
      if (ok != partition.verified) ++mismatched;
    }
    verified += job_verified;
    if (outcome.error == std::errc::operation_canceled) cancelled += cfg.workload.partitions - job_verified;
    json::object result = outcome.result.to_json();
    result["job_id"] = outcome.id;
    result["state"] = outcome.error ? (outcome.error == std::errc::operation_canceled ? "cancelled" : "failed") : "done";
    if (outcome.error) result["error"] = outcome.message;
    results.push_back(std::move(result));
  }
  const std::size_t requested = cfg.workload.jobs * cfg.workload.partitions;

  json::object report = engine->report_json();
  report["version"] = version();
  report["workload"] = json::object{{"circuit", cfg.workload.circuit},
                                    {"log_constraints", cfg.workload.log_constraints},
                                    {"domain_size", n},
                                    {"partitions", cfg.workload.partitions},
                                    {"jobs", cfg.workload.jobs},
                                    {"seed", cfg.workload.seed}};
  report["partitions"] = requested;
  report["verified"] = verified;
  report["failed"] = requested - verified - cancelled;
  report["cancelled"] = cancelled;
  report["engine_verified_mismatches"] = mismatched;
  report["proof_check"] = json::object{{"proofs", proofs.size()},
                                       {"accepted", verified},
                                       {"batched", !checked.checked_one_by_one},
                                       {"seconds", verify_s}};
  report["keys"] = keys.to_json();
  report["warmup"] = warmup;
  report["wall_s"] = wall_s;
  report["config"] = app::to_json(cfg);
  report["results"] = std::move(results);

  std::cout << format_report(report, engine->plan().describe());
  for (const auto& outcome : outcomes) {
    if (outcome.error) std::cout << "  job " << outcome.id << " did not finish: " << outcome.message << "\n";
  }
  for (const auto& line : rejected) std::cout << "  proof REJECTED: " << line << "\n";
  std::cout.flush();
  std::cerr << "coprove run: " << verified << " of " << proofs.size()
            << " partitions verified: proofs checked again with the verifying key (sha256 " << vk_sha256
            << ") in one batch, " << verify_s * 1e3 << " ms\n";

  if (!json_path.empty()) {
    std::ofstream out(json_path, std::ios::binary | std::ios::trunc);
    out << json::serialize(report) << "\n";
    if (!out) {
      std::cerr << "coprove run: cannot write the report to '" << json_path << "'\n";
      return exit_failed;
    }
    std::cerr << "coprove run: report written to " << json_path << "\n";
  }
  if (!snarkjs_dir.empty()) {
    try {
      const std::size_t written = write_snarkjs_files(snarkjs_dir, *vk, outcomes);
      std::cerr << "coprove run: vk.json and " << written << " proof/public pairs written to " << snarkjs_dir
                << " (check one with: snarkjs groth16 verify " << snarkjs_dir << "/vk.json " << snarkjs_dir
                << "/public_J_P.json " << snarkjs_dir << "/proof_J_P.json)\n";
    } catch (const std::exception& e) {
      std::cerr << "coprove run: --snarkjs: " << e.what() << "\n";
      return exit_failed;
    }
  }
  if (!trace_path.empty()) {
    if (auto* trace = engine->trace()) {
      trace->write(trace_path);
      std::cerr << "coprove run: trace of " << trace->size() << " events written to " << trace_path
                << (trace->dropped() ? " (" + std::to_string(trace->dropped()) + " dropped)" : std::string()) << "\n";
    }
  }
  engine.reset();

  if (interrupted) return exit_interrupted;
  const bool all_ok = verified == requested && mismatched == 0;
  if (!all_ok) {
    std::cerr << "coprove run: " << (requested - verified) << " of " << requested
              << " partitions did not produce a verifying proof\n";
    return exit_failed;
  }
  return exit_ok;
}

}  // namespace coprove::app
