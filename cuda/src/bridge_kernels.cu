// The completion bridge's kernels: the mapped-flag writer, and the empty kernel its benchmark
// launches (the tests' delay and fault kernels are test_cuda's, tests/cuda/bridge_test_kernels.cu).
// Kernels and thin launchers only.
// The launchers are declared in completion_bridge.hpp, which is not included here: it brings in
// Asio, and .cu files stay free of it. The declarations below must match it.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace coprove::cuda {

cudaError_t launch_empty_kernel(cudaStream_t s) noexcept;
namespace detail {
cudaError_t launch_write_flag(cudaStream_t s, unsigned long long* flag, unsigned long long value) noexcept;
}  // namespace detail

namespace {

__global__ void empty_kernel() {}

__global__ void write_flag_kernel(unsigned long long* flag, unsigned long long value) {
  // Stream order guarantees the earlier work is done; the fence makes the write visible to the host.
  *reinterpret_cast<volatile unsigned long long*>(flag) = value;
  __threadfence_system();
}

cudaError_t launch_status() noexcept { return cudaGetLastError(); }

}  // namespace

cudaError_t launch_empty_kernel(cudaStream_t s) noexcept {
  (void)cudaGetLastError();
  empty_kernel<<<1, 1, 0, s>>>();
  return launch_status();
}

namespace detail {

cudaError_t launch_write_flag(cudaStream_t s, unsigned long long* flag, unsigned long long value) noexcept {
  (void)cudaGetLastError();
  write_flag_kernel<<<1, 1, 0, s>>>(flag, value);
  return launch_status();
}

}  // namespace detail
}  // namespace coprove::cuda
