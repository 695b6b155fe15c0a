// The result staging of the CUDA backend: where a task's results land on the host (the values at
// zeta and the proof MSMs' window sums, in page-locked areas the task's last copies write), the
// events that time its stages, and the result the completion reads off them once the stream is
// done. Internal to cuda/src.
#pragma once

#include <coprove/cuda/error.hpp>
#include <coprove/cuda/event.hpp>
#include <coprove/cuda/msm.hpp>
#include <coprove/engine/compute_backend.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <system_error>
#include <vector>

namespace coprove::cuda::detail {

struct device_slot;

// A small page-locked host area: the evaluation's four values come back into it.
struct pinned_values {
  field::fr* data = nullptr;
  pinned_values() {
    COPROVE_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&data), 4 * sizeof(field::fr), cudaHostAllocPortable));
  }
  pinned_values(const pinned_values&) = delete;
  pinned_values& operator=(const pinned_values&) = delete;
  ~pinned_values() { COPROVE_CUDA_ASSERT_OK(cudaFreeHost(data)); }
};

// The proof's five MSMs leave their window sums here (page-locked, written by each run's last copy);
// they are combined on the host, where the serial chain of doublings is fast.
struct pinned_sums {
  struct windows {
    msm_window_sums_g1 a, b_g1, l, h;
    msm_window_sums_g2 b_g2;
  };
  windows* data = nullptr;
  pinned_sums() {
    void* p = nullptr;
    COPROVE_CUDA_TRY(cudaHostAlloc(&p, sizeof(windows), cudaHostAllocPortable));
    data = static_cast<windows*>(p);
  }
  pinned_sums(const pinned_sums&) = delete;
  pinned_sums& operator=(const pinned_sums&) = delete;
  ~pinned_sums() { COPROVE_CUDA_ASSERT_OK(cudaFreeHost(data)); }
  // The bytes that come back: each run's windows and its ones' group.
  std::size_t copied_bytes() const noexcept {
    std::size_t bytes = 0;
    for (const msm_window_sums_g1* w : {&data->a, &data->b_g1, &data->l, &data->h})
      bytes += (w->windows + 1) * sizeof(field::g1_xyzz);
    return bytes + (data->b_g2.windows + 1) * sizeof(field::g2_xyzz);
  }
};

// The window sums copied off the page-locked area (only what each run wrote, a few KiB), for the
// engine to combine on its CPU executor: the completion, often on the engine's io thread, only
// copies them.
struct copied_sums {
  template <class Xyzz>
  struct run {
    std::vector<Xyzz> sums;
    std::uint32_t window_bits = 0;
    template <class Windows>
    explicit run(const Windows& w) : sums(w.used().begin(), w.used().end()), window_bits(w.window_bits) {}
    template <class Jacobian>
    Jacobian combine() const noexcept {
      return combine_windows<Jacobian>(std::span<const Xyzz>(sums), window_bits);
    }
  };
  run<field::g1_xyzz> a, b_g1, l, h;
  run<field::g2_xyzz> b_g2;

  explicit copied_sums(const pinned_sums::windows& w) : a(w.a), b_g1(w.b_g1), l(w.l), h(w.h), b_g2(w.b_g2) {}
  groth16::msm_sums combine() const noexcept {
    using field::g1_jacobian;
    return groth16::msm_sums{a.combine<g1_jacobian>(), b_g1.combine<g1_jacobian>(),
                             l.combine<g1_jacobian>() + h.combine<g1_jacobian>(), b_g2.combine<field::g2_jacobian>()};
  }
};

// One task in flight, kept by its slot for the next one: the timing events (start, after H2D,
// after the SpMV (at once without it), after a/b/c at zeta, after the quotient kernels, after h at
// zeta, after the MSMs (at once without them), after D2H), where the values at zeta and the window
// sums land on the host, and, while the bridge holds it, what the completion needs.
struct stage_events {
  event start{cudaEventDefault}, h2d{cudaEventDefault}, spmv{cudaEventDefault}, evaluated{cudaEventDefault},
      compute{cudaEventDefault}, h_evaluated{cudaEventDefault}, msm{cudaEventDefault}, d2h{cudaEventDefault};
  pinned_values values;
  pinned_sums sums;

  void* owner = nullptr;  // the backend, whose finish() the bridge calls
  device_slot* slot = nullptr;
  engine::quotient_stages stages;
  std::uint64_t h2d_bytes = 0, d2h_bytes = 0;
  std::shared_ptr<const r1cs::pce_matrices> matrices;
  std::shared_ptr<const groth16::proving_key> key;
  engine::quotient_completion done;
};

/// The result of a task whose stream is done: the values at zeta, the stages' timings and, for a
/// proof, the window sums copied off the page-locked area for the engine to combine. Sets `ec`
/// (not_enough_memory) when the sums cannot be copied.
engine::quotient_result staged_result(const stage_events& events, std::error_code& ec);

}  // namespace coprove::cuda::detail
