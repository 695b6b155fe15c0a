// The engine: each partition is a coroutine on the control strand that acquires, in order, a GPU
// slot (the dispatch policy), a memory reservation, pinned buffers, then synthesizes on the CPU
// pool, waits for a device worker slot, enqueues the quotient together with the evaluation at zeta
// (derived from the request and the public inputs), awaits its completion signal, and checks the
// evaluation record before returning it; everything is released in reverse. The engine's
// state lives on the strand; a mutex guards only what status and report readers see from other
// threads.
#include <coprove/engine/engine.hpp>

#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/synthesis.hpp>
#include <coprove/pinned/pool.hpp>
#include <coprove/runtime/async_semaphore.hpp>
#include <coprove/runtime/error.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/metrics.hpp>
#include <coprove/runtime/trace.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <list>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace coprove::engine {
using field::evaluation_domain;
using field::evaluation_record;
using field::fr;
using r1cs::circuit;
using r1cs::circuit_shape;
using r1cs::deferred_synthesis;
using r1cs::estimate_synthesis_working_set;
using r1cs::make_circuit;
using r1cs::pce_cache;
using r1cs::pce_matrices;
using r1cs::pce_policy;
using r1cs::pce_stats;
using r1cs::synthesis_output;
using r1cs::validate_circuit_parameters;


namespace {

class engine_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "coprove.engine"; }
  std::string message(int value) const override {
    switch (static_cast<engine_errc>(value)) {
      case engine_errc::synthesis_failed: return "synthesis failed";
      case engine_errc::backend_failed: return "compute backend failed";
      case engine_errc::verification_failed: return "evaluation record did not verify";
      case engine_errc::shut_down: return "engine shut down";
      case engine_errc::unknown_job: return "unknown job id";
    }
    return "unknown engine error";
  }
};

std::uint64_t now_ns() { return runtime::trace_writer::now_ns(); }

runtime::log_fields job_fields(std::uint64_t job, std::optional<std::uint64_t> partition = std::nullopt) {
  runtime::log_fields f;
  f.job = job;
  f.partition = partition;
  return f;
}

double ms(std::uint64_t ns) { return static_cast<double>(ns) / 1e6; }

// A job-ending error carrying the engine error and the full message.
class partition_failure : public std::runtime_error {
 public:
  partition_failure(engine_errc code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  engine_errc code() const noexcept { return code_; }

 private:
  engine_errc code_;
};

boost::json::object timings_json(const partition_timings& t) {
  return {{"queue_wait_ns", t.queue_wait_ns}, {"synthesis_ns", t.synthesis_ns},
          {"h2d_ns", t.h2d_ns},               {"gpu_compute_ns", t.gpu_compute_ns},
          {"d2h_ns", t.d2h_ns},               {"total_ns", t.total_ns},
          {"gpu_queue_ns", t.gpu_queue_ns},   {"evaluation_ns", t.evaluation_ns}};
}

boost::json::object request_json(const prove_request& r) {
  return {{"circuit", r.circuit},
          {"log_constraints", r.log_constraints},
          {"partitions", r.partitions},
          {"seed", r.seed}};
}

}  // namespace

const std::error_category& engine_category() noexcept {
  static const engine_category_impl category;
  return category;
}

std::error_code make_error_code(engine_errc e) noexcept {
  return {static_cast<int>(e), engine_category()};
}

std::string_view to_string(job_state state) noexcept {
  switch (state) {
    case job_state::queued: return "queued";
    case job_state::running: return "running";
    case job_state::done: return "done";
    case job_state::failed: return "failed";
    case job_state::cancelled: return "cancelled";
  }
  return "unknown";
}

boost::json::object prove_result::to_json() const {
  boost::json::array parts;
  for (const auto& p : partitions) {
    parts.push_back(boost::json::object{{"index", p.index},
                                        {"record", field::to_json(p.record)},
                                        {"verified", p.verified},
                                        {"is_pinned", p.is_pinned},
                                        {"pce_used", p.pce_used},
                                        {"device", p.device},
                                        {"slot", p.slot},
                                        {"dispatch_sequence", p.dispatch_sequence},
                                        {"timings", timings_json(p.timings)}});
  }
  return {{"job_id", job_id},
          {"request", request_json(request)},
          {"total_ns", total_ns},
          {"partitions", std::move(parts)}};
}

boost::json::object job_status::to_json() const {
  boost::json::object o{{"job_id", job_id},
                        {"state", std::string(to_string(state))},
                        {"partitions", partitions},
                        {"completed", completed}};
  if (!error.empty()) o["error"] = error;
  return o;
}

namespace detail {

using strand_type = boost::asio::strand<boost::asio::any_io_executor>;

// A device worker slot: (device, slot) of the backend.
struct worker_ref {
  std::size_t device = 0;
  std::size_t slot = 0;
};

struct job_waiter {
  engine::prove_handler handler;
  bool cancels_job = false;  // async_prove: cancelling the wait cancels the job
};

struct job {
  std::uint64_t id = 0;
  prove_request request;
  std::shared_ptr<const evaluation_domain> domain;
  std::size_t reservation_bytes = 0;
  std::string circuit_id;     // the PCE key of the request's circuit
  bool witness_fits = false;  // its assignment fits one vector of the domain
  std::uint64_t submit_ns = 0, end_ns = 0;
  // Guarded by engine_core::mutex_ (read by status()).
  job_state state = job_state::queued;
  std::size_t completed = 0;
  std::string error;
  // Strand only.
  std::error_code error_code;
  bool stop_requested = false;
  std::size_t ended = 0;  // partitions that have finished or will never run
  std::vector<std::optional<partition_result>> results;
  std::vector<std::unique_ptr<boost::asio::cancellation_signal>> cancel_signals;  // kept for the job's life
  std::vector<bool> running;
  std::map<std::uint64_t, job_waiter> waiters;
  std::uint64_t next_waiter = 0;

  bool finished() const noexcept {
    return state == job_state::done || state == job_state::failed || state == job_state::cancelled;
  }
};

// Metrics shared by every engine of the process (runtime::registry::global()).
struct engine_metrics {
  runtime::counter* verified;
  runtime::counter* failed;
  runtime::counter* cancelled;
  runtime::counter* pce_hits;
  runtime::counter* pce_slow;
  runtime::counter* configured_syntheses;
  runtime::counter* late_abc;
  runtime::counter* starved_depth;
  runtime::counter* starved_synthesis;
  runtime::counter* h2d_bytes;
  runtime::counter* h2d_ns;
  runtime::gauge* partitions_per_second;
  runtime::gauge* queue_depth;
  runtime::gauge* gpu_queue_depth;
  runtime::gauge* in_flight;
  runtime::gauge* max_in_flight;
  runtime::gauge* max_concurrent_synthesis;
  runtime::gauge* pool_reuses;
  runtime::gauge* pool_allocations;
  runtime::gauge* h2d_gb_per_s;
  std::map<std::string, runtime::histogram*> stage_seconds;
  std::vector<runtime::gauge*> gpu_busy;

  explicit engine_metrics(std::size_t devices) {
    auto& r = runtime::registry::global();
    const std::string p = "coprove_engine_";
    verified = &r.get_counter(p + "partitions_total", "Partitions finished, by outcome", {{"outcome", "verified"}});
    failed = &r.get_counter(p + "partitions_total", "Partitions finished, by outcome", {{"outcome", "failed"}});
    cancelled = &r.get_counter(p + "partitions_total", "Partitions finished, by outcome", {{"outcome", "cancelled"}});
    pce_hits = &r.get_counter(p + "pce_syntheses_total", "Syntheses by path", {{"path", "pce"}});
    pce_slow = &r.get_counter(p + "pce_syntheses_total", "Syntheses by path", {{"path", "slow"}});
    configured_syntheses =
        &r.get_counter(p + "pce_syntheses_total", "Syntheses by path", {{"path", "configured"}});
    late_abc = &r.get_counter(p + "late_abc_leases_total",
                              "Partitions leased lean (assignment and h) whose synthesis then needed b and c");
    const char* starved_help =
        "Worker slots gone idle while partitions waited for admission behind a full dispatch depth, by what held "
        "them back: the depth (synthesis threads to spare) or synthesis (every thread busy)";
    starved_depth = &r.get_counter(p + "starved_slots_total", starved_help, {{"cause", "depth"}});
    starved_synthesis = &r.get_counter(p + "starved_slots_total", starved_help, {{"cause", "synthesis"}});
    h2d_bytes = &r.get_counter(p + "h2d_bytes_total", "Bytes copied host to device");
    h2d_ns = &r.get_counter(p + "h2d_nanoseconds_total", "Time spent copying host to device");
    partitions_per_second = &r.get_gauge(p + "partitions_per_second", "Verified partitions per second since the report window began");
    queue_depth = &r.get_gauge(p + "queue_depth", "Partitions waiting for admission");
    gpu_queue_depth = &r.get_gauge(p + "gpu_queue_depth", "Synthesized partitions queued for or running on a device");
    in_flight = &r.get_gauge(p + "in_flight", "Partitions admitted and not finished");
    max_in_flight = &r.get_gauge(p + "max_in_flight", "Most partitions in flight at once");
    max_concurrent_synthesis = &r.get_gauge(p + "max_concurrent_synthesis", "Most syntheses running at once");
    pool_reuses = &r.get_gauge(p + "pinned_pool_reuses", "Pinned pool checkouts served by a free buffer");
    pool_allocations = &r.get_gauge(p + "pinned_pool_allocations", "Pinned pool buffers allocated");
    h2d_gb_per_s = &r.get_gauge(p + "h2d_gb_per_second", "Host to device copy throughput");
    for (const char* stage : {"queue_wait", "synthesis", "gpu_queue", "h2d", "spmv", "gpu_compute", "d2h", "evaluation", "total"})
      stage_seconds[stage] = &r.get_histogram(p + "stage_seconds", "Partition stage latency", {{"stage", stage}});
    for (std::size_t d = 0; d < devices; ++d)
      gpu_busy.push_back(&r.get_gauge(p + "gpu_busy_fraction", "Fraction of the report window a device had work", {{"device", std::to_string(d)}}));
  }
};

// Per-engine figures for report_json; guarded by engine_core::mutex_.
struct report_state {
  std::uint64_t window_start_ns = 0;  // first admission of the window (0: none yet)
  std::uint64_t last_end_ns = 0;
  std::uint64_t verified = 0, failed = 0, cancelled = 0;
  std::uint64_t jobs_done = 0, jobs_failed = 0, jobs_cancelled = 0;
  std::uint64_t pce_hits = 0, pce_slow = 0, configured_syntheses = 0, backend_spmv = 0, late_abc = 0;
  std::uint64_t starved_depth = 0, starved_synthesis = 0;
  std::uint64_t pinned_partitions = 0;
  std::uint64_t h2d_bytes = 0, h2d_ns = 0;
  std::size_t max_gpu_queue = 0;
  std::vector<std::uint64_t> busy_ns;          // per device, within the window
  std::vector<std::size_t> active;             // per device, slots with work
  std::vector<std::uint64_t> busy_since;       // per device, when active became > 0
  std::map<std::string, std::unique_ptr<runtime::histogram>> stage_ms;
};

class engine_core : public std::enable_shared_from_this<engine_core> {
 public:
  using worker_handler = boost::asio::any_completion_handler<void(std::error_code, worker_ref)>;

  engine_core(boost::asio::any_io_executor control, engine_config cfg, std::unique_ptr<compute_backend> backend);
  ~engine_core();

  void validate(const prove_request& request) const;
  std::uint64_t submit(prove_request request);
  void await(std::uint64_t id, engine::prove_handler handler, bool cancels_job);
  bool cancel(std::uint64_t id);
  void shutdown(bool drain, engine::shutdown_handler handler);
  void close();  // from ~engine: cancel whatever is left

  std::optional<job_status> status(std::uint64_t id) const;
  boost::json::object status_json() const;
  boost::json::object report_json() const;
  void reset_report();
  void wait_for_prewarm() { pool_->wait_idle(); }

  const memory_plan& plan() const noexcept { return plan_; }
  const compute_backend& backend() const noexcept { return *backend_; }
  const engine_config& config() const noexcept { return config_; }
  std::size_t depth_per_device() const noexcept { return depth_; }
  runtime::trace_writer* trace() noexcept { return trace_.get(); }

 private:
  // Strand-side steps.
  void enqueue(const std::shared_ptr<job>& j);
  void pump();
  void admit(partition_key key, runtime::permit gpu_slot);
  boost::asio::awaitable<void> run_partition(std::shared_ptr<job> j, std::size_t index,
                                             runtime::permit gpu_slot, std::uint64_t dispatch_sequence,
                                             std::uint32_t lane);
  void partition_ended(const std::shared_ptr<job>& j, std::size_t index, std::optional<partition_result> result,
                       std::error_code ec, const std::string& message);
  void stop_job(const std::shared_ptr<job>& j, std::error_code ec, const std::string& message);
  void maybe_finish(const std::shared_ptr<job>& j);
  void complete_waiter(const std::shared_ptr<job>& j, job_waiter waiter);
  void remove_waiter(std::uint64_t job_id, std::uint64_t waiter_id);
  void maybe_complete_shutdown();
  std::shared_ptr<job> find_job(std::uint64_t id) const;

  // Device worker slots, in (job, partition) order.
  template <class Token>
  auto async_acquire_worker(partition_key key, Token&& token) {
    return boost::asio::async_initiate<Token, void(std::error_code, worker_ref)>(
        [this](auto handler, partition_key k) { start_acquire_worker(k, worker_handler(std::move(handler))); },
        token, key);
  }
  void start_acquire_worker(partition_key key, worker_handler handler);
  void release_worker(worker_ref w);
  void note_idle_slot(worker_ref w);
  std::optional<worker_ref> take_free_worker();
  void device_busy(std::size_t device, bool starting);

  // Runs f() on the CPU pool and resumes the awaiting coroutine on its executor.
  template <class R, class F>
  boost::asio::awaitable<R> run_on_cpu(F f);
  std::uint32_t synthesis_lane();

  std::uint32_t acquire_lane();
  void release_lane(std::uint32_t lane);
  void record_stage(std::string_view stage, std::uint64_t ns);
  void trace_event(std::string_view name, std::string_view category, runtime::trace_lane lane,
                   std::uint64_t start, std::uint64_t end, const std::shared_ptr<job>& j, std::size_t index);
  void update_gauges_locked();

  strand_type strand_;
  boost::asio::any_io_executor executor_;  // strand_ as an any_io_executor, for handlers bound to it
  engine_config config_;
  std::unique_ptr<compute_backend> backend_;
  std::size_t devices_ = 0, slots_ = 0, depth_ = 0, total_depth_ = 0, synthesis_threads_ = 0;
  memory_plan plan_;
  std::unique_ptr<pinned::pool> pool_;
  std::unique_ptr<pce_cache> pce_;
  std::unique_ptr<runtime::async_semaphore> gpu_slots_;
  std::unique_ptr<runtime::async_semaphore> memory_;
  std::unique_ptr<boost::asio::thread_pool> cpu_;
  std::unique_ptr<runtime::trace_writer> trace_;
  engine_metrics metrics_;

  // Strand only.
  dispatch_queue queue_;
  runtime::permit held_slot_;
  bool acquiring_slot_ = false;
  boost::asio::steady_timer poll_timer_;
  bool poll_armed_ = false;
  std::vector<std::vector<bool>> worker_busy_;
  std::map<partition_key, worker_handler> worker_waiters_;
  std::uint64_t dispatch_sequence_ = 0;
  std::vector<bool> lanes_;
  bool stopping_ = false;
  std::vector<engine::shutdown_handler> shutdown_waiters_;

  // Guarded by mutex_.
  mutable std::mutex mutex_;
  std::uint64_t next_job_id_ = 1;
  std::map<std::uint64_t, std::shared_ptr<job>> jobs_;
  std::size_t pending_partitions_ = 0;
  high_water_counter in_flight_;
  high_water_counter synthesizing_;
  high_water_counter gpu_queued_;
  report_state report_;
  std::unordered_map<std::thread::id, std::uint32_t> synthesis_lanes_;
  // Per (circuit, log size): what admission needs to know without building the circuit again.
  struct circuit_facts {
    std::size_t working_set = 0;
    std::string id;
    bool witness_fits = false;
  };
  static circuit_facts facts_of(const circuit& c);
  std::map<std::pair<std::string, unsigned>, circuit_facts> circuit_facts_;
  // The plan gives a partition one input vector (its assignment): b and c are leased only when
  // its synthesis takes the slow path.
  bool lean_inputs_ = false;
  // With lean inputs: partitions holding a, b and c at once, at most the plan's full input slots,
  // so that every partition in flight can hold its buffers at the same time (no hold and wait).
  std::unique_ptr<runtime::async_semaphore> full_inputs_;
  // Strand only: per circuit id, partitions in flight holding a, b and c. While one is (it builds
  // the PCE under `wait`), later partitions of the circuit wait for that PCE and lease lean.
  std::map<std::string, std::size_t, std::less<>> full_in_flight_;
};

namespace {

// Completes a type-erased handler on its associated executor: posted through `via` first, so it
// never runs inside its initiation nor inside the engine step that completes it, then dispatched
// to the handler's executor (any_completion_executor supports dispatch, not post).
template <class Executor, class Handler, class... Args>
void complete_on_associated(const Executor& via, Handler handler, Args... args) {
  boost::asio::post(via, [handler = std::move(handler), ... args = std::move(args)]() mutable {
    auto ex = boost::asio::get_associated_executor(handler);
    boost::asio::dispatch(ex, [handler = std::move(handler), ... args = std::move(args)]() mutable {
      std::move(handler)(std::move(args)...);
    });
  });
}

constexpr std::uint32_t dispatch_pid = 1;
constexpr std::uint32_t synthesis_pid = 2;
constexpr std::uint32_t device_pid_base = 10;
constexpr std::size_t finished_jobs_kept = 4096;

}  // namespace

engine_core::engine_core(boost::asio::any_io_executor control, engine_config cfg,
                         std::unique_ptr<compute_backend> backend)
    : strand_(boost::asio::make_strand(control)),
      executor_(strand_),
      config_(std::move(cfg)),
      backend_(std::move(backend)),
      metrics_(backend_ ? backend_->device_count() : 0),
      poll_timer_(strand_) {
  if (!backend_) throw std::invalid_argument("engine: backend must not be null");
  devices_ = backend_->device_count();
  slots_ = backend_->worker_slots_per_device();
  if (devices_ == 0) throw std::invalid_argument("engine: the backend has no devices");
  if (slots_ == 0) throw std::invalid_argument("engine: the backend has no worker slots");
  depth_ = config_.depth_per_device == 0 ? 2 * slots_ : config_.depth_per_device;
  total_depth_ = depth_ * devices_;
  if (config_.policy == dispatch_policy::poll) {
    if (config_.poll_interval.count() <= 0)
      throw std::invalid_argument("engine_config.poll_interval: must be positive for the poll policy");
    if (config_.poll_queue_limit == 0)
      throw std::invalid_argument("engine_config.poll_queue_limit: must be at least 1 for the poll policy");
  }
  if (config_.trace_max_events == 0) throw std::invalid_argument("engine_config.trace_max_events: must be positive");
  if (config_.max_partitions_per_job == 0)
    throw std::invalid_argument("engine_config.max_partitions_per_job: must be at least 1");
  if (config_.synthesizer_sends_assignment && !config_.synthesizer)
    throw std::invalid_argument("engine_config.synthesizer_sends_assignment: set, but no synthesizer is configured");
  if (config_.synthesizer_sends_assignment && !config_.backend_spmv)
    throw std::invalid_argument(
        "engine_config.synthesizer_sends_assignment: needs backend_spmv (the backend evaluates the matrices)");
  if (config_.prewarm_partitions > total_depth_)
    throw std::invalid_argument("engine_config.prewarm_partitions: " + std::to_string(config_.prewarm_partitions) +
                                " exceeds the partitions in flight (" + std::to_string(total_depth_) + ")");
  try {
    validate_circuit_parameters(config_.plan_circuit, config_.max_log_constraints);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("engine_config (plan_circuit / max_log_constraints): ") + e.what());
  }
  const std::size_t threads =
      config_.synthesis_threads != 0 ? config_.synthesis_threads : std::max(1u, std::thread::hardware_concurrency());
  synthesis_threads_ = threads;

  // The plan: every partition in flight holds a/b/c and h pinned and one synthesis working set.
  const auto plan_circuit = make_circuit(config_.plan_circuit, config_.max_log_constraints, 1, 0);
  memory_plan_input plan_input =
      memory_plan_input_for(*plan_circuit, total_depth_, total_depth_, config_.memory_budget_bytes);
  // With the SpMV on the backend, a partition of a circuit whose PCE exists holds only its
  // assignment (in its `a` vector) and h; b and c are leased for the slow path, which under `wait`
  // is one partition a circuit. Two sets of them are planned; more wait for the pool. A configured
  // synthesizer that sends the assignment is planned the same way.
  const circuit_facts plan_facts = facts_of(*plan_circuit);
  lean_inputs_ = config_.backend_spmv && plan_facts.witness_fits &&
                 (config_.synthesizer ? config_.synthesizer_sends_assignment : config_.pce == pce_policy::wait);
  if (lean_inputs_) {
    plan_input.input_vectors_per_slot = 1;
    plan_input.full_input_slots = 2;
  }
  if (config_.backend_spmv) plan_input.backend_bytes = backend_->host_working_bytes(plan_circuit->domain_size());
  plan_ = plan_memory(plan_input);
  circuit_facts_[{config_.plan_circuit, config_.max_log_constraints}] = plan_facts;

  pinned::pool_config pool_cfg;
  pool_cfg.capacity_bytes = plan_.pinned_pool_bytes;
  const std::size_t prewarm = config_.prewarm_partitions == 0 ? total_depth_ : config_.prewarm_partitions;
  // Every vector the plan holds for `prewarm` partitions: a/b/c (or the assignment) and h, and with
  // one input vector a partition, the slow path's b and c sets too when all partitions prewarm.
  pool_cfg.prewarm_count = prewarm * (plan_.input_vectors_per_slot + 1) +
                           (prewarm == total_depth_ ? 2 * plan_.full_input_slots : 0);
  pool_cfg.prewarm_bytes = plan_.vector_bytes;
  if (config_.pageable_fallback) {
    pool_cfg.fallback = pinned::pool_config::fallback_policy::pageable;
    runtime::warn_once("engine.pageable_fallback", "engine",
                       "pageable fallback is configured: an exhausted pinned pool hands out pageable "
                       "buffers (slow H2D); counted in coprove_pinned_fallbacks_total");
  }
  pool_ = std::make_unique<pinned::pool>(executor_, backend_->make_host_allocator(), pool_cfg);
  if (config_.synthesizer)
    runtime::warn_once("engine.synthesizer", "engine",
                       "synthesis is replaced by a configured synthesizer (" + config_.synthesizer_name +
                       "): partitions are not synthesized from their circuits; counted in "
                       "coprove_engine_pce_syntheses_total{path=\"configured\"}");
  if (config_.pce == pce_policy::eager)
    runtime::warn_once("engine.pce_eager", "engine",
                       "PCE policy eager: partitions arriving while a PCE is built take the slow path");
  pce_ = std::make_unique<pce_cache>(config_.pce, std::max<std::size_t>(plan_.pce_bytes, 1));
  gpu_slots_ = std::make_unique<runtime::async_semaphore>(executor_, total_depth_);
  memory_ = std::make_unique<runtime::async_semaphore>(executor_, std::max<std::size_t>(plan_.synthesis_bytes, 1));
  if (lean_inputs_) full_inputs_ = std::make_unique<runtime::async_semaphore>(executor_, plan_.full_input_slots);
  cpu_ = std::make_unique<boost::asio::thread_pool>(threads);
  if (config_.trace) {
    trace_ = std::make_unique<runtime::trace_writer>(config_.trace_max_events);
    for (std::size_t d = 0; d < devices_; ++d)
      for (std::size_t s = 0; s < slots_; ++s)
        trace_->name_lane({static_cast<std::uint32_t>(device_pid_base + d), static_cast<std::uint32_t>(s)},
                          "device " + std::to_string(d) + " (" + backend_->device_names().at(d) + ")",
                          "worker slot " + std::to_string(s));
  }
  worker_busy_.assign(devices_, std::vector<bool>(slots_, false));
  report_.busy_ns.assign(devices_, 0);
  report_.active.assign(devices_, 0);
  report_.busy_since.assign(devices_, 0);
  for (const char* stage : {"queue_wait", "synthesis", "gpu_queue", "h2d", "spmv", "gpu_compute", "d2h", "evaluation", "total"})
    report_.stage_ms[stage] = std::make_unique<runtime::histogram>();
  if (backend_->copies_to_device() && !backend_->make_host_allocator()->is_pinned())
    runtime::warn_once("engine.pageable_backend", "engine", "the backend's host allocator is not page-locked");
  COPROVE_LOG(info, "engine") << "engine on backend " << backend_->name() << ": " << devices_ << " device(s) x "
                              << slots_ << " worker slot(s), policy " << to_string(config_.policy) << ", depth "
                              << depth_ << " per device, " << threads << " synthesis thread(s)";
  // The composition root prints the plan where a person reads it; the log keeps it at debug.
  COPROVE_LOG(debug, "engine") << "memory plan\n" << plan_.describe();
}

engine_core::~engine_core() {
  // The CPU pool first: its tasks reference nothing of ours once their coroutines are gone.
  cpu_->join();
}

engine_core::circuit_facts engine_core::facts_of(const circuit& c) {
  const circuit_shape shape = c.shape();
  return {std::max<std::size_t>(estimate_synthesis_working_set(shape), 1), c.id(),
          shape.num_variables() <= c.domain_size()};
}

void engine_core::validate(const prove_request& request) const {
  validate_circuit_parameters(request.circuit, request.log_constraints);
  if (request.log_constraints > config_.max_log_constraints)
    throw std::invalid_argument("log_constraints: " + std::to_string(request.log_constraints) +
                                " exceeds the memory plan's " + std::to_string(config_.max_log_constraints) +
                                " (engine_config.max_log_constraints)");
  if (request.partitions == 0) throw std::invalid_argument("partitions: must be at least 1");
  if (request.partitions > config_.max_partitions_per_job)
    throw std::invalid_argument("partitions: " + std::to_string(request.partitions) + " exceeds the limit of " +
                                std::to_string(config_.max_partitions_per_job) +
                                " (engine_config.max_partitions_per_job)");
}

std::uint64_t engine_core::submit(prove_request request) {
  validate(request);
  std::optional<circuit_facts> facts;
  {
    std::lock_guard lock(mutex_);
    auto it = circuit_facts_.find({request.circuit, request.log_constraints});
    if (it != circuit_facts_.end()) facts = it->second;
  }
  if (!facts) facts = facts_of(*make_circuit(request.circuit, request.log_constraints, request.seed, 0));
  const std::size_t working_set = facts->working_set;
  const std::size_t capacity = memory_->capacity();
  if (working_set > capacity)
    throw std::invalid_argument("circuit: " + request.circuit + "/" + std::to_string(request.log_constraints) +
                                " needs " + std::to_string(working_set) +
                                " bytes of synthesis working set, more than the memory plan reserves (" +
                                std::to_string(capacity) + ")");
  auto j = std::make_shared<job>();
  j->request = std::move(request);
  j->domain = std::make_shared<const evaluation_domain>(std::size_t{1} << j->request.log_constraints);
  j->reservation_bytes = working_set;
  j->circuit_id = facts->id;
  j->witness_fits = facts->witness_fits;
  if (lean_inputs_ && !facts->witness_fits)
    runtime::warn_once("engine.full_inputs." + facts->id, "engine",
                       "the assignment of " + facts->id + " does not fit a vector of its domain: its partitions hold "
                       "a, b and c, and the memory plan (sized for " + config_.plan_circuit +
                       ") lets only " + std::to_string(plan_.full_input_slots) + " do so at a time");
  j->submit_ns = now_ns();
  j->results.resize(j->request.partitions);
  j->cancel_signals.resize(j->request.partitions);
  j->running.assign(j->request.partitions, false);
  {
    std::lock_guard lock(mutex_);
    circuit_facts_[{j->request.circuit, j->request.log_constraints}] = *facts;
    j->id = next_job_id_++;
    jobs_.emplace(j->id, j);
    // Forget the oldest finished jobs beyond the retention limit.
    if (jobs_.size() > finished_jobs_kept) {
      for (auto it = jobs_.begin(); it != jobs_.end() && jobs_.size() > finished_jobs_kept;) {
        if (it->second->finished() && it->second->waiters.empty())
          it = jobs_.erase(it);
        else
          ++it;
      }
    }
  }
  boost::asio::post(strand_, [self = shared_from_this(), j] { self->enqueue(j); });
  return j->id;
}

std::shared_ptr<job> engine_core::find_job(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

void engine_core::enqueue(const std::shared_ptr<job>& j) {
  if (j->stop_requested) return;
  if (stopping_) {
    j->ended = j->request.partitions;  // none of them will run
    stop_job(j, make_error_code(engine_errc::shut_down), "the engine is shutting down and admits no new jobs");
    return;
  }
  for (std::size_t p = 0; p < j->request.partitions; ++p) queue_.push({j->id, p});
  {
    std::lock_guard lock(mutex_);
    pending_partitions_ += j->request.partitions;
    update_gauges_locked();
  }
  COPROVE_LOG_F(debug, "engine", job_fields(j->id))
      << "job " << j->id << " queued: " << j->request.circuit << "/" << j->request.log_constraints << " x "
      << j->request.partitions;
  pump();
}

// Admits partitions as the dispatch policy allows. Runs on the strand after every event that can
// change the answer (a job queued, a GPU slot granted, a poll tick, a partition ended).
void engine_core::pump() {
  switch (config_.policy) {
    case dispatch_policy::semaphore:
      while (!queue_.empty()) {
        if (!held_slot_) {
          held_slot_ = gpu_slots_->try_acquire(1);
          if (!held_slot_) {
            if (!acquiring_slot_) {
              acquiring_slot_ = true;
              gpu_slots_->async_acquire(
                  1, boost::asio::bind_executor(executor_, [self = shared_from_this()](std::error_code ec, runtime::permit p) {
                    self->acquiring_slot_ = false;
                    if (!ec) self->held_slot_ = std::move(p);
                    self->pump();
                  }));
            }
            return;
          }
        }
        admit(queue_.pop(), std::move(held_slot_));
      }
      // Nothing to admit: a granted slot goes back rather than idling here.
      held_slot_.release();
      break;
    case dispatch_policy::unbounded:
      while (!queue_.empty()) admit(queue_.pop(), {});
      break;
    case dispatch_policy::poll:
      if (!queue_.empty() && !poll_armed_) {
        poll_armed_ = true;
        poll_timer_.expires_after(config_.poll_interval);
        poll_timer_.async_wait(boost::asio::bind_executor(executor_, [self = shared_from_this()](boost::system::error_code ec) {
          self->poll_armed_ = false;
          if (ec) return;
          // The throttle as it was: look at the GPU queue only; syntheses in progress are not
          // counted, so every reopening lets a burst through.
          while (!self->queue_.empty()) {
            {
              std::lock_guard lock(self->mutex_);
              if (self->gpu_queued_.current() >= self->config_.poll_queue_limit) break;
            }
            self->admit(self->queue_.pop(), {});
          }
          self->pump();
        }));
      }
      break;
  }
}

void engine_core::admit(partition_key key, runtime::permit gpu_slot) {
  auto j = find_job(key.job_id);
  std::uint32_t lane = 0;
  {
    std::lock_guard lock(mutex_);
    --pending_partitions_;
    if (!j) return;
    if (j->state == job_state::queued) j->state = job_state::running;
    in_flight_.increment();
    if (report_.window_start_ns == 0) report_.window_start_ns = now_ns();
    update_gauges_locked();
  }
  lane = acquire_lane();
  j->cancel_signals[key.partition] = std::make_unique<boost::asio::cancellation_signal>();
  j->running[key.partition] = true;
  const std::uint64_t sequence = dispatch_sequence_++;
  boost::asio::co_spawn(
      executor_, run_partition(j, key.partition, std::move(gpu_slot), sequence, lane),
      boost::asio::bind_cancellation_slot(j->cancel_signals[key.partition]->slot(), [](std::exception_ptr e) {
        if (!e) return;
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          COPROVE_LOG(error, "engine") << "partition coroutine ended with an exception: " << ex.what();
        } catch (...) {
          COPROVE_LOG(error, "engine") << "partition coroutine ended with an unknown exception";
        }
      }));
}

template <class R, class F>
boost::asio::awaitable<R> engine_core::run_on_cpu(F f) {
  co_return co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void(std::exception_ptr, R)>(
      [this, &f](auto handler) {
        auto work = boost::asio::make_work_guard(boost::asio::get_associated_executor(handler, strand_));
        boost::asio::post(*cpu_, [&f, handler = std::move(handler), work = std::move(work)]() mutable {
          std::exception_ptr error;
          R result{};
          try {
            result = f();
          } catch (...) {
            error = std::current_exception();
          }
          auto ex = work.get_executor();
          boost::asio::post(ex, [handler = std::move(handler), error, result = std::move(result)]() mutable {
            std::move(handler)(error, std::move(result));
          });
          work.reset();
        });
      },
      boost::asio::use_awaitable);
}

std::uint32_t engine_core::synthesis_lane() {
  std::lock_guard lock(mutex_);
  const auto id = std::this_thread::get_id();
  auto it = synthesis_lanes_.find(id);
  if (it != synthesis_lanes_.end()) return it->second;
  const auto lane = static_cast<std::uint32_t>(synthesis_lanes_.size());
  synthesis_lanes_.emplace(id, lane);
  if (trace_) trace_->name_lane({synthesis_pid, lane}, "synthesis", "cpu thread " + std::to_string(lane));
  return lane;
}

std::uint32_t engine_core::acquire_lane() {
  auto it = std::find(lanes_.begin(), lanes_.end(), false);
  std::uint32_t lane;
  if (it == lanes_.end()) {
    lane = static_cast<std::uint32_t>(lanes_.size());
    lanes_.push_back(true);
    if (trace_) trace_->name_lane({dispatch_pid, lane}, "dispatch", "in flight " + std::to_string(lane));
  } else {
    *it = true;
    lane = static_cast<std::uint32_t>(it - lanes_.begin());
  }
  return lane;
}

void engine_core::release_lane(std::uint32_t lane) {
  if (lane < lanes_.size()) lanes_[lane] = false;
}

void engine_core::record_stage(std::string_view stage, std::uint64_t ns) {
  const std::string key(stage);
  metrics_.stage_seconds.at(key)->record(static_cast<double>(ns) / 1e9);
  std::lock_guard lock(mutex_);
  report_.stage_ms.at(key)->record(ms(ns));
}

void engine_core::trace_event(std::string_view name, std::string_view category, runtime::trace_lane lane,
                              std::uint64_t start, std::uint64_t end, const std::shared_ptr<job>& j,
                              std::size_t index) {
  if (!trace_) return;
  trace_->complete(name, category, lane, start, end > start ? end - start : 0,
                   boost::json::object{{"job", j->id}, {"partition", index}});
}

boost::asio::awaitable<void> engine_core::run_partition(std::shared_ptr<job> j, std::size_t index,
                                                        runtime::permit gpu_slot, std::uint64_t dispatch_sequence,
                                                        std::uint32_t lane) {
  namespace asio = boost::asio;
  co_await asio::this_coro::throw_if_cancelled(false);
  const runtime::trace_lane flight_lane{dispatch_pid, lane};
  const runtime::log_fields fields = job_fields(j->id, index);
  const std::uint64_t admitted = now_ns();
  partition_result result;
  result.index = index;
  result.dispatch_sequence = dispatch_sequence;
  result.timings.queue_wait_ns = admitted - j->submit_ns;

  auto stop_if_cancelled = [&](asio::cancellation_state state) {
    if (j->stop_requested || state.cancelled() != asio::cancellation_type::none)
      throw std::system_error(runtime::operation_aborted());
  };

  std::error_code failure;
  std::string failure_message;
  {
    runtime::permit memory, full_input;
    bool holds_full = false;  // counted in full_in_flight_
    pinned::lease a, b, c, h;
    try {
      const std::size_t n = j->domain->size();
      const std::size_t vector_bytes = n * sizeof(fr);

      std::uint64_t t = now_ns();
      // Completion signatures here start with std::error_code, which use_awaitable hands back as
      // the first element of a tuple rather than throwing.
      auto [memory_ec, memory_permit] = co_await memory_->async_acquire(j->reservation_bytes, asio::use_awaitable);
      if (memory_ec) throw std::system_error(memory_ec);
      memory = std::move(memory_permit);
      stop_if_cancelled(co_await asio::this_coro::cancellation_state);
      std::uint64_t t2 = now_ns();
      trace_event("memory_reservation", "wait", flight_lane, t, t2, j, index);

      t = t2;
      // A partition that will most likely send only its assignment (its circuit's PCE exists, or
      // the configured synthesizer sends assignments) leases a and h; b and c follow only if its
      // synthesis needs them after all.
      const bool lean = lean_inputs_ && j->witness_fits &&
                        (config_.synthesizer || pce_->expects_deferral(j->circuit_id) ||
                         full_in_flight_.contains(j->circuit_id));
      std::vector<pinned::lease*> wanted{&a, &h};
      if (!lean) wanted = {&a, &b, &c, &h};
      if (!lean && full_inputs_) {
        ++full_in_flight_[j->circuit_id];
        holds_full = true;
        auto [full_ec, full_permit] = co_await full_inputs_->async_acquire(1, asio::use_awaitable);
        if (full_ec) throw std::system_error(full_ec);
        full_input = std::move(full_permit);
      }
      for (pinned::lease* l : wanted) {
        auto [checkout_ec, leased] = co_await pool_->async_checkout(vector_bytes, asio::use_awaitable);
        if (checkout_ec) throw std::system_error(checkout_ec);
        *l = std::move(leased);
      }
      stop_if_cancelled(co_await asio::this_coro::cancellation_state);
      t2 = now_ns();
      trace_event("pinned_checkout", "wait", flight_lane, t, t2, j, index);
      result.is_pinned = a.is_pinned() && (!b || b.is_pinned()) && (!c || c.is_pinned()) && h.is_pinned();

      // Synthesis on the CPU pool, straight into the leased buffers (b and c empty when not leased).
      std::span<fr> a_span = a.as<fr>(), b_span = b.as<fr>(), c_span = c.as<fr>();
      const std::span<fr> h_span = h.as<fr>();
      auto count_synthesis = [&](bool running) {
        std::lock_guard lock(mutex_);
        running ? synthesizing_.increment() : synthesizing_.decrement();
        update_gauges_locked();
      };
      count_synthesis(true);
      struct timed_synthesis {
        synthesis_output output;
        std::shared_ptr<const pce_matrices> matrices;  // set: a holds the assignment, the backend does the SpMV
        std::size_t assignment_size = 0;
        bool needs_abc = false;  // leased a and h only, and the synthesis needs b and c
        std::uint64_t start = 0, end = 0;
        std::uint32_t lane = 0;
        std::string error;
      };
      auto synthesize = [&]() {
        timed_synthesis s;
        s.lane = synthesis_lane();
        s.start = now_ns();
        try {
          if (config_.synthesis_hook) config_.synthesis_hook(j->id, index);
          auto take = [&s](deferred_synthesis d) {
            s.output = std::move(d.output);
            s.matrices = std::move(d.matrices);
            s.assignment_size = d.assignment_size;
            s.needs_abc = d.needs_abc;
          };
          if (config_.synthesizer) {
            take(config_.synthesizer(j->request, index, a_span, b_span, c_span));
            if (s.needs_abc && !b_span.empty())
              throw std::logic_error("the configured synthesizer (" + config_.synthesizer_name +
                                     ") asked for b and c, which it was given");
            if (s.matrices && !config_.backend_spmv)
              throw std::logic_error("the configured synthesizer (" + config_.synthesizer_name +
                                     ") sent only the assignment, but the SpMV is on the host (backend_spmv is "
                                     "off): nothing would evaluate its matrices");
            if (!s.needs_abc && !s.matrices && b_span.empty())
              throw std::logic_error("the configured synthesizer (" + config_.synthesizer_name +
                                     ") returned neither matrices nor needs_abc, with only a leased");
            if (s.matrices && s.assignment_size > a_span.size())
              throw std::logic_error("the configured synthesizer (" + config_.synthesizer_name + ") sent an assignment of " +
                                     std::to_string(s.assignment_size) + " elements, more than a holds (" +
                                     std::to_string(a_span.size()) + ")");
          } else {
            const auto circ = make_circuit(j->request.circuit, j->request.log_constraints, j->request.seed, index);
            if (config_.backend_spmv)
              take(pce_->synthesize_deferred(*circ, a_span, b_span, c_span));
            else
              s.output = pce_->synthesize(*circ, a_span, b_span, c_span);
          }
        } catch (const std::exception& e) {
          s.error = e.what();
          if (s.error.empty()) s.error = "unknown error";
        }
        s.end = now_ns();
        return s;
      };
      timed_synthesis synthesized = co_await run_on_cpu<timed_synthesis>(synthesize);
      if (synthesized.needs_abc && synthesized.error.empty()) {
        // No PCE to defer to after all (the builder in flight had not started it yet, or its build
        // failed, or it was dropped): b and c, then the synthesis again, now with the full set.
        count_synthesis(false);
        const std::uint64_t late = now_ns();
        auto [full_ec, full_permit] = co_await full_inputs_->async_acquire(1, asio::use_awaitable);
        if (full_ec) throw std::system_error(full_ec);
        full_input = std::move(full_permit);
        ++full_in_flight_[j->circuit_id];
        holds_full = true;
        for (pinned::lease* l : {&b, &c}) {
          auto [checkout_ec, leased] = co_await pool_->async_checkout(vector_bytes, asio::use_awaitable);
          if (checkout_ec) throw std::system_error(checkout_ec);
          *l = std::move(leased);
        }
        trace_event("pinned_checkout", "wait", flight_lane, late, now_ns(), j, index);
        result.is_pinned = result.is_pinned && b.is_pinned() && c.is_pinned();
        b_span = b.as<fr>();
        c_span = c.as<fr>();
        {
          std::lock_guard lock(mutex_);
          report_.late_abc += 1;
        }
        metrics_.late_abc->inc();
        count_synthesis(true);
        synthesized = co_await run_on_cpu<timed_synthesis>(synthesize);
      }
      count_synthesis(false);
      trace_event("synthesis", "cpu", {synthesis_pid, synthesized.lane}, synthesized.start, synthesized.end, j, index);
      trace_event("synthesis", "cpu", flight_lane, synthesized.start, synthesized.end, j, index);
      if (!synthesized.error.empty())
        throw partition_failure(engine_errc::synthesis_failed, "synthesis of " + j->request.circuit + "/" +
                                                                   std::to_string(j->request.log_constraints) +
                                                                   " partition " + std::to_string(index) +
                                                                   " failed: " + synthesized.error);
      result.timings.synthesis_ns = synthesized.end - synthesized.start;
      result.pce_used = synthesized.output.pce_used;
      result.spmv_on_backend = synthesized.matrices != nullptr;
      {
        std::lock_guard lock(mutex_);
        if (config_.synthesizer)
          report_.configured_syntheses += 1;
        else
          (result.pce_used ? report_.pce_hits : report_.pce_slow) += 1;
        if (result.spmv_on_backend) report_.backend_spmv += 1;
      }
      if (config_.synthesizer)
        metrics_.configured_syntheses->inc();
      else
        (result.pce_used ? metrics_.pce_hits : metrics_.pce_slow)->inc();
      stop_if_cancelled(co_await asio::this_coro::cancellation_state);

      // zeta depends only on the request, the partition and its public inputs: the backend
      // evaluates a, b, c and h there as part of the quotient's work.
      const fr zeta = field::derive_partition_zeta(j->request.circuit, j->request.log_constraints, j->request.seed,
                                                   index, synthesized.output.public_inputs);

      // The GPU queue, then a worker slot.
      const std::uint64_t queued = now_ns();
      {
        std::lock_guard lock(mutex_);
        gpu_queued_.increment();
        report_.max_gpu_queue = std::max(report_.max_gpu_queue, gpu_queued_.current());
        update_gauges_locked();
      }
      auto [worker_ec, worker] = co_await async_acquire_worker(partition_key{j->id, index}, asio::use_awaitable);
      if (worker_ec) {
        std::lock_guard lock(mutex_);
        gpu_queued_.decrement();
        update_gauges_locked();
      }
      if (worker_ec) throw std::system_error(worker_ec);
      const std::uint64_t acquired = now_ns();
      result.timings.gpu_queue_ns = acquired - queued;
      trace_event("gpu_queue", "wait", flight_lane, queued, acquired, j, index);
      result.device = static_cast<int>(worker.device);
      result.slot = worker.slot;
      auto leave_worker = [&] {
        release_worker(worker);
        std::lock_guard lock(mutex_);
        gpu_queued_.decrement();
        update_gauges_locked();
      };

      // A circuit's matrices go to a device once, on its first task there: the copy blocks its
      // caller, so it runs on the CPU pool rather than here, where it would hold up every
      // completion meanwhile.
      if (synthesized.matrices && !backend_->matrices_resident(worker.device, *synthesized.matrices)) {
        std::string upload_error = co_await run_on_cpu<std::string>([&]() -> std::string {
          try {
            backend_->prepare_matrices(worker.device, synthesized.matrices);
            return {};
          } catch (const std::exception& e) {
            return e.what()[0] != '\0' ? e.what() : "unknown error";
          }
        });
        if (!upload_error.empty()) {
          leave_worker();
          throw partition_failure(engine_errc::backend_failed, std::string(backend_->name()) + " backend could not take the matrices of " +
                                                                   synthesized.matrices->circuit_id + " on device " +
                                                                   std::to_string(worker.device) + ": " + upload_error);
        }
        trace_event("matrices_upload", "gpu",
                    {static_cast<std::uint32_t>(device_pid_base + worker.device), static_cast<std::uint32_t>(worker.slot)},
                    acquired, now_ns(), j, index);
      }
      const std::uint64_t started = now_ns();

      // Only the assignment goes to a backend that evaluates the matrices itself.
      quotient_task task =
          synthesized.matrices
              ? quotient_task::from_assignment(std::span<const fr>(a_span.data(), synthesized.assignment_size),
                                               synthesized.matrices, *j->domain)
              : quotient_task::from_evaluations(a_span, b_span, c_span, *j->domain);
      task.evaluate_at(zeta).copy_h_to_host(h_span);
      device_busy(worker.device, true);
      // Not cancellable: the buffers belong to the device until it is done with them.
      auto [gpu_ec, quotient] = co_await backend_->async_quotient(
          worker_slot{worker.device, worker.slot}, task,
          asio::bind_cancellation_slot(asio::cancellation_slot(), asio::as_tuple(asio::use_awaitable)));
      const std::uint64_t finished = now_ns();
      device_busy(worker.device, false);
      leave_worker();
      if (gpu_ec)
        throw partition_failure(engine_errc::backend_failed, std::string(backend_->name()) + " quotient on device " +
                                                                 std::to_string(worker.device) + " slot " +
                                                                 std::to_string(worker.slot) + " failed: " + gpu_ec.message());
      const quotient_timings& gpu_timings = quotient.timings;
      const evaluation_values& values = quotient.values;
      result.timings.h2d_ns = gpu_timings.h2d_ns;
      result.timings.spmv_ns = gpu_timings.spmv_ns;
      result.timings.gpu_compute_ns = gpu_timings.compute_ns;
      result.timings.d2h_ns = gpu_timings.d2h_ns;
      {
        // The device stages, laid end to end from when the slot started the work (the evaluation's
        // two parts, before and after the quotient kernels, are shown as one).
        const runtime::trace_lane device_lane{static_cast<std::uint32_t>(device_pid_base + worker.device),
                                              static_cast<std::uint32_t>(worker.slot)};
        std::uint64_t at = started;
        if (gpu_timings.h2d_ns != 0) {
          trace_event("h2d", "gpu", device_lane, at, at + gpu_timings.h2d_ns, j, index);
          at += gpu_timings.h2d_ns;
        }
        if (gpu_timings.spmv_ns != 0) {
          trace_event("spmv", "gpu", device_lane, at, at + gpu_timings.spmv_ns, j, index);
          at += gpu_timings.spmv_ns;
        }
        trace_event("quotient", "gpu", device_lane, at, at + gpu_timings.compute_ns, j, index);
        at += gpu_timings.compute_ns;
        trace_event("evaluation", "gpu", device_lane, at, at + gpu_timings.evaluation_ns, j, index);
        at += gpu_timings.evaluation_ns;
        if (gpu_timings.d2h_ns != 0) trace_event("d2h", "gpu", device_lane, at, at + gpu_timings.d2h_ns, j, index);
        trace_event("device", "gpu", flight_lane, started, finished, j, index);
      }
      if (gpu_timings.h2d_ns != 0) {
        const std::uint64_t bytes = gpu_timings.h2d_bytes;
        metrics_.h2d_bytes->inc(bytes);
        metrics_.h2d_ns->inc(gpu_timings.h2d_ns);
        std::lock_guard lock(mutex_);
        report_.h2d_bytes += bytes;
        report_.h2d_ns += gpu_timings.h2d_ns;
      }
      stop_if_cancelled(co_await asio::this_coro::cancellation_state);

      // The evaluation record: zeta and the backend's values, checked here before it is returned.
      result.record = evaluation_record{task.zeta, values.a, values.b, values.c, values.h};
      result.verified = verify(result.record, n);
      result.timings.evaluation_ns = gpu_timings.evaluation_ns;
      if (!result.verified)
        throw partition_failure(engine_errc::verification_failed,
                                "partition " + std::to_string(index) + " of job " + std::to_string(j->id) +
                                    ": the evaluation record does not verify (h(zeta) * (zeta^n - 1) != "
                                    "a(zeta) * b(zeta) - c(zeta))");
    } catch (const partition_failure& e) {
      failure = make_error_code(e.code());
      failure_message = e.what();
    } catch (const std::system_error& e) {
      if (e.code() == std::errc::operation_canceled) {
        failure = runtime::operation_aborted();
      } else {
        failure = e.code();
        failure_message = std::string("partition ") + std::to_string(index) + ": " + e.what();
      }
    } catch (const std::exception& e) {
      failure = make_error_code(engine_errc::backend_failed);
      failure_message = std::string("partition ") + std::to_string(index) + ": " + e.what();
    }
    // Release in reverse: buffers, then the memory reservation, then the GPU slot.
    h.release();
    c.release();
    b.release();
    a.release();
    full_input.release();
    if (holds_full) {
      auto it = full_in_flight_.find(j->circuit_id);
      if (it != full_in_flight_.end() && --it->second == 0) full_in_flight_.erase(it);
    }
    memory.release();
  }
  gpu_slot.release();
  release_lane(lane);
  const std::uint64_t end = now_ns();
  result.timings.total_ns = end - j->submit_ns;
  if (trace_) {
    // The wait for admission happened before this partition had a lane: it goes in the args.
    trace_->complete("partition", "partition", flight_lane, admitted, end - admitted,
                     boost::json::object{{"job", j->id},
                                         {"partition", index},
                                         {"queue_wait_ns", result.timings.queue_wait_ns},
                                         {"outcome", failure ? failure.message() : std::string("verified")}});
  }
  if (failure) {
    if (failure != std::errc::operation_canceled) {
      COPROVE_LOG_F(error, "engine", fields) << failure_message;
    }
    partition_ended(j, index, std::nullopt, failure, failure_message);
  } else {
    for (const auto& [stage, ns] : {std::pair<std::string_view, std::uint64_t>{"queue_wait", result.timings.queue_wait_ns},
                                    {"synthesis", result.timings.synthesis_ns},
                                    {"gpu_queue", result.timings.gpu_queue_ns},
                                    {"h2d", result.timings.h2d_ns},
                                    {"spmv", result.timings.spmv_ns},
                                    {"gpu_compute", result.timings.gpu_compute_ns},
                                    {"d2h", result.timings.d2h_ns},
                                    {"evaluation", result.timings.evaluation_ns},
                                    {"total", result.timings.total_ns}})
      record_stage(stage, ns);
    partition_ended(j, index, std::move(result), {}, {});
  }
}

void engine_core::partition_ended(const std::shared_ptr<job>& j, std::size_t index, std::optional<partition_result> result,
                                  std::error_code ec, const std::string& message) {
  j->running[index] = false;
  ++j->ended;
  {
    std::lock_guard lock(mutex_);
    in_flight_.decrement();
    report_.last_end_ns = now_ns();
    if (result && report_.window_start_ns != 0 && report_.last_end_ns > report_.window_start_ns)
      metrics_.partitions_per_second->set(static_cast<double>(report_.verified + 1) * 1e9 /
                                          static_cast<double>(report_.last_end_ns - report_.window_start_ns));
    if (result) {
      ++j->completed;
      ++report_.verified;
      if (result->is_pinned) ++report_.pinned_partitions;
    } else if (ec == std::errc::operation_canceled) {
      ++report_.cancelled;
    } else {
      ++report_.failed;
    }
    update_gauges_locked();
  }
  if (result) {
    metrics_.verified->inc();
    j->results[index] = std::move(result);
  } else if (ec == std::errc::operation_canceled) {
    metrics_.cancelled->inc();
  } else {
    metrics_.failed->inc();
    stop_job(j, ec, message);
  }
  maybe_finish(j);
  maybe_complete_shutdown();
  pump();
}

// Stops a job: its queued partitions leave the queue, the running ones are cancelled (they give
// everything back once their device work is done). The first reason is kept.
void engine_core::stop_job(const std::shared_ptr<job>& j, std::error_code ec, const std::string& message) {
  if (j->finished()) return;
  if (!j->stop_requested) {
    j->stop_requested = true;
    j->error_code = ec;
    std::lock_guard lock(mutex_);
    j->error = message;
  }
  const std::size_t removed = queue_.erase_job(j->id);
  j->ended += removed;
  {
    std::lock_guard lock(mutex_);
    pending_partitions_ -= removed;
    update_gauges_locked();
  }
  for (std::size_t p = 0; p < j->running.size(); ++p)
    if (j->running[p]) j->cancel_signals[p]->emit(boost::asio::cancellation_type::terminal);
  maybe_finish(j);
}

void engine_core::maybe_finish(const std::shared_ptr<job>& j) {
  if (j->finished() || j->ended < j->request.partitions) return;
  j->end_ns = now_ns();
  {
    std::lock_guard lock(mutex_);
    if (!j->stop_requested) {
      j->state = job_state::done;
      ++report_.jobs_done;
    } else if (j->error_code == std::errc::operation_canceled || j->error_code == engine_errc::shut_down) {
      j->state = job_state::cancelled;
      ++report_.jobs_cancelled;
    } else {
      j->state = job_state::failed;
      ++report_.jobs_failed;
    }
  }
  COPROVE_LOG_F(info, "engine", job_fields(j->id))
      << "job " << j->id << " " << to_string(j->state) << ": " << j->completed << "/" << j->request.partitions
      << " partitions verified in " << ms(j->end_ns - j->submit_ns) << " ms" << (j->error.empty() ? "" : " (")
      << j->error << (j->error.empty() ? "" : ")");
  auto waiters = std::move(j->waiters);
  j->waiters.clear();
  for (auto& [id, waiter] : waiters) complete_waiter(j, std::move(waiter));
}

void engine_core::complete_waiter(const std::shared_ptr<job>& j, job_waiter waiter) {
  prove_result result;
  result.job_id = j->id;
  result.request = j->request;
  result.total_ns = j->end_ns - j->submit_ns;
  for (const auto& r : j->results)
    if (r) result.partitions.push_back(*r);
  std::error_code ec = j->state == job_state::done ? std::error_code{} : j->error_code;
  auto slot = boost::asio::get_associated_cancellation_slot(waiter.handler);
  if (slot.is_connected()) slot.clear();
  complete_on_associated(strand_, std::move(waiter.handler), ec, std::move(result));
}

void engine_core::await(std::uint64_t id, engine::prove_handler handler, bool cancels_job) {
  boost::asio::post(strand_, [self = shared_from_this(), id, handler = std::move(handler), cancels_job]() mutable {
    auto j = self->find_job(id);
    if (!j) {
      complete_on_associated(self->strand_, std::move(handler), make_error_code(runtime::errc::invalid_argument), prove_result{});
      return;
    }
    job_waiter waiter{std::move(handler), cancels_job};
    if (j->finished()) {
      self->complete_waiter(j, std::move(waiter));
      return;
    }
    const std::uint64_t waiter_id = j->next_waiter++;
    auto slot = boost::asio::get_associated_cancellation_slot(waiter.handler);
    if (slot.is_connected()) {
      std::weak_ptr<engine_core> weak = self;
      slot.assign([weak, id, waiter_id, cancels_job](boost::asio::cancellation_type type) {
        if (type == boost::asio::cancellation_type::none) return;
        auto core = weak.lock();
        if (!core) return;
        if (cancels_job)
          core->cancel(id);
        else
          boost::asio::post(core->strand_, [core, id, waiter_id] { core->remove_waiter(id, waiter_id); });
      });
    }
    j->waiters.emplace(waiter_id, std::move(waiter));
  });
}

void engine_core::remove_waiter(std::uint64_t job_id, std::uint64_t waiter_id) {
  auto j = find_job(job_id);
  if (!j) return;
  auto it = j->waiters.find(waiter_id);
  if (it == j->waiters.end()) return;
  auto handler = std::move(it->second.handler);
  j->waiters.erase(it);
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) slot.clear();
  complete_on_associated(strand_, std::move(handler), runtime::operation_aborted(), prove_result{});
}

bool engine_core::cancel(std::uint64_t id) {
  auto j = find_job(id);
  if (!j) return false;
  {
    std::lock_guard lock(mutex_);
    if (j->finished()) return false;
  }
  boost::asio::post(strand_, [self = shared_from_this(), j] {
    self->stop_job(j, runtime::operation_aborted(), "cancelled");
    self->maybe_complete_shutdown();
    self->pump();
  });
  return true;
}

void engine_core::shutdown(bool drain, engine::shutdown_handler handler) {
  boost::asio::post(strand_, [self = shared_from_this(), drain, handler = std::move(handler)]() mutable {
    self->stopping_ = true;
    self->shutdown_waiters_.push_back(std::move(handler));
    if (!drain) {
      std::vector<std::shared_ptr<job>> open;
      {
        std::lock_guard lock(self->mutex_);
        for (auto& [id, j] : self->jobs_)
          if (!j->finished()) open.push_back(j);
      }
      for (auto& j : open) self->stop_job(j, make_error_code(engine_errc::shut_down), "the engine shut down");
    }
    self->maybe_complete_shutdown();
    self->pump();
  });
}

void engine_core::close() {
  boost::asio::post(strand_, [self = shared_from_this()] {
    self->stopping_ = true;
    std::vector<std::shared_ptr<job>> open;
    {
      std::lock_guard lock(self->mutex_);
      for (auto& [id, j] : self->jobs_)
        if (!j->finished()) open.push_back(j);
    }
    for (auto& j : open) self->stop_job(j, make_error_code(engine_errc::shut_down), "the engine was destroyed");
    self->poll_timer_.cancel();
    self->held_slot_.release();
  });
}

void engine_core::maybe_complete_shutdown() {
  if (!stopping_ || shutdown_waiters_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    if (in_flight_.current() != 0) return;
    for (auto& [id, j] : jobs_)
      if (!j->finished()) return;
  }
  if (!queue_.empty()) return;
  poll_timer_.cancel();
  held_slot_.release();
  auto waiters = std::move(shutdown_waiters_);
  shutdown_waiters_.clear();
  for (auto& handler : waiters) {
    complete_on_associated(strand_, std::move(handler), std::error_code{});
  }
}

std::optional<worker_ref> engine_core::take_free_worker() {
  // The device with the most free slots, so that work spreads across devices.
  std::optional<worker_ref> best;
  std::size_t best_free = 0;
  for (std::size_t d = 0; d < devices_; ++d) {
    std::size_t free_slots = 0, first = slots_;
    for (std::size_t s = 0; s < slots_; ++s)
      if (!worker_busy_[d][s]) {
        ++free_slots;
        if (first == slots_) first = s;
      }
    if (free_slots > best_free) {
      best_free = free_slots;
      best = worker_ref{d, first};
    }
  }
  if (best) worker_busy_[best->device][best->slot] = true;
  return best;
}

void engine_core::start_acquire_worker(partition_key key, worker_handler handler) {
  if (auto w = take_free_worker()) {
    boost::asio::post(strand_, [handler = std::move(handler), w = *w]() mutable { std::move(handler)(std::error_code{}, w); });
    return;
  }
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) {
    slot.assign([core = this, key](boost::asio::cancellation_type type) {
      if (type == boost::asio::cancellation_type::none) return;
      // Emitted on the strand (stop_job), so the waiter map is ours to change. The slot is left
      // as it is: clearing it here would destroy this handler while it runs, and a later
      // emission finds no waiter and does nothing.
      auto it = core->worker_waiters_.find(key);
      if (it == core->worker_waiters_.end()) return;
      auto h = std::move(it->second);
      core->worker_waiters_.erase(it);
      boost::asio::post(core->strand_, [h = std::move(h)]() mutable { std::move(h)(runtime::operation_aborted(), worker_ref{}); });
    });
  }
  worker_waiters_.emplace(key, std::move(handler));
}

// A worker slot found nothing synthesized to take up. When partitions wait for admission and
// every dispatch slot is taken, the device waits on synthesis: with fewer partitions before the
// device than synthesis threads, the depth holds it back (a configuration to change; said once at
// warning), and otherwise the CPU does. Both are counted; the other policies admit without a depth
// and are not.
void engine_core::note_idle_slot(worker_ref w) {
  if (config_.policy != dispatch_policy::semaphore || queue_.empty() || gpu_slots_->available() != 0) return;
  bool depth_bound = false;
  {
    std::lock_guard lock(mutex_);
    // In flight and not yet on a device: admitted, being leased buffers, or being synthesized.
    const std::size_t before_device = in_flight_.current() - std::min(in_flight_.current(), gpu_queued_.current());
    depth_bound = before_device < synthesis_threads_;
    (depth_bound ? report_.starved_depth : report_.starved_synthesis) += 1;
  }
  (depth_bound ? metrics_.starved_depth : metrics_.starved_synthesis)->inc();
  if (depth_bound)
    runtime::warn_once(
        "engine.starved_by_depth", "engine",
        "device " + std::to_string(w.device) + " worker slot " + std::to_string(w.slot) +
            " went idle while partitions waited for admission: none of the " + std::to_string(total_depth_) +
            " partitions in flight was ready for it, and fewer were being synthesized than there are synthesis "
            "threads. The depth (" +
            std::to_string(depth_) +
            " a device, engine.depth_per_device) is too small to keep the devices fed: raise it (the memory plan "
            "charges each partition in flight its pinned vectors and a synthesis working set); counted in "
            "coprove_engine_starved_slots_total{cause=\"depth\"}");
}

void engine_core::release_worker(worker_ref w) {
  worker_busy_[w.device][w.slot] = false;
  if (worker_waiters_.empty()) {
    note_idle_slot(w);
    return;
  }
  auto it = worker_waiters_.begin();  // the oldest job's lowest partition
  auto handler = std::move(it->second);
  worker_waiters_.erase(it);
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) slot.clear();
  worker_busy_[w.device][w.slot] = true;
  boost::asio::post(strand_, [handler = std::move(handler), w]() mutable { std::move(handler)(std::error_code{}, w); });
}

void engine_core::device_busy(std::size_t device, bool starting) {
  const std::uint64_t now = now_ns();
  std::lock_guard lock(mutex_);
  auto& active = report_.active[device];
  if (starting) {
    if (active++ == 0) report_.busy_since[device] = now;
  } else if (active > 0 && --active == 0) {
    report_.busy_ns[device] += now - std::max(report_.busy_since[device], report_.window_start_ns);
  }
}

void engine_core::update_gauges_locked() {
  metrics_.queue_depth->set(static_cast<double>(pending_partitions_));
  metrics_.gpu_queue_depth->set(static_cast<double>(gpu_queued_.current()));
  metrics_.in_flight->set(static_cast<double>(in_flight_.current()));
  metrics_.max_in_flight->set_max(static_cast<double>(in_flight_.maximum()));
  metrics_.max_concurrent_synthesis->set_max(static_cast<double>(synthesizing_.maximum()));
}

std::optional<job_status> engine_core::status(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  const job& j = *it->second;
  return job_status{j.id, j.state, j.request.partitions, j.completed, j.error};
}

boost::json::object engine_core::status_json() const {
  const pinned::pool_stats ps = pool_->stats();
  const pce_stats pcs = pce_->stats();
  boost::json::object o;
  o["backend"] = std::string(backend_->name());
  boost::json::array devices;
  for (const auto& name : backend_->device_names()) devices.push_back(boost::json::value(name));
  o["devices"] = std::move(devices);
  o["worker_slots_per_device"] = slots_;
  o["memory_plan"] = plan_.to_json();
  o["pinned_pool"] = boost::json::object{{"allocator", ps.allocator},
                                         {"capacity_bytes", ps.capacity_bytes},
                                         {"bytes_allocated", ps.bytes_allocated},
                                         {"bytes_in_use", ps.bytes_in_use},
                                         {"peak_bytes_in_use", ps.peak_bytes_in_use},
                                         {"checkouts", ps.checkouts},
                                         {"reuses", ps.reuses},
                                         {"allocations", ps.allocations},
                                         {"fallbacks", ps.fallbacks},
                                         {"waiting", ps.waiting}};
  o["pce"] = boost::json::object{{"policy", std::string(to_string(pce_->policy()))},
                                 {"bytes", pce_->bytes()},
                                 {"hits", pcs.hits},
                                 {"slow_path", pcs.slow_path},
                                 {"builds", pcs.builds},
                                 {"waits", pcs.waits}};
  o["gpu_slots"] = boost::json::object{{"capacity", gpu_slots_->capacity()}, {"available", gpu_slots_->available()}};
  o["memory_reservation"] =
      boost::json::object{{"capacity_bytes", memory_->capacity()}, {"available_bytes", memory_->available()}};
  o["full_input_slots"] = boost::json::object{{"capacity", full_inputs_ ? full_inputs_->capacity() : 0},
                                              {"available", full_inputs_ ? full_inputs_->available() : 0}};
  std::lock_guard lock(mutex_);
  o["dispatch"] = boost::json::object{{"policy", std::string(to_string(config_.policy))},
                                      {"depth", depth_},
                                      {"queued", pending_partitions_},
                                      {"in_flight", in_flight_.current()},
                                      {"synthesizing", synthesizing_.current()},
                                      {"gpu_queue", gpu_queued_.current()},
                                      {"max_in_flight", in_flight_.maximum()},
                                      {"max_concurrent_synthesis", synthesizing_.maximum()}};
  std::size_t queued = 0, running = 0, finished = 0;
  for (const auto& [id, j] : jobs_) {
    if (j->state == job_state::queued) ++queued;
    else if (j->state == job_state::running) ++running;
    else ++finished;
  }
  o["jobs"] = boost::json::object{{"queued", queued}, {"running", running}, {"finished", finished}};
  return o;
}

boost::json::object engine_core::report_json() const {
  const pinned::pool_stats ps = pool_->stats();
  const pce_stats pcs = pce_->stats();
  std::lock_guard lock(mutex_);
  const std::uint64_t now = now_ns();
  const std::uint64_t start = report_.window_start_ns;
  const std::uint64_t end = in_flight_.current() > 0 ? now : std::max(report_.last_end_ns, start);
  const double elapsed_s = start == 0 ? 0.0 : static_cast<double>(end - start) / 1e9;
  const double throughput = elapsed_s > 0 ? static_cast<double>(report_.verified) / elapsed_s : 0.0;
  boost::json::array busy;
  double busy_sum = 0;
  for (std::size_t d = 0; d < devices_; ++d) {
    std::uint64_t b = report_.busy_ns[d];
    if (report_.active[d] > 0) b += now - std::max(report_.busy_since[d], start);
    const double fraction = elapsed_s > 0 ? std::min(1.0, static_cast<double>(b) / 1e9 / elapsed_s) : 0.0;
    busy.push_back(fraction);
    busy_sum += fraction;
    metrics_.gpu_busy[d]->set(fraction);
  }
  const double busy_mean = devices_ > 0 ? busy_sum / static_cast<double>(devices_) : 0.0;
  const double h2d_gbps = report_.h2d_ns > 0 ? static_cast<double>(report_.h2d_bytes) / static_cast<double>(report_.h2d_ns) : 0.0;
  metrics_.partitions_per_second->set(throughput);
  metrics_.h2d_gb_per_s->set(h2d_gbps);
  metrics_.pool_reuses->set(static_cast<double>(ps.reuses));
  metrics_.pool_allocations->set(static_cast<double>(ps.allocations));
  boost::json::object stages;
  for (const auto& [name, h] : report_.stage_ms)
    stages[name] = boost::json::object{{"count", h->count()},
                                       {"mean_ms", h->mean()},
                                       {"p50_ms", h->percentile(0.5)},
                                       {"p99_ms", h->percentile(0.99)},
                                       {"max_ms", h->max()}};
  boost::json::array device_names;
  for (const auto& name : backend_->device_names()) device_names.push_back(boost::json::value(name));
  const double reuse_fraction =
      ps.checkouts > 0 ? static_cast<double>(ps.reuses) / static_cast<double>(ps.checkouts) : 0.0;
  return boost::json::object{
      {"backend", std::string(backend_->name())},
      {"devices", std::move(device_names)},
      {"partitions", report_.verified + report_.failed + report_.cancelled},
      {"verified", report_.verified},
      {"failed", report_.failed},
      {"cancelled", report_.cancelled},
      {"pinned_partitions", report_.pinned_partitions},
      {"jobs", boost::json::object{{"done", report_.jobs_done}, {"failed", report_.jobs_failed}, {"cancelled", report_.jobs_cancelled}}},
      {"elapsed_s", elapsed_s},
      {"throughput_partitions_per_s", throughput},
      {"dispatch", boost::json::object{{"policy", std::string(to_string(config_.policy))},
                                       {"depth", depth_},
                                       {"devices", devices_},
                                       {"max_in_flight", in_flight_.maximum()},
                                       {"max_concurrent_synthesis", synthesizing_.maximum()},
                                       {"max_gpu_queue", report_.max_gpu_queue},
                                       {"starved_slots", boost::json::object{{"depth", report_.starved_depth},
                                                                             {"synthesis", report_.starved_synthesis}}}}},
      {"pinned_pool", boost::json::object{{"allocator", ps.allocator},
                                          {"allocations", ps.allocations},
                                          {"reuses", ps.reuses},
                                          {"checkouts", ps.checkouts},
                                          {"reuse_fraction", reuse_fraction},
                                          {"fallbacks", ps.fallbacks},
                                          {"waits", ps.waits},
                                          {"capacity_bytes", ps.capacity_bytes},
                                          {"peak_bytes_in_use", ps.peak_bytes_in_use}}},
      {"pce", boost::json::object{{"policy", std::string(to_string(pce_->policy()))},
                                  {"hits", pcs.hits},
                                  {"slow_path", pcs.slow_path},
                                  {"builds", pcs.builds},
                                  {"waits", pcs.waits},
                                  {"bytes", pce_->bytes()}}},
      {"syntheses", boost::json::object{{"pce", report_.pce_hits},
                                        {"slow", report_.pce_slow},
                                        {"configured", report_.configured_syntheses},
                                        {"spmv_on_backend", report_.backend_spmv},
                                        {"late_abc", report_.late_abc}}},
      {"gpu_busy_fraction", busy_mean},
      {"gpu_busy_fraction_per_device", std::move(busy)},
      {"h2d_gb_per_s", h2d_gbps},
      {"stages", std::move(stages)},
      {"memory_plan", plan_.to_json()}};
}

void engine_core::reset_report() {
  std::lock_guard lock(mutex_);
  const std::uint64_t now = now_ns();
  report_.window_start_ns = in_flight_.current() > 0 ? now : 0;
  report_.last_end_ns = 0;
  report_.verified = report_.failed = report_.cancelled = 0;
  report_.jobs_done = report_.jobs_failed = report_.jobs_cancelled = 0;
  report_.pce_hits = report_.pce_slow = report_.configured_syntheses = report_.backend_spmv = report_.late_abc =
      report_.pinned_partitions = report_.starved_depth = report_.starved_synthesis = 0;
  report_.h2d_bytes = report_.h2d_ns = 0;
  report_.max_gpu_queue = gpu_queued_.current();
  for (std::size_t d = 0; d < devices_; ++d) {
    report_.busy_ns[d] = 0;
    if (report_.active[d] > 0) report_.busy_since[d] = now;
  }
  for (auto& [name, h] : report_.stage_ms) h->reset();
  in_flight_.reset_maximum();
  synthesizing_.reset_maximum();
}

}  // namespace detail

engine::engine(boost::asio::any_io_executor control, engine_config cfg, std::unique_ptr<compute_backend> backend)
    : core_(std::make_shared<detail::engine_core>(std::move(control), std::move(cfg), std::move(backend))) {}

engine::~engine() {
  if (core_) core_->close();
}

void engine::validate(const prove_request& request) const { core_->validate(request); }

void engine::start_prove(prove_request request, prove_handler handler) {
  std::uint64_t id = 0;
  try {
    id = core_->submit(std::move(request));
  } catch (...) {
    // Validated at the call already; a failure here (e.g. out of memory) is reported through the
    // handler like any other asynchronous error.
    detail::complete_on_associated(boost::asio::system_executor(), std::move(handler),
                                   make_error_code(runtime::errc::invalid_argument), prove_result{});
    return;
  }
  core_->await(id, std::move(handler), true);
}

std::uint64_t engine::submit(prove_request request) { return core_->submit(std::move(request)); }

void engine::start_await(std::uint64_t job_id, prove_handler handler) { core_->await(job_id, std::move(handler), false); }

void engine::start_shutdown(bool drain, shutdown_handler handler) { core_->shutdown(drain, std::move(handler)); }

bool engine::cancel(std::uint64_t job_id) { return core_->cancel(job_id); }

std::optional<job_status> engine::status(std::uint64_t job_id) const { return core_->status(job_id); }

boost::json::object engine::status_json() const { return core_->status_json(); }

boost::json::object engine::report_json() const { return core_->report_json(); }

void engine::reset_report() { core_->reset_report(); }
void engine::wait_for_prewarm() { core_->wait_for_prewarm(); }

const memory_plan& engine::plan() const { return core_->plan(); }

const compute_backend& engine::backend() const { return core_->backend(); }

const engine_config& engine::config() const { return core_->config(); }

std::size_t engine::depth_per_device() const noexcept { return core_->depth_per_device(); }

runtime::trace_writer* engine::trace() { return core_->trace(); }

}  // namespace coprove::engine
