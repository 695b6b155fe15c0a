// Pippenger's method for G1 and G2 (see msm.hpp). Three passes over the input, each on all cores:
//   1. classify: scalars 0 are dropped, the bases of scalars 1 are summed, the rest are listed;
//   2. digits: each listed scalar becomes ceil(256/c) signed c-bit digits, stored window-major so
//      that the bucket pass reads them in order;
//   3. buckets: one task per (window, range of points) fills 2^(c-1) buckets and reduces them to
//      that window's sum with the running-sum trick (2^c additions).
// The window sums are then combined by Horner's rule (c doublings between windows).
#include <coprove/groth16/msm.hpp>

#include <coprove/field/parallel.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace coprove::groth16 {

namespace {

using field::scalar_limbs;

/// Bits the digits must cover: scalars are below r < 2^255, and with ceil(256/c) windows the top
/// window's value stays at most 2^(c-1) after the carry, so it never carries further.
constexpr unsigned covered_bits = 256;

constexpr std::size_t classify_chunk = std::size_t{1} << 12;

unsigned window_count(unsigned c) noexcept { return (covered_bits + c - 1) / c; }

bool is_one(const scalar_limbs& s) noexcept { return s[0] == 1 && (s[1] | s[2] | s[3]) == 0; }
bool is_zero(const scalar_limbs& s) noexcept { return (s[0] | s[1] | s[2] | s[3]) == 0; }

/// The c bits of s starting at bit `offset` (offset < 256, c <= 15).
std::uint32_t bits_at(const scalar_limbs& s, unsigned offset, unsigned c) noexcept {
  const unsigned limb = offset / 64;
  const unsigned shift = offset % 64;
  std::uint64_t v = s[limb] >> shift;
  if (shift + c > 64 && limb + 1 < 4) v |= s[limb + 1] << (64 - shift);
  return static_cast<std::uint32_t>(v & ((std::uint64_t{1} << c) - 1));
}

/// Writes the signed digits of s, d_w in [-(2^(c-1) - 1), 2^(c-1)], with s = sum_w d_w 2^(c w).
void signed_digits(const scalar_limbs& s, unsigned c, unsigned windows, std::int16_t* out,
                   std::size_t stride) noexcept {
  const std::uint32_t half = std::uint32_t{1} << (c - 1);
  std::uint32_t carry = 0;
  for (unsigned w = 0; w < windows; ++w) {
    const std::uint32_t v = bits_at(s, w * c, c) + carry;
    if (v > half) {
      out[w * stride] = static_cast<std::int16_t>(static_cast<std::int32_t>(v) - (std::int32_t{1} << c));
      carry = 1;
    } else {
      out[w * stride] = static_cast<std::int16_t>(v);
      carry = 0;
    }
  }
}

scalar_limbs canonical_of(const field::fr& s) noexcept { return s.to_canonical(); }

scalar_limbs canonical_of(const scalar_limbs& s) {
  if (!field::scalar_is_canonical(s)) throw std::invalid_argument("msm: a scalar is not below the group order r");
  return s;
}

template <class Curve, class Scalar>
field::detail::jacobian_point<Curve> pippenger(std::span<const field::detail::affine_point<Curve>> bases,
                                               std::span<const Scalar> scalars, const msm_options& options) {
  using xyzz = field::detail::xyzz_point<Curve>;

  if (bases.size() != scalars.size())
    throw std::invalid_argument("msm: " + std::to_string(bases.size()) + " bases but " +
                                std::to_string(scalars.size()) + " scalars");
  if (options.window_bits > msm_max_window_bits)
    throw std::invalid_argument("msm: window_bits " + std::to_string(options.window_bits) + " exceeds " +
                                std::to_string(msm_max_window_bits));
  const std::size_t n = bases.size();
  if (n == 0) return field::detail::jacobian_point<Curve>::identity();
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("msm: more than 2^32 - 1 terms");

  // 1. Classify, per chunk: the sum of the bases with scalar one, and the indices of the others.
  const std::size_t chunks = (n + classify_chunk - 1) / classify_chunk;
  std::vector<xyzz> one_sums(chunks, xyzz::identity());
  std::vector<std::vector<std::uint32_t>> chunk_indices(chunks);
  field::parallel_for(0, chunks, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t ch = lo; ch < hi; ++ch) {
      const std::size_t end = std::min(n, (ch + 1) * classify_chunk);
      xyzz sum = xyzz::identity();
      auto& indices = chunk_indices[ch];
      for (std::size_t i = ch * classify_chunk; i < end; ++i) {
        const scalar_limbs s = canonical_of(scalars[i]);
        if (is_zero(s)) continue;
        if (is_one(s)) {
          sum += bases[i];
        } else {
          indices.push_back(static_cast<std::uint32_t>(i));
        }
      }
      one_sums[ch] = sum;
    }
  });
  xyzz total = xyzz::identity();
  for (const auto& s : one_sums) total += s;
  std::vector<std::uint32_t> indices;
  {
    std::size_t count = 0;
    for (const auto& v : chunk_indices) count += v.size();
    indices.reserve(count);
    for (auto& v : chunk_indices) {
      indices.insert(indices.end(), v.begin(), v.end());
      std::vector<std::uint32_t>().swap(v);
    }
  }
  const std::size_t m = indices.size();
  if (m == 0) return total.to_jacobian();

  // 2. Digits, window-major.
  const unsigned c = options.window_bits != 0 ? options.window_bits : msm_default_window_bits(m);
  const unsigned windows = window_count(c);
  std::vector<std::int16_t> digits(static_cast<std::size_t>(windows) * m);
  field::parallel_for(0, m, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t k = lo; k < hi; ++k) {
      signed_digits(canonical_of(scalars[indices[k]]), c, windows, digits.data() + k, m);
    }
  }, 1024);

  // 3. Buckets. More threads than windows split each window's points into ranges, but only while
  // a range stays much longer than the 2^c additions of its bucket reduction.
  const std::size_t bucket_count = std::size_t{1} << (c - 1);
  const std::size_t threads = field::parallelism();
  std::size_t ranges = 1;
  while (windows * ranges < 2 * threads && m / (ranges * 2) >= 4 * bucket_count) ranges *= 2;
  const std::size_t range_length = (m + ranges - 1) / ranges;
  std::vector<xyzz> partial(windows * ranges, xyzz::identity());
  field::parallel_for(0, windows * ranges, [&](std::size_t lo, std::size_t hi) {
    std::vector<xyzz> buckets(bucket_count);
    for (std::size_t task = lo; task < hi; ++task) {
      const std::size_t w = task / ranges;
      const std::size_t begin = (task % ranges) * range_length;
      const std::size_t end = std::min(m, begin + range_length);
      std::fill(buckets.begin(), buckets.end(), xyzz::identity());
      const std::int16_t* row = digits.data() + w * m;
      for (std::size_t k = begin; k < end; ++k) {
        const int d = row[k];
        if (d > 0) {
          buckets[static_cast<std::size_t>(d - 1)] += bases[indices[k]];
        } else if (d < 0) {
          buckets[static_cast<std::size_t>(-d - 1)] += -bases[indices[k]];
        }
      }
      // sum_b (b + 1) bucket[b] as the sum of the running suffix sums.
      xyzz running = xyzz::identity();
      xyzz sum = xyzz::identity();
      for (std::size_t b = bucket_count; b-- > 0;) {
        running += buckets[b];
        sum += running;
      }
      partial[task] = sum;
    }
  });

  xyzz acc = xyzz::identity();
  for (unsigned w = windows; w-- > 0;) {
    for (unsigned i = 0; i < c && !acc.is_identity(); ++i) acc = acc.doubled();
    for (std::size_t r = 0; r < ranges; ++r) acc += partial[w * ranges + r];
  }
  acc += total;
  return acc.to_jacobian();
}

}  // namespace

unsigned msm_default_window_bits(std::size_t count) noexcept {
  // Cost in mixed additions: each window adds every point once and reduces its buckets with 2^c
  // full additions (about 1.5 mixed ones each).
  unsigned best = 1;
  double best_cost = std::numeric_limits<double>::max();
  for (unsigned c = 1; c <= msm_max_window_bits; ++c) {
    const double cost = static_cast<double>(window_count(c)) *
                        (static_cast<double>(count) + 1.5 * static_cast<double>(std::size_t{1} << c));
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

field::g1_jacobian msm(std::span<const field::g1_affine> bases, std::span<const field::fr> scalars,
                       const msm_options& options) {
  return pippenger<field::g1_curve>(bases, scalars, options);
}

field::g2_jacobian msm(std::span<const field::g2_affine> bases, std::span<const field::fr> scalars,
                       const msm_options& options) {
  return pippenger<field::g2_curve>(bases, scalars, options);
}

field::g1_jacobian msm(std::span<const field::g1_affine> bases, std::span<const field::scalar_limbs> scalars,
                       const msm_options& options) {
  return pippenger<field::g1_curve>(bases, scalars, options);
}

field::g2_jacobian msm(std::span<const field::g2_affine> bases, std::span<const field::scalar_limbs> scalars,
                       const msm_options& options) {
  return pippenger<field::g2_curve>(bases, scalars, options);
}

}  // namespace coprove::groth16
