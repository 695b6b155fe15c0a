// The completion bridge's kernels: the mapped-flag writer, and the empty, delay and fault kernels
// its tests and benchmark use. Kernels and thin launchers only.
// The launchers are declared in completion_bridge.hpp, which is not included here: it brings in
// Asio, and .cu files stay free of it. The declarations below must match it.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace coprove::cuda {

cudaError_t launch_empty_kernel(cudaStream_t s) noexcept;
cudaError_t launch_delay_kernel(cudaStream_t s, std::uint64_t ns) noexcept;
namespace detail {
cudaError_t launch_write_flag(cudaStream_t s, unsigned long long* flag, unsigned long long value) noexcept;
cudaError_t launch_fault_kernel(cudaStream_t s) noexcept;
}  // namespace detail

namespace {

__global__ void empty_kernel() {}

__global__ void delay_kernel(std::uint64_t ns) {
  std::uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

__global__ void write_flag_kernel(unsigned long long* flag, unsigned long long value) {
  // Stream order guarantees the earlier work is done; the fence makes the write visible to the host.
  *reinterpret_cast<volatile unsigned long long*>(flag) = value;
  __threadfence_system();
}

__global__ void fault_kernel(int* p) { *reinterpret_cast<volatile int*>(p) = 1; }

cudaError_t launch_status() noexcept { return cudaGetLastError(); }

}  // namespace

cudaError_t launch_empty_kernel(cudaStream_t s) noexcept {
  (void)cudaGetLastError();
  empty_kernel<<<1, 1, 0, s>>>();
  return launch_status();
}

cudaError_t launch_delay_kernel(cudaStream_t s, std::uint64_t ns) noexcept {
  (void)cudaGetLastError();
  delay_kernel<<<1, 1, 0, s>>>(ns);
  return launch_status();
}

namespace detail {

cudaError_t launch_write_flag(cudaStream_t s, unsigned long long* flag, unsigned long long value) noexcept {
  (void)cudaGetLastError();
  write_flag_kernel<<<1, 1, 0, s>>>(flag, value);
  return launch_status();
}

cudaError_t launch_fault_kernel(cudaStream_t s) noexcept {
  (void)cudaGetLastError();
  fault_kernel<<<1, 1, 0, s>>>(nullptr);
  return launch_status();
}

}  // namespace detail
}  // namespace coprove::cuda
