// A w, B w and C w on the GPU: the cached constraint matrices (a circuit's PCE, in compressed
// sparse rows) times an assignment w, into the three evaluation vectors the quotient reads, with
// the values of r1cs::pce_matrices::evaluate bit for bit. The host then writes and copies only w
// (a third or less of a, b and c). Plain words and device pointers cross this header, so that it
// needs neither prover types nor nvcc.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace coprove::cuda {

/// One matrix on the device: rows + 1 offsets into the entries, and each entry's column (into w)
/// and coefficient (into the coefficient table).
struct csr_device {
  const std::uint32_t* offsets = nullptr;
  const std::uint32_t* columns = nullptr;
  const std::uint32_t* coefficients = nullptr;
};

/// Coefficient indices that need no multiplication (r1cs::pce_coefficient_one / _minus_one).
inline constexpr std::uint32_t spmv_coefficient_one = 0;
inline constexpr std::uint32_t spmv_coefficient_minus_one = 1;

/// For m < 3 and i < num_rows: d_out[m][i] = the sum over row i of matrix m of coefficient *
/// w[column] (column 0 holds the constant one); zero for num_rows <= i < n. d_table holds the
/// coefficients (32-byte field elements in Montgomery form), d_witness w; all are device memory of
/// the stream's device. Enqueued on `stream`. Throws std::invalid_argument for num_rows > n or a
/// null pointer, coprove::cuda::cuda_error when the launch fails.
void spmv_abc_async(const csr_device (&matrices)[3], const void* d_table, const void* d_witness,
                    std::size_t num_rows, std::size_t n, void* const (&d_out)[3], cudaStream_t stream);

}  // namespace coprove::cuda
