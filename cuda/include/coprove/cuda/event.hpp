// event: an owned CUDA event (RAII), timing disabled by default (cheaper to record and query).
#pragma once

#include <cuda_runtime_api.h>

namespace coprove::cuda {

class event {
 public:
  /// Creates the event on the current device (throws cuda_error).
  explicit event(unsigned flags = cudaEventDisableTiming);
  ~event();
  event(event&& other) noexcept;
  event& operator=(event&& other) noexcept;
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  cudaEvent_t get() const noexcept { return event_; }
  /// Records the work enqueued on `s` so far (throws cuda_error).
  void record(cudaStream_t s);
  /// cudaSuccess when the recorded work is done, cudaErrorNotReady while it runs, else the error.
  cudaError_t query() const noexcept;
  /// Blocks until the recorded work is done (throws cuda_error).
  void synchronize() const;
  /// Milliseconds between `start` and this event (both created with timing; throws cuda_error).
  float elapsed_ms_since(const event& start) const;

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace coprove::cuda
