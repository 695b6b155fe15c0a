// Backend selection for the coprove binary. The only place outside tests and benchmarks that
// names a concrete backend.
#include "backend.hpp"

#include "cli.hpp"

#include <coprove/engine/host_backend.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/metrics.hpp>

#include <cctype>
#include <chrono>
#include <string>
#include <utility>

#ifdef COPROVE_HAVE_CUDA
#include <coprove/cuda/cuda_backend.hpp>
#include <coprove/cuda/subgroup.hpp>
#endif

namespace coprove::app {
using engine::engine_config;


bool cuda_compiled_in() noexcept {
#ifdef COPROVE_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::size_t visible_gpus() noexcept {
#ifdef COPROVE_HAVE_CUDA
  return cuda::cuda_device_count();
#else
  return 0;
#endif
}

std::string auto_backend_name() { return visible_gpus() > 0 ? "cuda" : "host"; }

namespace {

// Throws usage_error when backend "cuda" was asked for and this build or machine cannot give it.
void require_cuda() {
  if (!cuda_compiled_in()) {
    throw usage_error(
        "backend \"cuda\" was requested but this build has no CUDA backend (rebuild with COPROVE_WITH_CUDA=ON)");
  }
  if (visible_gpus() == 0) {
    throw usage_error("backend \"cuda\" was requested but no GPU is visible (no driver or no device); "
                      "use --backend host to run on the CPU");
  }
}

std::unique_ptr<engine::compute_backend> make_cuda(const app::app_config& config) {
#ifdef COPROVE_HAVE_CUDA
  try {
    return cuda::make_cuda_backend(config.devices, config.slots_per_device, config.bridge, 0, config.msm_copies,
                                   config.msm_window_bits);
  } catch (const std::exception& e) {
    throw usage_error(std::string("cannot use the CUDA backend: ") + e.what());
  }
#else
  (void)config;
  throw usage_error("this build has no CUDA backend (configured with COPROVE_WITH_CUDA=OFF or without nvcc)");
#endif
}

}  // namespace

std::optional<groth16::bulk_subgroup_test> key_subgroup_test(const app::app_config& config) {
  // A "cuda" that cannot be had is refused here, before minutes of loading keys, as make_backend
  // would refuse it after.
  if (config.backend == app::backend_choice::cuda) require_cuda();
  const bool on_gpu = config.backend == app::backend_choice::cuda ||
                      (config.backend == app::backend_choice::automatic && visible_gpus() > 0);
  if (!on_gpu) return std::nullopt;
#ifdef COPROVE_HAVE_CUDA
  const int device = config.devices.empty() ? 0 : static_cast<int>(config.devices.front());
  COPROVE_LOG(info, "app") << "proving keys: the subgroup tests of their points run on CUDA device " << device;
  return groth16::bulk_subgroup_test{
      "CUDA device " + std::to_string(device),
      [device](std::span<const field::g1_affine> p) { return cuda::first_outside_subgroup(p, device); },
      [device](std::span<const field::g2_affine> p) { return cuda::first_outside_subgroup(p, device); }};
#else
  return std::nullopt;
#endif
}

std::unique_ptr<engine::compute_backend> make_backend(const app::app_config& config) {
  using app::backend_choice;
  switch (config.backend) {
    case backend_choice::cuda:
      require_cuda();
      return make_cuda(config);
    case backend_choice::automatic:
      if (visible_gpus() > 0) return make_cuda(config);
      if (!config.devices.empty()) {
        throw usage_error("CUDA devices were listed (devices) but no GPU is visible" +
                          std::string(cuda_compiled_in() ? "" : " (this build has no CUDA backend)"));
      }
      runtime::registry::global()
          .get_counter("coprove_backend_cpu_fallback_total",
                       "Times backend auto found no GPU and used the CPU backend")
          .inc();
      runtime::warn_once("backend.auto.cpu", "app",
                         std::string("no GPU found: running on the CPU backend") +
                             (cuda_compiled_in() ? " (no CUDA device is visible)" : " (this build has no CUDA backend)") +
                             "; pass --backend host to choose it explicitly");
      [[fallthrough]];
    case backend_choice::host:
      if (config.msm_copies > 1 || config.msm_window_bits != 0)
        runtime::warn_once("backend.host.msm_copies", "app",
                           "msm_copies and msm_window_bits shape the CUDA backend's MSMs; the CPU backend keeps "
                           "one copy of each proving key and chooses its own windows");
      return engine::make_host_backend(config.host_devices, config.slots_per_device, config.host_threads);
  }
  throw usage_error("unknown backend");
}

namespace {

// The engine names its own fields (engine_config.x); a user sets configuration keys. Each field the
// engine can refuse is named by the key (or flag) that sets it.
std::string with_configuration_keys(std::string message) {
  static constexpr std::pair<std::string_view, std::string_view> keys[] = {
      {"engine_config.max_log_constraints", "engine.max_log_constraints"},
      {"engine_config.max_partitions_per_job", "engine.max_partitions_per_job"},
      {"engine_config.poll_interval", "engine.poll_interval_ms"},
      {"engine_config.poll_queue_limit", "engine.poll_queue_limit"},
      {"engine_config.prewarm_partitions", "engine.prewarm_partitions"},
      {"engine_config.trace_max_events", "engine.trace_max_events"},
      {"engine_config.max_open_jobs", "server.max_queued_jobs"},
      {"engine_config.max_open_partitions", "server.max_queued_partitions"},
      {"engine_config.zkey_circuits", "server.circuits"},
      {"engine_config.planned_keys", "--keys"},
      {"engine_config.keys", "--keys"},
  };
  for (const auto& [field, key] : keys) {
    for (std::size_t at = message.find(field); at != std::string::npos; at = message.find(field, at + key.size())) {
      const std::size_t end = at + field.size();
      if (end < message.size() && (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_')) continue;
      message.replace(at, field.size(), key);
    }
  }
  return message;
}

}  // namespace

std::unique_ptr<engine::engine> make_engine(boost::asio::any_io_executor control, const app::app_config& config,
                                            const engine::engine_config& engine_config, std::string_view command) {
  auto backend = make_backend(config);
  try {
    return std::make_unique<engine::engine>(std::move(control), engine_config, std::move(backend));
  } catch (const engine::memory_plan_error&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string(command) + ": invalid configuration: " + with_configuration_keys(e.what()));
  }
}

boost::json::object wait_for_warm_pool(engine::engine& engine) {
  const auto start = std::chrono::steady_clock::now();
  engine.wait_for_prewarm();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const pinned::pool_stats pool = engine.status_snapshot().pinned_pool;
  COPROVE_LOG(info, "app") << "pinned pool warm: " << pool.allocations << " buffers (" << pool.bytes_allocated
                           << " bytes) after waiting " << waited * 1e3 << " ms";
  return {{"pinned_pool_s", waited}, {"pinned_buffers", pool.allocations}, {"pinned_bytes", pool.bytes_allocated}};
}

}  // namespace coprove::app
