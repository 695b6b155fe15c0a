// stream: an owned CUDA stream on one device (RAII; destroying it waits for nothing, as
// cudaStreamDestroy does not).
#pragma once

#include <cuda_runtime_api.h>

namespace coprove::cuda {

class stream {
 public:
  /// Creates a non-blocking stream (no implicit sync with the legacy default stream) on `device`
  /// (-1: the current device). Throws cuda_error.
  explicit stream(int device = -1, bool non_blocking = true, int priority = 0);
  ~stream();
  stream(stream&& other) noexcept;
  stream& operator=(stream&& other) noexcept;
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;

  cudaStream_t get() const noexcept { return stream_; }
  int device() const noexcept { return device_; }
  /// Blocks the calling thread until the stream's work is done (throws cuda_error). Never on an
  /// executor thread: use the completion_bridge there.
  void synchronize() const;
  /// True when all work enqueued so far is done; throws cuda_error on a device error.
  bool ready() const;

 private:
  cudaStream_t stream_ = nullptr;
  int device_ = 0;
};

}  // namespace coprove::cuda
