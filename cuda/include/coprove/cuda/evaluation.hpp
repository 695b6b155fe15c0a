// Polynomials at a point zeta on the GPU: the evaluation record's a(zeta), b(zeta), c(zeta) from
// evaluations over the domain (barycentric) and h(zeta) from coefficients (Horner), with the same
// values as field::evaluate_lagrange_many and field::evaluate_coefficients, bit for bit. Field
// elements cross this header as their raw Montgomery words (the bytes of field::fr), so that it
// needs neither prover types nor nvcc.
//
// Both reductions are two kernels: every thread of the first folds an interleaved slice of the
// input (thread g takes i = g, g + G, g + 2G, ...), each block reduces its threads in shared
// memory, and one block reduces the blocks and writes the results. The barycentric sum
// (zeta^n - 1)/n * sum_i f_i w^i / (zeta - w^i) is carried as a fraction N/D (a thread folds
// N/D + f w / (zeta - w) = (N (zeta - w) + f w D) / (D (zeta - w)), nine multiplications a point
// for three polynomials), so the whole evaluation takes a single field inversion, in the last
// block. A zeta on the domain (zeta = w^i) is caught where it appears and gives the entries at i.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace coprove::cuda {

/// A field element's Montgomery words, as field::fr stores them (32 bytes, little-endian).
struct field_words {
  std::uint64_t limbs[4];
};

/// The words of any 32-byte field type laid out like field::fr.
template <class Field>
field_words to_field_words(const Field& x) noexcept {
  static_assert(sizeof(Field) == sizeof(field_words), "a field element is 32 bytes");
  field_words w;
  std::memcpy(&w, &x, sizeof w);
  return w;
}

/// The largest number of polynomials evaluate_lagrange_async takes at once.
inline constexpr unsigned max_lagrange_polynomials = 3;

/// Device scratch one evaluation over 2^log_n points needs (either call below).
std::size_t evaluation_scratch_bytes(unsigned log_n) noexcept;

/// d_out[p] = the value at zeta of the polynomial of degree < n = 2^log_n whose evaluations at
/// omega^i are d_polys[p][i], for p < count (1..3). omega is the domain's generator, n_inv = 1/n.
/// Enqueued on `stream`; d_polys[p] (n elements each), d_out (count elements) and d_scratch
/// (evaluation_scratch_bytes(log_n)) are device memory of the stream's device, and d_scratch must
/// not be used by other work until this finishes. Throws std::invalid_argument for a bad count,
/// log_n above 30 or a null pointer, coprove::cuda::cuda_error when a launch fails.
void evaluate_lagrange_async(const void* const* d_polys, unsigned count, unsigned log_n,
                             const field_words& omega, const field_words& n_inv,
                             const field_words& zeta, void* d_out, void* d_scratch,
                             cudaStream_t stream);

/// d_out[0] = sum_i d_coeffs[i] * zeta^i over n = 2^log_n coefficients. Same rules as above.
void evaluate_coefficients_async(const void* d_coeffs, unsigned log_n, const field_words& zeta,
                                 void* d_out, void* d_scratch, cudaStream_t stream);

}  // namespace coprove::cuda
