// The evaluation kernels and their launchers: barycentric evaluation of up to three polynomials
// given by their evaluations over the domain, and Horner evaluation of a coefficient vector, both
// at one point zeta. Each is a partial kernel (every thread folds an interleaved slice, every
// block reduces its threads) and a final one-block kernel (reduces the blocks, scales, writes the
// results). See evaluation.hpp for the method.
#include <coprove/cuda/evaluation.hpp>

#include <coprove/cuda/error.hpp>
#include <coprove/cuda/fr_device.cuh>

#include <stdexcept>
#include <string>

namespace coprove::cuda {
namespace {

constexpr unsigned threads_per_block = 256;
/// At most 2^16 threads in a partial kernel: 256 blocks, so the final kernel's one block of 256
/// threads takes one block result each.
constexpr unsigned max_log_threads = 16;
constexpr unsigned max_blocks = (1u << max_log_threads) / threads_per_block;
static_assert(max_blocks <= threads_per_block, "the final kernel reduces one block result a thread");

/// Scratch layout: the entries at a domain point equal to zeta (3 elements), a flag set when
/// there is one (one element's room), then per block up to 4 elements (N_0..N_2, D; or h's sum).
constexpr std::size_t hit_offset = 0;
constexpr std::size_t flag_offset = max_lagrange_polynomials;
constexpr std::size_t partial_offset = flag_offset + 1;
constexpr std::size_t partial_stride = max_lagrange_polynomials + 1;
constexpr std::size_t scratch_elements = partial_offset + max_blocks * partial_stride;

struct lagrange_args {
  const fr_device* polys[max_lagrange_polynomials];
  std::size_t n;
  unsigned log_n;
  unsigned log_threads;  // of the partial kernel's grid
  fr_device omega, n_inv, zeta;
  fr_device* scratch;
  fr_device* out;
};

struct horner_args {
  const fr_device* coeffs;
  std::size_t n;
  unsigned log_threads;
  fr_device zeta;
  fr_device* scratch;
  fr_device* out;
};

fr_device to_device(const field_words& w) {
  fr_device v;
  static_assert(sizeof v == sizeof w, "a field element is 32 bytes");
  std::memcpy(&v, &w, sizeof v);
  return v;
}

__device__ __forceinline__ fr_device fr_zero() { return fr_device{{0, 0, 0, 0, 0, 0, 0, 0}}; }

/// One in Montgomery form: R = 2^256 mod r.
__device__ __forceinline__ fr_device fr_one() {
  return fr_device{{0xfffffffeu, 0x00000001u, 0x00034802u, 0x5884b7fau, 0xecbc4ff5u, 0x998c4fefu,
                    0xacc5056fu, 0x1824b159u}};
}

__device__ __forceinline__ bool fr_is_zero(const fr_device& x) {
  std::uint32_t any = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) any |= x.limb[i];
  return any == 0;
}

/// x^e for a 32-bit exponent (square and multiply from the top bit).
__device__ fr_device fr_pow(const fr_device& x, std::uint32_t e) {
  fr_device result = fr_one();
  for (int bit = 31; bit >= 0; --bit) {
    result = result * result;
    if ((e >> bit) & 1u) result = result * x;
  }
  return result;
}

/// x^(2^k): k squarings.
__device__ fr_device fr_pow2k(fr_device x, unsigned k) {
  for (unsigned i = 0; i < k; ++i) x = x * x;
  return x;
}

/// 1/x = x^(r-2) (Fermat); x must not be zero.
__device__ fr_device fr_inverse(const fr_device& x) {
  // r - 2, little-endian 32-bit limbs: r's lowest limb is 1, so the subtraction borrows from the next.
  using namespace fr_detail;
  static_assert(r0 == 1u && r1 != 0u, "r - 2 borrows exactly once");
  const std::uint32_t e[8] = {r0 - 2u, r1 - 1u, r2, r3, r4, r5, r6, r7};
  fr_device result = fr_one();
  for (int limb = 7; limb >= 0; --limb) {
    for (int bit = 31; bit >= 0; --bit) {
      result = result * result;
      if ((e[limb] >> bit) & 1u) result = result * x;
    }
  }
  return result;
}

/// The barycentric fraction of a thread or a group: sum_i f_p(w^i) w^i / (zeta - w^i) = N_p / D.
template <unsigned Count>
struct fraction {
  fr_device num[Count];
  fr_device den;
};

/// a + b as fractions: (N_a D_b + N_b D_a) / (D_a D_b).
template <unsigned Count>
__device__ __forceinline__ void add_into(fraction<Count>& a, const fraction<Count>& b) {
#pragma unroll
  for (unsigned p = 0; p < Count; ++p) a.num[p] = a.num[p] * b.den + b.num[p] * a.den;
  a.den = a.den * b.den;
}

/// Reduces the block's fractions in shared memory into element 0 (blockDim.x is a power of two).
template <unsigned Count>
__device__ void block_reduce(fraction<Count>* shared, fraction<Count> mine) {
  const unsigned t = threadIdx.x;
  shared[t] = mine;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) {
      fraction<Count> f = shared[t];
      add_into(f, shared[t + half]);
      shared[t] = f;
    }
    __syncthreads();
  }
}

template <unsigned Count>
__global__ void __launch_bounds__(threads_per_block) lagrange_partial_kernel(const lagrange_args args) {
  __shared__ fraction<Count> shared[threads_per_block];
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  const std::size_t threads = std::size_t{1} << args.log_threads;
  const fr_device step = fr_pow2k(args.omega, args.log_threads);  // omega^threads
  fr_device w = fr_pow(args.omega, g);
  fraction<Count> mine;
#pragma unroll
  for (unsigned p = 0; p < Count; ++p) mine.num[p] = fr_zero();
  mine.den = fr_one();
  for (std::size_t i = g; i < args.n; i += threads) {
    const fr_device d = args.zeta - w;
    if (fr_is_zero(d)) {
      // zeta = omega^i: the values are the entries at i (only one thread can get here).
#pragma unroll
      for (unsigned p = 0; p < Count; ++p) fr_store(args.scratch + hit_offset + p, fr_load(args.polys[p] + i));
      __threadfence();
      args.scratch[flag_offset].limb[0] = 1;
    } else {
      const fr_device wd = w * mine.den;
#pragma unroll
      for (unsigned p = 0; p < Count; ++p) mine.num[p] = mine.num[p] * d + fr_load(args.polys[p] + i) * wd;
      mine.den = mine.den * d;
    }
    w = w * step;
  }
  block_reduce<Count>(shared, mine);
  if (threadIdx.x == 0) {
    fr_device* slot = args.scratch + partial_offset + blockIdx.x * partial_stride;
#pragma unroll
    for (unsigned p = 0; p < Count; ++p) fr_store(slot + p, shared[0].num[p]);
    fr_store(slot + Count, shared[0].den);
  }
}

template <unsigned Count>
__global__ void __launch_bounds__(threads_per_block) lagrange_final_kernel(const lagrange_args args, unsigned blocks) {
  __shared__ fraction<Count> shared[threads_per_block];
  fraction<Count> mine;
  if (threadIdx.x < blocks) {
    const fr_device* slot = args.scratch + partial_offset + threadIdx.x * partial_stride;
#pragma unroll
    for (unsigned p = 0; p < Count; ++p) mine.num[p] = fr_load(slot + p);
    mine.den = fr_load(slot + Count);
  } else {
#pragma unroll
    for (unsigned p = 0; p < Count; ++p) mine.num[p] = fr_zero();
    mine.den = fr_one();
  }
  block_reduce<Count>(shared, mine);
  if (threadIdx.x != 0) return;
  if (args.scratch[flag_offset].limb[0] != 0) {
#pragma unroll
    for (unsigned p = 0; p < Count; ++p) fr_store(args.out + p, fr_load(args.scratch + hit_offset + p));
    return;
  }
  // f(zeta) = (zeta^n - 1)/n * N/D.
  const fr_device zeta_n = fr_pow2k(args.zeta, args.log_n);
  const fr_device scale = (zeta_n - fr_one()) * args.n_inv * fr_inverse(shared[0].den);
#pragma unroll
  for (unsigned p = 0; p < Count; ++p) fr_store(args.out + p, shared[0].num[p] * scale);
}

/// Reduces the block's elements in shared memory into element 0 by addition.
__device__ void block_sum(fr_device* shared, fr_device mine) {
  const unsigned t = threadIdx.x;
  shared[t] = mine;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) shared[t] = shared[t] + shared[t + half];
    __syncthreads();
  }
}

__global__ void __launch_bounds__(threads_per_block) horner_partial_kernel(const horner_args args) {
  __shared__ fr_device shared[threads_per_block];
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  const std::size_t threads = std::size_t{1} << args.log_threads;
  // Thread g: zeta^g * sum_k c[g + k T] (zeta^T)^k, by Horner in zeta^T from the top k down.
  const fr_device step = fr_pow2k(args.zeta, args.log_threads);
  fr_device acc = fr_zero();
  if (g < args.n) {
    std::size_t i = g + ((args.n - 1 - g) / threads) * threads;
    while (true) {
      acc = acc * step + fr_load(args.coeffs + i);
      if (i < threads) break;
      i -= threads;
    }
    acc = acc * fr_pow(args.zeta, g);
  }
  block_sum(shared, acc);
  if (threadIdx.x == 0) fr_store(args.scratch + partial_offset + blockIdx.x, shared[0]);
}

__global__ void __launch_bounds__(threads_per_block) horner_final_kernel(const horner_args args, unsigned blocks) {
  __shared__ fr_device shared[threads_per_block];
  const fr_device mine = threadIdx.x < blocks ? fr_load(args.scratch + partial_offset + threadIdx.x) : fr_zero();
  block_sum(shared, mine);
  if (threadIdx.x == 0) fr_store(args.out, shared[0]);
}

/// The partial kernel's shape for 2^log_n points: 2^log_threads threads in blocks of `block`.
struct launch_shape {
  unsigned log_threads, block, blocks;
};

launch_shape shape_for(unsigned log_n) {
  launch_shape s;
  s.log_threads = log_n < max_log_threads ? log_n : max_log_threads;
  const unsigned threads = 1u << s.log_threads;
  s.block = threads < threads_per_block ? threads : threads_per_block;
  s.blocks = threads / s.block;
  return s;
}

void check_common(unsigned log_n, const void* d_out, const void* d_scratch, const char* what) {
  if (log_n > 30) throw std::invalid_argument(std::string(what) + ": log_n " + std::to_string(log_n) + " above 30");
  if (d_out == nullptr || d_scratch == nullptr)
    throw std::invalid_argument(std::string(what) + ": null output or scratch pointer");
}

template <unsigned Count>
void launch_lagrange(const lagrange_args& args, const launch_shape& s, cudaStream_t stream) {
  lagrange_partial_kernel<Count><<<s.blocks, s.block, 0, stream>>>(args);
  COPROVE_CUDA_CHECK_LAUNCH();
  lagrange_final_kernel<Count><<<1, threads_per_block, 0, stream>>>(args, s.blocks);
  COPROVE_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::size_t evaluation_scratch_bytes(unsigned /*log_n*/) noexcept { return scratch_elements * sizeof(fr_device); }

void evaluate_lagrange_async(const void* const* d_polys, unsigned count, unsigned log_n, const field_words& omega,
                             const field_words& n_inv, const field_words& zeta, void* d_out, void* d_scratch,
                             cudaStream_t stream) {
  check_common(log_n, d_out, d_scratch, "evaluate_lagrange_async");
  if (count == 0 || count > max_lagrange_polynomials)
    throw std::invalid_argument("evaluate_lagrange_async: " + std::to_string(count) +
                                " polynomials (1 to 3 are supported)");
  if (d_polys == nullptr) throw std::invalid_argument("evaluate_lagrange_async: null polynomial list");
  lagrange_args args{};
  for (unsigned p = 0; p < count; ++p) {
    if (d_polys[p] == nullptr) throw std::invalid_argument("evaluate_lagrange_async: null polynomial pointer");
    args.polys[p] = static_cast<const fr_device*>(d_polys[p]);
  }
  const launch_shape s = shape_for(log_n);
  args.n = std::size_t{1} << log_n;
  args.log_n = log_n;
  args.log_threads = s.log_threads;
  args.omega = to_device(omega);
  args.n_inv = to_device(n_inv);
  args.zeta = to_device(zeta);
  args.scratch = static_cast<fr_device*>(d_scratch);
  args.out = static_cast<fr_device*>(d_out);
  // Clears the in-domain flag of an earlier evaluation.
  COPROVE_CUDA_TRY(cudaMemsetAsync(args.scratch + flag_offset, 0, sizeof(fr_device), stream));
  switch (count) {
    case 1: launch_lagrange<1>(args, s, stream); break;
    case 2: launch_lagrange<2>(args, s, stream); break;
    default: launch_lagrange<3>(args, s, stream); break;
  }
}

void evaluate_coefficients_async(const void* d_coeffs, unsigned log_n, const field_words& zeta, void* d_out,
                                 void* d_scratch, cudaStream_t stream) {
  check_common(log_n, d_out, d_scratch, "evaluate_coefficients_async");
  if (d_coeffs == nullptr) throw std::invalid_argument("evaluate_coefficients_async: null coefficient pointer");
  const launch_shape s = shape_for(log_n);
  horner_args args{};
  args.coeffs = static_cast<const fr_device*>(d_coeffs);
  args.n = std::size_t{1} << log_n;
  args.log_threads = s.log_threads;
  args.zeta = to_device(zeta);
  args.scratch = static_cast<fr_device*>(d_scratch);
  args.out = static_cast<fr_device*>(d_out);
  horner_partial_kernel<<<s.blocks, s.block, 0, stream>>>(args);
  COPROVE_CUDA_CHECK_LAUNCH();
  horner_final_kernel<<<1, threads_per_block, 0, stream>>>(args, s.blocks);
  COPROVE_CUDA_CHECK_LAUNCH();
}

}  // namespace coprove::cuda
