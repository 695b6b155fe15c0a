// The compute-backend interface: what the engine needs from a device to turn a partition's a, b, c
// evaluations (or its assignment and the circuit's matrices) into its quotient h, as one Asio
// asynchronous operation, async_quotient. The CUDA backend (cuda/) and the host backend (CPU NTT)
// both implement it and compute the same math; only composition roots (the coprove binary, tests,
// benchmarks) choose one.
#pragma once

#include <coprove/engine/detail/quotient_op.hpp>
#include <coprove/engine/quotient_task.hpp>
#include <coprove/pinned/host_allocator.hpp>

#include <boost/asio/async_result.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace coprove::runtime {
class spin_source;  // spin_runner.hpp
}

namespace coprove::engine {

/// The completion of async_quotient: an error in the backend's own category (empty on success)
/// and the task's result.
using quotient_signature = void(std::error_code, quotient_result);

/// A backend's handle on one pending async_quotient: complete() it once, from any thread; the
/// caller's handler then runs on its associated executor, never inside complete(). Move-only. A
/// handle destroyed without complete() completes the operation with runtime::errc::shut_down.
class quotient_completion {
 public:
  quotient_completion() noexcept = default;
  explicit quotient_completion(detail::quotient_op_base* op) noexcept : op_(op) {}
  quotient_completion(quotient_completion&& other) noexcept : op_(std::exchange(other.op_, nullptr)) {}
  quotient_completion& operator=(quotient_completion&& other) noexcept {
    if (this != &other) {
      abandon();
      op_ = std::exchange(other.op_, nullptr);
    }
    return *this;
  }
  quotient_completion(const quotient_completion&) = delete;
  quotient_completion& operator=(const quotient_completion&) = delete;
  ~quotient_completion() { abandon(); }

  /// Completes the operation with `ec` and `result`; the handle is empty afterwards.
  void complete(std::error_code ec, quotient_result result) noexcept {
    if (detail::quotient_op_base* op = std::exchange(op_, nullptr)) op->complete(ec, std::move(result));
  }
  /// True while the operation waits for complete().
  explicit operator bool() const noexcept { return op_ != nullptr; }

 private:
  void abandon() noexcept;

  detail::quotient_op_base* op_ = nullptr;
};

/// A device's memory as its driver reports it.
struct device_memory {
  std::size_t total_bytes = 0;
  std::size_t free_bytes = 0;
  /// In use before the backend allocated anything of its own there: the driver's context (with its
  /// local memory and modules) and other processes. The device memory plan charges it.
  std::size_t in_use_at_start_bytes = 0;
};

/// A set of devices, each with a fixed number of worker slots (own stream and device buffers),
/// that run quotient tasks asynchronously.
class compute_backend {
 public:
  virtual ~compute_backend();

  /// "cuda" or "host".
  virtual std::string_view name() const noexcept = 0;
  virtual std::size_t device_count() const noexcept = 0;
  /// Worker slots per device; work on one slot runs in order, slots of a device overlap.
  virtual std::size_t worker_slots_per_device() const noexcept = 0;
  virtual std::vector<std::string> device_names() const = 0;
  /// The allocator the pinned pool should use for host buffers this backend reads and writes.
  virtual std::unique_ptr<pinned::host_allocator> make_host_allocator() const = 0;
  /// True when the backend copies the host buffers to a device (DMA), so that they should be
  /// page-locked; false when it computes on them in place (the host backend).
  virtual bool copies_to_device() const noexcept = 0;

  /// Runs `task`'s stages on `worker` as one piece of work and completes with
  /// void(std::error_code, quotient_result): the values at zeta and the stage timings in the
  /// result, h in task.h when the task asked for its host copy. Errors come in the backend's own
  /// category (a worker slot out of range or a task check_quotient_task refuses among them; the
  /// backend logs the details); the result is then empty. Never blocks on the computation.
  ///
  /// Executor: the handler runs on its associated executor, submitted there (blocking.never) by
  /// whichever thread finds the work done, never inline in this call or on a backend's own thread;
  /// outstanding work is counted on that executor meanwhile. The handler must have an associated
  /// executor (use_awaitable, use_future, bind_executor): a backend has none to fall back on.
  /// Cancellation: not supported once started. The device owns the task's buffers until the work
  /// is done, so a cancellation request through a slot bound to the handler changes nothing and the
  /// operation always runs to its end; a caller that gives up waits for the completion before
  /// freeing them.
  /// Order: the tasks of one worker slot run, and complete, in the order of these calls.
  template <boost::asio::completion_token_for<quotient_signature> Token>
  auto async_quotient(worker_slot worker, quotient_task task, Token&& token) {
    return boost::asio::async_initiate<Token, quotient_signature>(initiate_quotient{this}, token, worker,
                                                                  std::move(task));
  }

  /// The backend's side of async_quotient (call async_quotient; a backend that wraps another
  /// forwards here): starts the task and completes `done` once, from any thread, with the outcome,
  /// never throwing (a refused task completes `done` with the error).
  virtual void start_quotient(worker_slot worker, quotient_task task, quotient_completion done) noexcept = 0;

  /// Makes these matrices resident for `device` (the CUDA backend uploads them, blocking, if this
  /// device does not hold them yet): call it from a CPU thread before async_quotient, so the
  /// copy does not block the caller of async_quotient. Safe from any thread. Default: nothing.
  /// Throws on a device error (out of memory: a std::runtime_error naming the device, the circuit
  /// and the bytes).
  virtual void prepare_matrices(std::size_t device, const std::shared_ptr<const pce_matrices>& matrices);
  /// True when async_quotient with these matrices on `device` would not upload them first.
  /// Default: true.
  virtual bool matrices_resident(std::size_t device, const pce_matrices& matrices) const;
  /// Bytes of matrices held for tasks across all devices (device memory for CUDA; 0 by default).
  virtual std::size_t resident_matrices_bytes() const noexcept;

  /// Makes the proving key's points resident for `device` (the CUDA backend uploads them, blocking,
  /// once per device and key object, and frees them once nobody holds the key): call it from a CPU
  /// thread before a task with proof_msms (`circuit` names it in logs and errors). Default: nothing.
  /// Throws on a device error (no room: a std::runtime_error naming the device, the circuit and
  /// the bytes).
  virtual void prepare_key(std::size_t device, const std::shared_ptr<const groth16::proving_key>& key,
                           std::string_view circuit);
  /// True when a task with this key on `device` would not upload it first. Default: true.
  virtual bool key_resident(std::size_t device, const groth16::proving_key& key) const;
  /// Bytes of proving keys held on devices, all devices together (0 by default).
  virtual std::size_t resident_key_bytes() const noexcept;
  /// Copies of a proving key's points a device holds (the CUDA backend's precomputed MSM bases;
  /// 1 by default): the device memory plan charges the key that many times.
  virtual std::size_t device_key_copies() const noexcept { return 1; }
  /// The copies the backend would keep, the fastest first, when it leaves the choice to the engine's
  /// device memory plan (the CUDA backend's msm_copies "auto"): the engine settles the first that
  /// every device holds beside its slots, else 1. Empty when its copies are fixed (the default).
  /// Until settled, device_key_copies() is 1.
  virtual std::vector<std::size_t> device_key_copies_wanted() const { return {}; }
  /// Settles the copies the engine chose (1, or one of device_key_copies_wanted()), before the
  /// first key is made resident; device_key_copies() follows it. Throws std::logic_error for a
  /// backend whose copies are fixed, another count, or after a key upload.
  virtual void settle_device_key_copies(std::size_t copies);
  /// The device's memory, for the device memory plan; nullopt for a backend whose devices use the
  /// host's memory (the host backend: its keys are charged in the host memory plan).
  virtual std::optional<device_memory> device_memory_of(std::size_t device) const;
  /// Device memory one worker slot takes for a task of domain size n and `variables` witness values
  /// that runs the proof's MSMs over keys held in `key_copies` copies (its buffers and the MSMs'
  /// workspace, the largest of them); 0 for the host backend.
  virtual std::size_t device_working_bytes(std::size_t n, std::size_t variables, std::size_t key_copies) const noexcept;
  /// Device memory a device holds once for tasks of domain size n, shared by its worker slots (the
  /// CUDA backend's NTT tables); 0 for the host backend.
  virtual std::size_t device_shared_bytes(std::size_t n) const noexcept;

  /// Completions the thread running the engine's io_context may finish itself within its spin
  /// windows (pass it to runtime::run_spinning): the CUDA backend's completion bridges, so a GPU
  /// completion resumes its coroutine with no cross-thread hop. Null when the backend has none
  /// (the host backend). Valid while the backend lives.
  virtual runtime::spin_source* completion_source() const noexcept { return nullptr; }

  /// Host memory the backend holds for its work at domain size n, all slots of all devices
  /// together (the memory plan charges it): the host backend's per-slot a, b, c for tasks that
  /// arrive with matrices; 0 for a GPU backend. (A host task that does not ask for the host copy
  /// of h also uses one further vector of n per slot, kept from then on; no engine task does.)
  virtual std::size_t host_working_bytes(std::size_t /*n*/) const noexcept { return 0; }

 private:
  struct initiate_quotient {
    compute_backend* self;
    template <class Handler>
    void operator()(Handler&& handler, worker_slot worker, quotient_task task) const {
      using op = detail::quotient_op<std::decay_t<Handler>>;
      std::decay_t<Handler> h(std::forward<Handler>(handler));
      self->start_quotient(worker, std::move(task), quotient_completion(op::create(std::move(h))));
    }
  };
};

/// The host (CPU) backend: `devices` x `slots_per_device` worker slots computing
/// field::compute_quotient (and the evaluation at zeta with prover/evaluation.hpp); `threads`
/// worker threads in all (0 = one per slot).
std::unique_ptr<compute_backend> make_host_backend(std::size_t devices = 1,
                                                   std::size_t slots_per_device = 2,
                                                   std::size_t threads = 0);

}  // namespace coprove::engine
