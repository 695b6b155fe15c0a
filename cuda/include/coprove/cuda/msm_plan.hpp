// The shape of one GPU multi-scalar multiplication, decided on the host before anything is
// enqueued: the window width, the signed digits, the buckets, how many reduction levels the bucket
// sums need and how much device memory every buffer takes. Plain C++ (the digit rule is also
// compiled for the device), so that the plan and the digits are tested without a GPU.
//
// The method (msm.hpp has the interface): each scalar is cut into W windows of c bits and every
// window value recoded as a signed digit d in (-2^(c-1), 2^(c-1)] (a digit above 2^(c-1) becomes
// d - 2^c and carries one into the next window), so a window needs only 2^(c-1) buckets, indexed
// by |d| - 1, with the base negated for d < 0. Scalars 0 contribute nothing and scalars 1 go into
// one extra group (the "ones" group) outside every window, summed by plain additions; every other
// scalar adds one entry per nonzero digit. Entries are counted and placed per group (a counting
// sort), and each group is summed in chunks of at most `chunk` entries, one thread per chunk (G2's
// level 0 instead gives each thread the same number of consecutive entries and writes a partial sum
// per group they meet: msm_plan::level0_spans); the chunk sums are summed again in chunks, level
// after level, until each group has one sum, so
// that a group of any size (all scalars equal, all scalars one) spreads over many threads. Each
// window's buckets are then weighted (sum of (k + 1) B_k) in segments, the segment sums reduced the
// same way, and the windows combined by Horner's rule with c doublings per window.
//
// Precomputed bases (msm_precompute): the bases may hold f copies of every point, copy j being
// [2^(j c m)]P with m = ceil(W / f) windows a copy. Window w = j m + v of a scalar then adds its
// digit's base from copy j into window v's buckets, so only m windows are weighted and combined,
// however many digits a scalar has; with f = W (m = 1) every digit shares one set of buckets and
// there is no combination at all. The additions per point stay one per nonzero digit, so what
// copies buy is room for wider windows (fewer digits) at the price of f times the bases' memory.
#pragma once

#include <coprove/field/scalar.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define COPROVE_MSM_HD __host__ __device__ __forceinline__
#else
#define COPROVE_MSM_HD inline
#endif

namespace coprove::cuda {

/// The widest window the GPU MSM accepts.
inline constexpr unsigned msm_max_window_bits = 24;
/// The most points one MSM takes (entry values hold an index in 31 bits and the sign in the top one).
inline constexpr std::size_t msm_max_count = std::size_t{1} << 30;

/// Window value w of a canonical scalar (eight little-endian 32-bit limbs) turned into a signed
/// digit, given the carry from window w - 1 (0 or 1); updates the carry for window w + 1. The
/// digit lies in (-2^(c-1), 2^(c-1)]; with W windows and W c >= 256 the last window never carries.
COPROVE_MSM_HD int msm_signed_digit(const std::uint32_t* scalar, unsigned window, unsigned bits,
                                    std::uint32_t& carry) {
  const unsigned first_bit = window * bits;
  const unsigned limb = first_bit / 32;
  const unsigned shift = first_bit % 32;
  std::uint64_t word = 0;
  if (limb < 8) word = scalar[limb];
  if (limb + 1 < 8) word |= std::uint64_t{scalar[limb + 1]} << 32;
  // bits <= 24 and shift <= 31: the window lies within the 64 bits read.
  const std::uint32_t value = static_cast<std::uint32_t>((word >> shift) & ((std::uint64_t{1} << bits) - 1)) + carry;
  const std::uint32_t half = std::uint32_t{1} << (bits - 1);
  if (value > half) {
    carry = 1;
    return static_cast<int>(value) - static_cast<int>(half << 1);
  }
  carry = 0;
  return static_cast<int>(value);
}

/// The windows of c-bit signed digits a 255-bit scalar needs: the least W with W c >= 256.
constexpr unsigned msm_window_count(unsigned bits) noexcept { return (256 + bits - 1) / bits; }

/// The windows of the combination when the bases hold `copies` copies: ceil(W / copies).
constexpr unsigned msm_windows_per_copy(unsigned bits, unsigned copies) noexcept {
  return (msm_window_count(bits) + copies - 1) / copies;
}

/// Which group of points an MSM runs over (the plan's sizes depend on it).
enum class msm_group { g1, g2 };

/// How the entries are placed into their groups. One pass: each window's entries of a warp take one
/// global atomic per group they meet and are stored at its cursor. Two passes: entries first go to
/// bins of consecutive groups, then each bin's to their groups, each block of either pass taking
/// one atomic per bin (group) it meets and writing its entries sorted by destination, in runs
/// (msm_kernels.cu). `by_density`: two passes for dense scalars, one for sparse ones, as the device
/// finds them once it has counted their entries (msm_dense_entries). `plan`: the plan's choice for
/// the size, one pass or by density.
enum class msm_placement { plan, one_pass, two_passes, by_density };

/// Whether scalars whose entries are `all`, `ones` of them in the ones group, out of `possible`
/// (count * W, every digit nonzero), are dense: their entries besides the ones group at least 3/8
/// of the possible ones. Two passes place dense scalars faster, one pass sparse ones (0/1-heavy
/// witnesses: the ones group's entries are consecutive and the other entries few). Measured on an
/// H100 (docs/history/msm.md), the passes' times cross at 35 % (2^24 points, 13 copies of 20-bit
/// windows) and 38 % (2^26, 16-bit windows).
constexpr bool msm_dense_entries(std::uint32_t all, std::uint32_t ones, std::uint64_t possible) noexcept {
  return std::uint64_t{8} * (all - ones) >= std::uint64_t{3} * possible;
}

/// One MSM's shape and memory (see the top of the file).
struct msm_plan {
  msm_group group = msm_group::g1;
  std::size_t count = 0;          ///< points
  unsigned window_bits = 0;       ///< c
  unsigned digit_windows = 0;     ///< W: the signed digits of a scalar
  unsigned copies = 1;            ///< f: copies of the bases the run reads (1: none precomputed)
  unsigned windows = 0;           ///< m = ceil(W / f): the windows weighted and combined
  std::size_t buckets = 0;        ///< per window, 2^(c-1)
  std::size_t groups = 0;         ///< m * 2^(c-1) buckets plus the ones group (the last)
  std::size_t entries = 0;        ///< capacity of the entry array: count * W
  /// Level 0 in spans (G2's): each thread adds level_chunk[0] consecutive entries of the placement,
  /// whichever groups they belong to, and writes a partial sum per group they meet; otherwise (G1's)
  /// each group's entries are split into ceil(n_g / level_chunk[0]) near-equal chunks, a thread each.
  bool level0_spans = false;
  /// The reduction levels of the bucket sums: level 0 adds the affine entries, each later level
  /// adds the previous level's sums; after the last, every group holds at most one sum.
  std::vector<std::uint32_t> level_chunk;      ///< entries (or sums) per thread
  std::vector<std::size_t> level_capacity;     ///< sums each level may produce (an upper bound)
  std::size_t segment = 0;                     ///< buckets per thread in the window weighting
  std::size_t segments = 0;                    ///< per window
  std::vector<std::uint32_t> window_level_chunk;
  std::vector<std::size_t> window_level_capacity;
  std::size_t point_bytes = 0;                 ///< one XYZZ sum (192 for G1, 384 for G2)
  /// The placement: 0 for one pass, else two passes over bins of 2^placement_bin_shift groups,
  /// placement_bins of them (their counters fit the group counts' array five times).
  unsigned placement_bin_shift = 0;
  unsigned placement_bins = 0;
  /// With bins: whether the device takes them only for dense scalars (msm_dense_entries), placing
  /// sparse ones in one pass (msm_placement::by_density, the plan's choice where it takes bins).
  bool placement_by_density = false;
  /// What a run's workspace holds after its entries (the sums and the windows): the temporary
  /// entries of the two-pass placement (8 bytes each) take it while the entries are placed, in
  /// slices of the scalars that fit.
  std::size_t placement_temp_bytes = 0;
  /// Device memory one run takes besides the bases and scalars (the scan's scratch excluded;
  /// msm.hpp's msm_workspace_bytes adds it).
  std::size_t workspace_bytes = 0;
};

/// The plan for `count` points over bases of `copies` copies (0: one a window, whatever the width
/// chosen); window_bits 0 picks the width that
/// minimises the modelled work (one mixed addition per entry against two additions per bucket),
/// up to 16 bits without copies (wider ones measured slower on an H200 at every size) and up to
/// msm_max_precomputed_bits with them. Throws std::invalid_argument for window_bits above
/// msm_max_window_bits, count above msm_max_count, copies more than the digits' windows,
/// or copies x count points beyond an entry's 31-bit index.
/// level0_chunk: the entries a thread of level 0 adds (0: the plan's choice; 1..msm_max_level0_chunk,
/// else std::invalid_argument), for measuring the choice. placement: the plan's choice, or one pass
/// or two passes or by density as asked (bins that do not fit: std::invalid_argument).
msm_plan plan_msm(msm_group group, std::size_t count, unsigned window_bits = 0, unsigned copies = 1,
                  std::uint32_t level0_chunk = 0, msm_placement placement = msm_placement::plan);
/// The most entries a thread of level 0 may be given.
inline constexpr std::uint32_t msm_max_level0_chunk = 1024;

/// The widest window the plan picks by itself over precomputed copies.
inline constexpr unsigned msm_max_precomputed_bits = 22;
/// The most copies a backend keeps: one a window of 16 bits.
inline constexpr unsigned msm_max_copies = 16;
/// The copies a backend keeps where the device's memory holds them when the count is left to it
/// (msm_copies "auto"): one a window of 20 bits, the fastest measured on an H200 from 2^20 to 2^24
/// points and within 1 % of the best at 2^26 (docs/history/msm.md, the MSM over shifted copies).
inline constexpr unsigned msm_auto_copies = msm_window_count(20);
static_assert(msm_auto_copies == 13 && msm_auto_copies <= msm_max_copies);
/// Where 13 do not fit: one a window of 22 bits (the plan picks 22 bits over 12 copies at 2^24
/// points), 8 % less memory, and on an H200 at 2^24 points 119.56 ms in G1 (13 copies 111.12, none
/// 137.77) and 391.51 in G2 (363.45, 452.63); the best measured at 2^26 (docs/history/msm.md).
inline constexpr unsigned msm_auto_copies_second = msm_window_count(22);
static_assert(msm_auto_copies_second == 12 && msm_auto_copies_second < msm_auto_copies);

/// Shifted copies of the bases made on the device after the upload ("Precomputed bases" above):
/// fewer windows to weight and combine, and room for wider windows, for `copies` times the bases'
/// device memory.
struct msm_precompute {
  /// c, the width every MSM over these bases uses; 0: the plan's choice for the count and copies.
  unsigned window_bits = 0;
  /// f: 1 for none; 0 for one a window (the whole scalar adds into one window's buckets).
  unsigned copies = 1;
};

/// The copies and width that bases of `points` points made for `precompute` keep (msm_bases): the
/// copies resolved (0: one a window) and, with more than one, the width asked for or, for 0, the
/// plan's for that many points; {0, 1} without copies. Throws std::invalid_argument where plan_msm
/// does.
msm_precompute msm_bases_precompute(msm_group group, std::size_t points, const msm_precompute& precompute);

/// The plans of one Groth16 proof's five MSMs, as its runs make them over the whole of each query
/// of a key whose bases were made for `key`: H over `h_count` points, A and B_G1 in G1 and B_G2 in
/// G2 over `variables`, L over `aux`. Each query's bases resolve their own width
/// (msm_bases_precompute), so where the width is left to the plan, H over the domain and A over the
/// witness may use different ones (a 2^10 domain and 513 wires over 13 copies: 8 and 7 bits).
struct msm_proof_plans {
  msm_plan h, a, b_g1, b_g2, l;
};
msm_proof_plans plan_proof_msms(std::size_t h_count, std::size_t variables, std::size_t aux,
                                const msm_precompute& key);

/// The signed digits of a canonical scalar, window 0 first (the host twin of msm_signed_digit, for
/// tests): sum_w digits[w] 2^(c w) equals the scalar.
std::vector<int> msm_signed_digits(const field::scalar_limbs& scalar, unsigned window_bits);

}  // namespace coprove::cuda
