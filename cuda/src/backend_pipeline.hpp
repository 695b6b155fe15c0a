// The CUDA backend's device proof pipeline: one task's stages enqueued on a worker slot's stream
// (H2D, SpMV, the evaluations at zeta, the quotient, the proof's MSMs, D2H), timed with the task's
// events. Stateless: what it reads and writes comes in its arguments (the slot's buffers, the
// resident matrices and key, the task); the place that becomes a template on the curve. Internal to
// cuda/src.
#pragma once

#include "backend_resident.hpp"
#include "backend_slot.hpp"
#include "backend_staging.hpp"

#include <coprove/engine/compute_backend.hpp>

#include <cstddef>

namespace coprove::cuda::detail {

// The task's stages on the slot's stream, with timing events: H2D a, b, c (or H2D w and the
// SpMV) -> a, b, c at zeta -> the quotient kernels -> h at zeta -> D2H of h and the values, as
// listed. The quotient overwrites all three buffers, so a, b and c are evaluated before it; h
// stays in the first of them until the slot's next task.
// pce: the task's matrices on the device (null: a, b and c come from the host); key: its proving
// key on the device (null: no proof MSMs); bytes: one buffer of the domain. Throws (cuda_error, or
// std::invalid_argument from the MSMs) with whatever part of the work it enqueued left running.
void enqueue_stages(device_slot& w, const engine::quotient_task& task, const device_pce* pce, const device_key* key,
                    std::size_t bytes, stage_events& events);

}  // namespace coprove::cuda::detail
