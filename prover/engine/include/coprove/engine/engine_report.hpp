// The engine's figures as typed structs: what status_snapshot() and report() return, read by the
// service, the binary and the benchmarks. JSON is made only at the edge, by the to_json functions
// here, whose keys are those of engine::status_json() and engine::report_json().
#pragma once

#include <coprove/engine/dispatch.hpp>
#include <coprove/engine/memory_plan.hpp>
#include <coprove/pinned/pool.hpp>
#include <coprove/r1cs/pce.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace coprove::engine {

/// A resource's units: how many there are and how many are free now.
struct resource_units {
  std::size_t capacity = 0;
  std::size_t available = 0;
};

/// What the admission depth is and what it came from.
struct depth_basis {
  std::string source = "configured";  ///< "configured" (engine.depth_per_device) or "measured"
  /// Per device, the most it may reach: the configured depth, or the smaller of what the CPU can
  /// use and what the memory plan allows (the plan is sized for it).
  std::size_t max = 0;
  std::string max_reason = "configured";  ///< "configured", "cpu" or "memory"
  /// Measured: the smoothed stage times a partition (ms), how many partitions were measured and
  /// the depth the formula asked for before the limits.
  double synthesis_ms = 0, device_ms = 0, after_device_ms = 0;
  std::uint64_t samples = 0;
  std::size_t wanted = 0;
  std::uint64_t changes = 0;  ///< times the measured depth changed
};

/// One circuit's constraint cache (PCE) file: "loaded" from the cache folder, "built" (and saved
/// there), or "off" (no cache folder: built in memory only); and how long the load or build took.
struct pce_cache_entry {
  std::string state;
  double seconds = 0;
  std::string file;  ///< empty when off
};

/// What limits throughput (see bottleneck.hpp).
struct bottleneck_report {
  std::string kind = "none";  ///< device, copies, key, synthesis, depth, memory or none
  std::string message;
};

/// The engine now: its devices, plan, pool, PCE cache, what admission holds and what is in flight.
struct engine_status {
  std::string backend;
  std::vector<std::string> devices;
  std::size_t worker_slots_per_device = 0;
  memory_plan plan;
  device_key_copies_choice device_keys;  ///< copies of each key's points on a device, and why
  pinned::pool_stats pinned_pool;
  r1cs::pce_policy pce_policy = r1cs::pce_policy::wait;
  r1cs::pce_stats pce;
  std::size_t pce_bytes = 0;
  resource_units gpu_slots;           ///< admission permits (depth x devices)
  resource_units memory_reservation;  ///< bytes of synthesis working set
  resource_units full_input_slots;    ///< partitions that may hold a, b and c at once (0: unlimited)
  struct dispatch_figures {
    dispatch_policy policy = dispatch_policy::semaphore;
    std::size_t depth = 0;
    std::size_t queued = 0, in_flight = 0, synthesizing = 0, gpu_queue = 0;
    std::size_t max_in_flight = 0, max_concurrent_synthesis = 0;
    depth_basis basis;
  } dispatch;
  std::string pce_cache_dir;  ///< empty: off
  std::map<std::string, pce_cache_entry> pce_cache;  ///< by circuit id
  bottleneck_report bottleneck;
  struct job_counts {
    std::size_t queued = 0, running = 0, finished = 0;
    std::size_t open_partitions = 0;  ///< partitions of the queued and running jobs
    std::size_t retained_bytes = 0;   ///< what the finished jobs kept hold (estimated)
    std::uint64_t expired = 0;        ///< finished jobs forgotten by the retention policy
  } jobs;
  std::size_t domains = 0;  ///< evaluation domains held, one per size proved
};

/// One stage's latency over the report window, in milliseconds.
struct stage_summary {
  std::uint64_t count = 0;
  double mean_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;
};

/// The cumulative run report since the engine started or reset_report().
struct engine_report {
  std::string backend;
  std::vector<std::string> devices;
  std::uint64_t verified = 0, failed = 0, cancelled = 0;  ///< partitions, by outcome
  std::uint64_t pinned_partitions = 0;                    ///< verified with every buffer pinned
  std::uint64_t jobs_done = 0, jobs_failed = 0, jobs_cancelled = 0;
  double elapsed_s = 0;  ///< first admission of the window to the last end (or now, while busy)
  double throughput_partitions_per_s = 0;
  device_key_copies_choice device_keys;  ///< copies of each key's points on a device, and why
  struct dispatch_figures {
    dispatch_policy policy = dispatch_policy::semaphore;
    std::size_t depth = 0, devices = 0;
    std::size_t max_in_flight = 0, max_concurrent_synthesis = 0, max_gpu_queue = 0;
    /// Worker slots gone idle behind a full depth, by cause (the depth, or synthesis).
    std::uint64_t starved_by_depth = 0, starved_by_synthesis = 0;
    depth_basis basis;
  } dispatch;
  pinned::pool_stats pinned_pool;
  r1cs::pce_policy pce_policy = r1cs::pce_policy::wait;
  r1cs::pce_stats pce;
  std::size_t pce_bytes = 0;
  std::string pce_cache_dir;  ///< empty: off
  std::map<std::string, pce_cache_entry> pce_cache;  ///< by circuit id
  struct synthesis_counts {
    std::uint64_t pce = 0, slow = 0, configured = 0, spmv_on_backend = 0, late_abc = 0;
  } syntheses;
  double gpu_busy_fraction = 0;  ///< the mean of the per-device fractions
  std::vector<double> gpu_busy_fraction_per_device;
  /// Seconds of the window in which a device made a proving key resident (its upload and the
  /// copies of its points; the slots waited and were not busy), the mean over devices.
  double key_residency_s = 0;
  double h2d_gb_per_s = 0;
  /// queue_wait, synthesis, gpu_queue, h2d, spmv, gpu_compute, d2h, evaluation, prove,
  /// proof_verify, total.
  std::map<std::string, stage_summary> stages;
  memory_plan plan;
  std::size_t synthesis_threads = 0, worker_slots_per_device = 0;
  bottleneck_report bottleneck;

  std::uint64_t partitions() const noexcept { return verified + failed + cancelled; }
};

boost::json::object to_json(const engine_status& status);
boost::json::object to_json(const engine_report& report);

}  // namespace coprove::engine
