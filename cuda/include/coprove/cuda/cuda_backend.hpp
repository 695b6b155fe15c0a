// The CUDA compute backend: the prover's compute-backend interface over cuda/ streams, NTT plans
// and the completion bridge. Each device runs two or more worker slots, each with its own stream,
// device buffers and NTT plan, so one slot's copies overlap another's kernels. Host buffers come
// from the page-locking allocator, so H2D and D2H run at full PCIe speed.
#pragma once

#include <coprove/prover/compute_backend.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace coprove::cuda {

/// Visible CUDA devices; 0 when there is no driver or GPU (never throws).
std::size_t cuda_device_count() noexcept;

/// A backend over `devices` (empty = every visible GPU) with `slots_per_device` worker slots each
/// (at least 2). Throws std::invalid_argument for an unknown device id, a repeated one or fewer
/// than 2 slots, and std::runtime_error when no GPU is visible.
std::unique_ptr<prover::compute_backend> make_cuda_backend(std::vector<int> devices = {},
                                                           std::size_t slots_per_device = 2);

}  // namespace coprove::cuda
