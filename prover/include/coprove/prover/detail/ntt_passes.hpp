// The passes the CPU NTTs are built from, shared by ntt.cpp and quotient.cpp so the quotient can
// chain transforms without bit-reversal passes in between: DIF takes natural order to bit-reversed,
// DIT takes bit-reversed to natural.
#pragma once

#include <coprove/prover/fr.hpp>

#include <span>

namespace coprove::prover::detail {

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

/// Permutes values (of size 2^log_n) into bit-reversed order.
void bit_reverse(std::span<fr> values, unsigned log_n);

}  // namespace coprove::prover::detail
