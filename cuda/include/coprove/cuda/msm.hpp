// Multi-scalar multiplication sum_i s_i P_i on the GPU, for G1 and G2 over Fr scalars: the A, B,
// L and H sums of a Groth16 proof. Callable from ordinary C++ (no nvcc needed). msm_plan.hpp
// describes the method: Pippenger with signed digits, a counting sort of the entries into buckets,
// bucket sums spread over many threads in chunks, the window weighting and the final combination on
// the device; scalars 0 are skipped and scalars 1 summed in a group of their own, outside the
// windows. Results equal groth16::msm's (the same group element; compare in affine form).
//
// The bases stay on the device (msm_bases: uploaded once, from page-locked memory, and freed with
// the object); the scalars are read where they are, in device memory or in page-locked host memory
// (then straight over the bus, once). A run enqueues its work on a stream and returns; its
// workspace comes from the msm_context's memory pool, stream-ordered, and goes back to it when the
// run ends. Variable time, like groth16::msm.
#pragma once

#include <coprove/cuda/msm_plan.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>

namespace coprove::cuda {

/// One device's MSM resources: a memory pool for the runs' workspaces, which keeps what it has
/// taken (up to `retain_bytes`) between runs so that a run does not pay for fresh device memory.
class msm_context {
 public:
  /// Throws std::invalid_argument for a device that does not exist, cuda_error on failure.
  explicit msm_context(int device, std::size_t retain_bytes = ~std::size_t{0});
  ~msm_context();
  msm_context(const msm_context&) = delete;
  msm_context& operator=(const msm_context&) = delete;

  int device() const noexcept { return device_; }
  cudaMemPool_t pool() const noexcept { return pool_; }
  /// Device memory the pool holds now (in use or kept for later runs).
  std::size_t reserved_bytes() const;

 private:
  int device_ = 0;
  cudaMemPool_t pool_ = nullptr;
};

/// Affine bases resident on one device, in the device layout (x, y; the identity as (0, 0)).
template <class Affine>
class msm_bases {
 public:
  /// Uploads `points` to `device` and waits for the copy (blocking; restores the caller's current
  /// device). The points must lie in page-locked host memory (std::invalid_argument otherwise):
  /// they are copied as they are in chunks, and reformatted on the device.
  msm_bases(std::span<const Affine> points, int device);
  ~msm_bases();
  msm_bases(msm_bases&& other) noexcept;
  msm_bases& operator=(msm_bases&& other) noexcept;
  msm_bases(const msm_bases&) = delete;
  msm_bases& operator=(const msm_bases&) = delete;

  std::size_t size() const noexcept { return count_; }
  int device() const noexcept { return device_; }
  const void* data() const noexcept { return data_; }
  /// Device memory the bases take (96 bytes a point in G1, 192 in G2).
  std::size_t bytes() const noexcept;

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t count_ = 0;
  int device_ = 0;
};

using msm_bases_g1 = msm_bases<field::g1_affine>;
using msm_bases_g2 = msm_bases<field::g2_affine>;

/// Events a run records on its stream between its phases, for benchmarks that want the time of
/// each (cudaEventElapsedTime between consecutive ones once the stream is done).
struct msm_phase_events {
  cudaEvent_t start = nullptr;    ///< before the first kernel
  cudaEvent_t placed = nullptr;   ///< entries counted and placed into their groups
  cudaEvent_t buckets = nullptr;  ///< every group summed to one point
  cudaEvent_t done = nullptr;     ///< windows weighted and combined, the result copied out
};

/// Tuning knobs.
struct msm_gpu_options {
  /// Window width in bits (1..msm_max_window_bits); 0: the plan's choice for the size.
  unsigned window_bits = 0;
  /// When set, the run records these events (all four must be valid events of the device).
  const msm_phase_events* phases = nullptr;
};

/// Device memory a run of `plan` takes from the context's pool (workspace and scan scratch).
std::size_t msm_workspace_bytes(const msm_plan& plan);

/// Enqueues sum_{i < count} scalars[i] * bases[i] on `stream` and returns; when the stream reaches
/// the end of the run, *result holds the sum in XYZZ coordinates (result: device memory or
/// page-locked host memory; use result->to_affine() or to_jacobian() once the stream is done).
/// scalars: `count` field::fr values (Montgomery form, as the prover holds them) in device memory
/// of the bases' device or in page-locked host memory, 16-byte aligned; count <= bases.size().
/// The scalars, the bases and *result must stay valid until the stream is done. Throws
/// std::invalid_argument for a null or misplaced pointer or a count out of range, cuda_error when
/// an enqueue fails (nothing of the run stays allocated then).
void msm_async(msm_context& context, const msm_bases_g1& bases, const field::fr* scalars, std::size_t count,
               field::g1_xyzz* result, cudaStream_t stream, const msm_gpu_options& options = {});
/// The same in G2.
void msm_async(msm_context& context, const msm_bases_g2& bases, const field::fr* scalars, std::size_t count,
               field::g2_xyzz* result, cudaStream_t stream, const msm_gpu_options& options = {});

}  // namespace coprove::cuda
