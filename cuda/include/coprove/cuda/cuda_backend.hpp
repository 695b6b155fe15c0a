// The CUDA compute backend: the prover's compute-backend interface over cuda/ streams, NTT plans
// and the completion bridge. Each device runs two or more worker slots, each with its own stream,
// device buffers and NTT plan, so one slot's copies overlap another's kernels. Host buffers come
// from the page-locking allocator, so H2D and D2H run at full PCIe speed. A circuit's matrices stay
// on a device while their pce_matrices object lives (a task in flight holds it); once it is gone,
// the next prepare_matrices (of any circuit), or the next upload a task does itself, frees the
// copy. A circuit's proving key stays on a device the same way. Device errors complete async_quotient in cuda_category (cudaError_t); the backend's own
// refusals and host-side failures in cuda_backend_category ("coprove.cuda_backend").
#pragma once

#include <coprove/engine/compute_backend.hpp>

#include <cstddef>
#include <memory>
#include <string_view>
#include <system_error>
#include <vector>

namespace coprove::cuda {

/// Errors of the CUDA backend that are not the device's (those come as cudaError_t values in
/// cuda_category: a failed copy or kernel, no device memory for a task's buffers or matrices).
enum class cuda_backend_errc {
  no_such_worker_slot = 1,  ///< the device or the slot is out of range
  invalid_task,             ///< check_quotient_task refused the task
  unsupported_domain,       ///< the domain is outside the NTT's sizes
  enqueue_failed,           ///< a host-side failure while enqueuing (the log says which)
};

/// The category of cuda_backend_errc ("coprove.cuda_backend"). no_such_worker_slot, invalid_task
/// and unsupported_domain compare equal to std::errc::invalid_argument.
const std::error_category& cuda_backend_category() noexcept;

std::error_code make_error_code(cuda_backend_errc e) noexcept;

/// Visible CUDA devices; 0 when there is no driver or GPU (never throws).
std::size_t cuda_device_count() noexcept;

/// The completion-bridge strategy a backend uses unless told otherwise (completion_bridge.hpp).
std::string_view default_bridge_strategy() noexcept;

/// A backend over `devices` (empty = every visible GPU) with `slots_per_device` worker slots each
/// (at least 2), completing through bridges of strategy `bridge` ("" = the default; else
/// host_func, event_poller, mapped_flag or stream_write). Throws std::invalid_argument for an
/// unknown device id, a repeated one, fewer than 2 slots or an unknown strategy, std::runtime_error
/// when no GPU is visible, and cuda_error when the strategy cannot run on a device (never switching
/// to another). `msm_workspace_max_bytes` caps each slot's workspace for a proof's MSMs (an arena the
/// size of what the largest key's proof needs, msm_proof_workspace_bytes; 0: no cap); a proof whose
/// MSMs need more fails its task with cudaErrorMemoryAllocation.
/// `msm_copies` > 1 keeps that many shifted copies of each proving key's points on the device
/// (msm_precompute: fewer additions a proof, wider windows) for windows of `msm_window_bits` (0:
/// the MSM plan's width for each query's size), and the device memory plan charges the key that
/// many times. Copies pay when they cover every window (m = 1: 13 copies for the 20-bit windows the
/// plan picks at 2^22..2^24 points, 12 for 22 bits): fewer of them leave m windows of wide buckets
/// each, which measured slower than no copies. `msm_copies` 0 (auto) leaves the count to the
/// engine's device memory plan: msm_auto_copies (13) where every device holds them beside its
/// worker slots (a 2^24 MiMC key on an H200 beside three slots: 13, 119,808 MiB, since the slots
/// share their device's NTT tables), else msm_auto_copies_second (12), else 1
/// (compute_backend::settle_device_key_copies). std::invalid_argument for
/// copies above 16, more copies than windows of that width, a width with one copy or with auto.
std::unique_ptr<engine::compute_backend> make_cuda_backend(std::vector<int> devices = {},
                                                           std::size_t slots_per_device = 3,
                                                           std::string_view bridge = {},
                                                           std::size_t msm_workspace_max_bytes = 0,
                                                           unsigned msm_copies = 1, unsigned msm_window_bits = 0);

}  // namespace coprove::cuda

template <>
struct std::is_error_code_enum<coprove::cuda::cuda_backend_errc> : std::true_type {};
