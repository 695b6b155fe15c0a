// `coprove serve`: the event-loop daemon. One io_context thread runs the engine's control state,
// the HTTP service and the signal handling. SIGINT/SIGTERM: stop accepting, then drain (or cancel)
// the jobs in flight, close the connections and exit 0. Proves with the keys of --keys directories
// (loaded at start, charged in the memory plan), or the development key of the workload's circuit
// and size from the key cache; GET /v1/keys/{circuit}/{log_constraints}/vk serves their verifying
// keys.
#include "backend.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "engine_keys.hpp"
#include "zkey_circuits.hpp"

#include <coprove/r1cs/circuits.hpp>
#include "config.hpp"
#include <coprove/engine/engine.hpp>
#include <coprove/service/http_service.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/spin_runner.hpp>
#include <coprove/runtime/trace.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/system_error.hpp>

#include <csignal>
#include <iostream>

namespace coprove::app {

namespace asio = boost::asio;

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
  try {
    service_cfg.listen = service::parse_listen_address(cfg.server.listen);
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("coprove serve: invalid configuration: server.listen: ") + e.what());
  }
  service_cfg.allow_remote = cfg.server.allow_remote;
  service_cfg.max_connections = cfg.server.max_connections;
  service_cfg.limits.max_body_bytes = cfg.server.max_body_bytes;
  service_cfg.limits.max_wait_seconds = cfg.server.max_wait_seconds;
  service_cfg.limits.max_partitions = cfg.engine.max_partitions_per_job;
  service_cfg.limits.min_log_constraints = 1;
  service_cfg.limits.max_log_constraints = r1cs::max_log_constraints;
  service_cfg.defaults.circuit = cfg.workload.circuit;
  service_cfg.defaults.log_constraints = cfg.workload.log_constraints;
  service_cfg.defaults.partitions = cfg.workload.partitions;
  service_cfg.defaults.seed = cfg.workload.seed;

  const std::vector<std::string> key_dirs = cl.values("keys");
  const engine_keys keys = load_engine_keys(key_dirs, cfg.key_cache_dir, cfg.workload.circuit,
                                            cfg.workload.log_constraints, "serve", key_dirs.empty());
  std::string key_list;
  for (const auto& k : keys.keys) {
    key_list += (key_list.empty() ? "" : ", ") + k.circuit + "/" + std::to_string(k.log_constraints);
    std::cerr << "coprove serve: keys " << k.source << "\n";
  }

  asio::io_context io(1);
  engine::engine_config engine_cfg = app::effective_engine_config(cfg);
  engine_cfg.trace = !trace_path.empty();
  engine_cfg.keys = keys.keys;
  engine_cfg.zkey_circuits = load_zkey_circuits(cfg.server.circuits, "serve");
  plan_for_zkey_circuits(engine_cfg);
  service_cfg.limits.max_witness_body_bytes = largest_witness_bytes(engine_cfg.zkey_circuits);
  // The plan is sized for the largest circuit a key is for.
  for (const auto& k : keys.keys) {
    if (k.log_constraints > engine_cfg.max_log_constraints) {
      engine_cfg.max_log_constraints = k.log_constraints;
      engine_cfg.plan_circuit = k.circuit;
    }
  }
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
            << engine->backend().name() << ", keys for " << key_list << ", on shutdown " << (cfg.server.drain_on_shutdown ? "drain" : "cancel") << ")"
            << std::endl;

  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer grace(io);
  bool shutting_down = false;
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    shutting_down = true;
    COPROVE_LOG(info, "app") << "signal " << signal << ": no longer accepting; "
                             << (cfg.server.drain_on_shutdown ? "draining" : "cancelling") << " the jobs in flight";
    service->stop_accepting();
    engine->async_shutdown(cfg.server.drain_on_shutdown, [&](std::error_code shutdown_ec) {
      if (shutdown_ec) {
        COPROVE_LOG(warning, "app") << "engine shutdown: " << shutdown_ec.message();
      }
      // Responses to requests that were waiting on the jobs are written now; give them a moment
      // before closing every connection.
      grace.expires_after(std::chrono::milliseconds(200));
      grace.async_wait([&](const boost::system::error_code&) {
        service->close_connections();
        io.stop();
      });
    });
  });
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
  std::cout << "coprove serve: stopped" << (shutting_down ? "" : " (event loop ended)") << std::endl;
  return exit_ok;
}

}  // namespace coprove::app
