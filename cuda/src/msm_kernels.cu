// The MSM kernels (msm_plan.hpp describes the method) and their launchers. One thread per scalar
// for the digits, one per chunk for the sums, one per segment for the window weighting, one for the
// final combination. Entries and sums are placed without a general sort: the histogram of groups
// and the placement both aggregate the lanes of a warp that hit the same group
// (__match_any_sync), so one atomic per group and warp is issued and a group that every scalar hits
// (all scalars equal, the ones group) does not serialise on one address.
#include <coprove/cuda/curve_device.cuh>
#include <coprove/cuda/detail/msm_launch.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/fr_device.cuh>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace coprove::cuda::detail {
namespace {

constexpr std::uint32_t no_group = 0xffffffffu;
constexpr std::uint32_t sign_bit = 0x80000000u;
constexpr unsigned full_warp = 0xffffffffu;

/// The launch grid of `threads` threads in blocks of `block`.
unsigned blocks_for(std::size_t threads, unsigned block) {
  const std::size_t blocks = (threads + block - 1) / block;
  if (blocks > 0x7fffffffu) throw std::invalid_argument("MSM: launch grid too large");
  return static_cast<unsigned>(blocks);
}

__device__ __forceinline__ std::uint32_t lane_id() { return threadIdx.x & 31u; }

template <class F>
__global__ void repack_kernel(const unsigned char* src, std::size_t stride, std::size_t flag_offset,
                              affine_device<F>* dst, std::size_t count) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count) return;
  constexpr unsigned words = sizeof(affine_device<F>) / 4;
  const unsigned char* p = src + i * stride;
  const bool identity = p[flag_offset] != 0;
  // The host struct is 8-byte aligned: read 32-bit words.
  const std::uint32_t* w = reinterpret_cast<const std::uint32_t*>(p);
  std::uint32_t* out = reinterpret_cast<std::uint32_t*>(dst + i);
#pragma unroll 8
  for (unsigned k = 0; k < words; ++k) out[k] = identity ? 0u : w[k];
}

/// The canonical value of a Montgomery-form Fr element: its product with the integer 1.
__device__ __forceinline__ fr_device fr_canonical(const fr_device& a) {
  const fr_device one_raw{{1, 0, 0, 0, 0, 0, 0, 0}};
  return fr_mul(a, one_raw);
}

/// Where window w's digit of a scalar goes: its group (no_group for a zero digit; the ones group
/// for a scalar 1 in window 0), the copy of the bases it reads (window w = copy * m + v adds into
/// window v's buckets, m the windows a copy) and the sign of the digit.
struct entry_key {
  std::uint32_t group;
  std::uint32_t copy;
  bool negative;
};

__device__ __forceinline__ entry_key window_key(const std::uint32_t (&s)[8], bool zero, bool one, unsigned w,
                                                unsigned bits, unsigned per_copy, std::uint32_t& carry) {
  if (zero) return {no_group, 0, false};
  if (one) return {w == 0 ? (std::uint32_t{per_copy} << (bits - 1)) : no_group, 0, false};
  const int d = msm_signed_digit(s, w, bits, carry);
  if (d == 0) return {no_group, 0, false};
  const std::uint32_t magnitude = static_cast<std::uint32_t>(d < 0 ? -d : d);
  const unsigned copy = w / per_copy;
  return {(std::uint32_t{w - copy * per_copy} << (bits - 1)) + magnitude - 1, copy, d < 0};
}

__device__ __forceinline__ void classify(const std::uint32_t (&s)[8], bool& zero, bool& one) {
  std::uint32_t high = 0;
#pragma unroll
  for (int k = 1; k < 8; ++k) high |= s[k];
  zero = high == 0 && s[0] == 0;
  one = high == 0 && s[0] == 1;
}

__global__ void count_kernel(const fr_device* scalars, std::uint32_t* canonical, std::size_t count, unsigned bits,
                             unsigned windows, unsigned per_copy, std::uint32_t* histogram) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  std::uint32_t s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (i < count) {
    const fr_device c = fr_canonical(fr_load(scalars + i));
    fr_store(reinterpret_cast<fr_device*>(canonical) + i, c);
#pragma unroll
    for (int k = 0; k < 8; ++k) s[k] = c.limb[k];
  }
  // Every lane of the warp takes part in every __match_any_sync below (lanes past the end act as
  // zero scalars), so the loops are warp-uniform.
  bool zero, one;
  classify(s, zero, one);
  const unsigned rounds = __all_sync(full_warp, zero || one) ? 1u : windows;
  std::uint32_t carry = 0;
  for (unsigned w = 0; w < rounds; ++w) {
    const entry_key key = window_key(s, zero, one, w, bits, per_copy, carry);
    const unsigned peers = __match_any_sync(full_warp, key.group);
    if (key.group != no_group && lane_id() == static_cast<std::uint32_t>(__ffs(peers) - 1))
      atomicAdd(histogram + key.group, static_cast<std::uint32_t>(__popc(peers)));
  }
}

/// Whether a kernel of the placement runs (msm_placement_gate): the same answer in every thread.
__device__ __forceinline__ bool gate_open(const msm_placement_gate& gate) {
  if (gate.offsets == nullptr) return true;
  const std::uint32_t all = gate.offsets[gate.groups];
  const std::uint32_t ones = all - gate.offsets[gate.groups - 1];
  return msm_dense_entries(all, ones, gate.possible) == gate.dense;
}

__global__ void place_kernel(const std::uint32_t* canonical, std::size_t count, unsigned bits, unsigned windows,
                             unsigned per_copy, std::size_t stride, std::uint32_t* cursor, std::uint32_t* entries,
                             msm_placement_gate gate) {
  if (!gate_open(gate)) return;
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  std::uint32_t s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (i < count) {
    const fr_device c = fr_load(reinterpret_cast<const fr_device*>(canonical) + i);
#pragma unroll
    for (int k = 0; k < 8; ++k) s[k] = c.limb[k];
  }
  bool zero, one;
  classify(s, zero, one);
  const unsigned rounds = __all_sync(full_warp, zero || one) ? 1u : windows;
  const std::uint32_t lower_lanes = (1u << lane_id()) - 1u;
  std::uint32_t carry = 0;
  for (unsigned w = 0; w < rounds; ++w) {
    const entry_key key = window_key(s, zero, one, w, bits, per_copy, carry);
    const unsigned peers = __match_any_sync(full_warp, key.group);
    const unsigned leader = static_cast<unsigned>(__ffs(peers) - 1);
    std::uint32_t base = 0;
    if (key.group != no_group && lane_id() == leader)
      base = atomicAdd(cursor + key.group, static_cast<std::uint32_t>(__popc(peers)));
    base = __shfl_sync(full_warp, base, static_cast<int>(leader));
    if (key.group != no_group) {
      const std::uint32_t position = base + static_cast<std::uint32_t>(__popc(peers & lower_lanes));
      entries[position] = static_cast<std::uint32_t>(key.copy * stride + i) | (key.negative ? sign_bit : 0u);
    }
  }
}

}  // namespace
}  // namespace coprove::cuda::detail

#include "msm_placement_kernels.cuh"

namespace coprove::cuda::detail {
namespace {

__global__ void chunk_count_kernel(const std::uint32_t* offsets, std::size_t groups, std::uint32_t chunk,
                                   std::uint32_t* counts) {
  const std::size_t g = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (g > groups) return;
  if (g == groups) {
    counts[g] = 0;
    return;
  }
  const std::uint32_t n = offsets[g + 1] - offsets[g];
  counts[g] = (n + chunk - 1) / chunk;
}

/// counts[g] = the level-0 spans (entries [t chunk, (t + 1) chunk)) that group g's entries
/// [offsets[g], offsets[g + 1]) meet, counts[groups] = 0.
__global__ void span_count_kernel(const std::uint32_t* offsets, std::size_t groups, std::uint32_t chunk,
                                  std::uint32_t* counts) {
  const std::size_t g = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (g > groups) return;
  if (g == groups || offsets[g + 1] == offsets[g]) {
    counts[g] = 0;
    return;
  }
  counts[g] = (offsets[g + 1] - 1) / chunk - offsets[g] / chunk + 1;
}

/// The group of output sum i: the g with out_offsets[g] <= i < out_offsets[g + 1].
__device__ __forceinline__ std::uint32_t group_of(const std::uint32_t* out_offsets, std::size_t groups,
                                                  std::uint32_t i) {
  std::size_t lo = 0, hi = groups;
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    if (out_offsets[mid] <= i) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return static_cast<std::uint32_t>(lo);
}

/// This thread's output sum i of a level and the input range it adds, [begin, end): part
/// i - out_offsets[g] of group g, whose n_g inputs are split into out_offsets[g + 1] - out_offsets[g]
/// = ceil(n_g / chunk) parts of equal size (within one), so that no thread of a warp waits on a
/// full chunk beside a short remainder; false past the level's last sum.
__device__ __forceinline__ bool chunk_of(const std::uint32_t* in_offsets, const std::uint32_t* out_offsets,
                                         std::size_t groups, std::uint32_t chunk, std::size_t capacity,
                                         std::uint32_t& i, std::uint32_t& begin, std::uint32_t& end) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= capacity) return false;
  i = static_cast<std::uint32_t>(t);
  if (i >= out_offsets[groups]) return false;
  const std::uint32_t g = group_of(out_offsets, groups, i);
  const std::uint64_t n = in_offsets[g + 1] - in_offsets[g];
  const std::uint64_t parts = out_offsets[g + 1] - out_offsets[g];
  const std::uint64_t part = i - out_offsets[g];
  begin = in_offsets[g] + static_cast<std::uint32_t>(part * n / parts);
  end = in_offsets[g] + static_cast<std::uint32_t>((part + 1) * n / parts);
  return true;
}

template <class F>
__device__ __forceinline__ affine_device<F> load_base(const affine_device<F>* bases, std::uint32_t entry) {
  affine_device<F> p = bases[entry & ~sign_bit];
  if (entry & sign_bit) p.y = field_ops<F>::neg(p.y);
  return p;
}

// Level 0 keeps each thread's accumulator in shared memory, in both groups, as measured on an H200
// (docs/history/msm.md): G1's with add_mixed_shared (with its products inline, 134 registers instead of
// 168 and 3 % faster than in registers; with them called, 118), G2's since its Fq2 products are
// called functions (level 0 in spans 3.4 % faster than in registers, which spilled).


/// Level 0 of G1: each thread adds its chunk of entries into an accumulator of its own.
__global__ void __launch_bounds__(128) sum_entries_kernel(const affine_device<fq_device>* bases,
                                                          const std::uint32_t* entries,
                                                          const std::uint32_t* in_offsets,
                                                          const std::uint32_t* out_offsets, std::size_t groups,
                                                          std::uint32_t chunk, xyzz_device<fq_device>* out,
                                                          std::size_t capacity) {
  std::uint32_t i, begin, end;
  if (!chunk_of(in_offsets, out_offsets, groups, chunk, capacity, i, begin, end)) return;
  extern __shared__ unsigned char shared_bytes[];
  volatile xyzz_device<fq_device>& acc = reinterpret_cast<volatile xyzz_device<fq_device>*>(shared_bytes)[threadIdx.x];
  store_shared(acc, xyzz_identity<fq_device>());
  for (std::uint32_t k = begin; k < end; ++k) add_mixed_shared(acc, load_base(bases, entries[k]));
  out[i] = load_shared(acc);
}

/// Level 0 of G2, in spans (docs/history/msm.md: level 0 in equal chunks of entries across groups):
/// thread t adds the entries [t chunk, (t + 1) chunk) of the placement, whichever groups they belong
/// to, and writes one partial sum for each group its range meets, so that every thread does the same
/// work (chunks of one group split into equal parts leave a warp's lanes from about 20 to 32
/// entries). Group g's partials come from threads in_offsets[g] / chunk .. (in_offsets[g + 1] - 1) /
/// chunk, in that order, at out_offsets[g] onwards (span_count_kernel counts them). One loop over
/// the entries with the writes inside it: a loop per group made lanes whose ranges cross group
/// boundaries at different entries run their groups' loops one after the other (1.7x slower). G1
/// keeps chunks per group: in this form its kernel needs 178 registers (168 with 56 bytes spilled at
/// three blocks an SM) and measured 2 % slower.
__global__ void __launch_bounds__(128) sum_entry_spans_kernel(const affine_device<fq2_device>* bases,
                                                              const std::uint32_t* entries,
                                                              const std::uint32_t* in_offsets,
                                                              const std::uint32_t* out_offsets, std::size_t groups,
                                                              std::uint32_t chunk, xyzz_device<fq2_device>* out,
                                                              std::size_t threads) {
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  const std::uint32_t total = in_offsets[groups];
  const std::uint64_t first = std::uint64_t{t} * chunk;
  if (first >= total) return;
  const auto begin = static_cast<std::uint32_t>(first);
  const auto end = static_cast<std::uint32_t>(first + chunk < total ? first + chunk : total);
  // The group holding entry `begin`: the last one starting at or before it (it has entries).
  std::uint32_t g = group_of(in_offsets, groups, begin);
  std::uint32_t group_end = in_offsets[g + 1];
  extern __shared__ unsigned char shared_bytes[];
  volatile xyzz_device<fq2_device>& acc = reinterpret_cast<volatile xyzz_device<fq2_device>*>(shared_bytes)[threadIdx.x];
  store_shared(acc, xyzz_identity<fq2_device>());
  for (std::uint32_t k = begin; k < end; ++k) {
    add_mixed_shared(acc, load_base(bases, entries[k]));
    if (k + 1 == group_end || k + 1 == end) {
      out[out_offsets[g] + static_cast<std::uint32_t>(t) - in_offsets[g] / chunk] = load_shared(acc);
      store_shared(acc, xyzz_identity<fq2_device>());
      if (k + 1 < end) {  // the next group that has entries, most often g + 1
        g = in_offsets[g + 2] > k + 1 ? g + 1 : group_of(in_offsets, groups, k + 1);
        group_end = in_offsets[g + 1];
      }
    }
  }
}

/// The shared memory of one level-0 block of `threads` threads: an accumulator a thread.
template <class F>
constexpr std::size_t sum_entries_shared_bytes(unsigned threads) {
  return std::size_t{threads} * sizeof(xyzz_device<F>);
}

/// Where the later levels keep each thread's accumulator: G2's in shared memory with the summand
/// beside it (add_xyzz_shared; in registers G2's add_xyzz spilled at 255 registers), G1's in
/// registers (224, none spilled). Measured with G2's products inline only: 1 % slower in G2's
/// buckets than in registers; with the products called, the register form was not measured.
template <class F>
inline constexpr bool sums_in_shared = false;
template <>
inline constexpr bool sums_in_shared<fq2_device> = true;

/// The threads of a block of the later levels: fewer where the accumulators are in shared memory
/// (two points a thread), so that several blocks fit an SM.
template <class F>
inline constexpr unsigned sum_points_threads = sums_in_shared<F> ? 32 : 128;

template <class F>
__global__ void __launch_bounds__(128) sum_points_kernel(const xyzz_device<F>* in, const std::uint32_t* in_offsets,
                                                         const std::uint32_t* out_offsets, std::size_t groups,
                                                         std::uint32_t chunk, xyzz_device<F>* out,
                                                         std::size_t capacity) {
  std::uint32_t i, begin, end;
  if (!chunk_of(in_offsets, out_offsets, groups, chunk, capacity, i, begin, end)) return;
  if constexpr (sums_in_shared<F>) {
    extern __shared__ unsigned char shared_bytes[];
    volatile xyzz_device<F>* slots = reinterpret_cast<volatile xyzz_device<F>*>(shared_bytes) + 2 * threadIdx.x;
    volatile xyzz_device<F>& acc = slots[0];
    volatile xyzz_device<F>& next = slots[1];
    store_shared(acc, in[begin]);
    for (std::uint32_t k = begin + 1; k < end; ++k) {
      store_shared(next, in[k]);
      add_xyzz_shared(acc, next);
    }
    out[i] = load_shared(acc);
  } else {
    xyzz_device<F> acc = in[begin];
    for (std::uint32_t k = begin + 1; k < end; ++k) acc = add_xyzz(acc, in[k]);
    out[i] = acc;
  }
}

/// The one sum of group g, or the identity when the group is empty.
template <class F>
__device__ __forceinline__ xyzz_device<F> group_sum(const xyzz_device<F>* sums, const std::uint32_t* offsets,
                                                    std::size_t g) {
  return offsets[g + 1] > offsets[g] ? sums[offsets[g]] : xyzz_identity<F>();
}

/// Threads of a block of the window weighting: three points a thread in shared memory.
constexpr unsigned weight_threads = 32;

/// Segment t of the buckets of window w: sum (k + 1) B_k over the segment's buckets k, with the
/// running sum, the total and the bucket being added in shared memory (add_xyzz_shared: with them
/// in registers G2's kernel spilled about 9 KiB a thread, G1's about 1 KiB).
template <class F>
__global__ void __launch_bounds__(weight_threads) weight_kernel(const xyzz_device<F>* sums, const std::uint32_t* offsets,
                                                                unsigned windows, std::size_t buckets,
                                                                std::size_t segment, xyzz_device<F>* out) {
  const std::size_t segments = buckets / segment;
  const std::size_t t = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= windows * segments) return;
  const std::size_t w = t / segments, s = t % segments;
  const std::size_t first = s * segment;
  extern __shared__ unsigned char shared_bytes[];
  volatile xyzz_device<F>* slots = reinterpret_cast<volatile xyzz_device<F>*>(shared_bytes) + 3 * threadIdx.x;
  volatile xyzz_device<F>& running = slots[0];  // B_k + ... + B_last
  volatile xyzz_device<F>& total = slots[1];    // the sum of the running sums: sum (k - first + 1) B_k
  volatile xyzz_device<F>& other = slots[2];
  store_shared(running, xyzz_identity<F>());
  store_shared(total, xyzz_identity<F>());
  for (std::size_t k = first + segment; k-- > first;) {
    store_shared(other, group_sum(sums, offsets, w * buckets + k));
    add_xyzz_shared(running, other);
    add_xyzz_shared(total, running);
  }
  // sum (k + 1) B_k = total + first * running: first * running by doubling and adding from the top
  // bit of first, in `other`.
  store_shared(other, xyzz_identity<F>());
  const auto k = static_cast<std::uint32_t>(first);
  if (k != 0) {
    for (int bit = 31 - __clz(k); bit >= 0; --bit) {
      double_xyzz_shared(other);
      if ((k >> bit) & 1u) add_xyzz_shared(other, running);
    }
  }
  add_xyzz_shared(total, other);
  out[t] = load_shared(total);
}

__global__ void regular_offsets_kernel(std::uint32_t* offsets, std::size_t groups, std::uint32_t per) {
  const std::size_t g = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (g <= groups) offsets[g] = static_cast<std::uint32_t>(g * per);
}

template <class F>
__global__ void combine_kernel(const xyzz_device<F>* window_sums, const std::uint32_t* window_offsets,
                               unsigned windows, unsigned bits, const xyzz_device<F>* bucket_sums,
                               const std::uint32_t* bucket_offsets, std::size_t ones_group, xyzz_device<F>* result) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  xyzz_device<F> acc = xyzz_identity<F>();
  for (unsigned w = windows; w-- > 0;) {
    if (w + 1 < windows) {
      for (unsigned b = 0; b < bits; ++b) acc = double_xyzz(acc);
    }
    acc = add_xyzz(acc, group_sum(window_sums, window_offsets, w));
  }
  *result = reduced(add_xyzz(acc, group_sum(bucket_sums, bucket_offsets, ones_group)));
}

template <class F>
__global__ void gather_windows_kernel(const xyzz_device<F>* window_sums, const std::uint32_t* window_offsets,
                                      unsigned windows, const xyzz_device<F>* bucket_sums,
                                      const std::uint32_t* bucket_offsets, std::size_t ones_group,
                                      xyzz_device<F>* out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < windows) out[t] = reduced(group_sum(window_sums, window_offsets, t));
  if (t == windows) out[t] = reduced(group_sum(bucket_sums, bucket_offsets, ones_group));
}

template <class F>
__global__ void identity_kernel(xyzz_device<F>* result) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *result = xyzz_identity<F>();
}

/// Copies 1..copies-1 of bases[begin, begin + n): copy j of point P at j * stride is [2^(j shift)]P,
/// made by doubling copy j - 1 and brought to affine form with one inversion per point for all its
/// copies (Montgomery's trick over the copies, the XYZZ values and the running products of their
/// ZZZ kept in `scratch` and `products`, (copies - 1) * n of each, index (j - 1) * n + i).
template <class F>
__global__ void __launch_bounds__(128) shift_copies_kernel(affine_device<F>* bases, std::size_t stride,
                                                            std::size_t begin, std::size_t n, unsigned copies,
                                                            unsigned shift, xyzz_device<F>* scratch, F* products) {
  using f = field_ops<F>;
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const affine_device<F> p = bases[begin + i];
  xyzz_device<F> acc = is_identity(p) ? xyzz_identity<F>() : xyzz_device<F>{p.x, p.y, f::one(), f::one()};
  F running = f::one();
  for (unsigned j = 1; j < copies; ++j) {
    for (unsigned b = 0; b < shift; ++b) acc = double_xyzz(acc);
    scratch[(j - 1) * n + i] = acc;
    // A point that doubled to the identity (only one outside the prime-order group can) leaves the
    // product alone and is written as (0, 0).
    if (!is_identity(acc)) running = f::mul(running, acc.zzz);
    products[(j - 1) * n + i] = running;
  }
  F inverse = f::inv(running);  // 1 / (ZZZ_1 ... ZZZ_{copies-1})
  for (unsigned j = copies - 1; j >= 1; --j) {
    const xyzz_device<F> q = scratch[(j - 1) * n + i];
    affine_device<F> out{f::zero(), f::zero()};
    if (!is_identity(q)) {
      const F zzz_inv = j > 1 ? f::mul(inverse, products[(j - 2) * n + i]) : inverse;
      inverse = f::mul(inverse, q.zzz);
      const F zz_inv = f::mul(f::sqr(zzz_inv), f::sqr(q.zz));  // ZZ^2 / ZZZ^2 = 1 / ZZ
      out = {f::mul(q.x, zz_inv), f::mul(q.y, zzz_inv)};
    }
    bases[j * stride + begin + i] = reduced(out);
  }
}

constexpr unsigned block_threads = 256;
constexpr unsigned sum_threads = 128;

template <class F>
void repack(const void* src, std::size_t stride, std::size_t flag_offset, void* dst, std::size_t count,
            cudaStream_t stream) {
  repack_kernel<F><<<blocks_for(count, block_threads), block_threads, 0, stream>>>(
      static_cast<const unsigned char*>(src), stride, flag_offset, static_cast<affine_device<F>*>(dst), count);
  COPROVE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void msm_repack_bases(msm_group group, const void* src, std::size_t stride, std::size_t flag_offset, void* dst,
                      std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  if (group == msm_group::g1) {
    repack<fq_device>(src, stride, flag_offset, dst, count, stream);
  } else {
    repack<fq2_device>(src, stride, flag_offset, dst, count, stream);
  }
}

void msm_shift_copies(msm_group group, void* bases, std::size_t stride, std::size_t begin, std::size_t n,
                      unsigned copies, unsigned shift, void* scratch, void* products, cudaStream_t stream) {
  if (n == 0 || copies < 2) return;
  if (group == msm_group::g1) {
    shift_copies_kernel<fq_device><<<blocks_for(n, sum_threads), sum_threads, 0, stream>>>(
        static_cast<affine_device<fq_device>*>(bases), stride, begin, n, copies, shift,
        static_cast<xyzz_device<fq_device>*>(scratch), static_cast<fq_device*>(products));
  } else {
    shift_copies_kernel<fq2_device><<<blocks_for(n, sum_threads), sum_threads, 0, stream>>>(
        static_cast<affine_device<fq2_device>*>(bases), stride, begin, n, copies, shift,
        static_cast<xyzz_device<fq2_device>*>(scratch), static_cast<fq2_device*>(products));
  }
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_count_entries(const void* scalars, std::uint32_t* canonical, std::size_t count, unsigned bits,
                       unsigned windows, unsigned per_copy, std::uint32_t* histogram, cudaStream_t stream) {
  if (count == 0) return;
  count_kernel<<<blocks_for(count, block_threads), block_threads, 0, stream>>>(
      static_cast<const fr_device*>(scalars), canonical, count, bits, windows, per_copy, histogram);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_place_entries(const std::uint32_t* canonical, std::size_t count, unsigned bits, unsigned windows,
                       unsigned per_copy, std::size_t stride, std::uint32_t* cursor, std::uint32_t* entries,
                       msm_placement_gate gate, cudaStream_t stream) {
  if (count == 0) return;
  place_kernel<<<blocks_for(count, block_threads), block_threads, 0, stream>>>(canonical, count, bits, windows,
                                                                               per_copy, stride, cursor, entries, gate);
  COPROVE_CUDA_CHECK_LAUNCH();
}

namespace {

/// Sets a function attribute of `kernel` on the current device once per device and kernel (the
/// value from value(device) at the first call).
template <class Value>
void set_once(const void* kernel, cudaFuncAttribute attribute, Value&& value) {
  static std::mutex mutex;
  static std::vector<std::tuple<const void*, int, cudaFuncAttribute>> done;
  int device = 0;
  COPROVE_CUDA_TRY(cudaGetDevice(&device));
  const std::lock_guard lock(mutex);
  const auto key = std::tuple{kernel, device, attribute};
  if (std::find(done.begin(), done.end(), key) == done.end()) {
    COPROVE_CUDA_TRY(cudaFuncSetAttribute(kernel, attribute, value(device)));
    done.push_back(key);
  }
}

/// Lets `kernel` take as much dynamic shared memory as the current device allows a block (above 48
/// KiB a kernel must ask): the block's most less what the kernel declares statically (the block
/// scan's storage), which the device refuses to exceed (cudaErrorInvalidValue).
void allow_shared(const void* kernel) {
  set_once(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, [kernel](int device) {
    int most = 0;
    COPROVE_CUDA_TRY(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    cudaFuncAttributes declared{};
    COPROVE_CUDA_TRY(cudaFuncGetAttributes(&declared, kernel));
    return most - static_cast<int>(declared.sharedSizeBytes);
  });
}

}  // namespace

void msm_count_bins(const std::uint32_t* canonical, std::size_t first, std::size_t count, unsigned bits,
                    unsigned windows, unsigned per_copy, unsigned shift, unsigned bins, std::uint32_t* bin_counts,
                    msm_placement_gate gate, cudaStream_t stream) {
  if (count == 0) return;
  bin_count_kernel<<<blocks_for(count, bin_block_scalars(windows)), bin_threads, bins * 4, stream>>>(
      canonical, first, count, bits, windows, per_copy, shift, bins, bin_counts, gate);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_place_bins(const std::uint32_t* canonical, std::size_t first, std::size_t count, unsigned bits,
                    unsigned windows, unsigned per_copy, std::size_t stride, unsigned shift, unsigned bins,
                    std::uint32_t* bin_cursor, void* temp, msm_placement_gate gate, cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t shared = bin_place_shared_bytes(bins);
  allow_shared(reinterpret_cast<const void*>(bin_place_kernel));
  bin_place_kernel<<<blocks_for(count, bin_block_scalars(windows)), bin_threads, shared, stream>>>(
      canonical, first, count, bits, windows, per_copy, stride, shift, bins, bin_cursor, static_cast<uint2*>(temp),
      gate);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_bin_tiles(const std::uint32_t* bin_offsets, unsigned bins, std::uint32_t tile, std::uint32_t* tiles,
                   msm_placement_gate gate, cudaStream_t stream) {
  bin_tile_kernel<<<blocks_for(std::size_t{bins} + 1, block_threads), block_threads, 0, stream>>>(bin_offsets, bins,
                                                                                                   tile, tiles, gate);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_unpack_bins(const void* temp, const std::uint32_t* bin_offsets, const std::uint32_t* tile_start,
                     unsigned bins, std::size_t max_tiles, std::uint32_t tile, unsigned shift, std::uint32_t* cursor,
                     std::uint32_t* entries, msm_placement_gate gate, cudaStream_t stream) {
  if (max_tiles == 0) return;
  const std::size_t shared = bin_unpack_shared_bytes(tile, shift);
  allow_shared(reinterpret_cast<const void*>(bin_unpack_kernel));
  bin_unpack_kernel<<<blocks_for(max_tiles, 1), msm_unpack_threads, shared, stream>>>(
      static_cast<const uint2*>(temp), bin_offsets, tile_start, bins, tile, shift, cursor, entries, gate);
  COPROVE_CUDA_CHECK_LAUNCH();
}

std::size_t msm_scan_scratch_bytes(std::size_t items) {
  std::size_t bytes = 0;
  COPROVE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                                 static_cast<std::uint32_t*>(nullptr), static_cast<int>(items)));
  return bytes;
}

void msm_exclusive_scan(void* scratch, std::size_t scratch_bytes, const std::uint32_t* in, std::uint32_t* out,
                        std::size_t items, cudaStream_t stream) {
  COPROVE_CUDA_TRY(cub::DeviceScan::ExclusiveSum(scratch, scratch_bytes, in, out, static_cast<int>(items), stream));
}

void msm_chunk_counts(const std::uint32_t* offsets, std::size_t groups, std::uint32_t chunk, std::uint32_t* counts,
                      cudaStream_t stream) {
  chunk_count_kernel<<<blocks_for(groups + 1, block_threads), block_threads, 0, stream>>>(offsets, groups, chunk,
                                                                                         counts);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_span_counts(const std::uint32_t* offsets, std::size_t groups, std::uint32_t chunk, std::uint32_t* counts,
                     cudaStream_t stream) {
  span_count_kernel<<<blocks_for(groups + 1, block_threads), block_threads, 0, stream>>>(offsets, groups, chunk,
                                                                                        counts);
  COPROVE_CUDA_CHECK_LAUNCH();
}

namespace {

/// Asks for half of the SM's unified memory as shared memory for `kernel` on the current device, the
/// other half staying L1 for the entries and bases: a function attribute of the device, set once
/// per device and kernel.
void prefer_half_shared(const void* kernel) {
  set_once(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, [](int) { return 50; });
}

/// Launches a later level for field F: blocks of sum_points_threads<F>, with two points a thread
/// of shared memory where the sums are accumulated there.
template <class F>
void launch_sum_points(const void* in, const std::uint32_t* in_offsets, const std::uint32_t* out_offsets,
                       std::size_t groups, std::uint32_t chunk, void* out, std::size_t capacity, cudaStream_t stream) {
  constexpr unsigned threads = sum_points_threads<F>;
  constexpr std::size_t shared = sums_in_shared<F> ? 2 * threads * sizeof(xyzz_device<F>) : 0;
  sum_points_kernel<F><<<blocks_for(capacity, threads), threads, shared, stream>>>(
      static_cast<const xyzz_device<F>*>(in), in_offsets, out_offsets, groups, chunk, static_cast<xyzz_device<F>*>(out),
      capacity);
  COPROVE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void msm_sum_entries(msm_group group, const void* bases, const std::uint32_t* entries,
                     const std::uint32_t* in_offsets, const std::uint32_t* out_offsets, std::size_t groups,
                     std::uint32_t chunk, void* out, std::size_t capacity, cudaStream_t stream) {
  if (group != msm_group::g1) throw std::logic_error("MSM: level 0 in chunks per group is built for G1 only");
  if (capacity == 0) return;
  // The accumulators in shared memory (24 KiB a block, three blocks an SM): half of the SM's unified
  // memory as shared memory.
  prefer_half_shared(reinterpret_cast<const void*>(sum_entries_kernel));
  sum_entries_kernel<<<blocks_for(capacity, sum_threads), sum_threads, sum_entries_shared_bytes<fq_device>(sum_threads),
                       stream>>>(static_cast<const affine_device<fq_device>*>(bases), entries, in_offsets, out_offsets,
                                 groups, chunk, static_cast<xyzz_device<fq_device>*>(out), capacity);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_sum_entry_spans(msm_group group, const void* bases, const std::uint32_t* entries,
                         const std::uint32_t* in_offsets, const std::uint32_t* out_offsets, std::size_t groups,
                         std::uint32_t chunk, void* out, std::size_t max_entries, cudaStream_t stream) {
  if (group != msm_group::g2) throw std::logic_error("MSM: level 0 in spans is built for G2 only");
  if (max_entries == 0) return;
  const std::size_t threads = (max_entries + chunk - 1) / chunk;
  prefer_half_shared(reinterpret_cast<const void*>(sum_entry_spans_kernel));
  sum_entry_spans_kernel<<<blocks_for(threads, sum_threads), sum_threads,
                           sum_entries_shared_bytes<fq2_device>(sum_threads), stream>>>(
      static_cast<const affine_device<fq2_device>*>(bases), entries, in_offsets, out_offsets, groups, chunk,
      static_cast<xyzz_device<fq2_device>*>(out), threads);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_sum_points(msm_group group, const void* in, const std::uint32_t* in_offsets,
                    const std::uint32_t* out_offsets, std::size_t groups, std::uint32_t chunk, void* out,
                    std::size_t capacity, cudaStream_t stream) {
  if (capacity == 0) return;
  if (group == msm_group::g1) {
    launch_sum_points<fq_device>(in, in_offsets, out_offsets, groups, chunk, out, capacity, stream);
  } else {
    launch_sum_points<fq2_device>(in, in_offsets, out_offsets, groups, chunk, out, capacity, stream);
  }
}

void msm_weight_segments(msm_group group, const void* sums, const std::uint32_t* offsets, unsigned windows,
                         std::size_t buckets, std::size_t segment, void* out, cudaStream_t stream) {
  const std::size_t threads = windows * (buckets / segment);
  if (threads == 0) return;
  if (group == msm_group::g1) {
    weight_kernel<fq_device><<<blocks_for(threads, weight_threads), weight_threads,
                               3 * weight_threads * sizeof(xyzz_device<fq_device>), stream>>>(
        static_cast<const xyzz_device<fq_device>*>(sums), offsets, windows, buckets, segment,
        static_cast<xyzz_device<fq_device>*>(out));
  } else {
    weight_kernel<fq2_device><<<blocks_for(threads, weight_threads), weight_threads,
                                3 * weight_threads * sizeof(xyzz_device<fq2_device>), stream>>>(
        static_cast<const xyzz_device<fq2_device>*>(sums), offsets, windows, buckets, segment,
        static_cast<xyzz_device<fq2_device>*>(out));
  }
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_regular_offsets(std::uint32_t* offsets, std::size_t groups, std::uint32_t per, cudaStream_t stream) {
  regular_offsets_kernel<<<blocks_for(groups + 1, block_threads), block_threads, 0, stream>>>(offsets, groups, per);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_combine_windows(msm_group group, const void* window_sums, const std::uint32_t* window_offsets,
                         unsigned windows, unsigned bits, const void* bucket_sums,
                         const std::uint32_t* bucket_offsets, std::size_t ones_group, void* result,
                         cudaStream_t stream) {
  if (group == msm_group::g1) {
    combine_kernel<fq_device><<<1, 32, 0, stream>>>(static_cast<const xyzz_device<fq_device>*>(window_sums),
                                                    window_offsets, windows, bits,
                                                    static_cast<const xyzz_device<fq_device>*>(bucket_sums),
                                                    bucket_offsets, ones_group,
                                                    static_cast<xyzz_device<fq_device>*>(result));
  } else {
    combine_kernel<fq2_device><<<1, 32, 0, stream>>>(static_cast<const xyzz_device<fq2_device>*>(window_sums),
                                                     window_offsets, windows, bits,
                                                     static_cast<const xyzz_device<fq2_device>*>(bucket_sums),
                                                     bucket_offsets, ones_group,
                                                     static_cast<xyzz_device<fq2_device>*>(result));
  }
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_gather_windows(msm_group group, const void* window_sums, const std::uint32_t* window_offsets,
                        unsigned windows, const void* bucket_sums, const std::uint32_t* bucket_offsets,
                        std::size_t ones_group, void* out, cudaStream_t stream) {
  const std::size_t threads = std::size_t{windows} + 1;
  if (group == msm_group::g1) {
    gather_windows_kernel<fq_device><<<blocks_for(threads, 64), 64, 0, stream>>>(
        static_cast<const xyzz_device<fq_device>*>(window_sums), window_offsets, windows,
        static_cast<const xyzz_device<fq_device>*>(bucket_sums), bucket_offsets, ones_group,
        static_cast<xyzz_device<fq_device>*>(out));
  } else {
    gather_windows_kernel<fq2_device><<<blocks_for(threads, 64), 64, 0, stream>>>(
        static_cast<const xyzz_device<fq2_device>*>(window_sums), window_offsets, windows,
        static_cast<const xyzz_device<fq2_device>*>(bucket_sums), bucket_offsets, ones_group,
        static_cast<xyzz_device<fq2_device>*>(out));
  }
  COPROVE_CUDA_CHECK_LAUNCH();
}

void msm_write_identity(msm_group group, void* result, cudaStream_t stream) {
  if (group == msm_group::g1) {
    identity_kernel<fq_device><<<1, 32, 0, stream>>>(static_cast<xyzz_device<fq_device>*>(result));
  } else {
    identity_kernel<fq2_device><<<1, 32, 0, stream>>>(static_cast<xyzz_device<fq2_device>*>(result));
  }
  COPROVE_CUDA_CHECK_LAUNCH();
}

}  // namespace coprove::cuda::detail
