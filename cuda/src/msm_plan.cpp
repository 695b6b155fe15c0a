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
constexpr std::uint32_t sum_chunk = 16;
/// Buckets per thread in the window weighting.
constexpr std::size_t weight_segment = 32;

constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

bool fits(std::size_t count, unsigned bits) {
  const std::size_t windows = msm_window_count(bits);
  const std::size_t groups = windows * (std::size_t{1} << (bits - 1)) + 1;
  return count * windows < std::numeric_limits<std::uint32_t>::max() &&
         groups < std::numeric_limits<std::uint32_t>::max() / 2;
}

/// The modelled work of a width: a mixed addition per entry (count * W at most), two additions of
/// about 1.4 mixed ones per bucket in the weighting, and each window's doublings and additions in
/// the single-threaded combination, which cost like a few thousand parallel additions.
double modelled_work(std::size_t count, unsigned bits) {
  const double windows = msm_window_count(bits);
  const double buckets = static_cast<double>(std::size_t{1} << (bits - 1));
  return static_cast<double>(count) * windows + 2.8 * windows * buckets + 2000.0 * windows;
}

/// The widest window the plan picks by itself. Measured on one H200 (commit 2d09909, uniform
/// scalars): 16 bits beat 18, 20 and 22 at 2^20..2^24 in G1 and G2 and were within 1% of the
/// best at 2^26, because the window weighting and the group sums grow with the bucket count faster
/// than the model above says.
constexpr unsigned widest_default_bits = 16;

unsigned choose_bits(std::size_t count) {
  unsigned best = 0;
  double best_work = 0;
  for (unsigned bits = 2; bits <= widest_default_bits; ++bits) {
    if (!fits(count, bits)) continue;
    const double work = modelled_work(count, bits);
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

msm_plan plan_msm(msm_group group, std::size_t count, unsigned window_bits) {
  if (count > msm_max_count)
    throw std::invalid_argument("MSM: " + std::to_string(count) + " points, at most " + std::to_string(msm_max_count));
  if (window_bits > msm_max_window_bits)
    throw std::invalid_argument("MSM: window of " + std::to_string(window_bits) + " bits, at most " +
                                std::to_string(msm_max_window_bits));
  msm_plan plan;
  plan.group = group;
  plan.count = count;
  plan.window_bits = window_bits == 0 ? choose_bits(count) : window_bits;
  if (!fits(count, plan.window_bits))
    throw std::invalid_argument("MSM: " + std::to_string(count) + " points in windows of " +
                                std::to_string(plan.window_bits) + " bits exceed 2^32 entries");
  plan.windows = msm_window_count(plan.window_bits);
  plan.buckets = std::size_t{1} << (plan.window_bits - 1);
  plan.groups = plan.windows * plan.buckets + 1;
  plan.entries = count * plan.windows;
  plan.point_bytes = group == msm_group::g1 ? 192 : 384;

  // Level 0 makes sum_g ceil(n_g / chunk) <= entries / chunk + groups sums, and leaves at most
  // ceil(count / chunk) in any group (a group holds at most one entry per point).
  std::size_t capacity = ceil_div(plan.entries, entry_chunk) + plan.groups;
  std::size_t largest = ceil_div(count, entry_chunk);
  plan.level_chunk.push_back(entry_chunk);
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
    capacity = std::min(capacity, ceil_div(capacity, sum_chunk) + plan.windows);
    largest = ceil_div(largest, sum_chunk);
    plan.window_level_chunk.push_back(sum_chunk);
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
  plan.workspace_bytes = align_up(count * 32) + 3 * offsets + align_up(plan.entries * 4) +
                         align_up(even * plan.point_bytes) + align_up(odd * plan.point_bytes) +
                         align_up(plan.windows * plan.segments * plan.point_bytes) +
                         align_up(window_odd * plan.point_bytes) + 3 * window_offsets + align_up(plan.point_bytes) +
                         align_up((plan.windows + 1) * plan.point_bytes);  // the window sums gathered for the host
  return plan;
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
