// The engine: jobs, their partitions and the control strand that owns them. Each partition is a
// coroutine that awaits its steps in order, each a part with its own state: admission (one
// strategy per policy) -> partition inputs (memory reservation, pinned buffers) -> synthesis on
// the CPU executor (waiting for a PCE build on the strand, not on a thread) -> a slot of the
// worker-slot pool -> the device (the quotient h, with its evaluation record checked) -> the
// Groth16 proof on the CPU executor with the circuit's key, verified before it is returned. The inputs give everything
// back in reverse as they go out of scope; the observer turns each event into report, metrics
// and trace at once.
#include <coprove/engine/engine.hpp>

#include <coprove/engine/bottleneck.hpp>
#include <coprove/engine/detail/admission.hpp>
#include <coprove/engine/detail/depth_controller.hpp>
#include <coprove/engine/detail/engine_sizing.hpp>
#include <coprove/engine/detail/job_table.hpp>
#include <coprove/engine/detail/key_registry.hpp>
#include <coprove/engine/detail/partition_inputs.hpp>
#include <coprove/engine/detail/partition_observer.hpp>
#include <coprove/engine/detail/pce_files.hpp>
#include <coprove/engine/detail/partition_synthesis.hpp>
#include <coprove/engine/detail/worker_pool.hpp>

#include <coprove/field/sha256.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/prover.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/groth16/verifier.hpp>
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
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <deque>
#include <exception>
#include <atomic>
#include <filesystem>
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
      case engine_errc::verification_failed: return "a proof or an evaluation record did not verify";
      case engine_errc::shut_down: return "engine shut down";
      case engine_errc::unknown_job: return "unknown job id";
      case engine_errc::proving_failed: return "the proof could not be made";
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
          {"gpu_queue_ns", t.gpu_queue_ns},   {"evaluation_ns", t.evaluation_ns},
          {"spmv_ns", t.spmv_ns},             {"msm_ns", t.msm_ns},
          {"prove_ns", t.prove_ns},
          {"proof_verify_ns", t.proof_verify_ns}};
}

boost::json::object request_json(const prove_request& r) {
  return {{"circuit", r.circuit},
          {"log_constraints", r.log_constraints},
          {"partitions", r.partitions},
          {"seed", r.seed},
          {"priority", std::string(to_string(r.priority))}};
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

std::string_view to_string(result_kind kind) noexcept {
  switch (kind) {
    case result_kind::proof: return "proof";
    case result_kind::evaluation_record: return "evaluation_record";
  }
  return "unknown";
}

boost::json::object prove_result::to_json() const {
  boost::json::array parts;
  for (const auto& p : partitions) {
    boost::json::object part{{"index", p.index}};
    if (p.proof) {
      part["proof"] = groth16::encode_proof_hex(*p.proof);
      part["public_inputs"] = groth16::public_inputs_to_snarkjs_json(p.public_inputs);
      // The same proof as snarkjs's proof.json, for `snarkjs groth16 verify` with the key's vk.json.
      part["proof_snarkjs"] = groth16::proof_to_snarkjs_json(*p.proof);
    } else {
      part["record"] = field::to_json(p.record);
    }
    part["verified"] = p.verified;
    part["is_pinned"] = p.is_pinned;
    part["pce_used"] = p.pce_used;
    part["device"] = p.device;
    part["slot"] = p.slot;
    part["dispatch_sequence"] = p.dispatch_sequence;
    part["timings"] = timings_json(p.timings);
    parts.push_back(std::move(part));
  }
  boost::json::object out{{"job_id", job_id},
                          {"request", request_json(request)},
                          {"result_kind", std::string(to_string(kind))},
                          {"total_ns", total_ns}};
  if (!vk_sha256.empty()) out["vk_sha256"] = vk_sha256;
  out["partitions"] = std::move(parts);
  return out;
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

// What the device made of one quotient: its error, or its timings and the values at zeta.
struct device_outcome {
  std::error_code error;
  quotient_result result;
};

class engine_core : public std::enable_shared_from_this<engine_core> {
 public:
  engine_core(boost::asio::any_io_executor control, engine_config cfg, std::unique_ptr<compute_backend> backend);
  ~engine_core();
  // Creates what calls back into the core (admission), once a shared_ptr owns it.
  void start();

  void validate(const prove_request& request) const;
  std::uint64_t submit(prove_request request);
  void await(std::uint64_t id, engine::prove_handler handler, bool cancels_job);
  bool cancel(std::uint64_t id);
  bool expired(std::uint64_t id) const;
  std::size_t cancel_queued();
  void shutdown(bool drain, engine::shutdown_handler handler);
  void close();  // from ~engine: cancel whatever is left

  std::optional<job_status> status(std::uint64_t id) const;
  engine_status status_snapshot() const;
  engine_report report() const;
  void reset_report() { observer_.reset(); }
  void wait_for_prewarm() { pool_->wait_idle(); }

  const memory_plan& plan() const noexcept { return plan_; }
  const groth16::verifying_key* verifying_key(std::string_view circuit, unsigned log_constraints) const {
    const auto entry = keys_.find(std::string(circuit), log_constraints);
    return entry ? &entry->keys.pk->vk : nullptr;  // the key stays while the engine lives (no removal yet)
  }
  std::vector<std::pair<std::string, unsigned>> key_ids() const { return keys_.ids(); }
  const compute_backend& backend() const noexcept { return *backend_; }
  const engine_config& config() const noexcept { return config_; }
  std::size_t depth_per_device() const noexcept { return depth_.load(std::memory_order_relaxed); }
  runtime::trace_writer* trace() noexcept { return observer_.trace(); }

 private:
  // Strand-side steps.
  void enqueue(const std::shared_ptr<job>& j);
  void pump() { admission_->pump(queue_); }
  void admit(partition_key key, runtime::permit gpu_slot);
  boost::asio::awaitable<void> run_partition(std::shared_ptr<job> j, std::size_t index, runtime::permit gpu_slot,
                                             std::uint64_t dispatch_sequence, std::uint32_t lane);
  // The steps of run_partition, in order.
  boost::asio::awaitable<void> acquire_inputs(const job& j, const partition_ref& ref, partition_inputs& inputs);
  boost::asio::awaitable<synthesis_outcome> synthesize(const job& j, const partition_ref& ref,
                                                       partition_inputs& inputs);
  boost::asio::awaitable<void> await_pce_build(const std::string& circuit_id);
  boost::asio::awaitable<synthesis_outcome> take_witness(const job& j, const partition_ref& ref,
                                                         partition_inputs& inputs);
  boost::asio::awaitable<worker_ref> acquire_worker(const partition_ref& ref, partition_timings& timings);
  boost::asio::awaitable<void> make_resident(worker_ref worker, const partition_ref& ref,
                                             const std::shared_ptr<const pce_matrices>& matrices);
  boost::asio::awaitable<device_outcome> run_on_worker(worker_ref worker, quotient_task task);
  boost::asio::awaitable<void> make_key_resident(worker_ref worker, const partition_ref& ref, const job& j);
  // Runs `upload` (blocking) on the CPU executor; a failure leaves the worker and fails the
  // partition, naming `what`.
  template <class Upload>
  boost::asio::awaitable<void> upload_on_cpu(worker_ref worker, const std::string& what, Upload upload);
  boost::asio::awaitable<void> prove_partition(const job& j, const partition_ref& ref, quotient_result device,
                                               const synthesis_outcome& synthesized, partition_result& result);
  void leave_worker(worker_ref worker);
  // The measured depth: one verified partition's stage times in, the depth applied when it moves.
  void measured(const depth_sample& sample);
  depth_basis basis() const;
  void apply_device_sizing();

  void partition_ended(const std::shared_ptr<job>& j, std::size_t index, std::optional<partition_result> result,
                       std::error_code ec, const std::string& message);
  void stop_job(const std::shared_ptr<job>& j, std::error_code ec, const std::string& message);
  void stop_open_jobs(std::error_code ec, const std::string& message);
  void maybe_finish(const std::shared_ptr<job>& j);
  void complete_waiter(const std::shared_ptr<job>& j, job_waiter waiter);
  void remove_waiter(std::uint64_t job_id, std::uint64_t waiter_id);
  void maybe_complete_shutdown();
  input_sources sources() noexcept { return {*memory_, full_inputs_.get(), *pool_, full_in_flight_}; }

  // Runs f() on the synthesis executor and resumes the awaiting coroutine on its executor.
  template <class R, class F>
  boost::asio::awaitable<R> run_on_cpu(F f);

  strand_type strand_;
  boost::asio::any_io_executor executor_;  // strand_ as an any_io_executor, for handlers bound to it
  engine_config config_;
  std::unique_ptr<compute_backend> backend_;
  key_registry keys_;  // the proving keys and zkey circuits by id
  engine_sizing sizing_;  // read-only after construction
  std::size_t devices_ = 0, slots_ = 0, total_depth_ = 0, synthesis_threads_ = 0;
  // Per device, now (the measured depth moves on the strand; readers on any thread).
  std::atomic<std::size_t> depth_{0};
  // Per device, the most it may reach, and why: configured, cpu or memory.
  std::size_t depth_max_ = 0;
  std::string depth_max_reason_ = "configured";
  std::optional<depth_controller> depth_controller_;  // strand only; set when the depth is measured
  mutable std::mutex depth_mutex_;
  depth_basis depth_basis_;  // guarded by depth_mutex_
  memory_plan plan_;
  device_key_copies_choice key_copies_;  // set by plan_devices at construction, read-only after
  std::unique_ptr<pinned::pool> pool_;
  std::shared_ptr<pce_cache> pce_;  // shared with a save in flight on the synthesis executor
  std::unique_ptr<pce_files> pce_files_;  // the cache's files: loaded once per circuit id, saved once built
  std::unique_ptr<runtime::async_semaphore> memory_;
  // With lean inputs: partitions holding a, b and c at once, at most the plan's full input slots,
  // so that every partition in flight can hold its buffers at the same time (no hold and wait).
  std::unique_ptr<runtime::async_semaphore> full_inputs_;
  std::unique_ptr<boost::asio::thread_pool> own_cpu_;  // when no synthesis executor is configured
  boost::asio::any_io_executor cpu_;
  partition_observer observer_;

  // Strand only.
  dispatch_queue queue_;
  std::shared_ptr<admission> admission_;
  worker_pool workers_;
  full_input_counts full_in_flight_;
  std::unordered_map<std::uint64_t, std::shared_ptr<job>> live_jobs_;  // queued or running
  std::uint64_t dispatch_sequence_ = 0;
  bool stopping_ = false;
  std::vector<engine::shutdown_handler> shutdown_waiters_;

  job_table jobs_;  // per job, not per partition: ids, limits, retention, domains, circuit facts
  // The plan gives a partition one input vector (its assignment): b and c are leased only when
  // its synthesis takes the slow path.
  bool lean_inputs_ = false;
  void validate_zkey_request(const zkey_entry& z, const prove_request& request) const;
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

observer_config observer_config_of(const engine_config& cfg, const compute_backend& backend, std::size_t depth) {
  observer_config o;
  o.backend = std::string(backend.name());
  o.device_names = backend.device_names();
  o.slots_per_device = backend.worker_slots_per_device();
  o.policy = cfg.policy;
  o.depth_per_device = depth;
  o.depth_measured = cfg.depth_per_device == 0;
  o.synthesis_threads =
      cfg.synthesis_threads != 0 ? cfg.synthesis_threads : std::max(1u, std::thread::hardware_concurrency());
  o.trace = cfg.trace;
  o.trace_max_events = std::max<std::size_t>(cfg.trace_max_events, 1);
  return o;
}

}  // namespace

engine_core::engine_core(boost::asio::any_io_executor control, engine_config cfg,
                         std::unique_ptr<compute_backend> backend)
    : strand_(boost::asio::make_strand(control)),
      executor_(strand_),
      config_(std::move(cfg)),
      backend_(std::move(backend)),
      keys_((check_config(config_, backend_.get()), config_)),
      sizing_(size_engine(config_, *backend_, keys_.sizes())),
      depth_(config_.depth_per_device),
      observer_(observer_config_of(config_, *backend_, depth_)),
      workers_(executor_, backend_->device_count(), backend_->worker_slots_per_device()),
      jobs_(config_.first_job_id, {config_.max_open_jobs, config_.max_open_partitions}, config_.retention) {
  devices_ = sizing_.devices;
  slots_ = sizing_.slots;
  synthesis_threads_ = sizing_.synthesis_threads;
  depth_max_ = sizing_.depth_max;
  depth_max_reason_ = sizing_.depth_max_reason;
  plan_ = sizing_.plan;
  key_copies_ = sizing_.key_copies;
  lean_inputs_ = sizing_.lean_inputs;
  if (sizing_.measured) {
    depth_controller_.emplace(*sizing_.measured);
    depth_ = depth_controller_->depth();
    observer_.set_depth(depth_);
  }
  total_depth_ = depth_ * devices_;
  {
    std::lock_guard lock(depth_mutex_);
    depth_basis_.source = depth_controller_ ? "measured" : "configured";
    depth_basis_.max = depth_max_;
    depth_basis_.max_reason = depth_max_reason_;
  }
  apply_device_sizing();
  jobs_.remember_facts(config_.plan_circuit, config_.max_log_constraints, sizing_.plan_facts);

  if (config_.pageable_fallback)
    runtime::warn_once("engine.pageable_fallback", "engine",
                       "pageable fallback is configured: an exhausted pinned pool hands out pageable "
                       "buffers (slow H2D); counted in coprove_pinned_fallbacks_total");
  pool_ = std::make_unique<pinned::pool>(executor_, backend_->make_host_allocator(), sizing_.pool);
  if (config_.synthesizer)
    runtime::warn_once("engine.synthesizer", "engine",
                       "synthesis is replaced by a configured synthesizer (" + config_.synthesizer_name +
                       "): partitions are not synthesized from their circuits; counted in "
                       "coprove_engine_pce_syntheses_total{path=\"configured\"}");
  if (config_.pce == pce_policy::eager)
    runtime::warn_once("engine.pce_eager", "engine",
                       "PCE policy eager: partitions arriving while a PCE is built take the slow path");
  pce_ = std::make_shared<pce_cache>(config_.pce, std::max<std::size_t>(plan_.pce_bytes, 1));
  memory_ = std::make_unique<runtime::async_semaphore>(
      executor_, std::max<std::size_t>(plan_.synthesis_bytes + plan_.proving_bytes, 1));
  if (lean_inputs_) full_inputs_ = std::make_unique<runtime::async_semaphore>(executor_, plan_.full_input_slots);
  if (config_.synthesis_executor) {
    cpu_ = config_.synthesis_executor;
  } else {
    own_cpu_ = std::make_unique<boost::asio::thread_pool>(synthesis_threads_);
    cpu_ = own_cpu_->get_executor();
  }
  pce_files_ = std::make_unique<pce_files>(config_.pce_cache_dir, !config_.synthesizer, pce_, cpu_);
  if (backend_->copies_to_device() && !backend_->make_host_allocator()->is_pinned())
    runtime::warn_once("engine.pageable_backend", "engine", "the backend's host allocator is not page-locked");
  COPROVE_LOG(info, "engine") << "engine on backend " << backend_->name() << ": " << devices_ << " device(s) x "
                              << slots_ << " worker slot(s), policy " << to_string(config_.policy) << ", depth "
                              << depth_ << " per device"
                              << (depth_controller_ ? " (measured: starting at its most, " +
                                                          std::to_string(depth_max_) + ", the most " +
                                                          (depth_max_reason_ == "cpu" ? "the CPU can use"
                                                                                      : "the memory budget allows") +
                                                          "; the memory plan is sized for it)"
                                                    : std::string(" (configured)"))
                              << ", " << synthesis_threads_ << " synthesis thread(s)";
  if (config_.pce_cache_dir.empty()) {
    COPROVE_LOG(info, "engine") << "constraint cache files are off (engine.pce_cache_dir is empty): each circuit's "
                                   "PCE is built in memory by its first partition";
  } else {
    COPROVE_LOG(info, "engine") << "constraint cache files in " << config_.pce_cache_dir;
    for (const circuit_keys& k : config_.keys)
      pce_files_->load(make_circuit(k.circuit, k.log_constraints, 1, 0)->id());
  }
  // The composition root prints the plan where a person reads it; the log keeps it at debug.
  COPROVE_LOG(debug, "engine") << "memory plan\n" << plan_.describe();
}

// What the sizing decided for the devices: the key copies settled on the backend (msm_copies
// auto: anything but the fastest is a fallback, said at warning with the figures that refused it),
// published, and each device's plan said at info.
void engine_core::apply_device_sizing() {
  if (sizing_.key_copies_auto) {
    backend_->settle_device_key_copies(key_copies_.copies);
    if (sizing_.key_copies_fallback)
      COPROVE_LOG(warning, "engine") << "msm_copies auto: " << key_copies_.reason;
    else
      COPROVE_LOG(info, "engine") << "msm_copies auto: " << key_copies_.reason;
  }
  runtime::registry::global()
      .get_gauge("coprove_engine_device_key_copies",
                 "Copies of each proving key's points kept on a device for the MSMs (msm_copies, or what auto settled)")
      .set(static_cast<double>(key_copies_.copies));
  for (const device_memory_plan& device : sizing_.device_plans)
    COPROVE_LOG(info, "engine") << "device memory plan: " << device.describe();
}

void engine_core::validate_zkey_request(const zkey_entry& z, const prove_request& request) const {
  if (!request.witnesses || request.witnesses->empty())
    throw std::invalid_argument("witnesses: " + request.circuit + " is a zkey circuit; each partition needs its witness");
  if (request.witnesses->size() > config_.max_partitions_per_job)
    throw std::invalid_argument("witnesses: " + std::to_string(request.witnesses->size()) + " exceed the limit of " +
                                std::to_string(config_.max_partitions_per_job) +
                                " (engine_config.max_partitions_per_job)");
  for (std::size_t i = 0; i < request.witnesses->size(); ++i) {
    const auto& w = (*request.witnesses)[i];
    if (w.size() != z.key->num_variables())
      throw std::invalid_argument("witnesses: witness " + std::to_string(i) + " has " + std::to_string(w.size()) +
                                  " values, " + request.circuit + " " + std::to_string(z.key->num_variables()) +
                                  " signals (a witness of another circuit)");
    if (w[0] != fr::one())
      throw std::invalid_argument("witnesses: witness " + std::to_string(i) + " does not start with the constant one");
  }
}

void engine_core::start() {
  admission_config cfg;
  cfg.policy = config_.policy;
  cfg.depth = total_depth_;
  cfg.poll_interval = config_.poll_interval;
  cfg.poll_queue_limit = config_.poll_queue_limit;
  // The strategy lives inside the core and its wake-ups check that it is still there, so a raw
  // pointer back is enough.
  admission_ = make_admission(
      cfg, executor_, observer_.gpu_queue(),
      [this](partition_key key, runtime::permit slot) { admit(key, std::move(slot)); }, [this] { pump(); });
}

engine_core::~engine_core() {
  // The CPU pool first: its tasks reference nothing of ours once their coroutines are gone.
  if (own_cpu_) own_cpu_->join();
}

void engine_core::validate(const prove_request& request) const {
  if (const auto z = keys_.find_zkey(request.circuit)) return validate_zkey_request(*z, request);
  if (request.witnesses)
    throw std::invalid_argument("witnesses: given, but " + request.circuit + " is not a zkey circuit of the engine");
  validate_circuit_parameters(request.circuit, request.log_constraints);
  if (config_.results == result_kind::proof && !keys_.find(request.circuit, request.log_constraints))
    throw std::invalid_argument("circuit: no proving key for " + key_name(request.circuit, request.log_constraints) +
                                "; the engine has keys for " + keys_.names());
  if (request.log_constraints > config_.max_log_constraints)
    throw std::invalid_argument("log_constraints: " + std::to_string(request.log_constraints) +
                                " exceeds the memory plan's " + std::to_string(config_.max_log_constraints) +
                                " (engine_config.max_log_constraints)");
  if (request.partitions == 0) throw std::invalid_argument("partitions: must be at least 1");
  if (config_.max_open_partitions != 0 && request.partitions > config_.max_open_partitions)
    throw std::invalid_argument("partitions: " + std::to_string(request.partitions) +
                                " exceeds the unfinished partitions the engine holds at most, " +
                                std::to_string(config_.max_open_partitions) + " (engine_config.max_open_partitions)");
  if (request.partitions > config_.max_partitions_per_job)
    throw std::invalid_argument("partitions: " + std::to_string(request.partitions) + " exceeds the limit of " +
                                std::to_string(config_.max_partitions_per_job) +
                                " (engine_config.max_partitions_per_job)");
}

std::uint64_t engine_core::submit(prove_request request) {
  const std::shared_ptr<const zkey_entry> z = keys_.find_zkey(request.circuit);
  if (z != nullptr && request.witnesses) {
    request.partitions = request.witnesses->size();
    request.log_constraints = z->domain->log_size();
  }
  validate(request);
  std::optional<circuit_facts> facts;
  if (z != nullptr) {
    // A partition holds its witness (given), a, b and h (leased) and the proof's scratch; the
    // assignment goes to the backend alone when it fits one vector of the domain.
    facts = circuit_facts{1, z->key->matrices->circuit_id, z->key->num_variables() <= z->domain->size()};
  } else {
    facts = jobs_.facts(request.circuit, request.log_constraints);
  }
  if (!facts) facts = facts_of(*make_circuit(request.circuit, request.log_constraints, request.seed, 0));
  pce_files_->load(facts->id);
  std::shared_ptr<const key_entry> key;
  std::size_t working_set = facts->working_set;
  if (config_.results == result_kind::proof) {
    key = z != nullptr ? z->keys : keys_.find(request.circuit, request.log_constraints);
    if (!backend_->copies_to_device())
      working_set += groth16::estimate_prove_working_set(key->keys.pk->num_variables(), key->keys.pk->domain_size());
  }
  const std::size_t capacity = memory_->capacity();
  if (working_set > capacity)
    throw std::invalid_argument("circuit: " + request.circuit + "/" + std::to_string(request.log_constraints) +
                                " needs " + std::to_string(working_set) +
                                " bytes of synthesis working set, more than the memory plan reserves (" +
                                std::to_string(capacity) + ")");
  auto j = std::make_shared<job>();
  j->request = std::move(request);
  j->domain = z != nullptr ? z->domain : jobs_.domain_for(j->request.log_constraints);
  if (z != nullptr) j->zkey = z->key;
  j->reservation_bytes = working_set;
  j->circuit_id = facts->id;
  j->key = std::move(key);
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
  if (z == nullptr) jobs_.remember_facts(j->request.circuit, j->request.log_constraints, *facts);
  jobs_.add(j);
  boost::asio::post(strand_, [self = shared_from_this(), j] { self->enqueue(j); });
  return j->id;
}

std::size_t engine_core::cancel_queued() {
  std::size_t cancelled = 0;
  for (const auto id : jobs_.queued()) cancelled += cancel(id) ? 1 : 0;
  return cancelled;
}

bool engine_core::expired(std::uint64_t id) const { return jobs_.expired(id); }

void engine_core::enqueue(const std::shared_ptr<job>& j) {
  if (j->stop_requested) {
    // Stopped (a shutdown that cancels) between its submission and here: none of its partitions
    // will run, and it ends now rather than staying queued (and holding the shutdown) forever.
    j->ended = j->request.partitions;
    maybe_finish(j);
    maybe_complete_shutdown();
    return;
  }
  if (stopping_) {
    j->ended = j->request.partitions;  // none of them will run
    stop_job(j, make_error_code(engine_errc::shut_down), "the engine is shutting down and admits no new jobs");
    return;
  }
  live_jobs_.emplace(j->id, j);
  for (std::size_t p = 0; p < j->request.partitions; ++p) queue_.push({j->id, p}, j->request.priority);
  observer_.partitions_queued(j->request.partitions);
  COPROVE_LOG_F(debug, "engine", job_fields(j->id))
      << "job " << j->id << " queued: " << j->request.circuit << "/" << j->request.log_constraints << " x "
      << j->request.partitions;
  pump();
}

void engine_core::admit(partition_key key, runtime::permit gpu_slot) {
  auto it = live_jobs_.find(key.job_id);
  if (it == live_jobs_.end()) {
    observer_.partitions_dropped(1);
    return;
  }
  const std::shared_ptr<job>& j = it->second;
  job_state queued = job_state::queued;
  j->state.compare_exchange_strong(queued, job_state::running, std::memory_order_release);
  const std::uint32_t lane = observer_.admitted();
  j->cancel_signals[key.partition] = std::make_unique<boost::asio::cancellation_signal>();
  j->running[key.partition] = true;
  const std::uint64_t sequence = dispatch_sequence_++;
  // The completion handler holds the core: a partition's coroutine never outlives it.
  boost::asio::co_spawn(
      executor_, run_partition(j, key.partition, std::move(gpu_slot), sequence, lane),
      boost::asio::bind_cancellation_slot(j->cancel_signals[key.partition]->slot(),
                                          [self = shared_from_this()](std::exception_ptr e) {
                                            if (!e) return;
                                            try {
                                              std::rethrow_exception(e);
                                            } catch (const std::exception& ex) {
                                              COPROVE_LOG(error, "engine")
                                                  << "partition coroutine ended with an exception: " << ex.what();
                                            } catch (...) {
                                              COPROVE_LOG(error, "engine")
                                                  << "partition coroutine ended with an unknown exception";
                                            }
                                          }));
}

template <class R, class F>
boost::asio::awaitable<R> engine_core::run_on_cpu(F f) {
  co_return co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void(std::exception_ptr, R)>(
      [this, &f](auto handler) {
        auto work = boost::asio::make_work_guard(boost::asio::get_associated_executor(handler, strand_));
        boost::asio::post(cpu_, [&f, handler = std::move(handler), work = std::move(work)]() mutable {
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

namespace {

// Throws operation_aborted when the partition's job was stopped or its coroutine cancelled.
void stop_if_cancelled(const job& j, boost::asio::cancellation_state state) {
  if (j.stop_requested || state.cancelled() != boost::asio::cancellation_type::none)
    throw std::system_error(runtime::operation_aborted());
}

// The assignment a partition proves: in `a` when only it was sent, kept by the synthesis
// otherwise (empty when a configured synthesizer returned a, b and c alone).
std::span<const fr> assignment_of(partition_inputs& inputs, const synthesis_outcome& s) {
  return s.matrices ? std::span<const fr>(inputs.a_span().data(), s.assignment_size) : std::span<const fr>(s.assignment);
}

// The device's work for a synthesized partition: the assignment with the matrices, or a, b and c;
// the quotient; for a bellman key its evaluation at zeta, which depends only on the request, the
// partition and its public inputs (checked when the device is done); then, when the job proves, the
// proof's MSMs on the backend over the assignment and h (h stays with the backend: on a GPU only
// the sums come back). A job without a key (results = evaluation_record) copies h to the host.
quotient_task make_task(const job& j, std::size_t index, partition_inputs& inputs, const synthesis_outcome& s) {
  const std::span<const fr> assignment = assignment_of(inputs, s);
  quotient_task task =
      s.matrices ? quotient_task::from_assignment(assignment, s.matrices, *j.domain)
                 : quotient_task::from_evaluations(inputs.a_span(), inputs.b_span(),
                                                   j.zkey ? std::span<const fr>{} : std::span<const fr>(inputs.c_span()),
                                                   *j.domain);
  if (j.zkey) {
    task.in_odd_coset_form();  // snarkjs's form: no C, no evaluation at zeta (the proof is the check)
  } else {
    task.evaluate_at(field::derive_partition_zeta(j.request.circuit, j.request.log_constraints, j.request.seed, index,
                                                  s.output.public_inputs));
  }
  if (!j.key) return task.copy_h_to_host(inputs.h_span());
  // No assignment to prove with: the device's quotient and its check still run (a row that does
  // not hold shows there first), then prove_partition refuses.
  if (assignment.empty()) return task;
  return task.prove_with(j.key->keys.pk, assignment);
}

// The device's answer into the result: its timings and the evaluation record, checked here
// before it is returned. Throws partition_failure for a refusal, a device error or a record that
// does not verify.
void take_device_outcome(partition_result& result, const device_outcome& device, std::string_view backend,
                         const job& j, const quotient_task& task) {
  if (device.error)
    throw partition_failure(engine_errc::backend_failed, std::string(backend) + " quotient on device " +
                                                             std::to_string(result.device) + " slot " +
                                                             std::to_string(result.slot) + " failed: " +
                                                             device.error.message());
  const quotient_timings& t = device.result.timings;
  result.timings.h2d_ns = t.h2d_ns;
  result.timings.spmv_ns = t.spmv_ns;
  result.timings.gpu_compute_ns = t.compute_ns;
  result.timings.d2h_ns = t.d2h_ns;
  result.timings.evaluation_ns = t.evaluation_ns;
  result.timings.msm_ns = t.msm_ns;
  if (task.form == field::quotient_form::odd_coset_evaluations) return;  // no record: the proof is checked
  const evaluation_values& v = device.result.values;
  result.record = evaluation_record{task.zeta, v.a, v.b, v.c, v.h};
  result.verified = verify(result.record, j.domain->size());
  if (!result.verified)
    throw partition_failure(engine_errc::verification_failed,
                            "partition " + std::to_string(result.index) + " of job " + std::to_string(j.id) +
                                ": the evaluation record does not verify (h(zeta) * (zeta^n - 1) != "
                                "a(zeta) * b(zeta) - c(zeta))");
}

// The error a partition ended with, from what its steps threw.
std::pair<std::error_code, std::string> failure_of(std::exception_ptr thrown, std::size_t index) {
  const std::string prefix = "partition " + std::to_string(index) + ": ";
  try {
    std::rethrow_exception(thrown);
  } catch (const partition_failure& e) {
    return {make_error_code(e.code()), e.what()};
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::operation_canceled) return {runtime::operation_aborted(), {}};
    return {e.code(), prefix + e.what()};
  } catch (const std::exception& e) {
    return {make_error_code(engine_errc::backend_failed), prefix + e.what()};
  } catch (...) {
    return {make_error_code(engine_errc::backend_failed), prefix + "unknown error"};
  }
}

}  // namespace

// One partition: each step awaits a part (partition inputs, synthesis, the worker-slot pool, the
// device); the observer hears of each event; the inputs give everything back as they go out of
// scope, before the partition's end is recorded.
boost::asio::awaitable<void> engine_core::run_partition(std::shared_ptr<job> j, std::size_t index,
                                                        runtime::permit gpu_slot, std::uint64_t dispatch_sequence,
                                                        std::uint32_t lane) {
  namespace asio = boost::asio;
  co_await asio::this_coro::throw_if_cancelled(false);
  const partition_ref ref{j->id, index, lane};
  const std::uint64_t admitted = now_ns();
  partition_result result;
  result.index = index;
  result.dispatch_sequence = dispatch_sequence;
  result.timings.queue_wait_ns = admitted - j->submit_ns;
  std::pair<std::error_code, std::string> failure;
  depth_sample measured_times;
  {
    partition_inputs inputs;
    inputs.gpu_slot = std::move(gpu_slot);
    try {
      co_await acquire_inputs(*j, ref, inputs);
      const synthesis_outcome synthesized = co_await synthesize(*j, ref, inputs);
      result.is_pinned = inputs.is_pinned();
      result.timings.synthesis_ns = synthesized.end - synthesized.start;
      result.pce_used = synthesized.output.pce_used;
      result.spmv_on_backend = synthesized.matrices != nullptr;
      stop_if_cancelled(*j, co_await asio::this_coro::cancellation_state);
      const quotient_task task = make_task(*j, index, inputs, synthesized);

      const worker_ref worker = co_await acquire_worker(ref, result.timings);
      result.device = static_cast<int>(worker.device);
      result.slot = worker.slot;
      if (synthesized.matrices) co_await make_resident(worker, ref, synthesized.matrices);
      if (task.key) co_await make_key_resident(worker, ref, *j);
      const std::uint64_t started = now_ns();
      observer_.device_started(worker.device);
      device_outcome device = co_await run_on_worker(worker, task);
      const std::uint64_t finished = now_ns();
      measured_times.device_ns = finished - started;
      observer_.device_done(ref, worker, started, finished, device.result.timings);
      leave_worker(worker);
      take_device_outcome(result, device, backend_->name(), *j, task);
      stop_if_cancelled(*j, co_await asio::this_coro::cancellation_state);
      if (j->key) {
        co_await prove_partition(*j, ref, std::move(device.result), synthesized, result);
        stop_if_cancelled(*j, co_await asio::this_coro::cancellation_state);
      }
    } catch (...) {
      failure = failure_of(std::current_exception(), index);
    }
  }  // inputs: buffers, full-input permit, reservation, GPU slot, in that order
  const std::uint64_t end = now_ns();
  result.timings.total_ns = end - j->submit_ns;
  const auto& [ec, message] = failure;
  if (!ec && depth_controller_) {
    measured_times.synthesis_ns = result.timings.synthesis_ns;
    measured_times.after_device_ns = result.timings.prove_ns + result.timings.proof_verify_ns;
    // The partition that records its circuit's constraint cache takes the slow path once.
    measured_times.synthesis_one_off = !result.pce_used && !config_.synthesizer;
    measured(measured_times);
  }
  observer_.partition_ended(ref, admitted, end, result.timings.queue_wait_ns, ec ? nullptr : &result.timings,
                            result.is_pinned, ec);
  if (ec && ec != std::errc::operation_canceled) {
    COPROVE_LOG_F(error, "engine", job_fields(j->id, index)) << message;
  }
  partition_ended(j, index, ec ? std::nullopt : std::optional<partition_result>(std::move(result)), ec, message);
}

boost::asio::awaitable<void> engine_core::acquire_inputs(const job& j, const partition_ref& ref,
                                                         partition_inputs& inputs) {
  namespace asio = boost::asio;
  input_sources from = sources();
  const std::uint64_t start = now_ns();
  co_await reserve_memory(inputs, from, j.reservation_bytes);
  stop_if_cancelled(j, co_await asio::this_coro::cancellation_state);
  const std::uint64_t reserved = now_ns();
  observer_.memory_reserved(ref, start, reserved);
  // A partition that will most likely send only its assignment (its circuit's PCE exists, or the
  // configured synthesizer sends assignments) leases a and h; b and c follow only if its
  // synthesis needs them after all.
  const bool lean = lean_inputs_ && j.witness_fits &&
                    (config_.synthesizer || j.zkey || pce_->expects_deferral(j.circuit_id) ||
                     full_in_flight_.contains(j.circuit_id));
  co_await lease_buffers(inputs, from, j.domain->size() * sizeof(fr), lean, j.circuit_id);
  stop_if_cancelled(j, co_await asio::this_coro::cancellation_state);
  observer_.buffers_leased(ref, reserved, now_ns());
}

// Synthesis on the CPU executor, straight into the leased buffers. While the circuit's PCE is
// being built (policy wait) it waits for the build here, on the control executor, instead of on a
// synthesis thread; a lean partition whose synthesis finds no PCE after all leases b and c late
// and synthesizes again with the full set.
boost::asio::awaitable<synthesis_outcome> engine_core::synthesize(const job& j, const partition_ref& ref,
                                                                  partition_inputs& inputs) {
  if (j.zkey) co_return co_await take_witness(j, ref, inputs);
  bool run_hook = true;
  for (;;) {
    observer_.synthesis_started();
    synthesis_outcome s = co_await run_on_cpu<synthesis_outcome>([&] {
      return synthesize_partition(config_, *pce_, j.id, j.request, ref.partition, inputs.a_span(), inputs.b_span(),
                                  inputs.c_span(), observer_.synthesis_lane(), run_hook);
    });
    observer_.synthesis_stopped();
    if (!s.error.empty())
      throw partition_failure(engine_errc::synthesis_failed, "synthesis of " + j.request.circuit + "/" +
                                                                 std::to_string(j.request.log_constraints) +
                                                                 " partition " + std::to_string(ref.partition) +
                                                                 " failed: " + s.error);
    if (s.pce_building) {
      run_hook = false;
      co_await await_pce_build(j.circuit_id);
      continue;
    }
    if (s.needs_abc) {
      // No PCE to defer to after all (the builder in flight had not started it yet, or its build
      // failed, or it was dropped): b and c, then the synthesis again.
      input_sources from = sources();
      const std::uint64_t late = now_ns();
      co_await acquire_late_abc(inputs, from, j.domain->size() * sizeof(fr), j.circuit_id);
      observer_.late_abc_leased(ref, late, now_ns());
      run_hook = true;
      continue;
    }
    const synthesis_path path =
        config_.synthesizer ? synthesis_path::configured : s.output.pce_used ? synthesis_path::pce : synthesis_path::slow;
    if (path == synthesis_path::slow) pce_files_->built(j.circuit_id, s.end - s.start);
    observer_.synthesized(ref, s.lane, s.start, s.end, path, s.matrices != nullptr);
    co_return s;
  }
}

// A zkey circuit's partition: its witness instead of a synthesis. Only the assignment goes to a
// backend that evaluates the matrices when it fits `a`; otherwise A w and B w are evaluated here
// into a and b (the leased set is full then) and the witness is kept for the proof.
boost::asio::awaitable<synthesis_outcome> engine_core::take_witness(const job& j, const partition_ref& ref,
                                                                    partition_inputs& inputs) {
  observer_.synthesis_started();
  synthesis_outcome s = co_await run_on_cpu<synthesis_outcome>([&] {
    synthesis_outcome out;
    out.lane = observer_.synthesis_lane();
    out.start = now_ns();
    const std::vector<fr>& w = (*j.request.witnesses)[ref.partition];
    out.output.public_inputs.assign(w.begin() + 1, w.begin() + 1 + static_cast<std::ptrdiff_t>(j.zkey->num_public));
    const std::span<fr> a = inputs.a_span();
    if (config_.backend_spmv && j.witness_fits) {
      std::copy(w.begin(), w.end(), a.begin());
      out.matrices = j.zkey->matrices;
      out.assignment_size = w.size();
    } else if (inputs.b_span().empty()) {
      out.needs_abc = true;
    } else {
      std::vector<fr> c(a.size());
      j.zkey->matrices->evaluate(w, a, inputs.b_span(), c);
      out.assignment = w;
    }
    out.end = now_ns();
    return out;
  });
  observer_.synthesis_stopped();
  if (s.needs_abc) {
    input_sources from = sources();
    co_await acquire_late_abc(inputs, from, j.domain->size() * sizeof(fr), j.circuit_id);
    co_return co_await take_witness(j, ref, inputs);
  }
  observer_.synthesized(ref, s.lane, s.start, s.end, synthesis_path::witness, s.matrices != nullptr);
  co_return s;
}

boost::asio::awaitable<void> engine_core::await_pce_build(const std::string& circuit_id) {
  // Not cancellable: the build ends on its own, and the partition looks at its job afterwards.
  co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void()>(
      [this, &circuit_id](auto handler) {
        using handler_type = decltype(handler);
        struct waiting {
          handler_type handler;
          boost::asio::executor_work_guard<boost::asio::any_io_executor> work;
        };
        auto state = std::make_shared<waiting>(waiting{std::move(handler), boost::asio::make_work_guard(executor_)});
        auto resume = [state] {
          auto ex = state->work.get_executor();
          boost::asio::post(ex, [state] {
            state->work.reset();
            std::move(state->handler)();
          });
        };
        if (!pce_->notify_when_built(circuit_id, resume)) resume();
      },
      boost::asio::use_awaitable);
}

boost::asio::awaitable<worker_ref> engine_core::acquire_worker(const partition_ref& ref, partition_timings& timings) {
  const std::uint64_t queued = now_ns();
  observer_.gpu_queued();
  auto [ec, worker] =
      co_await workers_.async_acquire(partition_key{ref.job, ref.partition}, boost::asio::use_awaitable);
  if (ec) {
    observer_.left_gpu_queue();
    throw std::system_error(ec);
  }
  const std::uint64_t acquired = now_ns();
  timings.gpu_queue_ns = acquired - queued;
  observer_.on_worker(ref, queued, acquired);
  co_return worker;
}

template <class Upload>
boost::asio::awaitable<void> engine_core::upload_on_cpu(worker_ref worker, const std::string& what, Upload upload) {
  std::string upload_error = co_await run_on_cpu<std::string>([&]() -> std::string {
    try {
      upload();
      return {};
    } catch (const std::exception& e) {
      return e.what()[0] != '\0' ? e.what() : "unknown error";
    }
  });
  if (!upload_error.empty()) {
    leave_worker(worker);
    throw partition_failure(engine_errc::backend_failed, std::string(backend_->name()) + " backend could not take " +
                                                             what + " on device " + std::to_string(worker.device) +
                                                             ": " + upload_error);
  }
}

// A circuit's matrices go to a device once, on its first task there: the copy blocks its caller,
// so it runs on the CPU executor rather than here, where it would hold up every completion.
boost::asio::awaitable<void> engine_core::make_resident(worker_ref worker, const partition_ref& ref,
                                                        const std::shared_ptr<const pce_matrices>& matrices) {
  if (backend_->matrices_resident(worker.device, *matrices)) co_return;
  const std::uint64_t start = now_ns();
  co_await upload_on_cpu(worker, "the matrices of " + matrices->circuit_id,
                         [&] { backend_->prepare_matrices(worker.device, matrices); });
  observer_.matrices_uploaded(ref, worker, start, now_ns());
}

// The same for the proving key's points, on the first proof of its circuit on the device.
boost::asio::awaitable<void> engine_core::make_key_resident(worker_ref worker, const partition_ref& ref,
                                                            const job& j) {
  const std::shared_ptr<const groth16::proving_key>& pk = j.key->keys.pk;
  if (backend_->key_resident(worker.device, *pk)) co_return;
  const std::uint64_t start = now_ns();
  co_await upload_on_cpu(worker, "the proving key of " + j.key->keys.circuit,
                         [&] { backend_->prepare_key(worker.device, pk, j.key->keys.circuit); });
  const std::uint64_t end = now_ns();
  observer_.key_uploaded(ref, worker, start, end);
  COPROVE_LOG(info, "engine") << "proving key of " << j.key->keys.circuit << " resident on device " << worker.device
                              << " after " << (end - start) / 1'000'000 << " ms";
}

// The device boundary: the only place that enqueues a quotient and waits for its completion.
boost::asio::awaitable<device_outcome> engine_core::run_on_worker(worker_ref worker, quotient_task task) {
  namespace asio = boost::asio;
  // Not cancellable: the buffers belong to the device until it is done with them.
  auto [ec, result] = co_await backend_->async_quotient(
      worker_slot{worker.device, worker.slot}, std::move(task),
      asio::bind_cancellation_slot(asio::cancellation_slot(), asio::as_tuple(asio::use_awaitable)));
  co_return device_outcome{ec, std::move(result)};
}

namespace {

// The blinding seed of one partition in the insecure deterministic mode: the same for the same
// configured seed, request and partition on every backend and in every run.
std::uint64_t blinding_seed(std::uint64_t configured, const prove_request& request, std::size_t partition) {
  field::sha256 hasher;
  hasher.update("coprove.engine.insecure_blinding");
  const auto add = [&](std::uint64_t v) {
    std::array<std::byte, 8> bytes;
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>(v >> (8 * i));
    hasher.update(bytes);
  };
  add(configured);
  hasher.update(request.circuit);
  add(request.log_constraints);
  add(request.seed);
  add(partition);
  const auto digest = hasher.finish();
  std::uint64_t out = 0;
  for (int i = 0; i < 8; ++i) out |= std::uint64_t{std::to_integer<std::uint8_t>(digest[i])} << (8 * i);
  return out;
}

// What the CPU made of one partition's proof.
struct proof_outcome {
  groth16::proof proof;
  groth16::verification check;
  std::uint64_t start = 0, proved = 0, verified = 0;
  std::uint32_t lane = 0;
  std::string error;
};

}  // namespace

// The proof, on the CPU executor, from the sums of the five MSMs the backend computed (combined
// here when they came in parts): blinded with fresh r and s, then checked with the key's verifying
// key. A proof that does not verify is never returned.
boost::asio::awaitable<void> engine_core::prove_partition(const job& j, const partition_ref& ref,
                                                          quotient_result device, const synthesis_outcome& s,
                                                          partition_result& result) {
  const std::string what = "partition " + std::to_string(ref.partition) + " of job " + std::to_string(j.id);
  if (!s.matrices && s.assignment.empty())
    throw partition_failure(engine_errc::proving_failed,
                            what + ": the configured synthesizer (" + config_.synthesizer_name +
                                ") returned a, b and c without the assignment, which a proof needs (configure "
                                "results = evaluation_record to measure the quotient alone)");
  if (!device.sums && !device.combine_sums)
    throw partition_failure(engine_errc::proving_failed,
                            what + ": the " + std::string(backend_->name()) + " backend returned no MSM sums");
  const key_entry& key = *j.key;
  proof_outcome p = co_await run_on_cpu<proof_outcome>([&]() -> proof_outcome {
    proof_outcome out;
    out.lane = observer_.synthesis_lane();
    out.start = now_ns();
    try {
      groth16::secret_source secrets =
          config_.insecure_proof_seed
              ? groth16::secret_source::insecure_seeded_announced(
                    blinding_seed(*config_.insecure_proof_seed, j.request, ref.partition))
              : groth16::secret_source::system();
      const std::optional<groth16::msm_sums> sums = device.take_sums();
      out.proof = groth16::assemble_proof(*key.keys.pk, *sums, secrets);
      out.proved = now_ns();
      out.check = groth16::verify(key.pvk, out.proof, s.output.public_inputs);
      out.verified = now_ns();
    } catch (const std::exception& e) {
      out.error = e.what()[0] != '\0' ? e.what() : "unknown error";
    }
    return out;
  });
  if (!p.error.empty())
    throw partition_failure(engine_errc::proving_failed, what + ": the proof could not be made: " + p.error);
  observer_.proved(ref, p.lane, p.start, p.proved, p.verified);
  result.timings.prove_ns = p.proved - p.start;
  result.timings.proof_verify_ns = p.verified - p.proved;
  result.verified = p.check.accepted;
  if (!p.check && j.zkey)
    throw partition_failure(engine_errc::verification_failed,
                            what + ": the witness does not satisfy the circuit (its proof does not verify with " +
                                j.zkey->name + "'s verifying key)");
  if (!p.check)
    throw partition_failure(engine_errc::verification_failed,
                            what + ": its proof does not verify with the key of " +
                                key_name(j.request.circuit, j.request.log_constraints) + ": " + p.check.reason);
  result.proof = p.proof;
  result.public_inputs = s.output.public_inputs;
}

void engine_core::leave_worker(worker_ref worker) {
  // A slot left idle while partitions wait behind a full depth is counted by cause (this
  // partition still counted on the GPU queue); the other policies admit without a depth.
  if (workers_.release(worker) && !queue_.empty() && admission_->depth_full()) observer_.slot_idle(worker);
  observer_.left_gpu_queue();
}

void engine_core::measured(const depth_sample& sample) {
  const std::optional<std::size_t> changed = depth_controller_->record(sample);
  const depth_figures f = depth_controller_->figures();
  {
    std::lock_guard lock(depth_mutex_);
    depth_basis_.synthesis_ms = f.synthesis_ms;
    depth_basis_.device_ms = f.device_ms;
    depth_basis_.after_device_ms = f.after_device_ms;
    depth_basis_.samples = f.samples;
    depth_basis_.wanted = f.wanted;
    if (changed) ++depth_basis_.changes;
  }
  if (!changed) return;
  const std::size_t from = depth_.exchange(*changed, std::memory_order_relaxed);
  // Raising admits at most the difference; lowering admits nobody until enough have ended.
  admission_->set_capacity(*changed * devices_);
  observer_.set_depth(*changed);
  COPROVE_LOG(info, "engine") << "depth " << from << " -> " << *changed << " a device (measured over " << f.samples
                              << " partitions: synthesis " << f.synthesis_ms << " ms, device " << f.device_ms
                              << " ms, after the device " << f.after_device_ms << " ms a partition; at most "
                              << depth_max_ << ")";
}

depth_basis engine_core::basis() const {
  std::lock_guard lock(depth_mutex_);
  return depth_basis_;
}

void engine_core::partition_ended(const std::shared_ptr<job>& j, std::size_t index,
                                  std::optional<partition_result> result, std::error_code ec,
                                  const std::string& message) {
  j->running[index] = false;
  ++j->ended;
  if (result) {
    j->completed.fetch_add(1, std::memory_order_relaxed);
    j->results[index] = std::move(result);
  } else if (ec != std::errc::operation_canceled) {
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
    jobs_.set_error(*j, message);
  }
  const std::size_t removed = queue_.erase_job(j->id);
  j->ended += removed;
  observer_.partitions_dropped(removed);
  for (std::size_t p = 0; p < j->running.size(); ++p)
    if (j->running[p]) j->cancel_signals[p]->emit(boost::asio::cancellation_type::terminal);
  maybe_finish(j);
}

void engine_core::stop_open_jobs(std::error_code ec, const std::string& message) {
  for (auto& j : jobs_.unfinished()) stop_job(j, ec, message);
}

void engine_core::maybe_finish(const std::shared_ptr<job>& j) {
  if (j->finished() || j->ended < j->request.partitions) return;
  j->end_ns = now_ns();
  job_state state = job_state::done;
  if (j->stop_requested)
    state = j->error_code == std::errc::operation_canceled || j->error_code == engine_errc::shut_down
                ? job_state::cancelled
                : job_state::failed;
  const std::string error = jobs_.finish(*j, state);
  observer_.job_ended(state);
  live_jobs_.erase(j->id);
  COPROVE_LOG_F(info, "engine", job_fields(j->id))
      << "job " << j->id << " " << to_string(state) << ": " << j->completed << "/" << j->request.partitions
      << " partitions verified in " << ms(j->end_ns - j->submit_ns) << " ms" << (error.empty() ? "" : " (") << error
      << (error.empty() ? "" : ")");
  auto waiters = std::move(j->waiters);
  j->waiters.clear();
  for (auto& [id, waiter] : waiters) complete_waiter(j, std::move(waiter));
}

void engine_core::complete_waiter(const std::shared_ptr<job>& j, job_waiter waiter) {
  prove_result result;
  result.job_id = j->id;
  result.request = j->request;
  result.total_ns = j->end_ns - j->submit_ns;
  result.kind = config_.results;
  if (j->key) result.vk_sha256 = j->key->vk_sha256;
  for (const auto& r : j->results)
    if (r) result.partitions.push_back(*r);
  std::error_code ec = j->state.load(std::memory_order_acquire) == job_state::done ? std::error_code{} : j->error_code;
  auto slot = boost::asio::get_associated_cancellation_slot(waiter.handler);
  if (slot.is_connected()) slot.clear();
  complete_on_associated(strand_, std::move(waiter.handler), ec, std::move(result));
}

void engine_core::await(std::uint64_t id, engine::prove_handler handler, bool cancels_job) {
  boost::asio::post(strand_, [self = shared_from_this(), id, handler = std::move(handler), cancels_job]() mutable {
    auto j = self->jobs_.find(id);
    if (!j) {
      complete_on_associated(self->strand_, std::move(handler), make_error_code(runtime::errc::invalid_argument),
                             prove_result{});
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
  auto j = jobs_.find(job_id);
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
  auto j = jobs_.find(id);
  if (!j || j->finished()) return false;
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
    if (!drain) self->stop_open_jobs(make_error_code(engine_errc::shut_down), "the engine shut down");
    self->maybe_complete_shutdown();
    self->pump();
  });
}

void engine_core::close() {
  boost::asio::post(strand_, [self = shared_from_this()] {
    self->stopping_ = true;
    self->stop_open_jobs(make_error_code(engine_errc::shut_down), "the engine was destroyed");
    self->admission_->stop();
  });
}

void engine_core::maybe_complete_shutdown() {
  if (!stopping_ || shutdown_waiters_.empty()) return;
  if (observer_.in_flight().current() != 0 || !queue_.empty()) return;
  if (!jobs_.all_finished()) return;
  admission_->stop();
  auto waiters = std::move(shutdown_waiters_);
  shutdown_waiters_.clear();
  for (auto& handler : waiters) complete_on_associated(strand_, std::move(handler), std::error_code{});
}

std::optional<job_status> engine_core::status(std::uint64_t id) const { return jobs_.status(id); }

engine_status engine_core::status_snapshot() const {
  engine_status s;
  s.backend = std::string(backend_->name());
  s.devices = backend_->device_names();
  s.worker_slots_per_device = slots_;
  s.plan = plan_;
  s.device_keys = key_copies_;
  s.pinned_pool = pool_->stats();
  s.pce_policy = pce_->policy();
  s.pce = pce_->stats();
  s.pce_bytes = pce_->bytes();
  s.gpu_slots = {admission_->capacity(), admission_->available()};
  s.memory_reservation = {memory_->capacity(), memory_->available()};
  s.full_input_slots = {full_inputs_ ? full_inputs_->capacity() : 0, full_inputs_ ? full_inputs_->available() : 0};
  s.dispatch = {config_.policy,
                depth_,
                observer_.queued(),
                observer_.in_flight().current(),
                observer_.synthesizing().current(),
                observer_.gpu_queue().current(),
                observer_.in_flight().maximum(),
                observer_.synthesizing().maximum(),
                basis()};
  s.dispatch.depth = depth_per_device();
  s.pce_cache_dir = config_.pce_cache_dir;
  s.pce_cache = pce_files_->entries();
  s.bottleneck = report().bottleneck;
  s.jobs = jobs_.counts();
  s.domains = jobs_.domains();
  return s;
}

engine_report engine_core::report() const {
  engine_report r;
  r.pinned_pool = pool_->stats();
  r.pce_policy = pce_->policy();
  r.pce = pce_->stats();
  r.pce_bytes = pce_->bytes();
  r.plan = plan_;
  r.device_keys = key_copies_;
  r.pce_cache_dir = config_.pce_cache_dir;
  r.pce_cache = pce_files_->entries();
  r.synthesis_threads = synthesis_threads_;
  r.worker_slots_per_device = slots_;
  observer_.fill(r);
  r.dispatch.basis = basis();
  r.bottleneck = name_bottleneck(r);
  observer_.set_bottleneck(r.bottleneck.kind);
  return r;
}

}  // namespace detail

engine::engine(boost::asio::any_io_executor control, engine_config cfg, std::unique_ptr<compute_backend> backend)
    : core_(std::make_shared<detail::engine_core>(std::move(control), std::move(cfg), std::move(backend))) {
  core_->start();
}

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

bool engine::expired(std::uint64_t job_id) const { return core_->expired(job_id); }

std::size_t engine::cancel_queued() { return core_->cancel_queued(); }

std::optional<job_status> engine::status(std::uint64_t job_id) const { return core_->status(job_id); }

engine_status engine::status_snapshot() const { return core_->status_snapshot(); }

boost::json::object engine::status_json() const { return to_json(core_->status_snapshot()); }

engine_report engine::report() const { return core_->report(); }

boost::json::object engine::report_json() const { return to_json(core_->report()); }

void engine::reset_report() { core_->reset_report(); }
void engine::wait_for_prewarm() { core_->wait_for_prewarm(); }

const memory_plan& engine::plan() const { return core_->plan(); }

const groth16::verifying_key* engine::verifying_key(std::string_view circuit, unsigned log_constraints) const {
  return core_->verifying_key(circuit, log_constraints);
}

std::vector<std::pair<std::string, unsigned>> engine::key_ids() const { return core_->key_ids(); }

const compute_backend& engine::backend() const { return core_->backend(); }

const engine_config& engine::config() const { return core_->config(); }

std::size_t engine::depth_per_device() const noexcept { return core_->depth_per_device(); }

runtime::trace_writer* engine::trace() { return core_->trace(); }

}  // namespace coprove::engine
