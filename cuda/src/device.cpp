// Device discovery and the scoped device selection.
#include "coprove/cuda/device.hpp"

#include "coprove/cuda/error.hpp"

namespace coprove::cuda {

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no GPU: not an error for the caller
    return 0;
  }
  return n;
}

int current_device() {
  int d = 0;
  COPROVE_CUDA_TRY(cudaGetDevice(&d));
  return d;
}

std::string device_name(int device) {
  cudaDeviceProp prop{};
  COPROVE_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}

scoped_device::scoped_device(int device) : previous_(current_device()), changed_(previous_ != device) {
  if (changed_) COPROVE_CUDA_TRY(cudaSetDevice(device));
}

scoped_device::~scoped_device() {
  if (changed_) COPROVE_CUDA_ASSERT_OK(cudaSetDevice(previous_));
}

}  // namespace coprove::cuda
