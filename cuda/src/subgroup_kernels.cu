// The subgroup tests' kernels (see subgroup.hpp): the CPU's formulas, a point a thread, over the
// MSM's device layout of the points.
#include <coprove/cuda/detail/subgroup_launch.hpp>

#include <coprove/cuda/curve_device.cuh>
#include <coprove/cuda/error.hpp>
#include <coprove/field/fq_constants.hpp>

#include <cstdint>
#include <cstring>

namespace coprove::cuda {
namespace {

constexpr std::uint64_t x_abs = field::constants::bls_x_abs;
static_assert(x_abs >> 63 == 1, "|x| has its top bit at 63");

template <class F>
__device__ __forceinline__ xyzz_device<F> add_any(const xyzz_device<F>& p, const affine_device<F>& q) {
  return add_mixed(p, q);
}
template <class F>
__device__ __forceinline__ xyzz_device<F> add_any(const xyzz_device<F>& p, const xyzz_device<F>& q) {
  return add_xyzz(p, q);
}
template <class F>
__device__ __forceinline__ xyzz_device<F> as_xyzz(const affine_device<F>& p) {
  return {p.x, p.y, field_ops<F>::one(), field_ops<F>::one()};
}
template <class F>
__device__ __forceinline__ xyzz_device<F> as_xyzz(const xyzz_device<F>& p) {
  return p;
}

/// [|x|]P, left to right from |x|'s top bit (P not the identity).
template <class F, class Point>
__device__ xyzz_device<F> times_x_abs(const Point& p) {
  xyzz_device<F> acc = as_xyzz(p);
  for (int bit = 62; bit >= 0; --bit) {
    acc = double_xyzz(acc);
    if ((x_abs >> bit) & 1u) acc = add_any(acc, p);
  }
  return acc;
}

/// True when the XYZZ point r is the affine point (x, -y).
template <class F>
__device__ __forceinline__ bool is_negation_of(const xyzz_device<F>& r, const F& x, const F& y) {
  using f = field_ops<F>;
  if (is_identity(r)) return false;
  return f::is_zero(f::sub(r.x, f::mul(x, r.zz))) && f::is_zero(f::add(r.y, f::mul(y, r.zzz)));
}

// G1: endo(P) = (beta x, y) = -[x^2]P = -[|x|]([|x|]P).
__global__ void __launch_bounds__(128) g1_subgroup_kernel(const affine_device<fq_device>* points, std::size_t n,
                                                          std::size_t first_index, fq_device beta,
                                                          unsigned long long* first_bad) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const affine_device<fq_device> p = points[i];
  if (is_identity(p)) return;
  const xyzz_device<fq_device> x2p = times_x_abs<fq_device>(times_x_abs<fq_device>(p));
  if (!is_negation_of(x2p, fq_mul(p.x, beta), p.y)) atomicMin(first_bad, first_index + i);
}

// G2: psi(P) = (conj(x) cx, conj(y) cy) = [x]P = -[|x|]P.
__global__ void __launch_bounds__(128) g2_subgroup_kernel(const affine_device<fq2_device>* points, std::size_t n,
                                                          std::size_t first_index, fq2_device cx, fq2_device cy,
                                                          unsigned long long* first_bad) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const affine_device<fq2_device> p = points[i];
  if (is_identity(p)) return;
  const xyzz_device<fq2_device> xp = times_x_abs<fq2_device>(p);
  const fq2_device conj_x{p.x.c0, fq_neg(p.x.c1)}, conj_y{p.y.c0, fq_neg(p.y.c1)};
  if (!is_negation_of(xp, fq2_mul(conj_x, cx), fq2_mul(conj_y, cy))) atomicMin(first_bad, first_index + i);
}

template <class F>
F from_host(const void* bytes) {
  F out;
  std::memcpy(&out, bytes, sizeof out);
  return out;
}

constexpr unsigned threads = 128;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace

namespace detail {

void launch_g1_subgroup_test(const void* points, std::size_t n, std::size_t first_index, const void* beta,
                             unsigned long long* first_bad, cudaStream_t stream) {
  if (n == 0) return;
  g1_subgroup_kernel<<<blocks_for(n), threads, 0, stream>>>(static_cast<const affine_device<fq_device>*>(points), n,
                                                            first_index, from_host<fq_device>(beta), first_bad);
  COPROVE_CUDA_CHECK_LAUNCH();
}

void launch_g2_subgroup_test(const void* points, std::size_t n, std::size_t first_index, const void* cx,
                             const void* cy, unsigned long long* first_bad, cudaStream_t stream) {
  if (n == 0) return;
  g2_subgroup_kernel<<<blocks_for(n), threads, 0, stream>>>(static_cast<const affine_device<fq2_device>*>(points), n,
                                                            first_index, from_host<fq2_device>(cx),
                                                            from_host<fq2_device>(cy), first_bad);
  COPROVE_CUDA_CHECK_LAUNCH();
}

}  // namespace detail
}  // namespace coprove::cuda
