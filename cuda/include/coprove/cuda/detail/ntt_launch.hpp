// The launchers of the NTT kernels (defined in ntt_kernels.cu), declared for the host code in
// ntt.cpp and for the GPU tests. Plain C++: no CUDA types beyond cudaStream_t.
#pragma once

#include <coprove/cuda/detail/ntt_schedule.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace coprove::cuda::detail {

/// What the first pass does to each element as it loads it.
enum class ntt_pre : int {
  none,
  coset,    // x[j] *= lo[j & mask] * hi[j >> split]   (g^j: coefficients onto the coset)
  product,  // x[j] = a[j] * b[j]                      (src = a, src_b = b)
};

/// What the last pass does to each output before it stores it.
enum class ntt_post : int {
  none,
  scale,        // X[k] *= scale
  coset,        // X[k] *= lo[k & mask] * hi[k >> split]
  coset_minus,  // X[k] = X[k] * lo[k & mask] * hi[k >> split] - sub[k]
};

/// An Fr constant in Montgomery form, the bytes of field::fr.
struct ntt_constant {
  std::uint32_t limbs[8];
};

/// The last pass's step for one vector of a batch.
struct ntt_post_step {
  ntt_post kind = ntt_post::none;
  const void* lo = nullptr;
  const void* hi = nullptr;
  const void* sub = nullptr;  // coset_minus: plan.size() elements, natural order
  ntt_constant scale{};
};

/// Tables a transform direction needs (device pointers to Fr elements).
struct ntt_direction_tables {
  const void* roots = nullptr;      // w_{2^K}^e for e < 2^(K-1), K = roots_log
  unsigned roots_log = 0;
  const void* twiddle_lo = nullptr;  // w_n^e for e < 2^split
  const void* twiddle_hi = nullptr;  // w_n^(e << split) for e < 2^(log_n - split)
  /// Per pass but the last: the boundary (six-step) twiddles, entry boundary_index(line, K) =
  /// w_n^twiddle_exponent(line, K) (pass 0 of the inverse: times 1/n), so a twiddle costs one
  /// multiplication; null where the plan keeps no table (then lo * hi, two multiplications).
  const void* boundary[ntt_max_passes - 1] = {};
};

/// One pass over up to three vectors at once (blockIdx.y picks the vector).
struct ntt_pass_args {
  ntt_pass_shape shape{};
  unsigned batch = 1;
  const void* src[3] = {};
  void* dst[3] = {};
  const void* src_b = nullptr;  // ntt_pre::product only (batch 1)
  ntt_direction_tables tables{};
  const void* boundary = nullptr;  // this pass's boundary table (not the last pass; may be null)
  unsigned split = 0;  // the lo/hi split of every exponent table
  ntt_pre pre = ntt_pre::none;
  const void* pre_lo = nullptr;
  const void* pre_hi = nullptr;
  ntt_post_step post[3] = {};  // per vector
};

/// Plans of up to 2^this elements keep boundary tables (the default; above it lo * hi).
inline constexpr unsigned ntt_default_boundary_table_max_log = 26;
/// Sets that limit for plans built from now on (process-wide): lets the tests run the lo * hi
/// path, and the unscaled inverse tables that go with it, at small sizes.
void set_ntt_boundary_table_max_log(unsigned log_n) noexcept;

/// Shared memory one block of this pass uses.
std::size_t ntt_pass_shared_bytes(const ntt_pass_shape& shape) noexcept;
/// Raises the kernels' dynamic shared-memory limit on the current device (once per device).
void configure_ntt_kernels();
/// Enqueues one pass; throws cuda_error when the launch fails.
void launch_ntt_pass(const ntt_pass_args& args, cudaStream_t stream);

/// out[i] = a[i] * b[i] - c[i] over n elements in device memory (out may be a): snarkjs's joinABC,
/// the last step of the odd-coset quotient.
void launch_join_abc(const void* a, const void* b, const void* c, void* out, std::size_t n, cudaStream_t stream);

/// For the tests: sum[i] = a[i] + b[i], difference[i] = a[i] - b[i], product[i] = a[i] * b[i]
/// with the device field arithmetic, over n elements in device memory.
void launch_field_ops_check(const void* a, const void* b, void* sum, void* difference, void* product,
                            std::size_t n, cudaStream_t stream);

/// For the tests: product[i] = c[i] * (a[i] - b[i]) with the difference left lazy (in [1, 2r - 1],
/// fr_sub_lazy) as the butterflies leave it, over n elements in device memory.
void launch_lazy_product_check(const void* a, const void* b, const void* c, void* product, std::size_t n,
                               cudaStream_t stream);

/// For the benchmark: each of `threads` threads runs two chains of `rounds` dependent Fr
/// multiplications seeded from `in` (threads + 1 elements) and writes one element to `out`
/// (threads elements): 2 * threads * rounds multiplications that touch memory only at the ends.
void launch_mul_throughput(const void* in, void* out, std::size_t threads, unsigned rounds, cudaStream_t stream);

}  // namespace coprove::cuda::detail
