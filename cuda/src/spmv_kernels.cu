// The SpMV kernel and its launcher: one thread per row of one matrix (grid y picks A, B or C). A
// row's terms are summed in order, each as r1cs::pce_matrices::evaluate forms it: coefficient one
// takes w[column], the constant column takes the coefficient, minus one negates, any other
// coefficient multiplies. Every operation leaves a fully reduced value, so the sums equal the
// CPU's bit for bit. Rows past the matrices' (the domain's padding) are written as zero.
#include <coprove/cuda/spmv.hpp>

#include <coprove/cuda/error.hpp>
#include <coprove/cuda/fr_device.cuh>

#include <stdexcept>
#include <string>

namespace coprove::cuda {
namespace {

constexpr unsigned threads_per_block = 256;

struct spmv_args {
  csr_device m[3];
  const fr_device* table;
  const fr_device* w;
  fr_device* out[3];
  std::size_t num_rows, n;
};

__device__ __forceinline__ fr_device fr_zero_value() { return fr_device{{0, 0, 0, 0, 0, 0, 0, 0}}; }

__device__ __forceinline__ fr_device spmv_term(std::uint32_t column, std::uint32_t coefficient, const fr_device* w,
                                               const fr_device* table) {
  if (coefficient == spmv_coefficient_one) return fr_load(w + column);
  if (column == 0) return fr_load_ldg(table + coefficient);
  if (coefficient == spmv_coefficient_minus_one) return fr_sub(fr_zero_value(), fr_load(w + column));
  return fr_mul(fr_load(w + column), fr_load_ldg(table + coefficient));
}

__global__ void __launch_bounds__(threads_per_block) spmv_kernel(const spmv_args args) {
  const std::size_t row = static_cast<std::size_t>(blockIdx.x) * threads_per_block + threadIdx.x;
  if (row >= args.n) return;
  const unsigned which = blockIdx.y;
  fr_device* const out = args.out[which];
  if (row >= args.num_rows) {
    fr_store(out + row, fr_zero_value());
    return;
  }
  const csr_device m = args.m[which];
  const std::uint32_t begin = m.offsets[row];
  const std::uint32_t end = m.offsets[row + 1];
  fr_device acc = fr_zero_value();
  for (std::uint32_t e = begin; e < end; ++e) {
    const fr_device t = spmv_term(__ldg(m.columns + e), __ldg(m.coefficients + e), args.w, args.table);
    acc = e == begin ? t : fr_add(acc, t);
  }
  fr_store(out + row, acc);
}

}  // namespace

void spmv_abc_async(const csr_device (&matrices)[3], const void* d_table, const void* d_witness,
                    std::size_t num_rows, std::size_t n, void* const (&d_out)[3], cudaStream_t stream) {
  if (num_rows > n)
    throw std::invalid_argument("spmv_abc_async: " + std::to_string(num_rows) + " rows exceed the domain of " +
                                std::to_string(n));
  if (d_table == nullptr || d_witness == nullptr)
    throw std::invalid_argument("spmv_abc_async: null table or witness");
  spmv_args args{};
  for (int k = 0; k < 3; ++k) {
    if (d_out[k] == nullptr || (num_rows > 0 && (matrices[k].offsets == nullptr)))
      throw std::invalid_argument("spmv_abc_async: null matrix or output");
    args.m[k] = matrices[k];
    args.out[k] = static_cast<fr_device*>(d_out[k]);
  }
  args.table = static_cast<const fr_device*>(d_table);
  args.w = static_cast<const fr_device*>(d_witness);
  args.num_rows = num_rows;
  args.n = n;
  if (n == 0) return;
  const dim3 grid(static_cast<unsigned>((n + threads_per_block - 1) / threads_per_block), 3);
  spmv_kernel<<<grid, threads_per_block, 0, stream>>>(args);
  COPROVE_CUDA_TRY(cudaGetLastError());
}

}  // namespace coprove::cuda
