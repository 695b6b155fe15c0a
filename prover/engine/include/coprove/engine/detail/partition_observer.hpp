// The observer of the partition pipeline: called once per event (admitted, inputs leased,
// synthesized, on a worker, device done, ended, ...), it updates the report, the metrics and the
// trace together, so that the three cannot disagree. Events come from the control executor (one
// writer); the figures are atomics, so status and report readers on other threads read them as a
// snapshot without a lock (each figure on its own, not all of them as of one instant).
#pragma once

#include <coprove/engine/compute_backend.hpp>
#include <coprove/engine/detail/worker_pool.hpp>
#include <coprove/engine/dispatch.hpp>
#include <coprove/engine/engine.hpp>
#include <coprove/engine/engine_report.hpp>
#include <coprove/runtime/metrics.hpp>
#include <coprove/runtime/trace.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

namespace coprove::engine::detail {

/// A partition as the trace names it: its job, index and the dispatch lane it holds in flight.
struct partition_ref {
  std::uint64_t job = 0;
  std::size_t partition = 0;
  std::uint32_t lane = 0;
};

/// How a partition's a, b, c were made.
enum class synthesis_path { pce, slow, configured, witness };  // witness: a zkey circuit's, given

struct observer_config {
  std::string backend;
  std::vector<std::string> device_names;
  std::size_t slots_per_device = 1;
  dispatch_policy policy = dispatch_policy::semaphore;
  std::size_t depth_per_device = 1;  ///< the depth at start
  bool depth_measured = false;       ///< engine.depth_per_device unset: the engine measures it
  std::size_t synthesis_threads = 1;
  bool trace = false;
  std::size_t trace_max_events = 1 << 20;
};

class partition_observer {
 public:
  explicit partition_observer(observer_config cfg);
  ~partition_observer();
  partition_observer(const partition_observer&) = delete;
  partition_observer& operator=(const partition_observer&) = delete;

  // Events, on the control executor.
  void partitions_queued(std::size_t count);
  void partitions_dropped(std::size_t count);  ///< left the queue without being admitted
  /// Admitted: in flight from now; returns its dispatch lane (given back at partition_ended).
  std::uint32_t admitted();
  void memory_reserved(const partition_ref& p, std::uint64_t start, std::uint64_t end);
  void buffers_leased(const partition_ref& p, std::uint64_t start, std::uint64_t end);
  void synthesis_started();
  void synthesis_stopped();
  void late_abc_leased(const partition_ref& p, std::uint64_t start, std::uint64_t end);
  /// The synthesis that ran (`cpu_lane`: its thread's trace lane), and how.
  void synthesized(const partition_ref& p, std::uint32_t cpu_lane, std::uint64_t start, std::uint64_t end,
                   synthesis_path path, bool spmv_on_backend);
  void gpu_queued();
  void on_worker(const partition_ref& p, std::uint64_t queued, std::uint64_t acquired);
  void left_gpu_queue();
  void matrices_uploaded(const partition_ref& p, worker_ref w, std::uint64_t start, std::uint64_t end);
  void key_uploaded(const partition_ref& p, worker_ref w, std::uint64_t start, std::uint64_t end);
  void device_started(std::size_t device);
  void device_done(const partition_ref& p, worker_ref w, std::uint64_t started, std::uint64_t finished,
                   const quotient_timings& t);
  /// The proof made on the CPU (`cpu_lane`: its thread's trace lane) and then verified.
  void proved(const partition_ref& p, std::uint32_t cpu_lane, std::uint64_t start, std::uint64_t proved,
              std::uint64_t verified);
  /// A worker slot went idle while partitions waited behind a full depth: counted by cause.
  void slot_idle(worker_ref w);
  /// The partition gave everything back; `timings` null unless it verified.
  void partition_ended(const partition_ref& p, std::uint64_t admitted_at, std::uint64_t end,
                       std::uint64_t queue_wait_ns, const partition_timings* timings, bool is_pinned,
                       std::error_code failure);
  void job_ended(job_state state);
  /// The admission depth per device is now `depth` (the measured depth moved): the report, the
  /// idle-slot warning and coprove_engine_dispatch_depth follow it. Any thread.
  void set_depth(std::size_t depth);
  /// coprove_engine_bottleneck{kind}: 1 for `kind`, 0 for the others. Any thread.
  void set_bottleneck(const std::string& kind) const;

  /// The trace lane of the calling synthesis thread (0 without a trace). Any thread.
  std::uint32_t synthesis_lane();

  // Readers, any thread.
  std::size_t queued() const noexcept { return queued_.load(std::memory_order_relaxed); }
  const high_water_counter& in_flight() const noexcept { return in_flight_; }
  const high_water_counter& synthesizing() const noexcept { return synthesizing_; }
  const high_water_counter& gpu_queue() const noexcept { return gpu_queue_; }
  /// Fills the observer's part of the report (all but pool, PCE and plan, which the caller fills
  /// first) and sets the gauges derived from it (throughput, GPU busy, H2D rate, pool reuse).
  void fill(engine_report& report) const;
  /// Forgets the window, counts, maxima and histograms (not atomic with respect to events that
  /// happen meanwhile).
  void reset();
  runtime::trace_writer* trace() noexcept { return trace_.get(); }

 private:
  using counter = std::atomic<std::uint64_t>;
  static void add(counter& c, std::uint64_t n = 1) noexcept { c.fetch_add(n, std::memory_order_relaxed); }
  void trace_event(std::string_view name, std::string_view category, runtime::trace_lane lane, std::uint64_t start,
                   std::uint64_t end, const partition_ref& p);
  void update_gauges();

  struct metrics;
  observer_config cfg_;
  std::unique_ptr<metrics> metrics_;
  std::unique_ptr<runtime::trace_writer> trace_;

  std::atomic<std::size_t> queued_{0};
  std::atomic<std::size_t> depth_per_device_{0};
  high_water_counter in_flight_, synthesizing_, gpu_queue_;
  std::atomic<std::size_t> max_gpu_queue_{0};
  counter window_start_ns_{0}, last_end_ns_{0};
  counter verified_{0}, failed_{0}, cancelled_{0}, pinned_partitions_{0};
  counter jobs_done_{0}, jobs_failed_{0}, jobs_cancelled_{0};
  counter pce_hits_{0}, pce_slow_{0}, configured_{0}, spmv_on_backend_{0}, late_abc_{0};
  counter starved_depth_{0}, starved_synthesis_{0};
  counter h2d_bytes_{0}, h2d_ns_{0};
  std::unique_ptr<counter[]> busy_ns_, busy_since_;   // per device, within the window
  std::unique_ptr<counter[]> key_ns_, key_until_;     // per device: making keys resident, in the window
  std::unique_ptr<std::atomic<std::size_t>[]> active_;  // per device, slots with work
  std::map<std::string, std::unique_ptr<runtime::histogram>, std::less<>> stage_ms_;

  // Control executor only: dispatch lanes in use.
  std::vector<bool> lanes_;
  // Synthesis threads' trace lanes, only with a trace.
  std::mutex synthesis_lanes_mutex_;
  std::unordered_map<std::thread::id, std::uint32_t> synthesis_lanes_;
};

}  // namespace coprove::engine::detail
