// completion_bridge: turns "the work enqueued on this CUDA stream so far is done" into a set
// runtime::completion_signal, which posts its waiters to their executors. The bridge never runs
// user code on its own threads, and never blocks the caller's thread.
//
// A thread that spins anyway (runtime::run_spinning, the io thread) can poll the bridge itself
// through as_spin_source(): a completion it finds is set on that thread, so a waiter bound to its
// io_context resumes with no cross-thread post and no wake-up. The bridge's own poller thread
// still finishes everything the spinning thread does not (it stands back while that one polls).
#pragma once

#include "coprove/runtime/completion_signal.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace coprove::runtime {
class spin_source;  // spin_runner.hpp
}

namespace coprove::cuda {

namespace detail {
class bridge_impl;
}

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
  /// The default, chosen by measurement on the reference H200 (bench/PINNED_NOTES.md): the lowest
  /// p50 with every kind of io thread, and a completion found by a plain memory read.
  static constexpr strategy default_strategy = strategy::stream_write;

  /// Starts the poller thread (all but host_func). Throws cuda_error; for stream_write also when a
  /// visible device cannot run 64-bit stream memory operations (cudaErrorNotSupported, naming
  /// the device), never falling back to another strategy.
  explicit completion_bridge(strategy s = default_strategy);
  /// Waits for the work it watches to finish or fail (so that a buffer released after a signal is
  /// never reused while the GPU still reads it), sets those signals, then stops its thread.
  ~completion_bridge();
  completion_bridge(const completion_bridge&) = delete;
  completion_bridge& operator=(const completion_bridge&) = delete;

  /// Sets `done` once the work enqueued on `stream` so far has finished, or with the CUDA error
  /// (cuda_category) when it failed or the bridge could not be enqueued. Thread-safe; returns
  /// without waiting. Signals of one stream are set in the order of these calls. `stream` must stay
  /// valid until `done` is set.
  void signal_when_done(cudaStream_t stream, runtime::completion_signal done);

  strategy get_strategy() const noexcept { return strategy_; }
  /// Signals enqueued but not yet set.
  std::size_t in_flight() const noexcept;

  /// Sets, on the calling thread, the signals whose work is done (their waiters are posted, never
  /// run inline) and returns how many. Never blocks: returns 0 when another thread is polling.
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

// Small kernels that measure and test the bridge (bridge_kernels.cu). Each returns the launch status.

/// Enqueues an empty kernel: the unit of work of the bridge latency benchmark.
cudaError_t launch_empty_kernel(cudaStream_t s) noexcept;
/// Enqueues a one-thread kernel that busy-waits about `ns` nanoseconds of GPU time.
cudaError_t launch_delay_kernel(cudaStream_t s, std::uint64_t ns) noexcept;

namespace detail {
/// Writes `value` into `*flag` (mapped pinned memory) once the stream's earlier work is done.
cudaError_t launch_write_flag(cudaStream_t s, unsigned long long* flag, unsigned long long value) noexcept;
/// Enqueues a kernel that writes through a null pointer: an illegal-address fault that ruins the
/// process's context. Only for a test that runs it in a child process.
cudaError_t launch_fault_kernel(cudaStream_t s) noexcept;
}  // namespace detail

}  // namespace coprove::cuda
