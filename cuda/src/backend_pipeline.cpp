// The device proof pipeline (backend_pipeline.hpp).
#include "backend_pipeline.hpp"

#include <coprove/cuda/error.hpp>
#include <coprove/cuda/evaluation.hpp>
#include <coprove/cuda/msm.hpp>
#include <coprove/cuda/ntt.hpp>
#include <coprove/cuda/spmv.hpp>
#include <coprove/runtime/log.hpp>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <utility>

namespace coprove::cuda::detail {

namespace {

// NVTX range over the host-side enqueue of one stage; the profiler correlates it with the
// device work it launched.
class nvtx_range {
 public:
  explicit nvtx_range(const char* name) noexcept { nvtxRangePushA(name); }
  ~nvtx_range() { nvtxRangePop(); }
  nvtx_range(const nvtx_range&) = delete;
  nvtx_range& operator=(const nvtx_range&) = delete;
};

}  // namespace

void enqueue_stages(device_slot& w, const engine::quotient_task& task, const device_pce* pce,
                           const device_key* key, std::size_t bytes, stage_events& events) {
  const bool evaluate = task.stages.contains(engine::quotient_stage::evaluate_at_zeta);
  const bool copy_h = task.stages.contains(engine::quotient_stage::copy_h_to_host);
  events.d2h_bytes = 0;  // the events are reused from task to task
  const cudaStream_t s = w.work.get();
  const unsigned log_n = task.domain->log_size();
  field::fr* const d_values = w.evaluation.data;
  void* const d_scratch = w.evaluation.data + 4;
  const field_words zeta = to_field_words(task.zeta);
  {
    nvtx_range range("coprove h2d");
    events.start.record(s);
    if (!task.witness.empty())  // for the SpMV, or the proof's MSMs
      COPROVE_CUDA_TRY(cudaMemcpyAsync(w.witness.data, task.witness.data(), task.witness.size_bytes(),
                                       cudaMemcpyHostToDevice, s));
    if (pce == nullptr) {
      COPROVE_CUDA_TRY(cudaMemcpyAsync(w.a.data, task.a.data(), bytes, cudaMemcpyHostToDevice, s));
      COPROVE_CUDA_TRY(cudaMemcpyAsync(w.b.data, task.b.data(), bytes, cudaMemcpyHostToDevice, s));
      if (!task.c.empty())  // the odd-coset form forms c from a and b
        COPROVE_CUDA_TRY(cudaMemcpyAsync(w.c.data, task.c.data(), bytes, cudaMemcpyHostToDevice, s));
    }
    events.h2d.record(s);
  }
  if (pce != nullptr) {
    nvtx_range range("coprove spmv");
    void* const outputs[3] = {w.a.data, w.b.data, w.c.data};
    spmv_abc_async(pce->csr, pce->arrays[9], w.witness.data, task.matrices->num_rows, task.domain->size(), outputs,
                   s);
  }
  events.spmv.record(s);
  if (evaluate) {
    nvtx_range range("coprove evaluation abc");
    const void* const polys[] = {w.a.data, w.b.data, w.c.data};
    evaluate_lagrange_async(polys, 3, log_n, to_field_words(task.domain->omega()),
                            to_field_words(task.domain->size_inv()), zeta, d_values, d_scratch, s);
  }
  events.evaluated.record(s);
  {
    nvtx_range range("coprove quotient");
    const ntt_plan& plan = *w.plans.at(std::make_pair(log_n, task.domain->roots()));
    if (task.form == field::quotient_form::odd_coset_evaluations) {
      quotient_odd_coset_async(plan, w.a.data, w.b.data, w.c.data, s);
    } else {
      quotient_async(plan, w.a.data, w.b.data, w.c.data, s);
    }
    events.compute.record(s);
  }
  if (evaluate) {
    nvtx_range range("coprove evaluation h");
    evaluate_coefficients_async(w.a.data, log_n, zeta, d_values + 3, d_scratch, s);
  }
  events.h_evaluated.record(s);
  if (key != nullptr) {
    // h where the quotient left it (as many values as the key has H points), the witness where
    // the upload put it; the sums go straight to the page-locked area.
    nvtx_range range("coprove msm");
    const groth16::proving_key& pk = *task.key;
    const field::fr* witness = w.witness.data;
    pinned_sums::windows& out = *events.sums.data;
    msm_windows_async(*w.msm, key->h, w.a.data, pk.h.size(), &out.h, s);
    // A, B in G1 and B in G2 are sums over the same witness: its digits are sorted into buckets
    // once for the three where their plans place them alike (the same widths and copies).
    const bool shared = msm_windows_same_scalars_async(*w.msm, key->a, key->b_g1, key->b_g2, witness,
                                                       pk.num_variables(), &out.a, &out.b_g1, &out.b_g2, s);
    static std::atomic<bool> said_apart{false};  // once a process
    if (!shared && !said_apart.exchange(true)) {
      COPROVE_LOG(info, "cuda") << "the proof's MSMs over the witness place its entries once each for "
                                << key->circuit_id << ": the plans of A, B_G1 and B_G2 differ (widths or copies)";
    }
    msm_windows_async(*w.msm, key->l, witness + pk.num_inputs(), pk.num_aux(), &out.l, s);
    events.d2h_bytes += events.sums.copied_bytes();
  }
  events.msm.record(s);
  {
    nvtx_range range("coprove d2h");
    if (copy_h) {
      COPROVE_CUDA_TRY(cudaMemcpyAsync(task.h.data(), w.a.data, bytes, cudaMemcpyDeviceToHost, s));
      events.d2h_bytes += bytes;
    }
    if (evaluate) {
      COPROVE_CUDA_TRY(cudaMemcpyAsync(events.values.data, d_values, 4 * sizeof(field::fr),
                                       cudaMemcpyDeviceToHost, s));
      events.d2h_bytes += 4 * sizeof(field::fr);
    }
    events.d2h.record(s);
  }
}

}  // namespace coprove::cuda::detail
