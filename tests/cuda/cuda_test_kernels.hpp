// Kernels that only the tests launch (coprove_cuda_test_kernels, built into test_cuda, not the
// library): the Fq, Fq2 and XYZZ operations one at a time (fq_check_kernels.cu), and the completion
// bridge's delay and fault kernels (bridge_test_kernels.cu). Plain C++: no CUDA types beyond
// cudaStream_t and cudaError_t.
#pragma once

#include <coprove/cuda/msm_plan.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace coprove::cuda::testing {

/// Elements of Fq (48 bytes each, field::fq's layout) fq_ops_check writes for each input.
inline constexpr std::size_t fq_check_outputs = 16;
/// Over a[i], b[i] below 2p: out[16 i + k] is, for k = 0..7, a b, a + b, a - b as computed (below
/// 2p), then reduced, then -a and ((a^2 + b - a)^2 + b - a ...) (`rounds` times) reduced; for even i
/// with i + 1 < n, u = a[i] + a[i + 1] u and v = b[i] + b[i + 1] u in Fq2: k = 8, 9 are u v as
/// computed, 10, 11 reduced and 12, 13 u^2 reduced; for i + 1 < n, k = 14, 15 are
/// a[i] b[i] - a[i + 1] b[i + 1] (fq_mul_sub) as computed and reduced. zero[i] is whether a[i] is 0
/// mod p.
void fq_ops_check(const void* a, const void* b, void* out, std::uint32_t* zero, std::size_t n, unsigned rounds,
                  cudaStream_t stream);

/// Over XYZZ points p[i], q[i] of `group` (field::g1_xyzz's or g2_xyzz's layout, coordinates below
/// 2p): out[4 i + k] is, reduced, for k = 0 p + q by add_xyzz, 1 the same by add_xyzz_shared, 2 2p by
/// double_xyzz and 3 by double_xyzz_shared.
void point_ops_check(msm_group group, const void* p, const void* q, void* out, std::size_t n, cudaStream_t stream);

/// Enqueues a one-thread kernel that busy-waits about `ns` nanoseconds of GPU time.
cudaError_t launch_delay_kernel(cudaStream_t s, std::uint64_t ns) noexcept;
/// Enqueues a kernel that writes through a null pointer: an illegal-address fault that ruins the
/// process's context. Only for a test that runs it in a child process.
cudaError_t launch_fault_kernel(cudaStream_t s) noexcept;

}  // namespace coprove::cuda::testing
