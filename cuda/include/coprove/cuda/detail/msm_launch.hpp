// The launchers of the MSM kernels (defined in msm_kernels.cu), declared for the host code in
// msm.cpp. Plain C++: no CUDA types beyond cudaStream_t. Points are passed as untyped device
// pointers in the device layouts of curve_device.cuh (affine bases without the identity flag, XYZZ
// sums); `group` says which. Offsets and counts are 32-bit (msm_plan keeps every count below 2^32).
#pragma once

#include <coprove/cuda/msm_plan.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace coprove::cuda::detail {

/// Copies host-layout affine points (field::g1_affine or g2_affine: x, y, then the identity flag
/// at `flag_offset`, `stride` bytes apart) already on the device into the device layout at dst,
/// writing (0, 0) for the identity.
void msm_repack_bases(msm_group group, const void* src, std::size_t stride, std::size_t flag_offset, void* dst,
                      std::size_t count, cudaStream_t stream);

/// Writes copies 1..copies-1 of the device-layout bases [begin, begin + n) (copy 0 at bases, copy j
/// at j * stride points on): copy j = [2^(j shift)] copy 0, in affine form. scratch and products:
/// device memory for (copies - 1) * n XYZZ points and (copies - 1) * n coordinates.
void msm_shift_copies(msm_group group, void* bases, std::size_t stride, std::size_t begin, std::size_t n,
                      unsigned copies, unsigned shift, void* scratch, void* products, cudaStream_t stream);

/// Converts the scalars (field::fr, Montgomery form, on the device or mapped pinned memory) to
/// canonical form into `canonical` (8 words each) and adds each nonzero digit of the `windows`
/// digits a scalar has into its group (windows of `per_copy` per copy of the bases: msm_plan.hpp),
/// and each scalar 1 to the ones group, into `histogram` (zeroed by the caller).
void msm_count_entries(const void* scalars, std::uint32_t* canonical, std::size_t count, unsigned bits,
                       unsigned windows, unsigned per_copy, std::uint32_t* histogram, cudaStream_t stream);

/// Which placement a kernel serves: with `offsets` null, the one it was launched for; else the
/// one the device picks from the groups' offsets (groups + 1 of them, the ones group last) once
/// they are scanned, with no round trip to the host: the kernel runs where msm_dense_entries
/// (msm_plan.hpp) equals `dense` and returns at once otherwise.
struct msm_placement_gate {
  const std::uint32_t* offsets = nullptr;
  std::uint32_t groups = 0;
  std::uint64_t possible = 0;
  bool dense = false;
};

/// Writes each entry (index of its point in its copy of the bases, `stride` points a copy; sign
/// in bit 31) at its group's cursor (the groups' start offsets on entry; advanced as entries are
/// placed).
void msm_place_entries(const std::uint32_t* canonical, std::size_t count, unsigned bits, unsigned windows,
                       unsigned per_copy, std::size_t stride, std::uint32_t* cursor, std::uint32_t* entries,
                       msm_placement_gate gate, cudaStream_t stream);

// The placement in two passes (msm_plan::placement_bin_shift != 0), over the scalars in slices
// [first, first + count) of the canonical ones: bins of 2^shift consecutive groups, `bins` of them.
/// Entries of a bin that one block of pass 2 moves (its shared memory holds them, two bytes of
/// group each, and three counters a group of the bin), and that block's threads.
constexpr std::uint32_t msm_bin_tile(unsigned shift) noexcept {
  return shift <= 11 ? std::uint32_t{1} << 15 : std::uint32_t{1} << 14;
}
inline constexpr unsigned msm_unpack_threads = 1024;

/// bin_counts[b] += the entries of the slice's scalars in bin b (bin_counts zeroed by the caller).
void msm_count_bins(const std::uint32_t* canonical, std::size_t first, std::size_t count, unsigned bits,
                    unsigned windows, unsigned per_copy, unsigned shift, unsigned bins, std::uint32_t* bin_counts,
                    msm_placement_gate gate, cudaStream_t stream);
/// Pass 1: each entry of the slice (as msm_place_entries writes it) and its group, 8 bytes, at its
/// bin's cursor in temp (the bins' start offsets in the slice's part of temp on entry).
void msm_place_bins(const std::uint32_t* canonical, std::size_t first, std::size_t count, unsigned bits,
                    unsigned windows, unsigned per_copy, std::size_t stride, unsigned shift, unsigned bins,
                    std::uint32_t* bin_cursor, void* temp, msm_placement_gate gate, cudaStream_t stream);
/// tiles[b] = the tiles of `tile` entries in bin b (bin_offsets: bins + 1 values), tiles[bins] = 0.
void msm_bin_tiles(const std::uint32_t* bin_offsets, unsigned bins, std::uint32_t tile, std::uint32_t* tiles,
                   msm_placement_gate gate, cudaStream_t stream);
/// Pass 2: each entry in temp at its group's cursor in `entries` (tile_start: the exclusive scan of
/// msm_bin_tiles; max_tiles bounds tile_start[bins]).
void msm_unpack_bins(const void* temp, const std::uint32_t* bin_offsets, const std::uint32_t* tile_start,
                     unsigned bins, std::size_t max_tiles, std::uint32_t tile, unsigned shift, std::uint32_t* cursor,
                     std::uint32_t* entries, msm_placement_gate gate, cudaStream_t stream);

/// Scratch bytes of msm_exclusive_scan over `items` values.
std::size_t msm_scan_scratch_bytes(std::size_t items);
/// out[i] = in[0] + ... + in[i - 1] over `items` values.
void msm_exclusive_scan(void* scratch, std::size_t scratch_bytes, const std::uint32_t* in, std::uint32_t* out,
                        std::size_t items, cudaStream_t stream);

/// counts[g] = ceil((offsets[g + 1] - offsets[g]) / chunk) for g < groups, counts[groups] = 0.
void msm_chunk_counts(const std::uint32_t* offsets, std::size_t groups, std::uint32_t chunk, std::uint32_t* counts,
                      cudaStream_t stream);

/// Level 0 of G1: out[i] = the sum of chunk i's entries (each an affine base, negated where bit 31
/// is set); chunk i of group g is number i - out_offsets[g] of that group's entries
/// [in_offsets[g], in_offsets[g + 1]). `capacity` bounds out_offsets[groups]. G2's level 0 is in
/// spans (msm_sum_entry_spans); std::logic_error for G2.
void msm_sum_entries(msm_group group, const void* bases, const std::uint32_t* entries,
                     const std::uint32_t* in_offsets, const std::uint32_t* out_offsets, std::size_t groups,
                     std::uint32_t chunk, void* out, std::size_t capacity, cudaStream_t stream);

/// counts[g] = the level-0 spans (entries [t chunk, (t + 1) chunk) of the placement) that group g's
/// entries [offsets[g], offsets[g + 1]) meet, counts[groups] = 0: the partial sums level 0 in spans
/// writes for g.
void msm_span_counts(const std::uint32_t* offsets, std::size_t groups, std::uint32_t chunk, std::uint32_t* counts,
                     cudaStream_t stream);

/// Level 0 in spans (G2 only): span t of the entries summed per group it meets; the partial of group g
/// from span t goes to out[out_offsets[g] + t - in_offsets[g] / chunk] (out_offsets the exclusive
/// scan of msm_span_counts). `max_entries` bounds in_offsets[groups].
void msm_sum_entry_spans(msm_group group, const void* bases, const std::uint32_t* entries,
                         const std::uint32_t* in_offsets, const std::uint32_t* out_offsets, std::size_t groups,
                         std::uint32_t chunk, void* out, std::size_t max_entries, cudaStream_t stream);

/// A later level: the same over XYZZ sums.
void msm_sum_points(msm_group group, const void* in, const std::uint32_t* in_offsets,
                    const std::uint32_t* out_offsets, std::size_t groups, std::uint32_t chunk, void* out,
                    std::size_t capacity, cudaStream_t stream);

/// Per window w and segment s of `segment` buckets: out[w * segments + s] = sum over the
/// segment's buckets k of (k + 1) B_k, with B_k the one sum of group w * buckets + k (or the
/// identity when the group is empty).
void msm_weight_segments(msm_group group, const void* sums, const std::uint32_t* offsets, unsigned windows,
                         std::size_t buckets, std::size_t segment, void* out, cudaStream_t stream);

/// offsets[g] = g * per for g <= groups.
void msm_regular_offsets(std::uint32_t* offsets, std::size_t groups, std::uint32_t per, cudaStream_t stream);

/// result = sum_w 2^(bits w) S_w + the ones group's sum, S_w window w's one sum; result is an
/// XYZZ point in device memory.
void msm_combine_windows(msm_group group, const void* window_sums, const std::uint32_t* window_offsets,
                         unsigned windows, unsigned bits, const void* bucket_sums,
                         const std::uint32_t* bucket_offsets, std::size_t ones_group, void* result,
                         cudaStream_t stream);

/// out[w] = S_w for w < windows and out[windows] = the ones group's sum: what the host combines
/// (msm_window_sums); `out` is device memory of windows + 1 XYZZ points.
void msm_gather_windows(msm_group group, const void* window_sums, const std::uint32_t* window_offsets,
                        unsigned windows, const void* bucket_sums, const std::uint32_t* bucket_offsets,
                        std::size_t ones_group, void* out, cudaStream_t stream);

/// result = the identity (an empty MSM).
void msm_write_identity(msm_group group, void* result, cudaStream_t stream);

}  // namespace coprove::cuda::detail
