// probe_placement: where the GPU MSM's placement spends its time
// (bench/RESULTS.md, "G1's products as called functions ... the placement's
// time is its scattered stores"). Not a benchmark of coprove's kernels:
// self-contained variants of its place kernel (msm_kernels.cu), each timed
// alone on random canonical scalars with 20-bit signed windows, 13 windows into
// one set of 2^19 groups (the MSM over 13 shifted copies), so that one cost at
// a time can be left out: the warp aggregation, the atomics' round trips, the
// scattered stores. Also a placement in two passes (bins of 2,048 groups, then
// groups), as on branch gpu-place-binned. Each full placement is checked: every
// position of every group holds an entry of that group, each entry once. Usage
// (GPU host): probe_placement [LOG2_SCALARS] (default 24); medians of 7, CUDA
// events.
#include <algorithm>
#include <coprove/cuda/msm_plan.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <vector>

namespace {

using coprove::cuda::msm_signed_digit;
constexpr unsigned full = 0xffffffffu;
constexpr std::uint32_t none = 0xffffffffu;

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "probe_placement: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}
#define CK(x) check((x), #x)

__device__ __forceinline__ std::uint32_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}
__global__ void fill(std::uint32_t* s, std::size_t n) {
  std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int k = 0; k < 8; ++k) s[i * 8 + k] = mix(i * 8 + k + 12345);
  s[i * 8 + 7] &= 0x3fffffffu;
}
struct wkey {
  std::uint32_t group;
  bool neg;
};
__device__ __forceinline__ wkey key_of(const std::uint32_t (&s)[8], unsigned w, std::uint32_t& carry) {
  const int d = msm_signed_digit(s, w, 20, carry);
  if (d == 0) return {none, false};
  const std::uint32_t m = d < 0 ? -d : d;
  return {m - 1, d < 0};
}
__device__ __forceinline__ void load(const std::uint32_t* sc, std::size_t i, std::size_t n, std::uint32_t (&s)[8]) {
  for (int k = 0; k < 8; ++k) s[k] = 0;
  if (i < n) {
    const uint4* p = reinterpret_cast<const uint4*>(sc + i * 8);
    uint4 a = p[0], b = p[1];
    s[0] = a.x;
    s[1] = a.y;
    s[2] = a.z;
    s[3] = a.w;
    s[4] = b.x;
    s[5] = b.y;
    s[6] = b.z;
    s[7] = b.w;
  }
}
constexpr unsigned W = 13;
__global__ void count_k(const std::uint32_t* sc, std::size_t n, std::uint32_t* hist) {
  std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  std::uint32_t s[8];
  load(sc, i, n, s);
  std::uint32_t carry = 0;
  for (unsigned w = 0; w < W; ++w) {
    wkey k = key_of(s, w, carry);
    if (i >= n) k.group = none;
    unsigned peers = __match_any_sync(full, k.group);
    if (k.group != none && (threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(hist + k.group, __popc(peers));
  }
}
// mode 0: as coprove's place kernel; 1: no scattered store (positions folded,
// one coalesced store); 2: ATOM without match; 3: RED + coalesced store at
// i*W+w; 4: no atomics, store at a hashed position; 5: batched: the 13 atomics
// issued before any result is used.
template <int Mode>
__global__ void place_k(const std::uint32_t* sc, std::size_t n, std::uint32_t* cursor, std::uint32_t* entries,
                        std::size_t total) {
  std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  std::uint32_t s[8];
  load(sc, i, n, s);
  std::uint32_t carry = 0, fold = 0;
  const unsigned lane = threadIdx.x & 31, lower = (1u << lane) - 1;
  if constexpr (Mode == 5) {
    std::uint32_t base[W], group[W], peersv[W];
    for (unsigned w = 0; w < W; ++w) {
      wkey k = key_of(s, w, carry);
      if (i >= n) k.group = none;
      group[w] = k.group;
      peersv[w] = __match_any_sync(full, k.group);
      base[w] = 0;
      if (k.group != none && lane == __ffs(peersv[w]) - 1) base[w] = atomicAdd(cursor + k.group, __popc(peersv[w]));
    }
    for (unsigned w = 0; w < W; ++w) {
      const unsigned leader = __ffs(peersv[w]) - 1;
      std::uint32_t b = __shfl_sync(full, base[w], leader);
      if (group[w] != none) entries[b + __popc(peersv[w] & lower)] = static_cast<std::uint32_t>(w * n + i);
    }
  } else {
    for (unsigned w = 0; w < W; ++w) {
      wkey k = key_of(s, w, carry);
      if (i >= n) k.group = none;
      if constexpr (Mode == 2) {
        if (k.group != none) entries[atomicAdd(cursor + k.group, 1u)] = static_cast<std::uint32_t>(w * n + i);
      } else if constexpr (Mode == 3) {
        if (k.group != none) {
          atomicAdd(cursor + k.group, 1u);
          entries[i * W + w] = k.group;
        }
      } else if constexpr (Mode == 4) {
        if (k.group != none)
          entries[(std::uint64_t{mix(i * W + w)} * total) >> 32] = static_cast<std::uint32_t>(w * n + i);
      } else {
        unsigned peers = __match_any_sync(full, k.group);
        const unsigned leader = __ffs(peers) - 1;
        std::uint32_t b = 0;
        if (k.group != none && lane == leader) b = atomicAdd(cursor + k.group, __popc(peers));
        b = __shfl_sync(full, b, leader);
        if (k.group != none) {
          const std::uint32_t pos = b + __popc(peers & lower);
          if constexpr (Mode == 0)
            entries[pos] = static_cast<std::uint32_t>(w * n + i) | (k.neg ? 0x80000000u : 0u);
          else
            fold ^= pos;
        }
      }
    }
  }
  if constexpr (Mode == 1)
    if (i < n) entries[i] = fold;
}

// ---- Two passes with block-aggregated atomics (prototype) ----
constexpr unsigned BIN_SHIFT = 11, BINS = 256, BIN_GROUPS = 1u << BIN_SHIFT;
constexpr unsigned P1_THREADS = 256, P1_PER = 8;  // scalars a thread
__device__ __forceinline__ std::uint32_t entry_of(unsigned w, std::size_t n, std::size_t i, bool neg) {
  return static_cast<std::uint32_t>(w * n + i) | (neg ? 0x80000000u : 0u);
}
/// Calls f(scalar, window, key) for each entry of this block's Threads * Per scalars, in the same order
/// each time.
template <unsigned Threads, unsigned Per, class F>
__device__ __forceinline__ void for_tile_entries(const std::uint32_t* sc, std::size_t n, F&& f) {
  const std::size_t first = std::size_t{blockIdx.x} * Threads * Per;
  for (unsigned k = 0; k < Per; ++k) {
    const std::size_t i = first + k * Threads + threadIdx.x;
    if (i >= n) break;
    std::uint32_t s[8];
    load(sc, i, n, s);
    std::uint32_t carry = 0;
    for (unsigned w = 0; w < W; ++w) {
      const wkey key = key_of(s, w, carry);
      if (key.group != none) f(i, w, key);
    }
  }
}
/// h[b] = this block's entries in bin b (h: BINS words of shared memory).
__device__ __forceinline__ void count_block_bins(const std::uint32_t* sc, std::size_t n, std::uint32_t* h) {
  for (unsigned t = threadIdx.x; t < BINS; t += blockDim.x) h[t] = 0;
  __syncthreads();
  for_tile_entries<P1_THREADS, P1_PER>(
      sc, n, [&](std::size_t, unsigned, const wkey& key) { atomicAdd(&h[key.group >> BIN_SHIFT], 1u); });
  __syncthreads();
}
__global__ void bin_count_k(const std::uint32_t* sc, std::size_t n, std::uint32_t* bin_hist) {
  __shared__ std::uint32_t h[BINS];
  count_block_bins(sc, n, h);
  for (unsigned t = threadIdx.x; t < BINS; t += blockDim.x)
    if (h[t]) atomicAdd(bin_hist + t, h[t]);
}
__global__ void pass1_k(const std::uint32_t* sc, std::size_t n, std::uint32_t* bin_cursor, uint2* temp) {
  __shared__ std::uint32_t h[BINS], base[BINS];
  count_block_bins(sc, n, h);
  for (unsigned t = threadIdx.x; t < BINS; t += blockDim.x) {
    base[t] = h[t] ? atomicAdd(bin_cursor + t, h[t]) : 0;
    h[t] = 0;
  }
  __syncthreads();
  for_tile_entries<P1_THREADS, P1_PER>(sc, n, [&](std::size_t i, unsigned w, const wkey& key) {
    const unsigned b = key.group >> BIN_SHIFT;
    temp[base[b] + atomicAdd(&h[b], 1u)] = make_uint2(entry_of(w, n, i, key.neg), key.group);
  });
}
constexpr unsigned TILE = 1u << 16, P2_THREADS = 512;
// tiles[b] = ceil(bin entries / TILE); after the scan, tile_start.
__global__ void tile_count_k(const std::uint32_t* bin_off, std::uint32_t* tiles, std::uint32_t tile) {
  const unsigned b = threadIdx.x;
  if (b < BINS) tiles[b] = (bin_off[b + 1] - bin_off[b] + tile - 1) / tile;
  if (b == BINS) tiles[b] = 0;
}
__device__ __forceinline__ bool tile_range(const std::uint32_t* bin_off, const std::uint32_t* tile_start, unsigned& bin,
                                           std::uint32_t& begin, std::uint32_t& end, std::uint32_t tile = TILE) {
  const std::uint32_t t = blockIdx.x;
  if (t >= tile_start[BINS]) return false;
  unsigned lo = 0, hi = BINS;
  while (hi - lo > 1) {
    unsigned mid = (lo + hi) / 2;
    if (tile_start[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  bin = lo;
  begin = bin_off[lo] + (t - tile_start[lo]) * tile;
  end = min(begin + tile, bin_off[lo + 1]);
  return true;
}
/// h[g] = this tile's entries in group g of its bin (h: BIN_GROUPS words of shared memory).
__device__ __forceinline__ void count_tile_groups(const uint2* temp, std::uint32_t begin, std::uint32_t end,
                                                  std::uint32_t* h) {
  for (unsigned t = threadIdx.x; t < BIN_GROUPS; t += blockDim.x) h[t] = 0;
  __syncthreads();
  for (std::uint32_t k = begin + threadIdx.x; k < end; k += blockDim.x) atomicAdd(&h[temp[k].y & (BIN_GROUPS - 1)], 1u);
  __syncthreads();
}
__global__ void group_count_k(const uint2* temp, const std::uint32_t* bin_off, const std::uint32_t* tile_start,
                              std::uint32_t* group_hist, std::uint32_t tile = TILE) {
  __shared__ std::uint32_t h[BIN_GROUPS];
  unsigned bin;
  std::uint32_t begin, end;
  if (!tile_range(bin_off, tile_start, bin, begin, end, tile)) return;
  count_tile_groups(temp, begin, end, h);
  for (unsigned t = threadIdx.x; t < BIN_GROUPS; t += blockDim.x)
    if (h[t]) atomicAdd(group_hist + (bin << BIN_SHIFT) + t, h[t]);
}
__global__ void pass2_k(const uint2* temp, const std::uint32_t* bin_off, const std::uint32_t* tile_start,
                        std::uint32_t* cursor, std::uint32_t* entries) {
  __shared__ std::uint32_t h[BIN_GROUPS], base[BIN_GROUPS];
  unsigned bin;
  std::uint32_t begin, end;
  if (!tile_range(bin_off, tile_start, bin, begin, end)) return;
  count_tile_groups(temp, begin, end, h);
  for (unsigned t = threadIdx.x; t < BIN_GROUPS; t += blockDim.x) {
    base[t] = h[t] ? atomicAdd(cursor + (bin << BIN_SHIFT) + t, h[t]) : 0;
    h[t] = 0;
  }
  __syncthreads();
  for (std::uint32_t k = begin + threadIdx.x; k < end; k += blockDim.x) {
    const uint2 e = temp[k];
    const unsigned g = e.y & (BIN_GROUPS - 1);
    entries[base[g] + atomicAdd(&h[g], 1u)] = e.x;
  }
}

// ---- The same two passes with each block's writes staged in shared memory ----
// Each block sorts its entries by destination in shared memory (counts, a block scan, ranks), then
// writes them out with consecutive threads at consecutive places of each run.
constexpr unsigned S1_THREADS = 256, S1_PER = 4, S1_ENTRIES = S1_THREADS * S1_PER * W;
static_assert(S1_THREADS == BINS, "one bin a thread in pass 1's scan");
__global__ void __launch_bounds__(S1_THREADS)
    pass1_staged_k(const std::uint32_t* sc, std::size_t n, std::uint32_t* bin_cursor, uint2* temp) {
  extern __shared__ uint2 staged[];
  __shared__ std::uint32_t h[BINS], local[BINS], base[BINS];
  using scan_t = cub::BlockScan<std::uint32_t, S1_THREADS>;
  __shared__ typename scan_t::TempStorage scan_storage;
  h[threadIdx.x] = 0;
  __syncthreads();
  for_tile_entries<S1_THREADS, S1_PER>(
      sc, n, [&](std::size_t, unsigned, const wkey& key) { atomicAdd(&h[key.group >> BIN_SHIFT], 1u); });
  __syncthreads();
  const std::uint32_t mine = h[threadIdx.x];
  std::uint32_t before = 0, all = 0;
  scan_t(scan_storage).ExclusiveSum(mine, before, all);
  local[threadIdx.x] = before;
  base[threadIdx.x] = mine != 0 ? atomicAdd(bin_cursor + threadIdx.x, mine) : 0u;
  h[threadIdx.x] = 0;
  __syncthreads();
  for_tile_entries<S1_THREADS, S1_PER>(sc, n, [&](std::size_t i, unsigned w, const wkey& key) {
    const unsigned b = key.group >> BIN_SHIFT;
    staged[local[b] + atomicAdd(&h[b], 1u)] = make_uint2(entry_of(w, n, i, key.neg), key.group);
  });
  __syncthreads();
  for (std::uint32_t k = threadIdx.x; k < all; k += S1_THREADS) {
    const uint2 e = staged[k];
    const unsigned b = e.y >> BIN_SHIFT;
    temp[base[b] + k - local[b]] = e;
  }
}
constexpr unsigned S2_THREADS = 1024, S2_TILE = 1u << 15;
constexpr std::size_t S2_SHARED = std::size_t{S2_TILE} * 6;  // entries (4 bytes) and their groups (2)
__global__ void __launch_bounds__(S2_THREADS)
    pass2_staged_k(const uint2* temp, const std::uint32_t* bin_off, const std::uint32_t* tile_start,
                   std::uint32_t* cursor, std::uint32_t* entries) {
  extern __shared__ std::uint32_t staged_entries[];
  auto* staged_groups = reinterpret_cast<std::uint16_t*>(staged_entries + S2_TILE);
  __shared__ std::uint32_t h[BIN_GROUPS], local[BIN_GROUPS], base[BIN_GROUPS];
  using scan_t = cub::BlockScan<std::uint32_t, S2_THREADS>;
  __shared__ typename scan_t::TempStorage scan_storage;
  unsigned bin;
  std::uint32_t begin, end;
  if (!tile_range(bin_off, tile_start, bin, begin, end, S2_TILE)) return;
  count_tile_groups(temp, begin, end, h);
  constexpr unsigned per = BIN_GROUPS / S2_THREADS;
  std::uint32_t mine[per], before[per];
  for (unsigned k = 0; k < per; ++k) mine[k] = h[threadIdx.x * per + k];
  scan_t(scan_storage).ExclusiveSum(mine, before);
  for (unsigned k = 0; k < per; ++k) {
    const unsigned g = threadIdx.x * per + k;
    local[g] = before[k];
    base[g] = mine[k] != 0 ? atomicAdd(cursor + (bin << BIN_SHIFT) + g, mine[k]) : 0u;
    h[g] = 0;
  }
  __syncthreads();
  for (std::uint32_t k = begin + threadIdx.x; k < end; k += S2_THREADS) {
    const uint2 e = temp[k];
    const unsigned g = e.y & (BIN_GROUPS - 1);
    const std::uint32_t at = local[g] + atomicAdd(&h[g], 1u);
    staged_entries[at] = e.x;
    staged_groups[at] = static_cast<std::uint16_t>(g);
  }
  __syncthreads();
  for (std::uint32_t k = threadIdx.x; k < end - begin; k += S2_THREADS) {
    const unsigned g = staged_groups[k];
    entries[base[g] + k - local[g]] = staged_entries[k];
  }
}
// Every position holds an entry of its group, each entry once.
__global__ void check_k(const std::uint32_t* sc, std::size_t n, const std::uint32_t* off, const std::uint32_t* entries,
                        std::size_t total, std::uint32_t* seen, unsigned long long* bad) {
  const std::size_t p = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (p >= total || p >= off[std::size_t{1} << 19]) return;
  std::size_t lo = 0, hi = std::size_t{1} << 19;
  while (hi - lo > 1) {
    std::size_t mid = (lo + hi) / 2;
    if (off[mid] <= p)
      lo = mid;
    else
      hi = mid;
  }
  const std::uint32_t e = entries[p];
  const std::uint32_t v = e & 0x7fffffffu;
  const unsigned w = v / n;
  const std::size_t i = v % n;
  std::uint32_t s[8];
  load(sc, i, n, s);
  std::uint32_t carry = 0;
  wkey key{};
  for (unsigned x = 0; x <= w; ++x) key = key_of(s, x, carry);
  if (w >= W || key.group != lo || key.neg != ((e >> 31) != 0)) atomicAdd(bad, 1ull);
  if (atomicOr(seen + v / 32, 1u << (v % 32)) & (1u << (v % 32))) atomicAdd(bad, 1ull);
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned log = argc > 1 ? atoi(argv[1]) : 24;
  const std::size_t n = std::size_t{1} << log, groups = std::size_t{1} << 19, total = n * W;
  std::uint32_t *sc, *hist, *off, *cur, *ent;
  void* tmp = nullptr;
  std::size_t tb = 0;
  CK(cudaMalloc(&sc, n * 32));
  CK(cudaMalloc(&hist, (groups + 1) * 4));
  CK(cudaMalloc(&off, (groups + 1) * 4));
  CK(cudaMalloc(&cur, (groups + 1) * 4));
  CK(cudaMalloc(&ent, total * 4));
  cub::DeviceScan::ExclusiveSum(tmp, tb, hist, off, (int)groups + 1);
  CK(cudaMalloc(&tmp, tb));
  fill<<<(n + 255) / 256, 256>>>(sc, n);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const unsigned blocks = (n + 255) / 256;
  auto time = [&](const char* name, auto launch) {
    std::vector<float> t;
    for (int r = 0; r < 7; ++r) {
      CK(cudaMemcpy(cur, off, groups * 4, cudaMemcpyDeviceToDevice));
      cudaEventRecord(a);
      launch();
      cudaEventRecord(b);
      CK(cudaEventSynchronize(b));
      float ms;
      cudaEventElapsedTime(&ms, a, b);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    printf("2^%u %-44s %8.3f ms (min %.3f)\n", log, name, t[3], t[0]);
  };
  time("count (RED, match_any)", [&] {
    cudaMemsetAsync(hist, 0, (groups + 1) * 4);
    count_k<<<blocks, 256>>>(sc, n, hist);
  });
  cub::DeviceScan::ExclusiveSum(tmp, tb, hist, off, (int)groups + 1);
  time("place as coprove (match, ATOM, shfl, scatter)", [&] { place_k<0><<<blocks, 256>>>(sc, n, cur, ent, total); });
  // check: every group's region filled exactly (cursor == next offset)
  {
    std::vector<std::uint32_t> c(groups), o(groups + 1);
    CK(cudaMemcpy(cur, off, groups * 4, cudaMemcpyDeviceToDevice));
    place_k<0><<<blocks, 256>>>(sc, n, cur, ent, total);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(c.data(), cur, groups * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(o.data(), off, (groups + 1) * 4, cudaMemcpyDeviceToHost));
    std::size_t bad = 0;
    for (std::size_t g = 0; g < groups; ++g) bad += c[g] != o[g + 1];
    printf("check: %zu groups' cursors off their end; entries %u of %zu\n", bad, o[groups], total);
  }
  time("place, no scattered store", [&] { place_k<1><<<blocks, 256>>>(sc, n, cur, ent, total); });
  time("place, ATOM a lane (no match)", [&] { place_k<2><<<blocks, 256>>>(sc, n, cur, ent, total); });
  time("RED a lane + coalesced store", [&] { place_k<3><<<blocks, 256>>>(sc, n, cur, ent, total); });
  time("no atomics, store at hashed position", [&] { place_k<4><<<blocks, 256>>>(sc, n, cur, ent, total); });
  time("place, 13 ATOMs before any result", [&] { place_k<5><<<blocks, 256>>>(sc, n, cur, ent, total); });

  {
    uint2* temp;
    std::uint32_t *bin_hist, *bin_off, *bin_cur, *tiles, *tile_start, *ghist, *goff, *gcur;
    CK(cudaMalloc(&temp, total * 8));
    CK(cudaMalloc(&bin_hist, (BINS + 1) * 4));
    CK(cudaMalloc(&bin_off, (BINS + 1) * 4));
    CK(cudaMalloc(&bin_cur, (BINS + 1) * 4));
    CK(cudaMalloc(&tiles, (BINS + 1) * 4));
    CK(cudaMalloc(&tile_start, (BINS + 1) * 4));
    CK(cudaMalloc(&ghist, (groups + 1) * 4));
    CK(cudaMalloc(&goff, (groups + 1) * 4));
    CK(cudaMalloc(&gcur, (groups + 1) * 4));
    void* t2 = nullptr;
    std::size_t t2b = 0;
    cub::DeviceScan::ExclusiveSum(t2, t2b, ghist, goff, (int)groups + 1);
    CK(cudaMalloc(&t2, t2b));
    const unsigned p1_blocks = (n + P1_THREADS * P1_PER - 1) / (P1_THREADS * P1_PER);
    const unsigned p2_blocks = BINS + total / TILE;
    auto two_pass = [&] {
      cudaMemsetAsync(bin_hist, 0, (BINS + 1) * 4);
      bin_count_k<<<p1_blocks, P1_THREADS>>>(sc, n, bin_hist);
      cub::DeviceScan::ExclusiveSum(t2, t2b, bin_hist, bin_off, (int)BINS + 1);
      cudaMemcpyAsync(bin_cur, bin_off, BINS * 4, cudaMemcpyDeviceToDevice);
      pass1_k<<<p1_blocks, P1_THREADS>>>(sc, n, bin_cur, temp);
      tile_count_k<<<1, 320>>>(bin_off, tiles, TILE);
      cub::DeviceScan::ExclusiveSum(t2, t2b, tiles, tile_start, (int)BINS + 1);
      cudaMemsetAsync(ghist, 0, (groups + 1) * 4);
      group_count_k<<<p2_blocks, P2_THREADS>>>(temp, bin_off, tile_start, ghist);
      cub::DeviceScan::ExclusiveSum(t2, t2b, ghist, goff, (int)groups + 1);
      cudaMemcpyAsync(gcur, goff, groups * 4, cudaMemcpyDeviceToDevice);
      pass2_k<<<p2_blocks, P2_THREADS>>>(temp, bin_off, tile_start, gcur, ent);
    };
    time("TWO PASSES, block-aggregated (all kernels)", two_pass);
    time("  bin count", [&] {
      cudaMemsetAsync(bin_hist, 0, (BINS + 1) * 4);
      bin_count_k<<<p1_blocks, P1_THREADS>>>(sc, n, bin_hist);
    });
    time("  pass 1", [&] {
      cudaMemcpyAsync(bin_cur, bin_off, BINS * 4, cudaMemcpyDeviceToDevice);
      pass1_k<<<p1_blocks, P1_THREADS>>>(sc, n, bin_cur, temp);
    });
    time("  group count", [&] {
      cudaMemsetAsync(ghist, 0, (groups + 1) * 4);
      group_count_k<<<p2_blocks, P2_THREADS>>>(temp, bin_off, tile_start, ghist);
    });
    time("  pass 2", [&] {
      cudaMemcpyAsync(gcur, goff, groups * 4, cudaMemcpyDeviceToDevice);
      pass2_k<<<p2_blocks, P2_THREADS>>>(temp, bin_off, tile_start, gcur, ent);
    });
    two_pass();
    std::uint32_t* seen;
    unsigned long long* bad;
    CK(cudaMalloc(&seen, (total / 32 + 1) * 4));
    CK(cudaMalloc(&bad, 8));
    cudaMemset(seen, 0, (total / 32 + 1) * 4);
    cudaMemset(bad, 0, 8);
    check_k<<<(total + 255) / 256, 256>>>(sc, n, goff, ent, total, seen, bad);
    unsigned long long nb = 0;
    std::uint32_t last = 0;
    CK(cudaMemcpy(&nb, bad, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&last, goff + groups, 4, cudaMemcpyDeviceToHost));
    printf("check two passes: %llu bad, %u entries of %zu\n", nb, last, total);
    // the same check of coprove's one pass
    CK(cudaMemcpy(cur, off, groups * 4, cudaMemcpyDeviceToDevice));
    place_k<0><<<blocks, 256>>>(sc, n, cur, ent, total);
    cudaMemset(seen, 0, (total / 32 + 1) * 4);
    cudaMemset(bad, 0, 8);
    check_k<<<(total + 255) / 256, 256>>>(sc, n, off, ent, total, seen, bad);
    CK(cudaMemcpy(&nb, bad, 8, cudaMemcpyDeviceToHost));
    printf("check one pass: %llu bad\n", nb);
    // The two passes with staged writes.
    const std::size_t s1_shared = std::size_t{S1_ENTRIES} * sizeof(uint2);
    CK(cudaFuncSetAttribute(pass1_staged_k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(s1_shared)));
    CK(cudaFuncSetAttribute(pass2_staged_k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(S2_SHARED)));
    const unsigned s1_blocks = static_cast<unsigned>((n + S1_THREADS * S1_PER - 1) / (S1_THREADS * S1_PER));
    const unsigned s2_blocks = static_cast<unsigned>(BINS + total / S2_TILE);
    auto staged_pass = [&] {
      cudaMemsetAsync(bin_hist, 0, (BINS + 1) * 4);
      bin_count_k<<<p1_blocks, P1_THREADS>>>(sc, n, bin_hist);
      cub::DeviceScan::ExclusiveSum(t2, t2b, bin_hist, bin_off, (int)BINS + 1);
      cudaMemcpyAsync(bin_cur, bin_off, BINS * 4, cudaMemcpyDeviceToDevice);
      pass1_staged_k<<<s1_blocks, S1_THREADS, s1_shared>>>(sc, n, bin_cur, temp);
      tile_count_k<<<1, 320>>>(bin_off, tiles, S2_TILE);
      cub::DeviceScan::ExclusiveSum(t2, t2b, tiles, tile_start, (int)BINS + 1);
      cudaMemsetAsync(ghist, 0, (groups + 1) * 4);
      group_count_k<<<s2_blocks, P2_THREADS>>>(temp, bin_off, tile_start, ghist, S2_TILE);
      cub::DeviceScan::ExclusiveSum(t2, t2b, ghist, goff, (int)groups + 1);
      cudaMemcpyAsync(gcur, goff, groups * 4, cudaMemcpyDeviceToDevice);
      pass2_staged_k<<<s2_blocks, S2_THREADS, S2_SHARED>>>(temp, bin_off, tile_start, gcur, ent);
    };
    time("TWO PASSES, writes staged (all kernels)", staged_pass);
    time("  pass 1 staged", [&] {
      cudaMemcpyAsync(bin_cur, bin_off, BINS * 4, cudaMemcpyDeviceToDevice);
      pass1_staged_k<<<s1_blocks, S1_THREADS, s1_shared>>>(sc, n, bin_cur, temp);
    });
    time("  pass 2 staged", [&] {
      cudaMemcpyAsync(gcur, goff, groups * 4, cudaMemcpyDeviceToDevice);
      pass2_staged_k<<<s2_blocks, S2_THREADS, S2_SHARED>>>(temp, bin_off, tile_start, gcur, ent);
    });
    staged_pass();
    CK(cudaGetLastError());
    cudaMemset(seen, 0, (total / 32 + 1) * 4);
    cudaMemset(bad, 0, 8);
    check_k<<<(total + 255) / 256, 256>>>(sc, n, goff, ent, total, seen, bad);
    CK(cudaMemcpy(&nb, bad, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&last, goff + groups, 4, cudaMemcpyDeviceToHost));
    printf("check staged two passes: %llu bad, %u entries of %zu\n", nb, last, total);
  }
  CK(cudaGetLastError());
  return 0;
}
