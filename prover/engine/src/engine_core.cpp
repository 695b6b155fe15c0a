// The engine's core on its control strand: construction from the parts (keys, sizing, pool,
// semaphores), submission and validation, the queue and admission, the jobs' ends and their
// waiters, cancellation and shutdown, the status and the report. A partition's own steps are in
// partition_run.cpp.
#include <coprove/engine/detail/engine_core.hpp>

#include <coprove/engine/bottleneck.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/runtime/error.hpp>
#include <coprove/runtime/metrics.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>

#include <algorithm>
#include <exception>
#include <thread>

namespace coprove::engine::detail {
namespace {

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
      depth_(sizing_.depth),
      observer_(observer_config_of(config_, *backend_, sizing_.depth)),
      workers_(executor_, backend_->device_count(), backend_->worker_slots_per_device()),
      jobs_(config_.first_job_id, {config_.max_open_jobs, config_.max_open_partitions}, config_.retention) {
  if (sizing_.measured) depth_controller_.emplace(*sizing_.measured);  // starting where the sizing said
  {
    std::lock_guard lock(depth_mutex_);
    depth_basis_.source = depth_controller_ ? "measured" : "configured";
    depth_basis_.max = sizing_.depth_max;
    depth_basis_.max_reason = sizing_.depth_max_reason;
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
  pce_ = std::make_shared<pce_cache>(config_.pce, std::max<std::size_t>(sizing_.plan.pce_bytes, 1));
  memory_ = std::make_unique<runtime::async_semaphore>(
      executor_, std::max<std::size_t>(sizing_.plan.synthesis_bytes + sizing_.plan.proving_bytes, 1));
  if (sizing_.lean_inputs) full_inputs_ = std::make_unique<runtime::async_semaphore>(executor_, sizing_.plan.full_input_slots);
  if (config_.synthesis_executor) {
    cpu_ = config_.synthesis_executor;
  } else {
    own_cpu_ = std::make_unique<boost::asio::thread_pool>(sizing_.synthesis_threads);
    cpu_ = own_cpu_->get_executor();
  }
  pce_files_ = std::make_unique<pce_files>(config_.pce_cache_dir, !config_.synthesizer, pce_, cpu_);
  const source_parts parts{config_, keys_, jobs_, *pce_, *pce_files_};
  circuit_source_ = make_circuit_source(parts);
  zkey_source_ = make_zkey_source(parts);
  if (backend_->copies_to_device() && !backend_->make_host_allocator()->is_pinned())
    runtime::warn_once("engine.pageable_backend", "engine", "the backend's host allocator is not page-locked");
  COPROVE_LOG(info, "engine") << "engine on backend " << backend_->name() << ": " << sizing_.devices << " device(s) x "
                              << sizing_.slots << " worker slot(s), policy " << to_string(config_.policy) << ", depth "
                              << depth_ << " per device"
                              << (depth_controller_ ? " (measured: starting at its most, " +
                                                          std::to_string(sizing_.depth_max) + ", the most " +
                                                          (sizing_.depth_max_reason == "cpu" ? "the CPU can use"
                                                                                      : "the memory budget allows") +
                                                          "; the memory plan is sized for it)"
                                                    : std::string(" (configured)"))
                              << ", " << sizing_.synthesis_threads << " synthesis thread(s)";
  if (config_.pce_cache_dir.empty()) {
    COPROVE_LOG(info, "engine") << "constraint cache files are off (engine.pce_cache_dir is empty): each circuit's "
                                   "PCE is built in memory by its first partition";
  } else {
    COPROVE_LOG(info, "engine") << "constraint cache files in " << config_.pce_cache_dir;
    for (const circuit_keys& k : config_.keys)
      pce_files_->load(r1cs::make_circuit(k.circuit, k.log_constraints, 1, 0)->id());
  }
  // The composition root prints the plan where a person reads it; the log keeps it at debug.
  COPROVE_LOG(debug, "engine") << "memory plan\n" << sizing_.plan.describe();
}

// What the sizing decided for the devices: the key copies settled on the backend (msm_copies
// auto: anything but the fastest is a fallback, said at warning with the figures that refused it),
// published, and each device's plan said at info.
void engine_core::apply_device_sizing() {
  if (sizing_.key_copies_auto) {
    backend_->settle_device_key_copies(sizing_.key_copies.copies);
    if (sizing_.key_copies_fallback)
      COPROVE_LOG(warning, "engine") << "msm_copies auto: " << sizing_.key_copies.reason;
    else
      COPROVE_LOG(info, "engine") << "msm_copies auto: " << sizing_.key_copies.reason;
  }
  runtime::registry::global()
      .get_gauge("coprove_engine_device_key_copies",
                 "Copies of each proving key's points kept on a device for the MSMs (msm_copies, or what auto settled)")
      .set(static_cast<double>(sizing_.key_copies.copies));
  for (const device_memory_plan& device : sizing_.device_plans)
    COPROVE_LOG(info, "engine") << "device memory plan: " << device.describe();
}

void engine_core::start() {
  admission_config cfg;
  cfg.policy = config_.policy;
  cfg.depth = depth_ * sizing_.devices;
  cfg.poll_interval = config_.poll_interval;
  cfg.poll_queue_limit = config_.poll_queue_limit;
  // The strategy lives inside the core and its wake-ups check that it is still there, so a raw
  // pointer back is enough.
  admission_ = make_admission(
      cfg, executor_, observer_.gpu_queue(),
      [this](partition_key key, runtime::permit slot) { admit(key, std::move(slot)); }, [this] { pump(); });
  preload_keys();
}

engine_core::~engine_core() {
  // The CPU pool first: its tasks reference nothing of ours once their coroutines are gone.
  if (own_cpu_) own_cpu_->join();
}

partition_source& engine_core::source_for(const prove_request& request) const {
  return keys_.find_zkey(request.circuit) ? *zkey_source_ : *circuit_source_;
}

void engine_core::validate(const prove_request& request) const { source_for(request).validate(request); }

std::uint64_t engine_core::submit(prove_request request) {
  partition_source& source = source_for(request);
  prepared_job prepared = source.prepare(request);
  const circuit_facts& facts = prepared.facts;
  std::size_t working_set = facts.working_set;
  if (prepared.key && !backend_->copies_to_device())
    working_set +=
        groth16::estimate_prove_working_set(prepared.key->keys.pk->num_variables(), prepared.key->keys.pk->domain_size());
  const std::size_t capacity = memory_->capacity();
  if (working_set > capacity)
    throw std::invalid_argument("circuit: " + request.circuit + "/" + std::to_string(request.log_constraints) +
                                " needs " + std::to_string(working_set) +
                                " bytes of synthesis working set, more than the memory plan reserves (" +
                                std::to_string(capacity) + ")");
  auto j = std::make_shared<job>();
  j->request = std::move(request);
  j->domain = prepared.domain ? std::move(prepared.domain) : jobs_.domain_for(j->request.log_constraints);
  j->zkey = std::move(prepared.zkey);
  j->source = &source;
  j->reservation_bytes = working_set;
  j->circuit_id = facts.id;
  j->key = std::move(prepared.key);
  if (j->key) keys_.touch(j->zkey ? j->request.circuit : key_name(j->request.circuit, j->request.log_constraints),
                          std::chrono::system_clock::now());
  j->witness_fits = facts.witness_fits;
  if (sizing_.lean_inputs && !facts.witness_fits)
    runtime::warn_once("engine.full_inputs." + facts.id, "engine",
                       "the assignment of " + facts.id + " does not fit a vector of its domain: its partitions hold "
                       "a, b and c, and the memory plan (sized for " + config_.plan_circuit +
                       ") lets only " + std::to_string(sizing_.plan.full_input_slots) + " do so at a time");
  j->submit_ns = now_ns();
  j->results.resize(j->request.partitions);
  j->cancel_signals.resize(j->request.partitions);
  j->running.assign(j->request.partitions, false);
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
  admission_->set_capacity(*changed * sizing_.devices);
  observer_.set_depth(*changed);
  COPROVE_LOG(info, "engine") << "depth " << from << " -> " << *changed << " a device (measured over " << f.samples
                              << " partitions: synthesis " << f.synthesis_ms << " ms, device " << f.device_ms
                              << " ms, after the device " << f.after_device_ms << " ms a partition; at most "
                              << sizing_.depth_max << ")";
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
  // A finished job keeps its result alone: its key goes back to the registry, so that an evicted
  // key's memory is given back when its last job ends, not when the retention forgets the job.
  if (j->key) j->vk_sha256 = j->key->vk_sha256;
  j->key.reset();
  j->zkey.reset();
  publish_key_metrics();
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
  result.vk_sha256 = j->vk_sha256;
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
  s.worker_slots_per_device = sizing_.slots;
  s.plan = sizing_.plan;
  s.device_keys = sizing_.key_copies;
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
  r.plan = sizing_.plan;
  r.device_keys = sizing_.key_copies;
  r.pce_cache_dir = config_.pce_cache_dir;
  r.pce_cache = pce_files_->entries();
  r.synthesis_threads = sizing_.synthesis_threads;
  r.worker_slots_per_device = sizing_.slots;
  observer_.fill(r);
  r.dispatch.basis = basis();
  r.bottleneck = name_bottleneck(r);
  observer_.set_bottleneck(r.bottleneck.kind);
  return r;
}

}  // namespace coprove::engine::detail
