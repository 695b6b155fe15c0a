// NTTs over BLS12-381 Fr and the Groth16 quotient on the GPU, callable from ordinary C++ (this
// header needs only the CUDA runtime API, not nvcc). Device buffers hold field::fr bytes exactly
// (Montgomery form, R = 2^256 mod r, little-endian limbs); every transform takes and returns
// natural order, with the same math as the CPU twins in prover/ntt.hpp and prover/quotient.hpp, so
// results agree bit for bit.
//
// A transform of 2^k elements runs as ceil(k / 11) passes over device memory (the six-step
// decomposition: each pass does up to 11 butterfly levels in shared memory), so no pass ever
// permutes bits on its own; the coset scaling, the 1/n factor and the pointwise step of the
// quotient are fused into the first or last pass or into the tables. Passes go through a scratch
// buffer the plan allocates stream-ordered from its own memory pool.
#pragma once

#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

namespace coprove::cuda {

namespace detail {
struct ntt_plan_state;
}

/// Everything one transform size needs on one device: twiddle and coset tables resident in device
/// memory, and a memory pool for the scratch buffers of the passes. Immutable after construction,
/// so one plan may serve several streams at once (their scratch then comes from one pool; a plan
/// per stream from share_tables keeps each stream's apart at no table cost). Up to 2^26 elements the tables include the
/// boundary twiddles of every pass but the last, per direction: about 2n elements in all (64 n
/// bytes: 1 GiB at 2^24), built on the host at construction.
class ntt_plan {
 public:
  /// Smallest and largest log2 of the transform size.
  static constexpr unsigned min_log_size = 1;
  static constexpr unsigned max_log_size = 30;

  /// Builds the tables for n = 2^log_n on `device` (blocking; restores the calling thread's
  /// current device), omega from `roots` (ffjavascript's for a zkey's quotient). Throws
  /// std::invalid_argument for log_n outside [1, 30] or a device that does not exist,
  /// coprove::cuda::cuda_error when an allocation or copy fails.
  ntt_plan(unsigned log_n, int device, field::domain_roots roots = field::domain_roots::standard);
  ~ntt_plan();
  ntt_plan(ntt_plan&&) noexcept;
  ntt_plan& operator=(ntt_plan&&) noexcept;
  ntt_plan(const ntt_plan&) = delete;
  ntt_plan& operator=(const ntt_plan&) = delete;

  unsigned log_size() const noexcept;
  std::size_t size() const noexcept;
  int device() const noexcept;
  field::domain_roots roots() const noexcept;
  /// Passes over device memory per transform.
  unsigned passes() const noexcept;
  /// Device memory the plan's tables occupy.
  std::size_t table_bytes() const noexcept;
  /// Scratch one call takes from the plan's pool while it runs: n elements for a transform,
  /// 3n for quotient_async (0 when a single pass suffices).
  std::size_t transform_scratch_bytes() const noexcept;
  std::size_t quotient_scratch_bytes() const noexcept;

  /// A plan over the same tables (read-only; freed with the last plan that reads them) with a memory
  /// pool of its own for its calls' scratch: a second stream's plan for no table memory (a device's
  /// worker slots share one set of tables). Throws coprove::cuda::cuda_error when the pool cannot be
  /// made.
  ntt_plan share_tables() const;

  const detail::ntt_plan_state& state() const noexcept { return *state_; }

 private:
  explicit ntt_plan(std::unique_ptr<detail::ntt_plan_state> state);
  std::unique_ptr<detail::ntt_plan_state> state_;
};

/// Device memory an ntt_plan for 2^log_n holds while it lives, for device memory plans: its tables
/// (ntt_plan_table_bytes, shared with the plans share_tables makes of it) and the largest scratch its
/// pool keeps (ntt_plan_scratch_bytes: quotient_async's 3n elements; the pool does not release what
/// its calls freed). Each throws std::invalid_argument for log_n outside [1, 30].
std::size_t ntt_plan_device_bytes(unsigned log_n);
std::size_t ntt_plan_table_bytes(unsigned log_n);
std::size_t ntt_plan_scratch_bytes(unsigned log_n);

// The calls below enqueue work on `stream` and return at once; `d_data` must point to
// plan.size() elements in device memory of plan.device(). They throw std::invalid_argument for a
// null pointer and coprove::cuda::cuda_error when an enqueue fails.

/// Coefficients -> evaluations at omega^i, in place.
void ntt_forward_async(const ntt_plan& plan, field::fr* d_data, cudaStream_t stream);
/// Evaluations at omega^i -> coefficients (includes 1/n), in place.
void ntt_inverse_async(const ntt_plan& plan, field::fr* d_data, cudaStream_t stream);
/// Coefficients -> evaluations on the coset g * omega^i (g = 7), in place.
void coset_ntt_async(const ntt_plan& plan, field::fr* d_data, cudaStream_t stream);
/// Evaluations on the coset g * omega^i -> coefficients, in place.
void coset_intt_async(const ntt_plan& plan, field::fr* d_data, cudaStream_t stream);

/// The Groth16 quotient, as field::compute_quotient (bit for bit): from the evaluations a, b, c on
/// the domain, leaves in d_a the coefficients (natural order) of (A*B - C) / (X^n - 1) computed on
/// the coset, in six transforms (C is never evaluated on the coset). d_b and d_c are overwritten
/// (they end up holding B's coset evaluations and C's coefficients divided by g^n - 1). The three
/// buffers must not overlap.
void quotient_async(const ntt_plan& plan, field::fr* d_a, field::fr* d_b, field::fr* d_c,
                    cudaStream_t stream);

/// snarkjs's quotient form, as field::compute_quotient_odd_coset (bit for bit): from the
/// evaluations a, b on the domain, leaves in d_a (A*B - C)(s omega^i), s the plan's odd-coset shift
/// and C the interpolation of a*b. d_b and d_c are overwritten; d_c needs no input. Six transforms
/// and a pointwise pass. The three buffers must not overlap.
void quotient_odd_coset_async(const ntt_plan& plan, field::fr* d_a, field::fr* d_b, field::fr* d_c,
                              cudaStream_t stream);

}  // namespace coprove::cuda
