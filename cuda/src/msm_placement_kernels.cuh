// The MSM's placement in two passes, kernels only: part of msm_kernels.cu, which includes it after
// the helpers it uses (entry_key, window_key, classify, the warp helpers) and launches its kernels.
#pragma once

namespace coprove::cuda::detail {
namespace {

// The placement in two passes (msm_plan.hpp, placement_bin_shift): pass 1 writes each entry with
// its group into `temp` at its bin (2^shift consecutive groups), pass 2 moves each bin's entries to
// their groups. A block of either pass counts its entries per bin (per group of its bin) in shared
// memory, reserves its run in each with one global atomic, sorts its entries by destination in
// shared memory and writes each run with consecutive threads at consecutive places: stores to
// scattered places, not the atomics, are what the one-pass placement spends most of its time on
// (docs/history/msm.md: measured with a probe of the placement's variants, f017213).

/// Pass 1's block: 256 threads, and as many scalars as leave at most bin_block_entries entries.
constexpr unsigned bin_threads = 256;
constexpr unsigned bin_block_entries = 13 * 1024;

/// The scalars a block of pass 1 (and of the bins' count) takes: 1,024 of 13 windows.
__host__ __device__ __forceinline__ unsigned bin_block_scalars(unsigned windows) {
  return bin_block_entries / windows;
}

/// Calls f(key, entry value) for every entry of this thread's share of the block's scalars among
/// [first, first + count), in the same order each time.
template <class F>
__device__ __forceinline__ void for_each_block_entry(const std::uint32_t* canonical, std::size_t first,
                                                     std::size_t count, unsigned bits, unsigned windows,
                                                     unsigned per_copy, std::size_t stride, F&& f) {
  const unsigned per_block = bin_block_scalars(windows);
  const std::size_t block_first = std::size_t{blockIdx.x} * per_block;
  for (unsigned k = threadIdx.x; k < per_block; k += blockDim.x) {
    const std::size_t local = block_first + k;
    if (local >= count) return;
    const std::size_t i = first + local;
    const fr_device c = fr_load(reinterpret_cast<const fr_device*>(canonical) + i);
    std::uint32_t s[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) s[j] = c.limb[j];
    bool zero, one;
    classify(s, zero, one);
    if (zero) continue;
    std::uint32_t carry = 0;
    for (unsigned w = 0; w < (one ? 1u : windows); ++w) {
      const entry_key key = window_key(s, zero, one, w, bits, per_copy, carry);
      if (key.group != no_group)
        f(key, static_cast<std::uint32_t>(key.copy * stride + i) | (key.negative ? sign_bit : 0u));
    }
  }
}

/// local[k] = counts[0] + ... + counts[k - 1] for k < n, over the block's Threads threads (each
/// scans a run of consecutive counts); returns the total to every thread.
template <unsigned Threads>
__device__ __forceinline__ std::uint32_t block_exclusive_scan(const std::uint32_t* counts, std::uint32_t* local,
                                                              unsigned n) {
  using scan = cub::BlockScan<std::uint32_t, Threads>;
  __shared__ typename scan::TempStorage storage;
  __shared__ std::uint32_t total;
  const unsigned run = (n + Threads - 1) / Threads;
  const unsigned begin = min(threadIdx.x * run, n), end = min(begin + run, n);
  std::uint32_t sum = 0;
  for (unsigned k = begin; k < end; ++k) sum += counts[k];
  std::uint32_t before = 0, all = 0;
  scan(storage).ExclusiveSum(sum, before, all);
  for (unsigned k = begin; k < end; ++k) {
    local[k] = before;
    before += counts[k];
  }
  if (threadIdx.x == 0) total = all;
  __syncthreads();
  return total;
}

/// bin_counts[b] += the entries of scalars [first, first + count) in bin b (shared: bins words).
__global__ void __launch_bounds__(bin_threads) bin_count_kernel(const std::uint32_t* canonical, std::size_t first,
                                                                std::size_t count, unsigned bits, unsigned windows,
                                                                unsigned per_copy, unsigned shift, unsigned bins,
                                                                std::uint32_t* bin_counts, msm_placement_gate gate) {
  if (!gate_open(gate)) return;
  extern __shared__ std::uint32_t bin_shared[];
  for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) bin_shared[b] = 0;
  __syncthreads();
  for_each_block_entry(canonical, first, count, bits, windows, per_copy, 0,
                       [&](const entry_key& key, std::uint32_t) { atomicAdd(&bin_shared[key.group >> shift], 1u); });
  __syncthreads();
  for (unsigned b = threadIdx.x; b < bins; b += blockDim.x)
    if (bin_shared[b] != 0) atomicAdd(bin_counts + b, bin_shared[b]);
}

/// The shared memory of pass 1's block: its entries (8 bytes each) and three counters a bin.
inline std::size_t bin_place_shared_bytes(unsigned bins) {
  return std::size_t{bin_block_entries} * sizeof(uint2) + std::size_t{3} * bins * 4;
}

/// Pass 1: each entry of scalars [first, first + count) and its group in its bin's run in temp.
__global__ void __launch_bounds__(bin_threads) bin_place_kernel(const std::uint32_t* canonical, std::size_t first,
                                                                std::size_t count, unsigned bits, unsigned windows,
                                                                unsigned per_copy, std::size_t stride, unsigned shift,
                                                                unsigned bins, std::uint32_t* bin_cursor,
                                                                uint2* temp, msm_placement_gate gate) {
  if (!gate_open(gate)) return;
  extern __shared__ uint2 staged[];
  std::uint32_t* const counted = reinterpret_cast<std::uint32_t*>(staged + bin_block_entries);
  std::uint32_t* const local = counted + bins;
  std::uint32_t* const base = local + bins;
  for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) counted[b] = 0;
  __syncthreads();
  for_each_block_entry(canonical, first, count, bits, windows, per_copy, stride,
                       [&](const entry_key& key, std::uint32_t) { atomicAdd(&counted[key.group >> shift], 1u); });
  __syncthreads();
  const std::uint32_t all = block_exclusive_scan<bin_threads>(counted, local, bins);
  for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) {
    base[b] = counted[b] != 0 ? atomicAdd(bin_cursor + b, counted[b]) : 0u;
    counted[b] = 0;
  }
  __syncthreads();
  for_each_block_entry(canonical, first, count, bits, windows, per_copy, stride,
                       [&](const entry_key& key, std::uint32_t value) {
                         const unsigned b = key.group >> shift;
                         staged[local[b] + atomicAdd(&counted[b], 1u)] = make_uint2(value, key.group);
                       });
  __syncthreads();
  for (std::uint32_t k = threadIdx.x; k < all; k += blockDim.x) {
    const uint2 e = staged[k];
    const unsigned b = e.y >> shift;
    temp[base[b] + k - local[b]] = e;
  }
}

/// tiles[b] = ceil((bin_offsets[b + 1] - bin_offsets[b]) / tile) for b < bins, tiles[bins] = 0.
__global__ void bin_tile_kernel(const std::uint32_t* bin_offsets, unsigned bins, std::uint32_t tile,
                                std::uint32_t* tiles, msm_placement_gate gate) {
  if (!gate_open(gate)) return;
  const unsigned b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < bins) tiles[b] = (bin_offsets[b + 1] - bin_offsets[b] + tile - 1) / tile;
  if (b == bins) tiles[b] = 0;
}

/// The shared memory of pass 2's block: a tile's entries (4 bytes) and their groups in the bin (2),
/// and three counters a group of the bin.
inline std::size_t bin_unpack_shared_bytes(std::uint32_t tile, unsigned shift) {
  return std::size_t{tile} * 6 + (std::size_t{3} << shift) * 4;
}

/// Pass 2: block t takes tile t of its bin (the b with tile_start[b] <= t < tile_start[b + 1]) and
/// writes each entry in its group's run.
__global__ void __launch_bounds__(msm_unpack_threads) bin_unpack_kernel(const uint2* temp,
                                                                        const std::uint32_t* bin_offsets,
                                                                        const std::uint32_t* tile_start,
                                                                        unsigned bins, std::uint32_t tile,
                                                                        unsigned shift, std::uint32_t* cursor,
                                                                        std::uint32_t* entries,
                                                                        msm_placement_gate gate) {
  if (!gate_open(gate)) return;
  const std::uint32_t t = blockIdx.x;
  if (t >= tile_start[bins]) return;
  unsigned lo = 0, hi = bins;
  while (hi - lo > 1) {
    const unsigned mid = (lo + hi) / 2;
    if (tile_start[mid] <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const std::uint32_t begin = bin_offsets[lo] + (t - tile_start[lo]) * tile;
  const std::uint32_t end = min(begin + tile, bin_offsets[lo + 1]);
  const unsigned groups = 1u << shift;
  const std::uint32_t low = groups - 1;
  const std::uint32_t first_group = lo << shift;
  extern __shared__ std::uint32_t staged_entries[];
  auto* const staged_groups = reinterpret_cast<std::uint16_t*>(staged_entries + tile);
  std::uint32_t* const counted = reinterpret_cast<std::uint32_t*>(staged_groups + tile);
  std::uint32_t* const local = counted + groups;
  std::uint32_t* const base = local + groups;
  for (unsigned g = threadIdx.x; g < groups; g += blockDim.x) counted[g] = 0;
  __syncthreads();
  for (std::uint32_t k = begin + threadIdx.x; k < end; k += blockDim.x) atomicAdd(&counted[temp[k].y & low], 1u);
  __syncthreads();
  block_exclusive_scan<msm_unpack_threads>(counted, local, groups);
  for (unsigned g = threadIdx.x; g < groups; g += blockDim.x) {
    base[g] = counted[g] != 0 ? atomicAdd(cursor + first_group + g, counted[g]) : 0u;
    counted[g] = 0;
  }
  __syncthreads();
  for (std::uint32_t k = begin + threadIdx.x; k < end; k += blockDim.x) {
    const uint2 e = temp[k];
    const std::uint32_t g = e.y & low;
    const std::uint32_t at = local[g] + atomicAdd(&counted[g], 1u);
    staged_entries[at] = e.x;
    staged_groups[at] = static_cast<std::uint16_t>(g);
  }
  __syncthreads();
  for (std::uint32_t k = threadIdx.x; k < end - begin; k += blockDim.x) {
    const unsigned g = staged_groups[k];
    entries[base[g] + k - local[g]] = staged_entries[k];
  }
}

}  // namespace
}  // namespace coprove::cuda::detail
