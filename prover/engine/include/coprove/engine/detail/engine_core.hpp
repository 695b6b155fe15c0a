// The engine's core, shared by its parts' files: the control strand with the dispatch queue,
// admission, the worker slots and the live jobs, and the partition coroutine's steps (in
// partition_run.cpp). The core owns the parts (key registry, sizing, job table, constraint-cache
// files, partition sources) and applies what they decide. Internal to the engine library.
#pragma once

#include <coprove/engine/engine.hpp>

#include <coprove/engine/detail/admission.hpp>
#include <coprove/engine/detail/depth_controller.hpp>
#include <coprove/engine/detail/engine_sizing.hpp>
#include <coprove/engine/detail/job_table.hpp>
#include <coprove/engine/detail/key_registry.hpp>
#include <coprove/engine/detail/partition_inputs.hpp>
#include <coprove/engine/detail/partition_observer.hpp>
#include <coprove/engine/detail/partition_source.hpp>
#include <coprove/engine/detail/partition_synthesis.hpp>
#include <coprove/engine/detail/pce_files.hpp>
#include <coprove/engine/detail/worker_pool.hpp>

#include <coprove/pinned/pool.hpp>
#include <coprove/runtime/async_semaphore.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/trace.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace coprove::engine {
namespace detail {
using field::evaluation_domain;
using field::fr;
using r1cs::pce_cache;
using r1cs::pce_matrices;
using r1cs::pce_policy;

inline std::uint64_t now_ns() { return runtime::trace_writer::now_ns(); }

inline runtime::log_fields job_fields(std::uint64_t job, std::optional<std::uint64_t> partition = std::nullopt) {
  runtime::log_fields f;
  f.job = job;
  f.partition = partition;
  return f;
}

inline double ms(std::uint64_t ns) { return static_cast<double>(ns) / 1e6; }

// A job-ending error carrying the engine error and the full message.
class partition_failure : public std::runtime_error {
 public:
  partition_failure(engine_errc code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  engine_errc code() const noexcept { return code_; }

 private:
  engine_errc code_;
};

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

  const memory_plan& plan() const noexcept { return sizing_.plan; }
  std::shared_ptr<const groth16::verifying_key> verifying_key(std::string_view circuit,
                                                             unsigned log_constraints) const {
    const auto entry = keys_.find(std::string(circuit), log_constraints);
    // Aliasing: the caller holds the key entry, which an eviction cannot take away from it.
    return entry ? std::shared_ptr<const groth16::verifying_key>(entry, &entry->keys.pk->vk) : nullptr;
  }
  std::vector<std::pair<std::string, unsigned>> key_ids() const { return keys_.ids(); }
  // Keys at run time (engine_keys.cpp).
  void load_key(key_source source, engine::key_handler handler);
  void evict_key(std::string id, bool cancel_jobs, engine::key_handler handler);
  std::vector<key_info> keys() const;
  std::optional<key_source> known_key(const std::string& id) const;
  void preload_keys();
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
  // Keys at run time, on the strand: a prepared key held within the plan, or refused; an eviction.
  void register_key(std::optional<prepared_key> prepared, const std::string& error, const std::string& where,
                    engine::key_handler handler);
  void evict_on_strand(const std::string& id, bool cancel_jobs, engine::key_handler handler);
  key_info info_of(const held_key& k) const;
  held_key held_as_listed(const std::string& id) const;  // the key of `id` as keys() lists it
  // key_eviction = lru: evicts idle keys, least recently used first, until `bytes` more fit;
  // false (nothing evicted) when they cannot.
  bool make_room(std::size_t bytes, const std::string& for_id);
  std::size_t device_bytes_of(const groth16::proving_key& pk) const;
  void publish_key_metrics() const;
  input_sources sources() noexcept { return {*memory_, full_inputs_.get(), *pool_, full_in_flight_}; }

  // Runs f() on the synthesis executor and resumes the awaiting coroutine on its executor.
  template <class R, class F>
  boost::asio::awaitable<R> run_on_cpu(F f);

  strand_type strand_;
  boost::asio::any_io_executor executor_;  // strand_ as an any_io_executor, for handlers bound to it
  engine_config config_;
  std::unique_ptr<compute_backend> backend_;
  key_registry keys_;  // the proving keys and zkey circuits by id
  // What the sizing decided: the depth's limit, the plan, lean inputs (a partition leases one input
  // vector, b and c only when its synthesis takes the slow path), the device key copies.
  const engine_sizing sizing_;
  // Per device, now (the measured depth moves on the strand; readers on any thread).
  std::atomic<std::size_t> depth_{0};
  std::optional<depth_controller> depth_controller_;  // strand only; set when the depth is measured
  mutable std::mutex depth_mutex_;
  depth_basis depth_basis_;  // guarded by depth_mutex_
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
  // One source a kind of request: built-in circuits (or the configured synthesizer), zkey circuits.
  std::unique_ptr<partition_source> circuit_source_, zkey_source_;
  partition_source& source_for(const prove_request& request) const;
};

}  // namespace detail
}  // namespace coprove::engine
