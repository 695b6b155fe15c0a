// The owned CUDA event.
#include "coprove/cuda/event.hpp"

#include "coprove/cuda/error.hpp"

#include <utility>

namespace coprove::cuda {

event::event(unsigned flags) { COPROVE_CUDA_TRY(cudaEventCreateWithFlags(&event_, flags)); }

event::~event() {
  if (event_ != nullptr) COPROVE_CUDA_ASSERT_OK(cudaEventDestroy(event_));
}

event::event(event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

event& event::operator=(event&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) COPROVE_CUDA_ASSERT_OK(cudaEventDestroy(event_));
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void event::record(cudaStream_t s) { COPROVE_CUDA_TRY(cudaEventRecord(event_, s)); }

cudaError_t event::query() const noexcept {
  (void)cudaGetLastError();
  const cudaError_t e = cudaEventQuery(event_);
  if (e == cudaErrorNotReady) (void)cudaGetLastError();  // not an error: do not leave it behind
  return e;
}

void event::synchronize() const { COPROVE_CUDA_TRY(cudaEventSynchronize(event_)); }

float event::elapsed_ms_since(const event& start) const {
  float ms = 0;
  COPROVE_CUDA_TRY(cudaEventElapsedTime(&ms, start.event_, event_));
  return ms;
}

}  // namespace coprove::cuda
