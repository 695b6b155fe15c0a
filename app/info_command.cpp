// `coprove info`: the version, whether CUDA is compiled in, the backend `auto` picks here, the
// devices, and the memory plan the given configuration gets (the engine computes it exactly as
// `run` and `serve` would, then stops).
#include "backend.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "report.hpp"

#include "config.hpp"
#include <coprove/engine/engine.hpp>
#include <coprove/engine/memory_plan.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <iostream>
#include <sstream>

#ifndef COPROVE_VERSION
#define COPROVE_VERSION "unknown"
#endif

namespace coprove::app {

namespace asio = boost::asio;
namespace json = boost::json;

std::string version() { return COPROVE_VERSION; }

int info_command(const std::vector<std::string>& args) {
  const std::vector<extra_flag> flags = {{"json", "", "print the information as JSON"}};
  const command_line cl = parse_command_line("info", args, flags, true, 0);
  if (cl.help) {
    std::cout << command_help("info", "[flags]", flags, true);
    return exit_ok;
  }
  const app::app_config& cfg = cl.config;
  init_logging(cfg);

  json::object info{{"version", version()},
                    {"cuda_compiled_in", cuda_compiled_in()},
                    {"visible_gpus", visible_gpus()},
                    {"auto_backend", auto_backend_name()},
                    {"requested_backend", std::string(app::to_string(cfg.backend))}};

  asio::io_context io(1);
  std::unique_ptr<engine::engine> engine;
  std::string plan_text;
  std::string plan_error;
  {
    auto backend = make_backend(cfg);
    json::array devices;
    for (const auto& name : backend->device_names()) devices.push_back(json::value(name));
    info["backend"] = std::string(backend->name());
    info["devices"] = std::move(devices);
    info["worker_slots_per_device"] = backend->worker_slots_per_device();
    info["host_allocator"] = std::string(backend->make_host_allocator()->name());
    try {
      // The plan charges the workload's key at its estimated size; no key is made or loaded here.
      engine::engine_config engine_cfg = app::effective_engine_config(cfg);
      engine_cfg.planned_keys = {{cfg.workload.circuit, cfg.workload.log_constraints}};
      engine = std::make_unique<engine::engine>(io.get_executor(), engine_cfg, std::move(backend));
      info["memory_plan"] = engine->plan().to_json();
      info["dispatch_depth_per_device"] = engine->depth_per_device();
      plan_text = engine->plan().describe();
    } catch (const engine::memory_plan_error& e) {
      info["memory_plan"] = e.plan().to_json();
      info["memory_plan_error"] = e.what();
      plan_text = e.plan().describe();
      plan_error = e.what();
    } catch (const std::invalid_argument& e) {
      throw usage_error(std::string("coprove info: invalid configuration: ") + e.what());
    }
  }
  if (engine) {
    engine->async_shutdown(false, [](std::error_code) {});
    io.run();
    engine.reset();
  }

  if (cl.has("json")) {
    std::cout << json::serialize(info) << "\n";
  } else {
    std::cout << "coprove " << version() << "\n"
              << "  build          CUDA backend " << (cuda_compiled_in() ? "compiled in" : "not compiled in") << "\n"
              << "  GPUs visible   " << visible_gpus() << "\n"
              << "  auto picks     " << auto_backend_name() << "\n"
              << "  backend        " << json::value_to<std::string>(info["backend"]) << " ("
              << json::serialize(info["devices"]) << ", " << json::serialize(info["worker_slots_per_device"])
              << " worker slots each, host buffers " << json::value_to<std::string>(info["host_allocator"]) << ")\n"
              << "  workload       " << cfg.workload.circuit << " 2^" << cfg.workload.log_constraints << " x "
              << cfg.workload.partitions << " partitions\n"
              << "  memory plan" << (plan_error.empty() ? "" : " (DOES NOT FIT)") << "\n";
    std::istringstream lines(plan_text);
    for (std::string line; std::getline(lines, line);) std::cout << "    " << line << "\n";
  }
  if (!plan_error.empty()) {
    std::cerr << "coprove info: the memory plan does not fit: " << plan_error << "\n";
    return exit_usage;
  }
  return exit_ok;
}

}  // namespace coprove::app
