// CPU NTTs: iterative radix-2 butterflies with per-level contiguous twiddles. Levels whose
// butterflies span more than a cache block are done two at a time over the whole array (radix-4
// passes, parallel over butterfly groups); the remaining levels are done block by block, each
// block finishing all of them while it sits in cache (parallel over blocks). Natural order in and
// out costs one bit-reversal pass; scalings are fused into the block stage.
#include <coprove/field/ntt.hpp>

#include <coprove/field/detail/ntt_passes.hpp>
#include <coprove/field/parallel.hpp>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace coprove::field {

namespace detail {

namespace {

constexpr unsigned block_log = 12;            // 4096 elements (128 KiB) per cache block
constexpr std::size_t butterfly_chunk = 1 << 12;  // minimum butterflies per parallel chunk

unsigned log2_exact(std::size_t n) noexcept {
  unsigned log_n = 0;
  while ((std::size_t{1} << log_n) < n) ++log_n;
  return log_n;
}

/// Per-block scaling by factor * base^bitrev(p): a table over the low block_log bits of the
/// position (shared by every block) times one power per block.
class block_scaler {
 public:
  block_scaler(const bitrev_scale& scale, unsigned log_n, unsigned log_block)
      : log_n_(log_n), log_block_(log_block), scale_(scale),
        plain_(scale.base == fr::one()) {
    if (plain_) return;
    const std::size_t block = std::size_t{1} << log_block;
    // Within a block, bitrev(p) = bitrev_lb(q) * 2^(log_n - lb) + bitrev_hi(block index).
    const fr step = scale.base.pow(std::uint64_t{1} << (log_n - log_block));
    std::vector<fr> powers(block);
    fr w = scale.factor;
    for (std::size_t m = 0; m < block; ++m) {
      powers[m] = w;
      w *= step;
    }
    table_.resize(block);
    for (std::size_t q = 0; q < block; ++q) table_[q] = powers[reverse_bits(q, log_block)];
  }

  void apply(fr* block_data, std::size_t block_index) const noexcept {
    const std::size_t block = std::size_t{1} << log_block_;
    if (plain_) {
      if (scale_.factor == fr::one()) return;
      for (std::size_t q = 0; q < block; ++q) block_data[q] *= scale_.factor;
      return;
    }
    const fr outer = scale_.base.pow(reverse_bits(block_index, log_n_ - log_block_));
    for (std::size_t q = 0; q < block; ++q) block_data[q] *= table_[q] * outer;
  }

 private:
  unsigned log_n_, log_block_;
  bitrev_scale scale_;
  bool plain_;
  std::vector<fr> table_;
};

inline void dif_butterfly(fr& x, fr& y, const fr& w) noexcept {
  const fr u = x;
  x = u + y;
  y = (u - y) * w;
}

inline void dit_butterfly(fr& x, fr& y, const fr& w) noexcept {
  const fr v = y * w;
  y = x - v;
  x = x + v;
}

/// DIF levels half = block/2 .. 1 inside one block.
void dif_block(fr* a, std::size_t block, const fr* tw) noexcept {
  for (std::size_t h = block / 2; h >= 1; h /= 2) {
    const fr* level = tw + h;
    for (std::size_t base = 0; base < block; base += 2 * h) {
      dif_butterfly(a[base], a[base + h], fr::one());
      for (std::size_t j = 1; j < h; ++j) dif_butterfly(a[base + j], a[base + j + h], level[j]);
    }
  }
}

/// DIT levels half = 1 .. block/2 inside one block.
void dit_block(fr* a, std::size_t block, const fr* tw) noexcept {
  for (std::size_t h = 1; h < block; h *= 2) {
    const fr* level = tw + h;
    for (std::size_t base = 0; base < block; base += 2 * h) {
      for (std::size_t j = 0; j < h; ++j) dit_butterfly(a[base + j], a[base + j + h], level[j]);
    }
  }
}

/// One DIF level of half-size h over the whole array.
void dif_level(fr* a, std::size_t n, unsigned log_h, const fr* tw) {
  const std::size_t h = std::size_t{1} << log_h;
  parallel_for(0, n / 2, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t t = lo; t < hi; ++t) {
      const std::size_t j = t & (h - 1);
      const std::size_t i = ((t >> log_h) << (log_h + 1)) + j;
      dif_butterfly(a[i], a[i + h], tw[h + j]);
    }
  }, butterfly_chunk);
}

/// DIF levels h and h/2 together: each group of four elements is loaded once.
void dif_two_levels(fr* a, std::size_t n, unsigned log_h, const fr* tw) {
  const std::size_t h = std::size_t{1} << log_h;
  const std::size_t q = h / 2;
  parallel_for(0, n / 4, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t t = lo; t < hi; ++t) {
      const std::size_t j = t & (q - 1);
      const std::size_t i = ((t >> (log_h - 1)) << (log_h + 1)) + j;
      fr x0 = a[i], x1 = a[i + q], x2 = a[i + h], x3 = a[i + h + q];
      dif_butterfly(x0, x2, tw[h + j]);
      dif_butterfly(x1, x3, tw[h + j + q]);
      dif_butterfly(x0, x1, tw[q + j]);
      dif_butterfly(x2, x3, tw[q + j]);
      a[i] = x0;
      a[i + q] = x1;
      a[i + h] = x2;
      a[i + h + q] = x3;
    }
  }, butterfly_chunk);
}

/// One DIT level of half-size h over the whole array.
void dit_level(fr* a, std::size_t n, unsigned log_h, const fr* tw) {
  const std::size_t h = std::size_t{1} << log_h;
  parallel_for(0, n / 2, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t t = lo; t < hi; ++t) {
      const std::size_t j = t & (h - 1);
      const std::size_t i = ((t >> log_h) << (log_h + 1)) + j;
      dit_butterfly(a[i], a[i + h], tw[h + j]);
    }
  }, butterfly_chunk);
}

/// DIT levels h and 2h together.
void dit_two_levels(fr* a, std::size_t n, unsigned log_h, const fr* tw) {
  const std::size_t h = std::size_t{1} << log_h;
  parallel_for(0, n / 4, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t t = lo; t < hi; ++t) {
      const std::size_t j = t & (h - 1);
      const std::size_t i = ((t >> log_h) << (log_h + 2)) + j;
      fr x0 = a[i], x1 = a[i + h], x2 = a[i + 2 * h], x3 = a[i + 3 * h];
      dit_butterfly(x0, x1, tw[h + j]);
      dit_butterfly(x2, x3, tw[h + j]);
      dit_butterfly(x0, x2, tw[2 * h + j]);
      dit_butterfly(x1, x3, tw[2 * h + j + h]);
      a[i] = x0;
      a[i + h] = x1;
      a[i + 2 * h] = x2;
      a[i + 3 * h] = x3;
    }
  }, butterfly_chunk);
}

}  // namespace

void dif(std::span<fr> values, std::span<const fr> twiddles, const bitrev_scale* post_scale) {
  const std::size_t n = values.size();
  const unsigned log_n = log2_exact(n);
  const unsigned log_block = std::min(log_n, block_log);
  const std::size_t block = std::size_t{1} << log_block;
  fr* a = values.data();
  const fr* tw = twiddles.data();
  // Levels wider than a block, two at a time while two remain.
  unsigned log_h = log_n;  // log of the current half-size + 1
  while (log_h > log_block) {
    if (log_h - 1 > log_block) {
      dif_two_levels(a, n, log_h - 1, tw);
      log_h -= 2;
    } else {
      dif_level(a, n, log_h - 1, tw);
      log_h -= 1;
    }
  }
  std::optional<block_scaler> scaler;
  if (post_scale != nullptr) scaler.emplace(*post_scale, log_n, log_block);
  parallel_for(0, n / block, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t k = lo; k < hi; ++k) {
      dif_block(a + k * block, block, tw);
      if (scaler) scaler->apply(a + k * block, k);
    }
  });
}

void dit(std::span<fr> values, std::span<const fr> twiddles, const bitrev_scale* pre_scale) {
  const std::size_t n = values.size();
  const unsigned log_n = log2_exact(n);
  const unsigned log_block = std::min(log_n, block_log);
  const std::size_t block = std::size_t{1} << log_block;
  fr* a = values.data();
  const fr* tw = twiddles.data();
  std::optional<block_scaler> scaler;
  if (pre_scale != nullptr) scaler.emplace(*pre_scale, log_n, log_block);
  parallel_for(0, n / block, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t k = lo; k < hi; ++k) {
      if (scaler) scaler->apply(a + k * block, k);
      dit_block(a + k * block, block, tw);
    }
  });
  unsigned log_h = log_block;  // log of the current half-size
  while (log_h < log_n) {
    if (log_h + 1 < log_n) {
      dit_two_levels(a, n, log_h, tw);
      log_h += 2;
    } else {
      dit_level(a, n, log_h, tw);
      log_h += 1;
    }
  }
}

void bit_reverse(std::span<fr> values, unsigned log_n) {
  const std::size_t n = values.size();
  if (n <= 2) return;
  fr* a = values.data();
  parallel_for(0, n, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      const std::size_t r = detail::reverse_bits(i, log_n);
      if (i < r) std::swap(a[i], a[r]);
    }
  }, 1 << 14);
}

}  // namespace detail

namespace {

void check_size(std::span<fr> values, const evaluation_domain& domain, const char* what) {
  if (values.size() != domain.size()) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(values.size()) +
                                " values for a domain of size " + std::to_string(domain.size()));
  }
}

}  // namespace

void ntt(std::span<fr> values, const evaluation_domain& domain) {
  check_size(values, domain, "ntt");
  detail::bit_reverse(values, domain.log_size());
  detail::dit(values, domain.forward_twiddles(), nullptr);
}

void intt(std::span<fr> values, const evaluation_domain& domain) {
  check_size(values, domain, "intt");
  const detail::bitrev_scale scale{domain.size_inv(), fr::one()};
  detail::dif(values, domain.inverse_twiddles(), &scale);
  detail::bit_reverse(values, domain.log_size());
}

void coset_ntt(std::span<fr> values, const evaluation_domain& domain) {
  check_size(values, domain, "coset_ntt");
  // After the bit reversal, position p holds coefficient bitrev(p), which needs g^bitrev(p).
  detail::bit_reverse(values, domain.log_size());
  const detail::bitrev_scale scale{fr::one(), evaluation_domain::coset_generator()};
  detail::dit(values, domain.forward_twiddles(), &scale);
}

void coset_intt(std::span<fr> values, const evaluation_domain& domain) {
  check_size(values, domain, "coset_intt");
  // The DIF leaves coefficient bitrev(p) at position p, which needs g^-bitrev(p) / n.
  const detail::bitrev_scale scale{domain.size_inv(), evaluation_domain::coset_generator_inv()};
  detail::dif(values, domain.inverse_twiddles(), &scale);
  detail::bit_reverse(values, domain.log_size());
}

}  // namespace coprove::field
