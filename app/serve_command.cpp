// `coprove serve`: the event-loop daemon. One io_context thread runs the engine's control state,
// the HTTP service and the signal handling. SIGINT/SIGTERM: stop accepting, then drain the
// running jobs within server.drain_seconds (or cancel them), a second signal cancels, a third
// exits at once (service::shutdown_sequence); then close the connections and exit 0. Proves with
// the keys of --keys directories, or the development key of the workload's circuit and size from
// the key cache, read on the engine's CPU executor (engine.key_loading: at start, or at a key's
// first job) so that it listens at once; POST /v1/keys loads more from server.key_roots.
// GET /v1/keys/{circuit}/{log}/vk serves their verifying keys. Every refusal at start exits 2
// naming the setting.
#include "backend.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "keys.hpp"
#include "zkey_circuits.hpp"

#include <coprove/r1cs/circuits.hpp>
#include "config.hpp"
#include <coprove/engine/engine.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/service/http_service.hpp>
#include <coprove/service/shutdown_sequence.hpp>
#include <coprove/runtime/input_file.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/spin_runner.hpp>
#include <coprove/runtime/trace.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/system_error.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <mutex>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>

namespace coprove::app {

namespace asio = boost::asio;

namespace {

// A token file holds at most 4096 characters and the white space around them: one larger than this
// is not a token file, and is refused before it is read.
constexpr std::uint64_t max_token_file_bytes = 16 * 1024;

// The bearer token of server.auth_token_file: a regular file its owner alone may read, of at most
// 16 KiB, holding 16 to 4096 printable characters (white space around them ignored). Anything else
// is a configuration error.
std::string read_auth_token(const std::string& path) {
  const std::string where = "coprove serve: invalid configuration: server.auth_token_file: '" + path + "': ";
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw usage_error(where + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) throw usage_error(where + "not a regular file");
  if ((info.st_mode & 077) != 0)
    throw usage_error(where + "readable or writable by others than its owner (chmod 600 it)");
  std::string token;
  try {
    token = runtime::read_input_text(path, max_token_file_bytes, "token file");
  } catch (const runtime::input_file_error& e) {
    throw usage_error(where + e.why());
  }
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  token = first == std::string::npos ? std::string() : token.substr(first, last - first + 1);
  if (token.size() < 16 || token.size() > 4096)
    throw usage_error(where + "the token must be 16 to 4096 characters, got " + std::to_string(token.size()));
  for (char c : token)
    if (c < 0x21 || c > 0x7e) throw usage_error(where + "the token must be printable ASCII without spaces");
  return token;
}

// /run/coprove, made for the default socket when there is no $XDG_RUNTIME_DIR: its owner's alone.
void make_default_socket_directory(const std::string& socket_path) {
  const std::string dir = socket_path.substr(0, socket_path.rfind('/'));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw usage_error("coprove serve: invalid configuration: server.listen: the default socket directory " + dir +
                      " cannot be made (" + std::strerror(errno) +
                      "): set XDG_RUNTIME_DIR or server.listen (--listen unix:PATH)");
}

}  // namespace

int serve_command(const std::vector<std::string>& args) {
  const std::vector<extra_flag> flags = {
      {"trace", "PATH", "record a Chrome trace and write it here on shutdown"},
      {"keys", "DIR", "prove with the keys `coprove setup` wrote to DIR (repeatable, one circuit and size each); "
                      "without it, a development key for the workload's circuit and size from the key cache"},
  };
  const command_line cl = parse_command_line("serve", args, flags, true, 0);
  if (cl.help) {
    std::cout << command_help("serve", "[flags]", flags, true);
    return exit_ok;
  }
  const app::app_config& cfg = cl.config;
  const std::string trace_path = cl.extra("trace");
  if (cl.has("trace") && trace_path.empty()) throw usage_error("coprove serve: --trace needs a path");
  init_logging(cfg);

  service::http_service_config service_cfg;
  const std::string listen = cfg.server.listen.empty() ? service::default_listen_address() : cfg.server.listen;
  try {
    service_cfg.listen = service::parse_listen_address(listen);
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("coprove serve: invalid configuration: server.listen: ") + e.what());
  }
  if (cfg.server.listen.empty()) make_default_socket_directory(service_cfg.listen.path);
  service_cfg.allow_remote = cfg.server.allow_remote;
  if (!cfg.server.auth_token_file.empty()) service_cfg.auth_token = read_auth_token(cfg.server.auth_token_file);
  service_cfg.allowed_hosts = cfg.server.allowed_hosts;
  service_cfg.allowed_origins = cfg.server.allowed_origins;
  service_cfg.socket_mode = cfg.server.socket_mode;
  service_cfg.header_timeout_seconds = cfg.server.header_timeout_seconds;
  service_cfg.body_timeout_seconds = cfg.server.body_timeout_seconds;
  service_cfg.idle_timeout_seconds = cfg.server.idle_timeout_seconds;
  service_cfg.max_connections_per_peer = cfg.server.max_connections_per_peer;
  service_cfg.max_connections = cfg.server.max_connections;
  service_cfg.retry_after_seconds = cfg.server.retry_after_seconds;
  service_cfg.limits.max_body_bytes = cfg.server.max_body_bytes;
  service_cfg.limits.max_wait_seconds = cfg.server.max_wait_seconds;
  service_cfg.limits.max_partitions = cfg.engine.max_partitions_per_job;
  service_cfg.limits.min_log_constraints = r1cs::min_log_constraints;
  service_cfg.defaults.circuit = cfg.workload.circuit;
  service_cfg.defaults.log_constraints = cfg.workload.log_constraints;
  service_cfg.defaults.partitions = cfg.workload.partitions;
  service_cfg.defaults.seed = cfg.workload.seed;
  for (const std::string& root : cfg.server.key_roots) service_cfg.key_roots.emplace_back(root);

  // The keys are known at start from their key.json (and a check of their claims that reads a few
  // bytes of each file) and read with every check on the engine's CPU executor: at start with
  // engine.key_loading = preload, at the first job that needs one with on_demand. Nothing the size
  // of a key is read before the service listens.
  const std::vector<std::string> key_dirs = cl.values("keys");
  const auto subgroup_test = key_subgroup_test(cfg);
  const auto subgroup = subgroup_test ? std::make_shared<const groth16::bulk_subgroup_test>(*subgroup_test) : nullptr;
  std::vector<std::pair<std::string, engine::key_source>> known_keys;
  std::size_t known_key_bytes = 0;
  unsigned largest_key_log = 0;
  std::string largest_key_circuit;
  std::string key_list;
  const auto know = [&](const std::string& circuit, unsigned log, std::size_t inputs, std::size_t aux,
                        engine::key_source source) {
    const std::string id = circuit + "/" + std::to_string(log);
    for (const auto& [known, ignored] : known_keys)
      if (known == id) throw usage_error("coprove serve: --keys: two directories hold the key of " + id);
    known_key_bytes += groth16::proving_key::estimate_bytes(inputs, aux, std::size_t{1} << log);
    if (log > largest_key_log) {
      largest_key_log = log;
      largest_key_circuit = circuit;
    }
    key_list += (key_list.empty() ? "" : ", ") + id;
    std::cerr << "coprove serve: key " << id << " from " << source.name << "\n";
    known_keys.emplace_back(id, std::move(source));
  };
  for (const std::string& dir : key_dirs) {
    key_metadata m;
    try {
      m = read_key_metadata(dir);
      check_key_claim(dir, m);
    } catch (const std::exception& e) {
      throw usage_error(std::string("coprove serve: --keys: ") + e.what());
    }
    know(m.circuit, m.log_constraints, m.num_inputs, m.num_aux,
         {dir, [dir, m, subgroup] {
            key_set k = read_key_dir(dir, expected_key{m.circuit, m.log_constraints}, subgroup.get());
            return engine::loaded_key(engine::circuit_keys{k.circuit, k.log_constraints, k.pk, k.describe()});
          }});
  }
  // POST /v1/keys: a key directory (every check) or a snarkjs zkey, named under server.key_roots.
  service_cfg.key_loader = [subgroup](const std::filesystem::path& path) -> engine::key_source {
    return {path.string(), [path, subgroup] {
              if (path.extension() == ".zkey") {
                auto z = std::make_shared<const groth16::zkey>(groth16::read_zkey(path, subgroup.get()));
                return engine::loaded_key(engine::zkey_circuit{path.stem().string(), std::move(z)});
              }
              key_set k = read_key_dir(path, std::nullopt, subgroup.get());
              return engine::loaded_key(engine::circuit_keys{k.circuit, k.log_constraints, k.pk, k.describe()});
            }};
  };
  if (key_dirs.empty()) {
    // The development key of the workload's circuit and size, from the key cache (made there when
    // its first job comes, said loudly).
    const std::string circuit = cfg.workload.circuit;
    const unsigned log = cfg.workload.log_constraints;
    const auto shape = r1cs::make_circuit(circuit, log, 1, 0)->shape();
    const std::filesystem::path cache = cfg.key_cache_dir.empty() ? default_key_cache_dir()
                                                                  : std::filesystem::path(cfg.key_cache_dir);
    // A job that comes while it is preloaded loads it too: one at a time, so that the second reads
    // the key the first made instead of making another.
    auto one_at_a_time = std::make_shared<std::mutex>();
    know(circuit, log, shape.num_inputs, shape.num_aux,
         {"development key cache " + cache.string(), [circuit, log, cache, subgroup, one_at_a_time] {
            std::lock_guard lock(*one_at_a_time);
            key_set k = development_keys(circuit, log, cache, subgroup.get());
            return engine::loaded_key(engine::circuit_keys{k.circuit, k.log_constraints, k.pk, k.describe()});
          }});
  }

  asio::io_context io(1);
  engine::engine_config engine_cfg = app::effective_engine_config(cfg);
  engine_cfg.trace = !trace_path.empty();
  engine_cfg.known_keys = std::move(known_keys);
  if (engine_cfg.key_memory_bytes == 0) engine_cfg.key_memory_bytes = std::max<std::size_t>(known_key_bytes, 1);
  engine_cfg.zkey_circuits =
      load_zkey_circuits(cfg.server.circuits, "serve", subgroup_test ? &*subgroup_test : nullptr);
  plan_for_zkey_circuits(engine_cfg);
  service_cfg.limits.max_witness_body_bytes = largest_witness_bytes(engine_cfg.zkey_circuits);
  // Job ids count up from the start time in milliseconds x 1000: a restart does not give an id
  // again (a run would have to submit over 1000 jobs a millisecond to catch up with the next
  // start), they read as the start time, and they stay below 2^53, exact as JSON numbers anywhere.
  const auto started_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  engine_cfg.first_job_id = static_cast<std::uint64_t>(started_ms) * 1000 + 1;
  engine_cfg.max_open_jobs = cfg.server.max_queued_jobs;
  engine_cfg.max_open_partitions = cfg.server.max_queued_partitions;
  engine_cfg.retention.max_jobs = cfg.server.result_retention_jobs;
  engine_cfg.retention.max_bytes = cfg.server.result_retention_bytes;
  engine_cfg.retention.max_age = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(cfg.server.result_retention_seconds));
  // The plan is sized for the largest circuit a key is for.
  if (largest_key_log > engine_cfg.max_log_constraints) {
    engine_cfg.max_log_constraints = largest_key_log;
    engine_cfg.plan_circuit = largest_key_circuit;
  }
  // The largest job the service takes is the one its memory plan is sized for.
  service_cfg.limits.max_log_constraints = engine_cfg.max_log_constraints;
  std::unique_ptr<engine::engine> engine = make_engine(io.get_executor(), cfg, engine_cfg, "coprove serve");
  // Listening only once the pool is warm: no request's partition page-locks memory on its way.
  (void)wait_for_warm_pool(*engine);

  std::unique_ptr<service::http_service> service;
  try {
    service = std::make_unique<service::http_service>(io.get_executor(), *engine, service_cfg);
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("coprove serve: ") + e.what());
  } catch (const std::system_error& e) {
    throw usage_error(std::string("coprove serve: invalid configuration: server.listen: ") + e.what());
  } catch (const boost::system::system_error& e) {
    throw usage_error(std::string("coprove serve: invalid configuration: server.listen: ") + e.what());
  }
  service->start();
  std::cout << "coprove serve: listening on " << service->local_address() << " (backend "
            << engine->backend().name() << ", keys for " << key_list << ", on shutdown " << (cfg.server.drain_on_shutdown ? "drain" : "cancel")
            << (service_cfg.auth_token.empty() ? "" : ", bearer token required") << ")"
            << std::endl;

  service::shutdown_policy policy;
  policy.drain = cfg.server.drain_on_shutdown;
  policy.drain_queued = cfg.server.drain_queued;
  policy.drain_seconds = cfg.server.drain_seconds;
  const std::string socket_path = service_cfg.listen.is_unix() ? service_cfg.listen.path : std::string();
  service::shutdown_sequence shutdown(
      io.get_executor(), *engine, *service, policy, [&] { io.stop(); },
      [&] {
        // The third signal: nothing is waited for. The socket file goes, so that a restart does not
        // find it.
        if (!socket_path.empty()) ::unlink(socket_path.c_str());
        std::cout << "coprove serve: third signal: exiting without waiting for the jobs in flight" << std::endl;
        std::_Exit(exit_interrupted);
      });
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                              int signal) {
    if (ec) return;
    COPROVE_LOG(info, "app") << "signal " << signal << " (" << shutdown.signals() + 1 << " so far)";
    shutdown.signal();
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);

  // Spin briefly after each handler before blocking, polling the backend's completion bridges
  // meanwhile: a GPU completion that arrives during a burst then resumes its coroutine on this
  // thread, with neither the ~7 us wake-up of a sleeping io thread nor a hop from the bridge's.
  coprove::runtime::spin_stats spin_stats;
  coprove::runtime::run_spinning(io, coprove::runtime::default_spin_window, spin_stats,
                                 engine->backend().completion_source());

  if (!trace_path.empty()) {
    if (auto* trace = engine->trace()) trace->write(trace_path);
  }
  const auto served = service->requests_served();
  service.reset();
  engine.reset();
  COPROVE_LOG(info, "app") << "stopped after " << served << " request(s)";
  std::cout << "coprove serve: stopped" << (shutdown.signals() > 0 ? "" : " (event loop ended)") << std::endl;
  return exit_ok;
}

}  // namespace coprove::app
