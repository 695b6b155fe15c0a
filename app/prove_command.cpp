// `coprove prove`: proves circom witnesses with a snarkjs zkey through the engine (one partition a
// witness, the same pinned, semaphore-paced pipeline as `run`), and writes, for each NAME.wtns,
// DIR/NAME.proof.json and DIR/NAME.public.json as snarkjs writes them. Every proof is verified
// with the zkey's verifying key before it is written; with --r1cs each witness is checked against
// the constraints first, and one that does not satisfy them is not proved. Each witness is its own
// job: one that cannot be read, breaks a constraint or whose proof does not verify is named with
// the reason and writes nothing, the others are proved and written, and the exit status is 1.
#include "backend.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "zkey_circuits.hpp"

#include "config.hpp"
#include <coprove/engine/engine.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>
#include <coprove/r1cs/circom_witness.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/spin_runner.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

namespace coprove::app {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

const std::vector<extra_flag> prove_flags = {
    {"zkey", "PATH", "the circuit's snarkjs Groth16 proving key (BLS12-381: circom --prime bls12381)"},
    {"witness", "PATH", "a witness (.wtns) to prove; repeatable, and further witnesses may follow as arguments"},
    {"out", "DIR", "where NAME.proof.json and NAME.public.json go, for each NAME.wtns"},
    {"r1cs", "PATH", "the circuit's .r1cs: each witness is checked against its constraints before proving"},
    {"json", "PATH", "write the report, with every proof, as JSON"},
    {"progress", "MODE", "auto (an updating line on a terminal, a line per step otherwise), line, plain or none"},
};

// A witness file's way through the command: read, checked, proved as its own job, written.
struct witness_outcome {
  std::string path;
  std::string name;                  ///< NAME of NAME.wtns: the proof files' names
  std::optional<std::uint64_t> job;  ///< set once submitted
  std::error_code error;             ///< the job's
  engine::prove_result result;
  std::string failure;  ///< why it was not proved (empty: not failed)
};

void write_json(const std::filesystem::path& path, const json::value& value) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << json::serialize(value) << "\n";
  if (!out) throw std::runtime_error("cannot write '" + path.string() + "'");
}

}  // namespace

int prove_command(const std::vector<std::string>& args) {
  command_line cl = parse_command_line("prove", args, prove_flags, true, 1u << 20);
  if (cl.help) {
    std::cout << command_help("prove", "--zkey C.zkey --witness W1.wtns [W2.wtns ...] --out DIR [flags]",
                              prove_flags, true);
    return exit_ok;
  }
  const app::app_config& cfg = cl.config;
  const std::string zkey_path = cl.extra("zkey");
  const std::string out_dir = cl.extra("out");
  const std::string r1cs_path = cl.extra("r1cs");
  const std::string json_path = cl.extra("json");
  const std::string progress = cl.extra("progress", "auto");
  std::vector<std::string> witness_paths = cl.values("witness");
  witness_paths.insert(witness_paths.end(), cl.positional.begin(), cl.positional.end());
  if (zkey_path.empty()) throw usage_error("coprove prove: --zkey is required");
  if (out_dir.empty()) throw usage_error("coprove prove: --out is required");
  if (witness_paths.empty()) throw usage_error("coprove prove: give at least one --witness");
  if (progress != "auto" && progress != "line" && progress != "plain" && progress != "none")
    throw usage_error("coprove prove: --progress must be auto, line, plain or none, got '" + progress + "'");
  std::vector<std::string> names;
  for (const auto& p : witness_paths) {
    const std::string name = std::filesystem::path(p).stem().string();
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw usage_error("coprove prove: two witnesses are named '" + name + "': their proof files would collide");
    names.push_back(name);
  }
  init_logging(cfg);

  // A bad key (or r1cs) is refused before anything is proved, naming the file, the section and the
  // problem. A bad witness fails only itself: the others are still proved.
  std::shared_ptr<const groth16::zkey> key;
  std::optional<r1cs::circom_r1cs> constraints;
  try {
    const auto subgroup_test = key_subgroup_test(cfg);
    key = std::make_shared<const groth16::zkey>(groth16::read_zkey(zkey_path, subgroup_test ? &*subgroup_test : nullptr));
    if (!r1cs_path.empty()) {
      constraints = r1cs::circom_r1cs::read(r1cs_path);
      if (constraints->num_wires() != key->num_variables() || constraints->num_public() != key->num_public)
        throw usage_error("coprove prove: " + r1cs_path + " has " + std::to_string(constraints->num_wires()) +
                          " wires and " + std::to_string(constraints->num_public()) + " public signals, " + zkey_path +
                          " " + std::to_string(key->num_variables()) + " and " + std::to_string(key->num_public) +
                          ": not the same circuit");
    }
  } catch (const r1cs::circom_file_error& e) {
    throw usage_error(std::string("coprove prove: ") + e.what());
  }
  std::vector<witness_outcome> outcomes(witness_paths.size());
  auto fail = [&](witness_outcome& w, std::string reason) {
    std::cerr << "coprove prove: " << w.path << ": not proved: " << reason << "\n";
    w.failure = std::move(reason);
  };
  std::vector<std::vector<field::fr>> witnesses(witness_paths.size());
  for (std::size_t i = 0; i < witness_paths.size(); ++i) {
    witness_outcome& w = outcomes[i];
    w.path = witness_paths[i];
    w.name = names[i];
    try {
      witnesses[i] = r1cs::read_wtns(w.path, key->num_variables());
    } catch (const r1cs::circom_file_error& e) {
      // The message starts with the file's name, which the line names already.
      std::string reason = e.what();
      if (reason.rfind(w.path + ": ", 0) == 0) reason.erase(0, w.path.size() + 2);
      fail(w, std::move(reason));
      continue;
    }
    if (constraints) {
      if (const auto c = constraints->first_unsatisfied(witnesses[i]))
        fail(w, "the witness does not satisfy the circuit (constraint " + std::to_string(*c) + " of " + r1cs_path + ")");
    }
  }
  std::filesystem::create_directories(out_dir);

  asio::io_context io(1);
  engine::engine_config engine_cfg = app::effective_engine_config(cfg);
  const std::string circuit = std::filesystem::path(zkey_path).stem().string();
  engine_cfg.zkey_circuits = {{circuit, key}};
  plan_for_zkey_circuits(engine_cfg);
  std::unique_ptr<engine::engine> engine = make_engine(io.get_executor(), cfg, engine_cfg, "coprove prove");
  const auto& backend = engine->backend();
  std::cerr << "coprove prove: " << witness_paths.size() << " witness(es) of " << zkey_path << " ("
            << key->num_variables() << " signals, " << key->num_public << " public, domain 2^"
            << key->domain().log_size() << ") on the " << backend.name() << " backend (" << backend.device_count()
            << " device(s) x " << backend.worker_slots_per_device() << " slots)\n";

  // One job a witness, all submitted at once through the same pipeline: a witness that fails ends
  // its own job, never another's.
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    witness_outcome& w = outcomes[i];
    if (!w.failure.empty()) continue;
    engine::prove_request request;
    request.circuit = circuit;
    request.seed = cfg.workload.seed + i;
    // With --r1cs the witness is kept: a proof that fails is then explained against the constraints.
    request.witnesses = std::make_shared<const std::vector<std::vector<field::fr>>>(
        1, constraints ? witnesses[i] : std::move(witnesses[i]));
    try {
      w.job = engine->submit(request);
      ids.push_back(*w.job);
    } catch (const std::invalid_argument& e) {
      fail(w, e.what());
    }
  }

  bool finished = false;
  bool interrupted = false;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    interrupted = true;
    COPROVE_LOG(warning, "app") << "signal " << signal << ": cancelling the proofs";
    for (auto id : ids) engine->cancel(id);
  });
  const auto started = std::chrono::steady_clock::now();
  std::size_t open_jobs = ids.size();
  auto all_ended = [&]() -> asio::awaitable<void> {
    finished = true;
    co_await engine->async_shutdown(true, asio::use_awaitable);
    signals.cancel();
  };
  for (witness_outcome& w : outcomes) {
    if (!w.job) continue;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          auto [ec, r] = co_await engine->async_await(*w.job, asio::as_tuple(asio::use_awaitable));
          w.error = ec;
          w.result = std::move(r);
          if (ec == std::errc::operation_canceled) {
            w.failure = "cancelled";
          } else if (ec) {
            const auto status = engine->status(*w.job);
            if (constraints && ec == engine::engine_errc::verification_failed)
              fail(w, groth16::explain_failed_zkey_proof(*key, witnesses[&w - outcomes.data()], &*constraints));
            else
              fail(w, status && !status->error.empty() ? status->error : ec.message());
          }
          if (--open_jobs == 0) co_await all_ended();
        },
        [](std::exception_ptr e) {
          if (e) std::rethrow_exception(e);
        });
  }
  if (ids.empty()) asio::co_spawn(io, all_ended(), asio::detached);
  if (progress != "none") {
    const bool interactive = progress == "line" || (progress == "auto" && ::isatty(STDERR_FILENO));
    asio::co_spawn(io, show_progress(*engine, ids, ids.size(), interactive, finished), [](std::exception_ptr) {});
  }
  coprove::runtime::spin_stats spin_stats;
  coprove::runtime::run_spinning(io, coprove::runtime::default_spin_window, spin_stats,
                                 engine->backend().completion_source());
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::size_t written = 0, cancelled = 0;
  json::array results;
  for (witness_outcome& w : outcomes) {
    const engine::partition_result* proved = nullptr;
    if (w.failure.empty() && !w.result.partitions.empty() && w.result.partitions.front().proof &&
        w.result.partitions.front().verified)
      proved = &w.result.partitions.front();
    if (proved) {
      const std::filesystem::path base = std::filesystem::path(out_dir) / w.name;
      write_json(base.string() + ".proof.json", groth16::proof_to_snarkjs_json(*proved->proof));
      write_json(base.string() + ".public.json", groth16::public_inputs_to_snarkjs_json(proved->public_inputs));
      ++written;
    } else if (w.failure.empty()) {
      fail(w, "the engine returned no verified proof");
    }
    if (w.error == std::errc::operation_canceled) ++cancelled;
    json::object job = w.job ? w.result.to_json() : json::object{};
    job["witness"] = w.path;
    if (w.job) job["job_id"] = *w.job;
    job["state"] = proved ? "done" : w.error == std::errc::operation_canceled ? "cancelled" : "failed";
    if (!proved) job["error"] = w.failure;
    results.push_back(std::move(job));
  }

  json::object report = engine->report_json();
  report["version"] = version();
  report["zkey"] = json::object{{"path", zkey_path},
                                {"signals", key->num_variables()},
                                {"public", key->num_public},
                                {"domain_size", key->domain_size()},
                                {"bytes", key->file_bytes}};
  report["partitions"] = outcomes.size();
  report["verified"] = written;
  report["failed"] = outcomes.size() - written - cancelled;
  report["cancelled"] = cancelled;
  report["wall_s"] = wall_s;
  report["results"] = std::move(results);
  std::cout << format_report(report, engine->plan().describe());
  for (const auto& w : outcomes)
    if (!w.failure.empty()) std::cout << "  not proved: " << w.path << ": " << w.failure << "\n";
  std::cout.flush();
  std::cerr << "coprove prove: " << written << " of " << outcomes.size() << " proofs verified with the key's vk and "
            << "written to " << out_dir;
  if (written < outcomes.size()) std::cerr << "; " << outcomes.size() - written << " witness(es) not proved (above)";
  std::cerr << " (check one with: snarkjs groth16 verify verification_key.json " << out_dir << "/NAME.public.json "
            << out_dir << "/NAME.proof.json)\n";
  if (!json_path.empty()) write_json(json_path, report);
  engine.reset();
  if (interrupted) return exit_interrupted;
  return written == outcomes.size() ? exit_ok : exit_failed;
}

}  // namespace coprove::app
