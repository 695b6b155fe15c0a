// plan_msm: the window width by a cost model, the reduction levels and the workspace of one run.
#include <coprove/cuda/msm_plan.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace coprove::cuda {
namespace {

/// Entries per thread at level 0 (affine entries, mixed additions) and at later levels (sums).
constexpr std::uint32_t entry_chunk = 32;
/// G1's level 0 where groups average at least wide_chunk_mean entries: twice the chunk, so that the
/// next level has half the partial sums to add. Measured on an H200 (docs/history/msm.md, bench_msm
/// --chunks): at 2^26 points over 13 copies (1,664 entries a group) chunks of 64 beat 32 by 2.0 %
/// (399.02 against 407.16 ms; 96: 399.61); at 384 to 416 entries a group 32 stays the best (48
/// within 0.2 %, 64 0.6 % slower at 2^24 over 13 copies).
constexpr std::uint32_t wide_entry_chunk = 64;
constexpr std::size_t wide_chunk_mean = 1024;
/// Entries a thread of level 0 in spans (G2) adds: the largest of 32, 64 and 128 that leaves 2^19
/// threads or more (an H200 holds 33,792 of G2's level-0 threads at once: two blocks of 128 an SM at
/// 255 registers), since every span leaves a partial sum per group it meets for the later levels,
/// whose additions (XYZZ + XYZZ) cost more than level 0's.
constexpr std::uint32_t max_span_chunk = 128;
constexpr std::uint32_t span_chunk(std::size_t entries) {
  std::uint32_t chunk = entry_chunk;
  while (chunk < max_span_chunk && entries / (2 * chunk) >= (std::size_t{1} << 19)) chunk *= 2;
  return chunk;
}
constexpr std::uint32_t sum_chunk = 16;
/// Buckets per thread in the window weighting.
constexpr std::size_t weight_segment = 32;
/// Segment sums per thread at each level after the weighting: few, because these levels run a few
/// thousand threads or fewer, so that their time is the chain of additions each thread does one
/// after the other (4: 2^14 segments in seven levels of three additions; 16 took four of fifteen).
constexpr std::uint32_t window_sum_chunk = 4;

constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

/// The two-pass placement's bins: at least 2^11 groups each, at most 2^12 (pass 2's block holds
/// three counters a group of its bin beside its tile), and at most 4,096 bins (pass 1's block holds
/// three counters a bin beside its entries): msm_kernels.cu.
constexpr unsigned narrowest_bin_shift = 11, widest_bin_shift = 12;
constexpr std::size_t most_bins = 4096;
/// The plan's choice: two passes from this many entries (count * W) on, for dense scalars (the
/// device picks per run, msm_dense_entries). On an H100 they placed 2^20 uniform scalars over 13
/// copies of 20-bit windows (13.6 million entries) in 0.64 ms against one pass's 0.82 and 2^24 in
/// 8.77 against 14.98, but 2^18 (3.4 million) in 0.20 against 0.19 (docs/history/msm.md).
constexpr std::size_t two_pass_entries = std::size_t{1} << 23;

bool fits(std::size_t count, unsigned bits, unsigned copies) {
  const std::size_t digits = msm_window_count(bits);
  const std::size_t groups = msm_windows_per_copy(bits, copies) * (std::size_t{1} << (bits - 1)) + 1;
  return count * digits < std::numeric_limits<std::uint32_t>::max() &&
         groups < std::numeric_limits<std::uint32_t>::max() / 2;
}

/// The modelled work of a width: a mixed addition per entry (count * W at most), a cost per bucket
/// of each of the m windows, and each window's doublings and additions in the combination, which
/// cost like a few thousand parallel additions. A bucket costs its two additions in the weighting
/// (about 1.4 mixed ones each) in the model without copies, which then caps the width at 16 bits
/// (measured). Over copies, where the width goes higher, a bucket measured on an H200 (bench_msm
/// --precompute, G1, one copy a window) at about 16 mixed additions: its sum written and added again
/// at the next level, its share of the weighting; 20-bit windows beat 22 at 2^24 points (111 against
/// 120 ms) and tie at 2^26.
double modelled_work(std::size_t count, unsigned bits, unsigned copies) {
  const double digits = msm_window_count(bits);
  const double windows = msm_windows_per_copy(bits, copies);
  const double buckets = static_cast<double>(std::size_t{1} << (bits - 1));
  const double per_bucket = copies == 1 ? 2.8 : 16.0;
  return static_cast<double>(count) * digits + per_bucket * windows * buckets + 2000.0 * windows;
}

/// The widest window the plan picks by itself. Measured on one H200 (commit 2d09909, uniform
/// scalars): 16 bits beat 18, 20 and 22 at 2^20..2^24 in G1 and G2 and were within 1% of the
/// best at 2^26, because the window weighting and the group sums grow with the bucket count faster
/// than the model above says.
constexpr unsigned widest_default_bits = 16;

unsigned choose_bits(std::size_t count, unsigned copies) {
  unsigned best = 0;
  double best_work = 0;
  const unsigned widest = copies != 1 ? msm_max_precomputed_bits : widest_default_bits;
  for (unsigned bits = 2; bits <= widest; ++bits) {
    const unsigned f = copies == 0 ? msm_window_count(bits) : copies;
    if (!fits(count, bits, f) || f > msm_window_count(bits)) continue;
    const double work = modelled_work(count, bits, f);
    if (best == 0 || work < best_work) {
      best = bits;
      best_work = work;
    }
  }
  if (best == 0) throw std::invalid_argument("MSM: no window width fits " + std::to_string(count) + " points");
  return best;
}

std::size_t align_up(std::size_t bytes) { return (bytes + 255) & ~std::size_t{255}; }

}  // namespace

msm_plan plan_msm(msm_group group, std::size_t count, unsigned window_bits, unsigned copies,
                  std::uint32_t level0_chunk, msm_placement placement) {
  if (level0_chunk > msm_max_level0_chunk)
    throw std::invalid_argument("MSM: level 0 in chunks of " + std::to_string(level0_chunk) + " entries, at most " +
                                std::to_string(msm_max_level0_chunk));
  if (count > msm_max_count)
    throw std::invalid_argument("MSM: " + std::to_string(count) + " points, at most " + std::to_string(msm_max_count));
  if (window_bits > msm_max_window_bits)
    throw std::invalid_argument("MSM: window of " + std::to_string(window_bits) + " bits, at most " +
                                std::to_string(msm_max_window_bits));
  msm_plan plan;
  plan.group = group;
  plan.count = count;
  plan.window_bits = window_bits == 0 ? choose_bits(count, copies) : window_bits;
  if (copies == 0) copies = msm_window_count(plan.window_bits);
  plan.copies = copies;
  if (count * copies > (std::size_t{1} << 31))
    throw std::invalid_argument("MSM: " + std::to_string(copies) + " copies of " + std::to_string(count) +
                                " points exceed 2^31 bases");
  if (!fits(count, plan.window_bits, copies))
    throw std::invalid_argument("MSM: " + std::to_string(count) + " points in windows of " +
                                std::to_string(plan.window_bits) + " bits exceed 2^32 entries");
  plan.digit_windows = msm_window_count(plan.window_bits);
  if (copies > plan.digit_windows)
    throw std::invalid_argument("MSM: " + std::to_string(copies) + " copies of the bases for " +
                                std::to_string(plan.digit_windows) + " windows of " +
                                std::to_string(plan.window_bits) + " bits");
  plan.windows = msm_windows_per_copy(plan.window_bits, copies);
  plan.buckets = std::size_t{1} << (plan.window_bits - 1);
  plan.groups = plan.windows * plan.buckets + 1;
  plan.entries = count * plan.digit_windows;
  plan.point_bytes = group == msm_group::g1 ? 192 : 384;

  // A group holds at most count * copies entries (one per point of a copy). Level 0 in chunks per
  // group makes sum_g ceil(n_g / chunk) <= entries / chunk + groups sums and leaves at most
  // ceil(count * copies / chunk) in a group. In spans (G2), thread t adds entries [t chunk, (t + 1)
  // chunk) and writes a sum for each group they meet: ceil(entries / chunk) spans with at most
  // groups - 1 group boundaries inside them, so again at most entries / chunk + groups sums, and a
  // group of n entries meets at most ceil((n - 1) / chunk) + 1 spans.
  plan.level0_spans = group == msm_group::g2;
  const std::size_t mean_group = plan.entries / (plan.groups - 1);  // the ones' group aside
  const std::uint32_t chunk0 = level0_chunk != 0      ? level0_chunk
                               : plan.level0_spans     ? span_chunk(plan.entries)
                               : mean_group >= wide_chunk_mean ? wide_entry_chunk
                                                               : entry_chunk;
  const std::size_t most = count * copies;
  std::size_t capacity = ceil_div(plan.entries, chunk0) + plan.groups;
  std::size_t largest = plan.level0_spans ? (most == 0 ? 0 : ceil_div(most - 1, chunk0) + 1) : ceil_div(most, chunk0);
  plan.level_chunk.push_back(chunk0);
  plan.level_capacity.push_back(capacity);
  while (largest > 1) {
    capacity = std::min(capacity, ceil_div(capacity, sum_chunk) + plan.groups);
    largest = ceil_div(largest, sum_chunk);
    plan.level_chunk.push_back(sum_chunk);
    plan.level_capacity.push_back(capacity);
  }

  plan.segment = std::min(weight_segment, plan.buckets);
  plan.segments = plan.buckets / plan.segment;
  capacity = plan.windows * plan.segments;
  largest = plan.segments;
  while (largest > 1) {
    capacity = std::min(capacity, ceil_div(capacity, window_sum_chunk) + plan.windows);
    largest = ceil_div(largest, window_sum_chunk);
    plan.window_level_chunk.push_back(window_sum_chunk);
    plan.window_level_capacity.push_back(capacity);
  }

  std::size_t even = 0, odd = 0;
  // Levels alternate between two buffers; the window levels between the segment sums and a third.
  for (std::size_t k = 0; k < plan.level_capacity.size(); ++k) {
    std::size_t& buffer = k % 2 == 0 ? even : odd;
    buffer = std::max(buffer, plan.level_capacity[k]);
  }
  std::size_t window_odd = 0;
  for (std::size_t k = 0; k < plan.window_level_capacity.size(); k += 2)
    window_odd = std::max(window_odd, plan.window_level_capacity[k]);
  const std::size_t offsets = align_up((plan.groups + 1) * 4);
  const std::size_t window_offsets = align_up((plan.windows + 1) * 4);
  // After the entries: the sums and the windows (the run takes its result's slot before the scan's
  // scratch; the rest lies after the entries, where the two-pass placement's temp goes).
  const std::size_t after_entries = align_up(even * plan.point_bytes) + align_up(odd * plan.point_bytes) +
                                    align_up(plan.windows * plan.segments * plan.point_bytes) +
                                    align_up(window_odd * plan.point_bytes) + 3 * window_offsets +
                                    align_up((plan.windows + 1) * plan.point_bytes);  // the window sums gathered
  plan.workspace_bytes = align_up(count * 32) + 3 * offsets + align_up(plan.entries * 4) + after_entries +
                         align_up(plan.point_bytes);
  plan.placement_temp_bytes = after_entries;

  // Two passes: bins of 2^shift groups, no more than most_bins, their five counter arrays within the
  // group counts' (groups + 1 words).
  unsigned shift = narrowest_bin_shift;
  while (ceil_div(plan.groups, std::size_t{1} << shift) > most_bins) ++shift;
  const std::size_t bins = ceil_div(plan.groups, std::size_t{1} << shift);
  const bool bins_fit = shift <= widest_bin_shift && 5 * (bins + 1) <= plan.groups + 1 &&
                        after_entries >= 8 * plan.digit_windows;
  const bool asked = placement == msm_placement::two_passes || placement == msm_placement::by_density;
  const bool two =
      asked || (placement == msm_placement::plan && bins_fit && count > 0 && plan.entries >= two_pass_entries);
  if (two && !bins_fit)
    throw std::invalid_argument("MSM: " + std::to_string(plan.groups) + " groups cannot be placed in two passes");
  if (two) {
    plan.placement_bin_shift = shift;
    plan.placement_bins = static_cast<unsigned>(bins);
    plan.placement_by_density = placement != msm_placement::two_passes;
  }
  return plan;
}

msm_precompute msm_bases_precompute(msm_group group, std::size_t points, const msm_precompute& precompute) {
  if (precompute.copies == 1) return {};
  const msm_plan plan = plan_msm(group, points, precompute.window_bits, precompute.copies);
  if (plan.copies == 1) return {};
  return {plan.window_bits, plan.copies};
}

msm_proof_plans plan_proof_msms(std::size_t h_count, std::size_t variables, std::size_t aux,
                                const msm_precompute& key) {
  // As run_msm plans a run over all the points of bases made for `key`.
  const auto plan = [&](msm_group group, std::size_t count) {
    const msm_precompute bases = msm_bases_precompute(group, count, key);
    return plan_msm(group, count, bases.window_bits, bases.copies);
  };
  return {plan(msm_group::g1, h_count), plan(msm_group::g1, variables), plan(msm_group::g1, variables),
          plan(msm_group::g2, variables), plan(msm_group::g1, aux)};
}

std::vector<int> msm_signed_digits(const field::scalar_limbs& scalar, unsigned window_bits) {
  if (window_bits == 0 || window_bits > msm_max_window_bits)
    throw std::invalid_argument("MSM: window of " + std::to_string(window_bits) + " bits");
  std::uint32_t words[8];
  for (int k = 0; k < 4; ++k) {
    words[2 * k] = static_cast<std::uint32_t>(scalar[k]);
    words[2 * k + 1] = static_cast<std::uint32_t>(scalar[k] >> 32);
  }
  std::vector<int> digits(msm_window_count(window_bits));
  std::uint32_t carry = 0;
  for (unsigned w = 0; w < digits.size(); ++w) digits[w] = msm_signed_digit(words, w, window_bits, carry);
  return digits;
}

}  // namespace coprove::cuda
