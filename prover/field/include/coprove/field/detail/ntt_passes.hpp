// The passes the CPU NTTs are built from, shared by ntt.cpp and quotient.cpp so the quotient can
// chain transforms without bit-reversal passes in between: DIF takes natural order to bit-reversed,
// DIT takes bit-reversed to natural.
#pragma once

#include <coprove/field/fr.hpp>

#include <cstdint>
#include <span>

namespace coprove::field::detail {

/// Multiplies the element at position p by factor * base^(bitrev(p)) (base == one: by factor).
/// Applied block by block while the block is in cache.
struct bitrev_scale {
  fr factor = fr::one();
  fr base = fr::one();
};

/// Decimation in frequency, natural order in, bit-reversed order out; twiddles as
/// evaluation_domain::forward_twiddles() lays them out. The optional scale is applied after the
/// butterflies.
void dif(std::span<fr> values, std::span<const fr> twiddles, const bitrev_scale* post_scale);

/// Decimation in time, bit-reversed order in, natural order out. The optional scale is applied to
/// the input before the butterflies.
void dit(std::span<fr> values, std::span<const fr> twiddles, const bitrev_scale* pre_scale);

/// The low `bits` bits of x in reverse order (0 for bits == 0).
inline std::uint64_t reverse_bits(std::uint64_t x, unsigned bits) noexcept {
  if (bits == 0) return 0;
  x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
  x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
  x = ((x >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((x & 0x0f0f0f0f0f0f0f0fULL) << 4);
  x = __builtin_bswap64(x);
  return x >> (64 - bits);
}

/// Permutes values (of size 2^log_n) into bit-reversed order.
void bit_reverse(std::span<fr> values, unsigned log_n);

}  // namespace coprove::field::detail
