// One worker slot of the CUDA backend: its stream, its device buffers (a, b, c, the assignment, the
// evaluation's scratch), its NTT plans, its MSM arena and the events of its tasks, reused from task
// to task. Internal to cuda/src.
#pragma once

#include "backend_staging.hpp"

#include <coprove/cuda/device.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/evaluation.hpp>
#include <coprove/cuda/msm.hpp>
#include <coprove/cuda/ntt.hpp>
#include <coprove/cuda/stream.hpp>
#include <coprove/field/fr.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace coprove::cuda::detail {

struct device_buffer {
  field::fr* data = nullptr;
  int device = 0;
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() {
    if (data != nullptr) {
      scoped_device on(device);
      COPROVE_CUDA_ASSERT_OK(cudaFree(data));
    }
  }
};

struct device_slot {
  int device = 0;
  std::size_t index = 0;
  stream work;
  // By log size and roots (a zkey's domain is on ffjavascript's), kept once built.
  std::map<std::pair<unsigned, field::domain_roots>, std::unique_ptr<ntt_plan>> plans;
  std::size_t capacity = 0;  // elements of each buffer
  device_buffer a, b, c;
  std::size_t witness_capacity = 0;
  device_buffer witness;  // a task's assignment, when it comes with matrices
  device_buffer evaluation;  // the values at zeta (4 elements), then the evaluation's scratch
  // The proof MSMs' workspace: an arena as large as the largest key's proof has needed, so that the
  // slot holds exactly what the device memory plan charges it (a pool shared by the slots kept
  // blocks of every size asked for, and a 2^24 proof ran out of device memory beside its plan).
  std::unique_ptr<msm_context> msm;
  std::mutex events_mutex;
  std::vector<std::unique_ptr<stage_events>> free_events;

  device_slot(int dev, std::size_t i) : device(dev), index(i), work(dev) {
    a.device = b.device = c.device = evaluation.device = witness.device = dev;
  }

  // Room for an assignment of `count` elements; grown (blocking) when a larger one arrives.
  void prepare_witness(std::size_t count) {
    if (witness_capacity >= count) return;
    work.synchronize();  // the stream may still read the old buffer
    if (witness.data != nullptr) {
      COPROVE_CUDA_TRY(cudaFree(witness.data));
      witness.data = nullptr;
      witness_capacity = 0;
    }
    COPROVE_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&witness.data), count * sizeof(field::fr)));
    witness_capacity = count;
  }

  // An MSM arena of at least `bytes` (at most `max_bytes`, 0: no cap); grown (blocking) when a key
  // needs more. Throws cuda_error (cudaErrorMemoryAllocation) above the cap or without room.
  void prepare_msm(std::size_t bytes, std::size_t max_bytes) {
    if (msm != nullptr && msm->arena_bytes() >= bytes) return;
    if (max_bytes != 0 && bytes > max_bytes)
      throw cuda_error(cudaErrorMemoryAllocation, "cuda backend: a proof's MSMs on device " + std::to_string(device) +
                                                      " slot " + std::to_string(index) + " need " +
                                                      std::to_string(bytes) + " bytes of workspace, above the cap of " +
                                                      std::to_string(max_bytes) + " (msm_workspace_max_bytes)");
    work.synchronize();  // the stream may still use the old arena
    msm.reset();
    msm = std::make_unique<msm_context>(device, msm_arena{bytes});
  }

  // This slot's plan for (log_n, roots), or null.
  const ntt_plan* plan_for(unsigned log_n, field::domain_roots roots) const noexcept {
    const auto it = plans.find(std::make_pair(log_n, roots));
    return it == plans.end() ? nullptr : it->second.get();
  }

  // Buffers of at least n elements and a plan for n; grown (blocking) the first time a size is seen.
  // The plan shares `tables_from`'s tables (another slot's plan of the device) when there is one.
  void prepare(unsigned log_n, field::domain_roots roots, const ntt_plan* tables_from) {
    const std::size_t n = std::size_t{1} << log_n;
    if (capacity < n) {
      // The stream may still read the old buffers: finish it before freeing them.
      work.synchronize();
      for (device_buffer* buf : {&a, &b, &c}) {
        if (buf->data != nullptr) {
          COPROVE_CUDA_TRY(cudaFree(buf->data));
          buf->data = nullptr;
        }
        COPROVE_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&buf->data), n * sizeof(field::fr)));
      }
      capacity = n;
    }
    if (evaluation.data == nullptr) {
      COPROVE_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&evaluation.data),
                                  4 * sizeof(field::fr) + evaluation_scratch_bytes(log_n)));
    }
    const auto key = std::make_pair(log_n, roots);
    if (plans.find(key) == plans.end()) {
      plans.emplace(key, tables_from != nullptr ? std::make_unique<ntt_plan>(tables_from->share_tables())
                                                : std::make_unique<ntt_plan>(log_n, device, roots));
    }
  }

  bool prepared_for(unsigned log_n, field::domain_roots roots) const noexcept {
    return capacity >= (std::size_t{1} << log_n) && evaluation.data != nullptr &&
           plans.find(std::make_pair(log_n, roots)) != plans.end();
  }

  std::unique_ptr<stage_events> take_events() {
    std::lock_guard lock(events_mutex);
    if (free_events.empty()) return std::make_unique<stage_events>();
    auto e = std::move(free_events.back());
    free_events.pop_back();
    return e;
  }
  void return_events(std::unique_ptr<stage_events> e) noexcept {
    try {
      std::lock_guard lock(events_mutex);
      free_events.push_back(std::move(e));
    } catch (...) {
      // No room to keep them: they are destroyed, and made anew for a later task.
    }
  }
};

}  // namespace coprove::cuda::detail
