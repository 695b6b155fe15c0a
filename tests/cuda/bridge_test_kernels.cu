// The completion bridge tests' kernels: one that busy-waits on the GPU's clock, and one that faults.
#include "cuda_test_kernels.hpp"

namespace coprove::cuda::testing {
namespace {

__global__ void delay_kernel(std::uint64_t ns) {
  std::uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

__global__ void fault_kernel(int* p) { *reinterpret_cast<volatile int*>(p) = 1; }

}  // namespace

cudaError_t launch_delay_kernel(cudaStream_t s, std::uint64_t ns) noexcept {
  (void)cudaGetLastError();
  delay_kernel<<<1, 1, 0, s>>>(ns);
  return cudaGetLastError();
}

cudaError_t launch_fault_kernel(cudaStream_t s) noexcept {
  (void)cudaGetLastError();
  fault_kernel<<<1, 1, 0, s>>>(nullptr);
  return cudaGetLastError();
}

}  // namespace coprove::cuda::testing
