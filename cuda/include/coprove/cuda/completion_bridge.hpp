// completion_bridge: turns "the work enqueued on this CUDA stream so far is done" into a call of
// a short completion callback (call_when_done) or a set runtime::completion_signal
// (signal_when_done), which posts its waiters to their executors. The bridge never runs user code
// on its own threads, and never blocks the caller's thread: a callback only hands the completion
// on (the CUDA backend's submits the caller's handler to its executor).
//
// A thread that spins anyway (runtime::run_spinning, the io thread) can poll the bridge itself
// through as_spin_source(): a completion it finds is finished on that thread, so a waiter bound to
// its io_context resumes with no cross-thread post and no wake-up. The bridge's own poller thread
// still finishes everything the spinning thread does not (it stands back while that one polls).
#pragma once

#include "coprove/runtime/completion_signal.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <system_error>

namespace coprove::runtime {
class spin_source;  // spin_runner.hpp
}

namespace coprove::cuda {

namespace detail {
class bridge_impl;
}

/// What a bridge calls, once, when the watched work is done: `invoke(context, result)`, with an
/// empty code or the CUDA error (cuda_category). It runs on a bridge thread, the driver's callback
/// thread or a thread that polls the bridge, possibly under the bridge's lock: it must be short,
/// must not block, must not call back into the bridge, and must only hand the completion on
/// (submit a handler to its executor, set a signal), never run a caller's code itself.
struct completion_callback {
  void (*invoke)(void* context, std::error_code result) noexcept = nullptr;
  void* context = nullptr;

  void operator()(std::error_code result) const noexcept { invoke(context, result); }
};

class completion_bridge {
 public:
  enum class strategy {
    host_func,     ///< cudaLaunchHostFunc whose function only sets the signal
    event_poller,  ///< an event recorded per call, queried by one poller thread (spin, yield, sleep)
    mapped_flag,   ///< a one-thread kernel writes a sequence number into mapped pinned memory,
                   ///< polled by the poller thread
    stream_write,  ///< the stream itself writes the sequence number (cuStreamWriteValue64, no
                   ///< kernel) into mapped pinned memory; refused where the device lacks 64-bit
                   ///< stream memory operations
  };
  /// The default, chosen by measurement on the reference H200 (docs/history/pinned-and-bridge.md): the lowest
  /// p50 with every kind of io thread, and a completion found by a plain memory read.
  static constexpr strategy default_strategy = strategy::stream_write;

  /// Starts the poller thread (all but host_func). Throws cuda_error; for stream_write also when a
  /// visible device cannot run 64-bit stream memory operations (cudaErrorNotSupported, naming
  /// the device), never falling back to another strategy.
  explicit completion_bridge(strategy s = default_strategy);
  /// Waits for the work it watches to finish or fail (so that a buffer released after a signal is
  /// never reused while the GPU still reads it), finishes those callbacks and signals, then stops
  /// its thread.
  ~completion_bridge();
  completion_bridge(const completion_bridge&) = delete;
  completion_bridge& operator=(const completion_bridge&) = delete;

  /// Calls `callback` once the work enqueued on `stream` so far has finished, or with the CUDA
  /// error (cuda_category) when it failed or the bridge could not be enqueued (then at once, on
  /// this thread). Thread-safe; returns without waiting. Callbacks of one stream run in the order
  /// of these calls (with those of signal_when_done). `stream` must stay valid until then.
  void call_when_done(cudaStream_t stream, completion_callback callback) noexcept;
  /// Sets `done` as call_when_done would call a callback. Throws std::bad_alloc only.
  void signal_when_done(cudaStream_t stream, runtime::completion_signal done);

  strategy get_strategy() const noexcept { return strategy_; }
  /// Callbacks and signals enqueued but not yet finished.
  std::size_t in_flight() const noexcept;

  /// Finishes, on the calling thread, the callbacks and signals whose work is done (a signal's
  /// waiters are posted, never run inline) and returns how many. Never blocks: returns 0 when another thread is polling.
  /// Thread-safe. host_func has nothing to poll (always 0).
  std::size_t poll() noexcept;
  /// This bridge as a runtime::spin_source, for runtime::run_spinning(io, spin, stats, &source):
  /// the io thread then polls it within its spin windows. The bridge must outlive that call.
  runtime::spin_source& as_spin_source() noexcept;

  /// Whether `s` can run on every visible device (stream_write: 64-bit stream memory operations).
  static bool supported(strategy s) noexcept;

 private:
  strategy strategy_;
  std::unique_ptr<detail::bridge_impl> impl_;
};

/// "host_func", "event_poller", "mapped_flag" or "stream_write".
std::string_view to_string(completion_bridge::strategy s) noexcept;

// The bridge's small kernels (bridge_kernels.cu). Each returns the launch status.

/// Enqueues an empty kernel: the unit of work of the bridge latency benchmark.
cudaError_t launch_empty_kernel(cudaStream_t s) noexcept;

namespace detail {
/// Writes `value` into `*flag` (mapped pinned memory) once the stream's earlier work is done.
cudaError_t launch_write_flag(cudaStream_t s, unsigned long long* flag, unsigned long long value) noexcept;
}  // namespace detail

}  // namespace coprove::cuda
