// The NTT pass kernel and its launcher. One kernel serves every pass of every transform: it loads
// the lines of its block into shared memory (applying the fused first-pass step), runs the
// decimation-in-frequency butterflies of a DFT of size 2^bits over each line (two radix-2 levels
// per step, in registers), and stores the outputs in natural order within the line, multiplied by
// the six-step twiddle (earlier passes: one multiplication by a boundary-table entry, or lo * hi
// where the plan keeps no table) or by the fused last-pass step. Index arithmetic lives in
// ntt_schedule.hpp. Blocks the schedule gives 2048 elements in several lines are launched as two
// blocks of half the lines, with 128 threads each (see launch_ntt_pass).
#include <coprove/cuda/detail/ntt_launch.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/fr_device.cuh>

#include <algorithm>
#include <mutex>
#include <set>

namespace coprove::cuda::detail {
namespace {

// Blocks of 2048 elements: 256 threads, registers budgeted for 3 blocks per SM (80 a thread; shared
// memory, 66.5 KB a block, allows no more). Blocks of up to 1024 elements: 128 threads, 6 blocks per
// SM, the same 24 warps and registers, but each barrier holds 4 warps instead of 8 and the blocks'
// load, butterfly and store phases interleave more finely (2^24 forward -10%, 2^24 quotient -10%).
constexpr unsigned threads_per_block = 256;
constexpr unsigned large_block_min_blocks = 3;
constexpr unsigned small_block_threads = 128;
constexpr unsigned small_block_min_blocks = 6;

__device__ __forceinline__ fr_device to_device(const ntt_constant& c) {
  fr_device v;
#pragma unroll
  for (int i = 0; i < 8; ++i) v.limb[i] = c.limbs[i];
  return v;
}

/// base^e from the two halves of an exponent table: lo[e & mask] * hi[e >> split].
__device__ __forceinline__ fr_device power_from_tables(const void* lo, const void* hi, unsigned split,
                                                       std::uint32_t e) {
  const fr_device a = fr_load_ldg(static_cast<const fr_device*>(lo) + (e & ((1u << split) - 1u)));
  const fr_device b = fr_load_ldg(static_cast<const fr_device*>(hi) + (e >> split));
  return a * b;
}

/// Threads and the blocks per SM the registers are budgeted for: 256 threads for blocks of 2048
/// elements, 128 for blocks of up to 1024 (several of which share an SM).
template <unsigned Threads, unsigned MinBlocks>
__global__ void __launch_bounds__(Threads, MinBlocks) ntt_pass_kernel(const ntt_pass_args args) {
  extern __shared__ uint4 shared_raw[];
  fr_device* lines = reinterpret_cast<fr_device*>(shared_raw);

  const ntt_pass_shape& shape = args.shape;
  const unsigned bits = shape.bits;
  const std::uint32_t len = 1u << bits;
  const unsigned log_lines = shape.log_lines;
  const std::uint32_t line_count = 1u << log_lines;
  const std::uint32_t pitch = len + 1;  // one element of padding per line against bank conflicts
  const std::uint32_t elements = line_count << bits;
  const std::uint32_t block = blockIdx.x;
  const unsigned vec = blockIdx.y;

  // Load: lines of a row are consecutive columns in memory (earlier passes) or contiguous runs
  // (lo == 0); let consecutive threads read consecutive addresses either way. Unrolled so that a
  // thread has several global loads in flight (and, with a fused step, two independent products).
  {
    const fr_device* src = static_cast<const fr_device*>(args.src[vec]);
    const auto place = [&](std::uint32_t i, std::uint32_t& g, std::uint32_t& t) {
      if (shape.lo == 0) {
        g = i >> bits;
        t = i & (len - 1u);
      } else {
        g = i & (line_count - 1u);
        t = i >> log_lines;
      }
      return shape.position(shape.line_of(block, g), t);
    };
    if (args.pre == ntt_pre::none) {
#pragma unroll 4
      for (std::uint32_t i = threadIdx.x; i < elements; i += blockDim.x) {
        std::uint32_t g, t;
        const std::uint32_t pos = place(i, g, t);
        fr_store(lines + g * pitch + t, fr_load(src + pos));
      }
    } else {
#pragma unroll 2
      for (std::uint32_t i = threadIdx.x; i < elements; i += blockDim.x) {
        std::uint32_t g, t;
        const std::uint32_t pos = place(i, g, t);
        const fr_device factor = args.pre == ntt_pre::coset
                                     ? power_from_tables(args.pre_lo, args.pre_hi, args.split, pos)
                                     : fr_load(static_cast<const fr_device*>(args.src_b) + pos);
        fr_store(lines + g * pitch + t, fr_mul(factor, fr_load(src + pos)));
      }
    }
  }
  __syncthreads();

  // Decimation in frequency: natural order in, bit-reversed order out within each line. Two levels
  // per step: a thread holds the four elements t + {0, q, 2q, 3q} in registers, runs level L on the
  // pairs q * {(0, 2), (1, 3)} and level L + 1 on q * {(0, 1), (2, 3)}: the same operations as two
  // radix-2 levels, with half the shared-memory round trips and barriers. An even level count ends
  // with the step q == 1, whose twiddles are all 1 but one constant (its own loop, so the general
  // step keeps its registers); an odd count ends with the last level (half 1, no twiddle) alone.
  {
    const fr_device* roots = static_cast<const fr_device*>(args.tables.roots);
    const unsigned roots_shift = args.tables.roots_log - bits;
    unsigned level = 0;
    for (; level + 2 < bits; level += 2) {
      const unsigned log_q = bits - 2 - level;
      const std::uint32_t q = 1u << log_q;
      const std::uint32_t groups = elements >> 2;
      const std::uint32_t group_mask = (len >> 2) - 1u;
#pragma unroll 1
      for (std::uint32_t b = threadIdx.x; b < groups; b += blockDim.x) {
        const std::uint32_t g = b >> (bits - 2);
        const std::uint32_t bt = b & group_mask;
        const std::uint32_t j = bt & (q - 1u);
        const std::uint32_t t = ((bt >> log_q) << (log_q + 2)) | j;
        fr_device* p = lines + g * pitch + t;
        const fr_device x0 = fr_load(p);
        const fr_device x1 = fr_load(p + q);
        const fr_device x2 = fr_load(p + 2 * q);
        const fr_device x3 = fr_load(p + 3 * q);
        const fr_device y0 = x0 + x2;
        const fr_device y1 = x1 + x3;
        // Differences that only feed a multiplication stay lazy (below 2r: fr_sub_lazy).
        const fr_device y2 = fr_mul(fr_load_ldg(roots + ((j << level) << roots_shift)), fr_sub_lazy(x0, x2));
        const fr_device y3 = fr_mul(fr_load_ldg(roots + (((j + q) << level) << roots_shift)), fr_sub_lazy(x1, x3));
        const fr_device w = fr_load_ldg(roots + ((j << (level + 1)) << roots_shift));
        const fr_device z1 = fr_mul(w, fr_sub_lazy(y0, y1));
        const fr_device z3 = fr_mul(w, fr_sub_lazy(y2, y3));
        fr_store(p, y0 + y1);
        fr_store(p + q, z1);
        fr_store(p + 2 * q, y2 + y3);
        fr_store(p + 3 * q, z3);
      }
      __syncthreads();
    }
    if (level + 2 == bits) {
      // The last two levels with q == 1: a thread's four elements are consecutive, j == 0, so the
      // twiddles of y2, z1 and z3 are 1 and y3's is one constant, w_4 (one multiplication per four
      // elements instead of two).
      const fr_device w4 = fr_load_ldg(roots + ((1u << level) << roots_shift));
      const std::uint32_t groups = elements >> 2;
      const std::uint32_t group_mask = (len >> 2) - 1u;
#pragma unroll 1
      for (std::uint32_t b = threadIdx.x; b < groups; b += blockDim.x) {
        fr_device* p = lines + (b >> (bits - 2)) * pitch + ((b & group_mask) << 2);
        const fr_device x0 = fr_load(p);
        const fr_device x1 = fr_load(p + 1);
        const fr_device x2 = fr_load(p + 2);
        const fr_device x3 = fr_load(p + 3);
        const fr_device y0 = x0 + x2;
        const fr_device y1 = x1 + x3;
        const fr_device y2 = x0 - x2;
        const fr_device y3 = fr_mul(w4, fr_sub_lazy(x1, x3));
        fr_store(p, y0 + y1);
        fr_store(p + 1, y0 - y1);
        fr_store(p + 2, y2 + y3);
        fr_store(p + 3, y2 - y3);
      }
      __syncthreads();
    } else if (level < bits) {
      const std::uint32_t butterflies = elements >> 1;
      const std::uint32_t half_len_mask = (len >> 1) - 1u;
      for (std::uint32_t b = threadIdx.x; b < butterflies; b += blockDim.x) {
        const std::uint32_t g = b >> (bits - 1);
        const std::uint32_t t = (b & half_len_mask) << 1;
        fr_device* p = lines + g * pitch + t;
        const fr_device u = fr_load(p);
        const fr_device v = fr_load(p + 1);
        fr_store(p, u + v);
        fr_store(p + 1, u - v);
      }
      __syncthreads();
    }
  }

  // Store output K of each line (it sits at bit-reversed slot K): earlier passes multiply by the
  // six-step twiddle and keep the line's positions; the last pass writes natural order.
  {
    fr_device* dst = static_cast<fr_device*>(args.dst[vec]);
    const ntt_post_step& post = args.post[vec];
    const fr_device* boundary = static_cast<const fr_device*>(args.boundary);
    // Earlier passes: consecutive lines are consecutive columns. The last pass of several: its
    // lines differ in the digit that lands lowest in the output. A single pass: one line.
    const bool line_fastest = !(shape.last && shape.passes == 1);
    // Unrolled: two independent products (and loads) in flight per thread.
#pragma unroll 2
    for (std::uint32_t i = threadIdx.x; i < elements; i += blockDim.x) {
      std::uint32_t g, k;
      if (line_fastest) {
        g = i & (line_count - 1u);
        k = i >> log_lines;
      } else {
        g = i >> bits;
        k = i & (len - 1u);
      }
      const std::uint32_t line = shape.line_of(block, g);
      const std::uint32_t slot = __brev(k) >> (32 - bits);
      fr_device v = fr_load(lines + g * pitch + slot);
      if (!shape.last) {
        if (boundary != nullptr) {
          v = v * fr_load_ldg(boundary + shape.boundary_index(line, k));
        } else {
          const std::uint32_t e = shape.twiddle_exponent(line, k);
          if (e != 0)
            v = v * power_from_tables(args.tables.twiddle_lo, args.tables.twiddle_hi, args.split, e);
        }
        fr_store(dst + shape.position(line, k), v);
      } else {
        const std::uint32_t index = shape.output_index(line, k);
        switch (post.kind) {
          case ntt_post::scale:
            v = v * to_device(post.scale);
            break;
          case ntt_post::coset:
            v = v * power_from_tables(post.lo, post.hi, args.split, index);
            break;
          case ntt_post::coset_minus:
            v = v * power_from_tables(post.lo, post.hi, args.split, index) -
                fr_load(static_cast<const fr_device*>(post.sub) + index);
            break;
          default:
            break;
        }
        fr_store(dst + index, v);
      }
    }
  }
}

__global__ void field_ops_kernel(const fr_device* a, const fr_device* b, fr_device* sum,
                                 fr_device* difference, fr_device* product, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const fr_device x = fr_load(a + i);
    const fr_device y = fr_load(b + i);
    fr_store(sum + i, x + y);
    fr_store(difference + i, x - y);
    fr_store(product + i, x * y);
  }
}

__global__ void join_abc_kernel(const fr_device* a, const fr_device* b, const fr_device* c, fr_device* out,
                                std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    fr_store(out + i, fr_load(a + i) * fr_load(b + i) - fr_load(c + i));
}

__global__ void lazy_product_kernel(const fr_device* a, const fr_device* b, const fr_device* c, fr_device* product,
                                    std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    fr_store(product + i, fr_mul(fr_load(c + i), fr_sub_lazy(fr_load(a + i), fr_load(b + i))));
}

__global__ void mul_throughput_kernel(const fr_device* in, fr_device* out, std::size_t threads, unsigned rounds) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= threads) return;
  fr_device x = fr_load(in + i);
  fr_device z = fr_load(in + i + 1);
  const fr_device y = z;
  const fr_device w = x;
  for (unsigned r = 0; r < rounds; ++r) {
    x = x * y;
    z = z * w;
  }
  fr_store(out + i, x + z);
}

std::size_t max_shared_bytes() {
  std::size_t most = 0;
  for (unsigned log_n = 1; log_n <= 30; ++log_n) {
    const ntt_schedule s = ntt_schedule::make(log_n);
    for (unsigned p = 0; p < s.passes; ++p) most = std::max(most, ntt_pass_shared_bytes(s.pass(p)));
  }
  return most;
}

}  // namespace

std::size_t ntt_pass_shared_bytes(const ntt_pass_shape& shape) noexcept {
  return (std::size_t{1} << shape.log_lines) * ((std::size_t{1} << shape.bits) + 1) * sizeof(fr_device);
}

void configure_ntt_kernels() {
  static std::mutex mutex;
  static std::set<int> configured;
  int device = 0;
  COPROVE_CUDA_TRY(cudaGetDevice(&device));
  const std::lock_guard lock(mutex);
  if (configured.count(device) != 0) return;
  COPROVE_CUDA_TRY(cudaFuncSetAttribute(ntt_pass_kernel<threads_per_block, large_block_min_blocks>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(max_shared_bytes())));
  COPROVE_CUDA_TRY(cudaFuncSetAttribute(ntt_pass_kernel<small_block_threads, small_block_min_blocks>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(max_shared_bytes())));
  configured.insert(device);
}

void launch_ntt_pass(const ntt_pass_args& schedule_args, cudaStream_t stream) {
  // A block of 2048 elements made of several lines is split in two (half the lines each): smaller
  // blocks of 128 threads, more of them per SM, so that fewer warps wait on each barrier. Any
  // number of lines up to the schedule's is valid: line_of covers every line once for each. A last
  // pass keeps at least two lines a block: its stores are runs of 2^log_lines elements.
  ntt_pass_args args = schedule_args;
  ntt_pass_shape& shape = args.shape;
  const unsigned min_log_lines = shape.last ? 2u : 1u;
  if (shape.log_lines >= min_log_lines && shape.bits + shape.log_lines == ntt_max_pass_bits) --shape.log_lines;
  const std::uint32_t elements = (1u << shape.log_lines) << shape.bits;
  const dim3 grid(shape.blocks(), args.batch);
  if (elements > ntt_block_elements / 2) {
    const unsigned threads = std::min<std::uint32_t>(threads_per_block, elements / 2);
    ntt_pass_kernel<threads_per_block, large_block_min_blocks><<<grid, threads, ntt_pass_shared_bytes(shape), stream>>>(args);
  } else {
    const unsigned threads = std::min<std::uint32_t>(small_block_threads, std::max<std::uint32_t>(1, elements / 2));
    ntt_pass_kernel<small_block_threads, small_block_min_blocks><<<grid, threads, ntt_pass_shared_bytes(shape), stream>>>(args);
  }
  COPROVE_CUDA_CHECK_LAUNCH();
}

void launch_field_ops_check(const void* a, const void* b, void* sum, void* difference, void* product,
                            std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + threads - 1) / threads, 4096));
  field_ops_kernel<<<blocks, threads, 0, stream>>>(
      static_cast<const fr_device*>(a), static_cast<const fr_device*>(b), static_cast<fr_device*>(sum),
      static_cast<fr_device*>(difference), static_cast<fr_device*>(product), n);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void launch_join_abc(const void* a, const void* b, const void* c, void* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + threads - 1) / threads, 4096));
  join_abc_kernel<<<blocks, threads, 0, stream>>>(static_cast<const fr_device*>(a), static_cast<const fr_device*>(b),
                                                  static_cast<const fr_device*>(c), static_cast<fr_device*>(out), n);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void launch_lazy_product_check(const void* a, const void* b, const void* c, void* product, std::size_t n,
                               cudaStream_t stream) {
  if (n == 0) return;
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + threads - 1) / threads, 4096));
  lazy_product_kernel<<<blocks, threads, 0, stream>>>(static_cast<const fr_device*>(a), static_cast<const fr_device*>(b),
                                                      static_cast<const fr_device*>(c), static_cast<fr_device*>(product), n);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void launch_mul_throughput(const void* in, void* out, std::size_t threads, unsigned rounds, cudaStream_t stream) {
  if (threads == 0) return;
  const unsigned block = 256;
  const auto blocks = static_cast<unsigned>((threads + block - 1) / block);
  mul_throughput_kernel<<<blocks, block, 0, stream>>>(static_cast<const fr_device*>(in), static_cast<fr_device*>(out),
                                                      threads, rounds);
  COPROVE_CUDA_CHECK_LAUNCH();
}

}  // namespace coprove::cuda::detail
