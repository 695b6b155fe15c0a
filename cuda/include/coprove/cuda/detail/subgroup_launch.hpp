// The subgroup tests' kernel launches (subgroup_kernels.cu, C++17 for nvcc), called by
// subgroup.cpp: points in the MSM's device layout, constants as the host's bytes (Montgomery form).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace coprove::cuda::detail {

/// Lowers *first_bad to the index (first_index + i) of every point i of `points` (n G1 points,
/// affine_device<fq_device>) outside the subgroup: endo(P) = (beta x, y) must be -[x^2]P. `beta`:
/// 48 bytes, a field::fq.
void launch_g1_subgroup_test(const void* points, std::size_t n, std::size_t first_index, const void* beta,
                             unsigned long long* first_bad, cudaStream_t stream);

/// The same for G2 points: psi(P) = (conj(x) cx, conj(y) cy) must be -[|x|]P. `cx`, `cy`: 96 bytes
/// each, a field::fq2.
void launch_g2_subgroup_test(const void* points, std::size_t n, std::size_t first_index, const void* cx,
                             const void* cy, unsigned long long* first_bad, cudaStream_t stream);

}  // namespace coprove::cuda::detail
