// Multi-scalar multiplication sum_i s_i P_i on the GPU, for G1 and G2 over Fr scalars: the A, B,
// L and H sums of a Groth16 proof. Callable from ordinary C++ (no nvcc needed). msm_plan.hpp
// describes the method: Pippenger with signed digits, a counting sort of the entries into buckets,
// bucket sums spread over many threads in chunks, the window weighting and the final combination on
// the device; scalars 0 are skipped and scalars 1 summed in a group of their own, outside the
// windows. Results equal groth16::msm's (the same group element; compare in affine form).
//
// The bases stay on the device (msm_bases: uploaded once, through page-locked memory, and freed
// with the object); the scalars are read where they are, in device memory or in page-locked host memory
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
#include <cstdint>
#include <span>

namespace coprove::cuda {

/// An arena of `bytes` for msm_context: see there.
struct msm_arena {
  std::size_t bytes = 0;
};

/// One device's MSM resources: where the runs' workspaces come from. Either a memory pool, which
/// keeps what it has taken (up to `retain_bytes`) between runs so that a run does not pay for fresh
/// device memory, and serves runs on any streams; or an arena, one allocation made up front that
/// every run carves its workspace from, so that the runs take exactly that memory however their
/// sizes vary (a pool shared by streams keeps blocks of every size it was asked for). The runs on
/// an arena must follow one another on one stream (a worker slot's).
class msm_context {
 public:
  /// A pool. Throws std::invalid_argument for a device that does not exist, cuda_error on failure.
  /// `max_bytes` caps the pool (0: the driver's limit): a run whose workspace does not fit then
  /// fails to enqueue with cudaErrorMemoryAllocation.
  explicit msm_context(int device, std::size_t retain_bytes = ~std::size_t{0}, std::size_t max_bytes = 0);
  /// An arena of arena.bytes (cudaMalloc now; cuda_error when the device has no room). A run whose
  /// workspace exceeds it fails to enqueue with cudaErrorMemoryAllocation, naming both sizes.
  msm_context(int device, msm_arena arena);
  ~msm_context();
  msm_context(const msm_context&) = delete;
  msm_context& operator=(const msm_context&) = delete;

  int device() const noexcept { return device_; }
  /// The pool; null for an arena.
  cudaMemPool_t pool() const noexcept { return pool_; }
  /// The arena and its size; null and 0 for a pool.
  void* arena() const noexcept { return arena_; }
  std::size_t arena_bytes() const noexcept { return arena_bytes_; }
  /// Device memory the context holds now: the pool's (in use or kept for later runs), or the arena.
  std::size_t reserved_bytes() const;

 private:
  int device_ = 0;
  cudaMemPool_t pool_ = nullptr;
  void* arena_ = nullptr;
  std::size_t arena_bytes_ = 0;
};

/// Affine bases resident on one device, in the device layout (x, y; the identity as (0, 0)).
template <class Affine>
class msm_bases {
 public:
  /// Uploads `points` to `device` and waits for the copy (blocking; restores the caller's current
  /// device). They are copied as they are in chunks, and reformatted on the device: straight from
  /// page-locked host memory, or from pageable memory through a small page-locked staging area
  /// (two chunks; the host's copy into one overlaps the transfer of the other). With `precompute`
  /// the shifted copies are then made on the device (doublings, one inversion a point). Throws
  /// std::invalid_argument for copies the plan refuses (plan_msm), cuda_error on failure.
  msm_bases(std::span<const Affine> points, int device, const msm_precompute& precompute = {});
  ~msm_bases();
  msm_bases(msm_bases&& other) noexcept;
  msm_bases& operator=(msm_bases&& other) noexcept;
  msm_bases(const msm_bases&) = delete;
  msm_bases& operator=(const msm_bases&) = delete;

  /// Points (of one copy).
  std::size_t size() const noexcept { return count_; }
  int device() const noexcept { return device_; }
  const void* data() const noexcept { return data_; }
  /// Copies held (1: the points alone); copy j starts size() points after copy j - 1.
  unsigned copies() const noexcept { return copies_; }
  /// The window width the copies were made for (0 without copies).
  unsigned window_bits() const noexcept { return window_bits_; }
  /// Device memory the bases take (96 bytes a point and copy in G1, 192 in G2).
  std::size_t bytes() const noexcept;

 private:
  void release() noexcept;
  void make_copies();

  void* data_ = nullptr;
  std::size_t count_ = 0;
  int device_ = 0;
  unsigned copies_ = 1;
  unsigned window_bits_ = 0;
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
  /// Window width in bits (1..msm_max_window_bits); 0: the plan's choice for the size. Bases with
  /// copies fix it (another width is refused).
  unsigned window_bits = 0;
  /// Entries a thread of level 0 adds (1..msm_max_level0_chunk); 0: the plan's choice. For
  /// measuring that choice; a run over entries placed for another run takes the plan's.
  std::uint32_t level0_chunk = 0;
  /// When set, the run records these events (all four must be valid events of the device).
  const msm_phase_events* phases = nullptr;
  /// One pass or two for placing the entries (msm_plan.hpp); `plan`: the plan's choice. For
  /// measuring that choice; a run over entries placed for another run takes the plan's.
  msm_placement placement = msm_placement::plan;
  /// With two passes, at most this many scalars a slice (0: as many as the workspace holds), for
  /// testing the slices.
  std::size_t placement_slice = 0;
};

/// sum_w 2^(window_bits w) sums[w] + sums.back() over the windows sums[0 .. size - 2] and the ones'
/// group sums.back() (Horner's rule; sums is never empty).
template <class Jacobian, class Xyzz>
Jacobian combine_windows(std::span<const Xyzz> sums, std::uint32_t window_bits) noexcept {
  const std::size_t windows = sums.size() - 1;
  Jacobian acc = Jacobian::identity();
  for (std::size_t w = windows; w-- > 0;) {
    if (w + 1 < windows)
      for (std::uint32_t b = 0; b < window_bits; ++b) acc = acc.doubled();
    acc = acc + sums[w].to_jacobian();
  }
  return acc + sums[windows].to_jacobian();
}

/// A run's windows before their combination: sums[w] the sum of window w for w < windows and
/// sums[windows] the ones' group. combine() is Horner's rule on the host (a few hundred
/// microseconds on one core, where one device thread takes milliseconds for its serial chain of
/// (windows - 1) x window_bits doublings): what a caller that reads the result on the host anyway
/// (the proof's MSMs) does after the stream.
template <class Xyzz, class Jacobian>
struct msm_window_sums {
  std::uint32_t windows = 0, window_bits = 0;  ///< set when the run is enqueued
  Xyzz sums[msm_window_count(1) + 1];

  /// The windows the run wrote and its ones' group; read only once the stream is done.
  std::span<const Xyzz> used() const noexcept { return std::span<const Xyzz>(sums, windows + 1); }
  /// sum_w 2^(window_bits w) sums[w] + sums[windows]; read only once the stream is done.
  Jacobian combine() const noexcept { return combine_windows<Jacobian>(used(), window_bits); }
};

using msm_window_sums_g1 = msm_window_sums<field::g1_xyzz, field::g1_jacobian>;
using msm_window_sums_g2 = msm_window_sums<field::g2_xyzz, field::g2_jacobian>;

/// Device memory a run of `plan` takes from the context (workspace and scan scratch).
std::size_t msm_workspace_bytes(const msm_plan& plan);

/// Device memory the MSMs of one Groth16 proof take from an arena context, one after another on
/// one stream: the runs plan_proof_msms plans (H over `h_count` scalars, A, B_G1 and B_G2 over
/// `variables`, msm_windows_same_scalars_async, placed once or apart, and L over `aux`) over a key
/// whose bases were made with `key` (as asked, not as one query's bases resolved it: each query
/// resolves a width of 0 for its own count): the largest of them. Throws std::invalid_argument where
/// plan_msm does.
std::size_t msm_proof_workspace_bytes(std::size_t h_count, std::size_t variables, std::size_t aux,
                                      const msm_precompute& key);

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

/// msm_async without the final combination: when the stream reaches the end of the run, `out`
/// (page-locked host memory or device memory) holds the window sums, and out->combine() the sum.
/// out->windows and out->window_bits are written here, before the call returns.
void msm_windows_async(msm_context& context, const msm_bases_g1& bases, const field::fr* scalars, std::size_t count,
                       msm_window_sums_g1* out, cudaStream_t stream, const msm_gpu_options& options = {});
/// The same in G2.
void msm_windows_async(msm_context& context, const msm_bases_g2& bases, const field::fr* scalars, std::size_t count,
                       msm_window_sums_g2* out, cudaStream_t stream, const msm_gpu_options& options = {});

/// Whether one placement of `count` scalars' entries (their digits sorted into buckets, the run's
/// first phase) serves runs over all three sets of bases: the plans' widths, windows and copies are
/// the same, and so is the number of points where there are copies (an entry names its copy by it).
bool msm_places_alike(const msm_bases_g1& g1_first, const msm_bases_g1& g1_second, const msm_bases_g2& g2,
                      std::size_t count);

/// The window sums over the same `count` scalars of three sets of bases (a proof's A and B in G1
/// and B in G2, over one witness): three msm_windows_async runs with default options, whose entries
/// are placed once where msm_places_alike says one placement serves them (returns true), else once
/// each (returns false). The placement and the runs' workspaces come from the context in one
/// piece (about the three runs' largest, as separate runs take). Throws as msm_windows_async.
bool msm_windows_same_scalars_async(msm_context& context, const msm_bases_g1& g1_first, const msm_bases_g1& g1_second,
                                    const msm_bases_g2& g2, const field::fr* scalars, std::size_t count,
                                    msm_window_sums_g1* out_first, msm_window_sums_g1* out_second,
                                    msm_window_sums_g2* out_g2, cudaStream_t stream);

}  // namespace coprove::cuda
