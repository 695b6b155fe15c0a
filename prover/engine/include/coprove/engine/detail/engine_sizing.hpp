// The engine's sizing: from its configuration, its backend and the bytes of its keys to everything
// fixed at construction: the admission depth's limit and why, the memory plan (host and each
// device), the device key copies, lean inputs and the pinned pool's pre-warm. A pure function, so
// that each decision is tested without an engine; the engine applies the result (settles the
// backend's key copies, creates the pool and the semaphores, says it at info).
#pragma once

#include <coprove/engine/compute_backend.hpp>
#include <coprove/engine/detail/circuit_facts.hpp>
#include <coprove/engine/detail/depth_controller.hpp>
#include <coprove/engine/engine.hpp>
#include <coprove/engine/memory_plan.hpp>
#include <coprove/pinned/pool.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace coprove::engine::detail {

/// A proving key as a device holds it: for the device memory plan.
struct device_key_size {
  std::string name;  ///< "mimc/16" or a zkey circuit's name, as the refusal names it
  std::size_t bytes = 0;  ///< device_key_bytes: one copy of its points
  std::size_t domain_size = 0;
  std::size_t variables = 0;
};

/// The keys the plan charges: on the host (every key given or planned, summed) and on each device
/// (one entry a key, in the order the plan names them).
struct key_sizes {
  std::size_t host_bytes = 0;
  std::vector<device_key_size> device;
};

struct engine_sizing {
  std::size_t devices = 0, slots = 0, synthesis_threads = 0;
  std::size_t depth = 0;  ///< per device, at start (a measured depth starts at its most)
  std::size_t depth_max = 0;  ///< per device, the most it may reach
  std::string depth_max_reason = "configured";  ///< configured, cpu or memory
  std::optional<depth_limits> measured;  ///< set when the depth is measured, within these limits
  memory_plan plan;
  /// A partition leases one input vector (its assignment); b and c only on the slow path.
  bool lean_inputs = false;
  circuit_facts plan_facts;  ///< of engine_config::plan_circuit at max_log_constraints
  device_key_copies_choice key_copies;
  bool key_copies_auto = false;  ///< the backend left the copies to the plan: settle them
  bool key_copies_fallback = false;  ///< auto settled on fewer than the fastest (said at warning)
  std::vector<device_memory_plan> device_plans;  ///< one a device with memory of its own
  pinned::pool_config pool;  ///< capacity and pre-warm (the allocator and fallback are the engine's)

  std::size_t most_in_flight() const noexcept { return depth_max * devices; }
};

/// Refuses a configuration no engine runs with (std::invalid_argument naming the field): a null
/// backend or one without devices or slots, poll settings, trace size, job limits, the
/// synthesizer settings, the plan circuit and the first job id.
void check_config(const engine_config& cfg, const compute_backend* backend);

/// Sizes an engine (check_config first). Throws memory_plan_error when not even one partition a
/// device fits the budget, std::runtime_error naming the device when its memory does not hold the
/// keys and slots, and std::invalid_argument for prewarm_partitions beyond the most in flight.
engine_sizing size_engine(const engine_config& cfg, const compute_backend& backend, const key_sizes& keys);

}  // namespace coprove::engine::detail
