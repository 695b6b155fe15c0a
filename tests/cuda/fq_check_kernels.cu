// Fq and Fq2 on the GPU, one operation at a time, for the tests: values below 2p in, every result
// both as computed (below 2p, which the tests check) and brought to its canonical form (which the
// tests compare with field::fq and field::fq2); and the XYZZ addition and doubling, with the points
// in registers and in shared memory. Built into test_cuda (coprove_cuda_test_kernels), not the
// library.
#include "cuda_test_kernels.hpp"

#include <coprove/cuda/curve_device.cuh>
#include <coprove/cuda/error.hpp>

namespace coprove::cuda::testing {
namespace {

/// x^2 + b - a, `rounds` times from x = a: products of products, sums and differences of them.
__device__ __forceinline__ fq_device fq_chain(const fq_device& a, const fq_device& b, unsigned rounds) {
  fq_device x = a;
  for (unsigned k = 0; k < rounds; ++k) x = fq_sub(fq_add(fq_mul(x, x), b), a);
  return x;
}

__global__ void fq_ops_kernel(const fq_device* a, const fq_device* b, fq_device* out, std::uint32_t* zero,
                              std::size_t n, unsigned rounds) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const fq_device x = a[i], y = b[i];
  fq_device* o = out + i * fq_check_outputs;
  const fq_device product = fq_mul(x, y), sum = fq_add(x, y), difference = fq_sub(x, y);
  o[0] = product;
  o[1] = sum;
  o[2] = difference;
  o[3] = fq_reduce(product);
  o[4] = fq_reduce(sum);
  o[5] = fq_reduce(difference);
  o[6] = fq_reduce(fq_neg(x));
  o[7] = fq_reduce(fq_chain(x, y, rounds));
  zero[i] = fq_is_zero(x) ? 1u : 0u;
  if (i + 1 < n) {  // a[i] b[i] - a[i + 1] b[i + 1] with one reduction
    const fq_device difference_of_products = fq_mul_sub(x, y, a[i + 1], b[i + 1]);
    o[14] = difference_of_products;
    o[15] = fq_reduce(difference_of_products);
  }
  if (i % 2 == 0 && i + 1 < n) {  // (a[i], a[i + 1]) and (b[i], b[i + 1]) as elements of Fq2
    const fq2_device u{x, a[i + 1]}, v{y, b[i + 1]};
    const fq2_device uv = fq2_mul(u, v), uu = fq2_sqr(u);
    o[8] = uv.c0;
    o[9] = uv.c1;
    o[10] = fq_reduce(uv.c0);
    o[11] = fq_reduce(uv.c1);
    o[12] = fq_reduce(uu.c0);
    o[13] = fq_reduce(uu.c1);
  }
}

/// Point i's sum and double, each by the register formulas and by the shared-memory ones.
template <class F>
__global__ void point_ops_kernel(const xyzz_device<F>* p, const xyzz_device<F>* q, xyzz_device<F>* out,
                                 std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  extern __shared__ unsigned char shared_bytes[];
  volatile xyzz_device<F>* slots = reinterpret_cast<volatile xyzz_device<F>*>(shared_bytes) + 2 * threadIdx.x;
  const xyzz_device<F> a = p[i], b = q[i];
  xyzz_device<F>* o = out + 4 * i;
  o[0] = reduced(add_xyzz(a, b));
  store_shared(slots[0], a);
  store_shared(slots[1], b);
  add_xyzz_shared(slots[0], slots[1]);
  o[1] = reduced(load_shared(slots[0]));
  o[2] = reduced(double_xyzz(a));
  store_shared(slots[0], a);
  double_xyzz_shared(slots[0]);
  o[3] = reduced(load_shared(slots[0]));
}

template <class F>
void point_ops(const void* p, const void* q, void* out, std::size_t n, cudaStream_t stream) {
  constexpr unsigned threads = 32;
  point_ops_kernel<F><<<static_cast<unsigned>((n + threads - 1) / threads), threads,
                        2 * threads * sizeof(xyzz_device<F>), stream>>>(static_cast<const xyzz_device<F>*>(p),
                                                                        static_cast<const xyzz_device<F>*>(q),
                                                                        static_cast<xyzz_device<F>*>(out), n);
  COPROVE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void fq_ops_check(const void* a, const void* b, void* out, std::uint32_t* zero, std::size_t n, unsigned rounds,
                  cudaStream_t stream) {
  if (n == 0) return;
  constexpr unsigned threads = 128;
  fq_ops_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, stream>>>(
      static_cast<const fq_device*>(a), static_cast<const fq_device*>(b), static_cast<fq_device*>(out), zero, n,
      rounds);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void point_ops_check(msm_group group, const void* p, const void* q, void* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (group == msm_group::g1) {
    point_ops<fq_device>(p, q, out, n, stream);
  } else {
    point_ops<fq2_device>(p, q, out, n, stream);
  }
}

}  // namespace coprove::cuda::testing
