// How a transform of 2^L elements is split into passes over device memory, and the index
// arithmetic each pass uses. Shared by the kernels and the host code (and the host-side model of
// the passes in the tests), so there is exactly one definition of where every element goes.
//
// The six-step decomposition, applied recursively: with n = N1 * N2, j = j1 * N2 + j2 and
// k = k1 + N1 * k2,
//   X[k1 + N1 k2] = sum_j2 w_N2^(j2 k2) * ( w_n^(j2 k1) * sum_j1 x[j1 N2 + j2] w_N1^(j1 k1) ).
// Pass p takes the digit of `bits` bits above `lo` lower bits ("lines" are the 2^bits elements
// that share every other bit), runs a DFT of size 2^bits over each line in shared memory, and
// multiplies element K of the line at column `col` (its low `lo` bits) by w_n^((col * K) << hi),
// `hi` being the bits the earlier passes took. Results stay at their line's positions until the
// last pass, which writes output index digit_reverse(row) + (K << hi): natural order, so no pass
// ever permutes bits on its own.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define COPROVE_NTT_HD __host__ __device__ __forceinline__
#else
#define COPROVE_NTT_HD inline
#endif

namespace coprove::cuda::detail {

/// The most butterfly levels one pass does (2^11 elements of 32 bytes per block in shared memory).
inline constexpr unsigned ntt_max_pass_bits = 11;
inline constexpr unsigned ntt_max_passes = 3;  // 3 * 11 >= 30
/// Elements one block holds in shared memory.
inline constexpr unsigned ntt_block_elements = 1u << ntt_max_pass_bits;

/// One pass of a schedule.
struct ntt_pass_shape {
  unsigned log_n;
  unsigned bits;        // butterfly levels: lines have 2^bits elements
  unsigned lo;          // log2 of the stride between consecutive elements of a line
  unsigned hi;          // levels done by the earlier passes
  unsigned log_lines;   // log2 of the lines one block takes
  unsigned first_bits;  // bits of pass 0 (the last pass groups lines by that digit)
  bool last;
  unsigned passes;
  unsigned pass_bits[ntt_max_passes];

  COPROVE_NTT_HD std::uint32_t blocks() const { return 1u << (log_n - bits - log_lines); }

  /// The line that slot g of block b takes.
  COPROVE_NTT_HD std::uint32_t line_of(std::uint32_t block, std::uint32_t g) const {
    if (!last || passes == 1) return (block << log_lines) | g;
    // The last pass gives a block lines that differ in the most significant digit, which the
    // output puts in the least significant place: every block writes runs of 2^log_lines.
    const unsigned below = hi - first_bits;
    const std::uint32_t block_lo = block & ((1u << below) - 1u);
    const std::uint32_t block_hi = block >> below;
    return (((block_hi << log_lines) | g) << below) | block_lo;
  }

  /// Where element t of `line` lives between passes.
  COPROVE_NTT_HD std::uint32_t position(std::uint32_t line, std::uint32_t t) const {
    const std::uint32_t row = line >> lo;
    const std::uint32_t col = line & ((1u << lo) - 1u);
    return (row << (bits + lo)) | (t << lo) | col;
  }

  /// Exponent of omega_n that multiplies output K of `line` (not the last pass).
  COPROVE_NTT_HD std::uint32_t twiddle_exponent(std::uint32_t line, std::uint32_t k) const {
    const std::uint32_t col = line & ((1u << lo) - 1u);
    return (col * k) << hi;
  }

  /// Entries of the boundary table of this pass (not the last): one per (output K, column).
  COPROVE_NTT_HD std::uint32_t boundary_entries() const { return 1u << (bits + lo); }

  /// Index of output K of `line` in the pass's boundary table, whose entry there is
  /// w_n^twiddle_exponent(line, K) (times a constant factor the plan may fold in). Consecutive
  /// columns are consecutive entries, as consecutive lines are consecutive threads in the store.
  COPROVE_NTT_HD std::uint32_t boundary_index(std::uint32_t line, std::uint32_t k) const {
    return (k << lo) | (line & ((1u << lo) - 1u));
  }

  /// Natural output index of output K of `line` (last pass only; there lo == 0 and line == row).
  COPROVE_NTT_HD std::uint32_t output_index(std::uint32_t line, std::uint32_t k) const {
    std::uint32_t out = k << hi;
    unsigned before = 0;
    for (unsigned q = 0; q + 1 < passes; ++q) {
      const unsigned b = pass_bits[q];
      const std::uint32_t digit = (line >> (hi - before - b)) & ((1u << b) - 1u);
      out |= digit << before;
      before += b;
    }
    return out;
  }
};

/// The passes of a transform of 2^log_n elements (1 <= log_n <= 30): ceil(log_n / 11) passes,
/// bits spread evenly but even where possible (a pass of even bits ends with the radix-4 step of
/// q == 1, whose twiddles are all 1 but one constant: 2^26 is 10/8/8, not 9/9/8), larger digits
/// first.
struct ntt_schedule {
  unsigned log_n = 0;
  unsigned passes = 0;
  unsigned bits[ntt_max_passes] = {};

  COPROVE_NTT_HD static ntt_schedule make(unsigned log_n) {
    ntt_schedule s;
    s.log_n = log_n;
    s.passes = (log_n + ntt_max_pass_bits - 1) / ntt_max_pass_bits;
    for (unsigned p = 0; p < s.passes; ++p) s.bits[p] = log_n / s.passes + (p < log_n % s.passes ? 1u : 0u);
    // Two odd digits become two even ones (one bit moves from the later to the earlier) while the
    // earlier stays within a block.
    for (;;) {
      unsigned first = s.passes, second = s.passes;
      for (unsigned p = 0; p < s.passes; ++p) {
        if (s.bits[p] % 2 == 0) continue;
        if (first == s.passes) first = p;
        else if (second == s.passes) second = p;
      }
      if (second == s.passes || s.bits[first] + 1 > ntt_max_pass_bits) break;
      ++s.bits[first];
      --s.bits[second];
    }
    for (unsigned p = 0; p < s.passes; ++p)  // larger digits first
      for (unsigned q = p + 1; q < s.passes; ++q)
        if (s.bits[q] > s.bits[p]) {
          const unsigned t = s.bits[p];
          s.bits[p] = s.bits[q];
          s.bits[q] = t;
        }
    return s;
  }

  COPROVE_NTT_HD ntt_pass_shape pass(unsigned p) const {
    ntt_pass_shape shape{};
    shape.log_n = log_n;
    shape.bits = bits[p];
    shape.passes = passes;
    for (unsigned q = 0; q < ntt_max_passes; ++q) shape.pass_bits[q] = bits[q];
    shape.hi = 0;
    for (unsigned q = 0; q < p; ++q) shape.hi += bits[q];
    shape.lo = log_n - shape.hi - shape.bits;
    shape.last = (p + 1 == passes);
    shape.first_bits = bits[0];
    // As many lines as fill a block, but never more than share a row (earlier passes: lines of a
    // block must be consecutive columns) or a leading digit (last pass), nor more than exist.
    unsigned log_lines = ntt_max_pass_bits - shape.bits;
    const unsigned limit = shape.last ? (passes == 1 ? 0u : bits[0]) : shape.lo;
    if (log_lines > limit) log_lines = limit;
    if (log_lines > log_n - shape.bits) log_lines = log_n - shape.bits;
    shape.log_lines = log_lines;
    return shape;
  }
};

}  // namespace coprove::cuda::detail
