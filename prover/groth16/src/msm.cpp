// Pippenger's method for G1 and G2 (see msm.hpp). Three passes over the input, each on all cores:
//   1. classify: scalars 0 are dropped, the bases of scalars 1 are summed, the rest are listed;
//   2. digits: each listed scalar becomes ceil(256/c) signed c-bit digits, stored window-major so
//      that the bucket pass reads them in order;
//   3. buckets: one task per (window, range of points) fills 2^(c-1) buckets and reduces them to
//      that window's sum with the running-sum trick (2^c additions).
// The window sums are then combined by Horner's rule (c doublings between windows).
//
// Wide windows keep their buckets affine and add into them in batches (affine_buckets below): the
// additions of one batch go to distinct buckets, so they are independent, and Montgomery's trick
// gives all their slopes from one field inversion, 3 multiplications each. An affine addition then
// costs about 6 multiplications against the 10 of a mixed XYZZ one, and a bucket is half the bytes.
// Narrow windows (few buckets, so short batches that cannot pay for the inversion) keep XYZZ
// buckets.
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
/// window's value stays at most 2^(c-1) after the carry, so it never carries further (and for
/// c = 16, where that bound would not fit a 16-bit digit, the top window holds bits 240..254 of a
/// value below r, at most 0x73ed, plus the carry).
constexpr unsigned covered_bits = 256;

constexpr std::size_t classify_chunk = std::size_t{1} << 12;

unsigned window_count(unsigned c) noexcept { return (covered_bits + c - 1) / c; }

bool is_one(const scalar_limbs& s) noexcept { return s[0] == 1 && (s[1] | s[2] | s[3]) == 0; }
bool is_zero(const scalar_limbs& s) noexcept { return (s[0] | s[1] | s[2] | s[3]) == 0; }

/// The c bits of s starting at bit `offset` (offset < 256, c <= 16).
std::uint32_t bits_at(const scalar_limbs& s, unsigned offset, unsigned c) noexcept {
  const unsigned limb = offset / 64;
  const unsigned shift = offset % 64;
  std::uint64_t v = s[limb] >> shift;
  if (shift + c > 64 && limb + 1 < 4) v |= s[limb + 1] << (64 - shift);
  return static_cast<std::uint32_t>(v & ((std::uint64_t{1} << c) - 1));
}

/// Writes the signed digits of s, s = sum_w d_w 2^(c w): d_w in [-2^(c-1), 2^(c-1) - 1] below the
/// top window, which takes the last carry and stays non-negative (see covered_bits). Either way
/// |d_w| <= 2^(c-1) and the digit fits 16 bits for c <= 16.
void signed_digits(const scalar_limbs& s, unsigned c, unsigned windows, std::int16_t* out,
                   std::size_t stride) noexcept {
  const std::uint32_t half = std::uint32_t{1} << (c - 1);
  std::uint32_t carry = 0;
  for (unsigned w = 0; w + 1 < windows; ++w) {
    const std::uint32_t v = bits_at(s, w * c, c) + carry;
    carry = v >= half ? 1 : 0;
    out[w * stride] = static_cast<std::int16_t>(static_cast<std::int32_t>(v) - static_cast<std::int32_t>(carry << c));
  }
  out[(windows - 1) * stride] = static_cast<std::int16_t>(bits_at(s, (windows - 1) * c, c) + carry);
}

scalar_limbs canonical_of(const field::fr& s) noexcept { return s.to_canonical(); }

scalar_limbs canonical_of(const scalar_limbs& s) {
  if (!field::scalar_is_canonical(s)) throw std::invalid_argument("msm: a scalar is not below the group order r");
  return s;
}

/// The narrowest window whose buckets are affine (see affine_buckets): narrower windows have too
/// few buckets for batches long enough to pay for an inversion each.
constexpr unsigned affine_bucket_min_window_bits = 10;

/// The buckets of one window, kept affine and added into in batches of distinct buckets, whose
/// slopes share one inversion (Montgomery's trick). A point for a bucket already in the open batch
/// waits for the next batch (up to half a batch of them wait; past that they go to the overflow).
/// A point with its bucket's x (a doubling or a cancellation) goes into that bucket's XYZZ
/// overflow, whose general formulas handle both; the overflow joins the bucket at the reduction.
/// So every input is handled, and equal scalars (every point in one bucket) cost about what XYZZ
/// buckets cost.
template <class Curve>
class affine_buckets {
 public:
  using field_type = typename Curve::field;
  using affine = field::detail::affine_point<Curve>;
  using xyzz = field::detail::xyzz_point<Curve>;

  affine_buckets(std::size_t bucket_count, std::size_t batch_capacity)
      : x_(bucket_count), y_(bucket_count), state_(bucket_count, 0), batch_of_(bucket_count, 0),
        overflow_(bucket_count), pending_(batch_capacity), prefix_(batch_capacity),
        wait_limit_(batch_capacity / 2) {
    waiting_.reserve(wait_limit_);
    retrying_.reserve(wait_limit_);
  }

  /// Reads the bucket ahead of its add (the buckets of a wide window are far beyond the caches).
  void prefetch(std::size_t bucket) const noexcept {
    __builtin_prefetch(&x_[bucket]);
    __builtin_prefetch(&y_[bucket]);
    __builtin_prefetch(&state_[bucket]);
  }

  /// bucket += p, or -p when `negate`; p may be the identity.
  void add(std::size_t bucket, const affine& p, bool negate) noexcept {
    if (p.infinity) return;
    std::uint8_t& state = state_[bucket];
    if ((state & has_point) == 0) {
      x_[bucket] = p.x;
      y_[bucket] = negate ? -p.y : p.y;
      state |= has_point;
      return;
    }
    if (batch_of_[bucket] == batch_) {
      if (waiting_.size() < wait_limit_) {
        waiting_.push_back({static_cast<std::uint32_t>(bucket), negate, &p});
      } else {
        add_to_overflow(bucket, negate ? -p : p);
      }
      return;
    }
    const field_type dx = p.x - x_[bucket];
    if (dx.is_zero()) {
      add_to_overflow(bucket, negate ? -p : p);
      return;
    }
    batch_of_[bucket] = batch_;
    prefix_[size_] = size_ == 0 ? dx : prefix_[size_ - 1] * dx;
    pending_[size_] = {static_cast<std::uint32_t>(bucket), negate, &p};
    if (++size_ == pending_.size()) flush();
  }

  /// sum_b (b + 1) bucket[b], the window's sum; empties the buckets for the next window.
  xyzz reduce() {
    while (size_ != 0 || !waiting_.empty()) flush();
    // The running suffix sums: sum_b (b + 1) bucket[b] = sum_b (bucket[b] + ... + bucket[last]).
    xyzz running = xyzz::identity();
    xyzz sum = xyzz::identity();
    for (std::size_t b = x_.size(); b-- > 0;) {
      if (state_[b] & has_point) running += affine::from_coordinates(x_[b], y_[b]);
      if (state_[b] & has_overflow) running += overflow_[b];
      sum += running;
    }
    std::fill(state_.begin(), state_.end(), std::uint8_t{0});
    return sum;
  }

 private:
  static constexpr std::uint8_t has_point = 1;
  static constexpr std::uint8_t has_overflow = 2;

  struct pending_add {
    std::uint32_t bucket;
    bool negate;
    const affine* point;
  };

  void add_to_overflow(std::size_t bucket, const affine& p) noexcept {
    std::uint8_t& state = state_[bucket];
    if (state & has_overflow) {
      overflow_[bucket] += p;
    } else {
      overflow_[bucket] = p.to_xyzz();
      state |= has_overflow;
    }
  }

  /// The open batch's additions: one inversion of the product of the x differences, then, walking
  /// back, each difference's inverse from the prefix products, and the affine sum. The points that
  /// waited then open the next batch (fewer than a batch, so this does not recurse).
  void flush() noexcept {
    if (size_ == 0) return;
    field_type inverse = prefix_[size_ - 1].inverse();
    for (std::size_t j = size_; j-- > 0;) {
      const pending_add& e = pending_[j];
      field_type& x1 = x_[e.bucket];
      field_type& y1 = y_[e.bucket];
      const field_type& x2 = e.point->x;
      const field_type y2 = e.negate ? -e.point->y : e.point->y;
      field_type dx_inverse = inverse;
      if (j > 0) {
        dx_inverse = inverse * prefix_[j - 1];
        inverse = inverse * (x2 - x1);
      }
      const field_type slope = (y2 - y1) * dx_inverse;
      const field_type x3 = slope.square() - x1 - x2;
      y1 = slope * (x1 - x3) - y1;
      x1 = x3;
    }
    size_ = 0;
    if (++batch_ == 0) {  // the batch numbers wrapped: forget the old ones
      std::fill(batch_of_.begin(), batch_of_.end(), 0u);
      batch_ = 1;
    }
    waiting_.swap(retrying_);
    for (const pending_add& e : retrying_) add(e.bucket, *e.point, e.negate);
    retrying_.clear();
  }

  std::vector<field_type> x_, y_;
  std::vector<std::uint8_t> state_;
  std::vector<std::uint32_t> batch_of_;  ///< the number of the batch that last took the bucket
  std::vector<xyzz> overflow_;           ///< valid where state_ has has_overflow
  std::vector<pending_add> pending_;
  std::vector<field_type> prefix_;       ///< prefix_[j]: the product of the first j + 1 differences
  std::vector<pending_add> waiting_;     ///< points whose bucket was in the open batch
  std::vector<pending_add> retrying_;    ///< the previous batch's waiting points, being added
  std::size_t wait_limit_;               ///< below the batch length, so a retry never flushes
  std::size_t size_ = 0;
  std::uint32_t batch_ = 1;
};

/// The batch length for `bucket_count` affine buckets: longer batches share an inversion among
/// more additions, but more points find their bucket already in the batch (about
/// batch / (2 bucket_count) of them) and wait.
std::size_t affine_batch_length(std::size_t bucket_count) noexcept {
  return std::clamp<std::size_t>(bucket_count / 4, 64, 2048);
}

/// A field inversion (Fermat) in mixed XYZZ additions of the curve (about 10 products of its
/// field): some 570 Fq products in G1; in G2 the Fq2 inversion is one Fq inversion and a few Fq
/// products, while an Fq2 product is about three Fq ones.
template <class Curve>
constexpr double inversion_cost = 57.0;
template <>
constexpr double inversion_cost<field::g2_curve> = 19.0;

/// The window width for `count` scalars other than 0 and 1, given inversion_cost. The cost is
/// counted in mixed XYZZ additions. Each window adds every point once: a mixed addition into
/// XYZZ buckets; into affine buckets about 6 of the field's products, plus the batch's share of
/// its inversion and the general additions of the points that overflow. The bucket reduction
/// costs 2^(c-1) times a mixed and a general addition (about 2.4 mixed ones).
unsigned default_window_bits(std::size_t count, double inversion) noexcept {
  unsigned best = 1;
  double best_cost = std::numeric_limits<double>::max();
  for (unsigned c = 1; c <= msm_max_window_bits; ++c) {
    const double buckets = static_cast<double>(std::size_t{1} << (c - 1));
    double point_cost = 1.0;
    if (c >= affine_bucket_min_window_bits) {
      const double batch = static_cast<double>(affine_batch_length(std::size_t{1} << (c - 1)));
      point_cost = 0.6 + inversion / batch + 0.5 * batch / (2 * buckets);
    }
    const double cost =
        static_cast<double>(window_count(c)) * (static_cast<double>(count) * point_cost + 2.4 * buckets);
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
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
  const unsigned c = options.window_bits != 0 ? options.window_bits : default_window_bits(m, inversion_cost<Curve>);
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
  const auto bucket_of = [](int digit) noexcept { return static_cast<std::size_t>((digit < 0 ? -digit : digit) - 1); };
  if (c >= affine_bucket_min_window_bits) {
    field::parallel_for(0, windows * ranges, [&](std::size_t lo, std::size_t hi) {
      affine_buckets<Curve> buckets(bucket_count, affine_batch_length(bucket_count));
      constexpr std::size_t lookahead = 8;
      for (std::size_t task = lo; task < hi; ++task) {
        const std::size_t w = task / ranges;
        const std::size_t begin = (task % ranges) * range_length;
        const std::size_t end = std::min(m, begin + range_length);
        const std::int16_t* row = digits.data() + w * m;
        for (std::size_t k = begin; k < end; ++k) {
          if (k + lookahead < end && row[k + lookahead] != 0) buckets.prefetch(bucket_of(row[k + lookahead]));
          const int d = row[k];
          if (d != 0) buckets.add(bucket_of(d), bases[indices[k]], d < 0);
        }
        partial[task] = buckets.reduce();
      }
    });
  } else {
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
            buckets[bucket_of(d)] += bases[indices[k]];
          } else if (d < 0) {
            buckets[bucket_of(d)] += -bases[indices[k]];
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
  }

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
  return default_window_bits(count, inversion_cost<field::g1_curve>);
}

unsigned msm_default_window_bits_g2(std::size_t count) noexcept {
  return default_window_bits(count, inversion_cost<field::g2_curve>);
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
