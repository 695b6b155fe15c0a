// The owned CUDA stream.
#include "coprove/cuda/stream.hpp"

#include "coprove/cuda/device.hpp"
#include "coprove/cuda/error.hpp"

#include <utility>

namespace coprove::cuda {

stream::stream(int device, bool non_blocking, int priority) {
  device_ = device < 0 ? current_device() : device;
  scoped_device on(device_);
  COPROVE_CUDA_TRY(cudaStreamCreateWithPriority(&stream_, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault,
                                                priority));
}

stream::~stream() {
  if (stream_ != nullptr) COPROVE_CUDA_ASSERT_OK(cudaStreamDestroy(stream_));
}

stream::stream(stream&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)), device_(other.device_) {}

stream& stream::operator=(stream&& other) noexcept {
  if (this != &other) {
    if (stream_ != nullptr) COPROVE_CUDA_ASSERT_OK(cudaStreamDestroy(stream_));
    stream_ = std::exchange(other.stream_, nullptr);
    device_ = other.device_;
  }
  return *this;
}

void stream::synchronize() const { COPROVE_CUDA_TRY(cudaStreamSynchronize(stream_)); }

bool stream::ready() const {
  (void)cudaGetLastError();
  const cudaError_t e = cudaStreamQuery(stream_);
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  if (e != cudaSuccess) detail::throw_cuda_error(e, "cudaStreamQuery(stream_)", __FILE__, __LINE__);
  return true;
}

}  // namespace coprove::cuda
