// G1 and G2 points on the GPU for the MSM: affine bases and XYZZ accumulators (x = X/ZZ,
// y = Y/ZZZ, ZZ^3 = ZZZ^2), written once as templates over the coordinate field (fq_device for G1,
// fq2_device for G2), with the formulas of the CPU's detail/short_weierstrass.hpp: madd-2008-s,
// add-2008-s, mdbl-2008-s-1 and dbl-2008-s-1 (a = 0). Every special case is handled in the
// formula, not left to the caller: the identity on either side, P = Q (a doubling inside an
// addition, which equal bases in one bucket produce) and P = -Q (the identity).
//
// An affine base with x = y = 0 is the identity: (0, 0) is on neither curve (y^2 = x^3 + 4 and
// y^2 = x^3 + 4(u + 1)), so no point of the group is mistaken for it. The XYZZ identity has ZZ = 0.
// The XYZZ layout is field::g1_xyzz's and field::g2_xyzz's byte for byte (x, y, zz, zzz).
// Coordinates are below 2p, not reduced (fq_device.cuh); `reduced` gives the canonical point.
#pragma once

#include <coprove/cuda/fq_device.cuh>

#include <cstdint>

namespace coprove::cuda {

/// The field operations the point formulas use, per coordinate field.
template <class F>
struct field_ops;

// G1's products are functions the kernels call, as G2's are: G1's level-0 kernel then holds each
// product's machine code once (2,738 instructions instead of 6,984; 118 registers, no stack frame;
// ptxas 13.0), and on an H100 G1's MSM at 2^24 points over 13 copies took 101.1 ms instead of 108.6
// with them inline (docs/history/msm.md): inlined ten times the loop outgrew what the SM's instruction
// caches supply.
#define COPROVE_G1_PRODUCT __device__ __noinline__ inline
namespace g1_products {
COPROVE_G1_PRODUCT fq_device mul(const fq_device a, const fq_device b) { return fq_mul(a, b); }
COPROVE_G1_PRODUCT fq_device sqr(const fq_device a) { return fq_sqr(a); }
/// a b - c d, with one reduction.
COPROVE_G1_PRODUCT fq_device mul_sub(const fq_device a, const fq_device b, const fq_device c, const fq_device d) {
  return fq_mul_sub(a, b, c, d);
}
}  // namespace g1_products

template <>
struct field_ops<fq_device> {
  static __device__ __forceinline__ fq_device zero() { return fq_zero(); }
  static __device__ __forceinline__ fq_device one() { return fq_one(); }
  static __device__ __forceinline__ bool is_zero(const fq_device& a) { return fq_is_zero(a); }
  static __device__ __forceinline__ fq_device add(const fq_device& a, const fq_device& b) { return fq_add(a, b); }
  static __device__ __forceinline__ fq_device sub(const fq_device& a, const fq_device& b) { return fq_sub(a, b); }
  static __device__ __forceinline__ fq_device dbl(const fq_device& a) { return fq_dbl(a); }
  static __device__ __forceinline__ fq_device neg(const fq_device& a) { return fq_neg(a); }
  static __device__ __forceinline__ fq_device mul(const fq_device& a, const fq_device& b) {
    return g1_products::mul(a, b);
  }
  /// a b - c d, with one reduction.
  static __device__ __forceinline__ fq_device mul_sub(const fq_device& a, const fq_device& b, const fq_device& c,
                                                      const fq_device& d) {
    return g1_products::mul_sub(a, b, c, d);
  }
  static __device__ __forceinline__ fq_device sqr(const fq_device& a) { return g1_products::sqr(a); }
  static __device__ __forceinline__ fq_device inv(const fq_device& a) { return fq_inv(a); }
  static __device__ __forceinline__ fq_device reduce(const fq_device& a) { return fq_reduce(a); }
};

template <>
struct field_ops<fq2_device> {
  static __device__ __forceinline__ fq2_device zero() { return fq2_zero(); }
  static __device__ __forceinline__ fq2_device one() { return fq2_one(); }
  static __device__ __forceinline__ bool is_zero(const fq2_device& a) { return fq2_is_zero(a); }
  static __device__ __forceinline__ fq2_device add(const fq2_device& a, const fq2_device& b) { return fq2_add(a, b); }
  static __device__ __forceinline__ fq2_device sub(const fq2_device& a, const fq2_device& b) { return fq2_sub(a, b); }
  static __device__ __forceinline__ fq2_device dbl(const fq2_device& a) { return fq2_dbl(a); }
  static __device__ __forceinline__ fq2_device neg(const fq2_device& a) { return fq2_neg(a); }
  static __device__ __forceinline__ fq2_device mul(const fq2_device& a, const fq2_device& b) { return fq2_mul(a, b); }
  static __device__ __forceinline__ fq2_device mul_sub(const fq2_device& a, const fq2_device& b, const fq2_device& c,
                                                       const fq2_device& d) {
    return fq2_sub(fq2_mul(a, b), fq2_mul(c, d));
  }
  static __device__ __forceinline__ fq2_device sqr(const fq2_device& a) { return fq2_sqr(a); }
  static __device__ __forceinline__ fq2_device inv(const fq2_device& a) { return fq2_inv(a); }
  static __device__ __forceinline__ fq2_device reduce(const fq2_device& a) { return fq2_reduce(a); }
};

/// An affine point; x = y = 0 is the identity.
template <class F>
struct affine_device {
  F x, y;
};

/// An XYZZ point; zz = 0 is the identity.
template <class F>
struct xyzz_device {
  F x, y, zz, zzz;
};

template <class F>
__device__ __forceinline__ bool is_identity(const affine_device<F>& p) {
  return field_ops<F>::is_zero(p.x) && field_ops<F>::is_zero(p.y);
}

template <class F>
__device__ __forceinline__ bool is_identity(const xyzz_device<F>& p) {
  return field_ops<F>::is_zero(p.zz);
}

/// The point with canonical coordinates (each < p, as the host's field types hold them): what a
/// kernel stores where the host reads it.
template <class F>
__device__ __forceinline__ affine_device<F> reduced(const affine_device<F>& p) {
  return {field_ops<F>::reduce(p.x), field_ops<F>::reduce(p.y)};
}

template <class F>
__device__ __forceinline__ xyzz_device<F> reduced(const xyzz_device<F>& p) {
  using f = field_ops<F>;
  return {f::reduce(p.x), f::reduce(p.y), f::reduce(p.zz), f::reduce(p.zzz)};
}

template <class F>
__device__ __forceinline__ xyzz_device<F> xyzz_identity() {
  using f = field_ops<F>;
  return {f::one(), f::one(), f::zero(), f::zero()};
}

/// 2P for an affine P (mdbl-2008-s-1); the identity doubles to the identity.
template <class F>
__device__ __forceinline__ xyzz_device<F> double_affine(const affine_device<F>& p) {
  using f = field_ops<F>;
  if (is_identity(p)) return xyzz_identity<F>();
  const F u = f::dbl(p.y);
  const F v = f::sqr(u);
  const F w = f::mul(u, v);
  const F s = f::mul(p.x, v);
  const F xx = f::sqr(p.x);
  const F m = f::add(f::dbl(xx), xx);
  const F x3 = f::sub(f::sqr(m), f::dbl(s));
  const F y3 = f::sub(f::mul(m, f::sub(s, x3)), f::mul(w, p.y));
  return {x3, y3, v, w};
}

/// 2P (dbl-2008-s-1).
template <class F>
__device__ __forceinline__ xyzz_device<F> double_xyzz(const xyzz_device<F>& p) {
  using f = field_ops<F>;
  if (is_identity(p)) return p;
  const F u = f::dbl(p.y);
  const F v = f::sqr(u);
  const F w = f::mul(u, v);
  const F s = f::mul(p.x, v);
  const F xx = f::sqr(p.x);
  const F m = f::add(f::dbl(xx), xx);
  const F x3 = f::sub(f::sqr(m), f::dbl(s));
  const F y3 = f::sub(f::mul(m, f::sub(s, x3)), f::mul(w, p.y));
  return {x3, y3, f::mul(v, p.zz), f::mul(w, p.zzz)};
}

/// P + Q for an affine Q (madd-2008-s): the bucket step.
template <class F>
__device__ __forceinline__ xyzz_device<F> add_mixed(const xyzz_device<F>& p, const affine_device<F>& q) {
  using f = field_ops<F>;
  if (is_identity(q)) return p;
  if (is_identity(p)) return {q.x, q.y, f::one(), f::one()};
  const F u2 = f::mul(q.x, p.zz);
  const F s2 = f::mul(q.y, p.zzz);
  const F pd = f::sub(u2, p.x);
  const F r = f::sub(s2, p.y);
  if (f::is_zero(pd)) {
    if (f::is_zero(r)) return double_affine(q);  // P = Q
    return xyzz_identity<F>();                   // P = -Q
  }
  const F pp = f::sqr(pd);
  const F ppp = f::mul(pd, pp);
  const F qq = f::mul(p.x, pp);
  const F x3 = f::sub(f::sub(f::sqr(r), ppp), f::dbl(qq));
  const F y3 = f::mul_sub(r, f::sub(qq, x3), p.y, ppp);
  return {x3, y3, f::mul(p.zz, pp), f::mul(p.zzz, ppp)};
}

/// A coordinate of a point in shared memory, read where it is used: 16-byte loads that are asm
/// volatile, so each use loads it anew and the value is not held in registers between uses.
template <class F>
__device__ __forceinline__ F load_shared(const volatile F& v) {
  static_assert(sizeof(F) % 16 == 0);
  F out;
  std::uint32_t* to = reinterpret_cast<std::uint32_t*>(&out);
  const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(const_cast<const F*>(&v)));
#pragma unroll
  for (int i = 0; i < int(sizeof(F) / 16); ++i)
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(to[4 * i]), "=r"(to[4 * i + 1]), "=r"(to[4 * i + 2]), "=r"(to[4 * i + 3])
                 : "r"(address + 16 * i));
  return out;
}

template <class F>
__device__ __forceinline__ void store_shared(volatile F& v, const F& value) {
  static_assert(sizeof(F) % 16 == 0);
  const std::uint32_t* from = reinterpret_cast<const std::uint32_t*>(&value);
  const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(const_cast<const F*>(&v)));
#pragma unroll
  for (int i = 0; i < int(sizeof(F) / 16); ++i)
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
                 :
                 : "r"(address + 16 * i), "r"(from[4 * i]), "r"(from[4 * i + 1]), "r"(from[4 * i + 2]),
                   "r"(from[4 * i + 3])
                 : "memory");
}

template <class F>
__device__ __forceinline__ void store_shared(volatile xyzz_device<F>& p, const xyzz_device<F>& value) {
  store_shared(p.x, value.x);
  store_shared(p.y, value.y);
  store_shared(p.zz, value.zz);
  store_shared(p.zzz, value.zzz);
}

template <class F>
__device__ __forceinline__ xyzz_device<F> load_shared(const volatile xyzz_device<F>& p) {
  return {load_shared(p.x), load_shared(p.y), load_shared(p.zz), load_shared(p.zzz)};
}

/// acc += Q for an affine Q, acc in shared memory (madd-2008-s as add_mixed): each coordinate of
/// acc is read where the formula uses it and written once it is final, so the accumulator takes
/// no registers between its uses (G1's bucket kernel: 134 registers instead of 168).
template <class F>
__device__ __forceinline__ void add_mixed_shared(volatile xyzz_device<F>& acc, const affine_device<F>& q) {
  using f = field_ops<F>;
  if (is_identity(q)) return;
  if (f::is_zero(load_shared(acc.zz))) {
    store_shared(acc, xyzz_device<F>{q.x, q.y, f::one(), f::one()});
    return;
  }
  const F pd = f::sub(f::mul(q.x, load_shared(acc.zz)), load_shared(acc.x));
  const F r = f::sub(f::mul(q.y, load_shared(acc.zzz)), load_shared(acc.y));
  if (f::is_zero(pd)) {
    store_shared(acc, f::is_zero(r) ? double_affine(q) : xyzz_identity<F>());  // P = Q, P = -Q
    return;
  }
  const F pp = f::sqr(pd);
  const F ppp = f::mul(pd, pp);
  store_shared(acc.zz, f::mul(load_shared(acc.zz), pp));
  store_shared(acc.zzz, f::mul(load_shared(acc.zzz), ppp));
  const F qq = f::mul(load_shared(acc.x), pp);
  const F x3 = f::sub(f::sub(f::sqr(r), ppp), f::dbl(qq));
  store_shared(acc.x, x3);
  store_shared(acc.y, f::mul_sub(r, f::sub(qq, x3), load_shared(acc.y), ppp));
}

/// acc = 2 acc (dbl-2008-s-1), acc in shared memory, read where the formula uses it.
template <class F>
__device__ __forceinline__ void double_xyzz_shared(volatile xyzz_device<F>& acc) {
  using f = field_ops<F>;
  if (f::is_zero(load_shared(acc.zz))) return;
  const F u = f::dbl(load_shared(acc.y));
  const F v = f::sqr(u);
  const F w = f::mul(u, v);
  const F s = f::mul(load_shared(acc.x), v);
  const F xx = f::sqr(load_shared(acc.x));
  const F m = f::add(f::dbl(xx), xx);
  store_shared(acc.zz, f::mul(v, load_shared(acc.zz)));
  const F x3 = f::sub(f::sqr(m), f::dbl(s));
  const F y3 = f::sub(f::mul(m, f::sub(s, x3)), f::mul(w, load_shared(acc.y)));
  store_shared(acc.zzz, f::mul(w, load_shared(acc.zzz)));
  store_shared(acc.x, x3);
  store_shared(acc.y, y3);
}

/// acc += q (add-2008-s as add_xyzz), both in shared memory: each coordinate is read where the
/// formula uses it and acc's are written once final, so that neither point takes registers
/// between its uses (G2's add_xyzz with both points in registers spills at 255 registers; in this
/// form the window weighting's kernel needs none).
template <class F>
__device__ __forceinline__ void add_xyzz_shared(volatile xyzz_device<F>& acc, const volatile xyzz_device<F>& q) {
  using f = field_ops<F>;
  if (f::is_zero(load_shared(q.zz))) return;
  if (f::is_zero(load_shared(acc.zz))) {
    store_shared(acc, load_shared(q));
    return;
  }
  const F u1 = f::mul(load_shared(acc.x), load_shared(q.zz));
  const F pd = f::sub(f::mul(load_shared(q.x), load_shared(acc.zz)), u1);
  const F s1 = f::mul(load_shared(acc.y), load_shared(q.zzz));
  const F r = f::sub(f::mul(load_shared(q.y), load_shared(acc.zzz)), s1);
  if (f::is_zero(pd)) {
    if (f::is_zero(r)) {
      double_xyzz_shared(acc);  // P = Q
    } else {
      store_shared(acc, xyzz_identity<F>());  // P = -Q
    }
    return;
  }
  const F pp = f::sqr(pd);
  const F ppp = f::mul(pd, pp);
  store_shared(acc.zz, f::mul(f::mul(load_shared(acc.zz), load_shared(q.zz)), pp));
  store_shared(acc.zzz, f::mul(f::mul(load_shared(acc.zzz), load_shared(q.zzz)), ppp));
  const F qq = f::mul(u1, pp);
  const F x3 = f::sub(f::sub(f::sqr(r), ppp), f::dbl(qq));
  store_shared(acc.x, x3);
  store_shared(acc.y, f::mul_sub(r, f::sub(qq, x3), s1, ppp));
}

/// P + Q (add-2008-s).
template <class F>
__device__ __forceinline__ xyzz_device<F> add_xyzz(const xyzz_device<F>& p, const xyzz_device<F>& q) {
  using f = field_ops<F>;
  if (is_identity(q)) return p;
  if (is_identity(p)) return q;
  const F u1 = f::mul(p.x, q.zz);
  const F u2 = f::mul(q.x, p.zz);
  const F s1 = f::mul(p.y, q.zzz);
  const F s2 = f::mul(q.y, p.zzz);
  const F pd = f::sub(u2, u1);
  const F r = f::sub(s2, s1);
  if (f::is_zero(pd)) {
    if (f::is_zero(r)) return double_xyzz(p);  // P = Q
    return xyzz_identity<F>();                 // P = -Q
  }
  const F pp = f::sqr(pd);
  const F ppp = f::mul(pd, pp);
  const F qq = f::mul(u1, pp);
  const F x3 = f::sub(f::sub(f::sqr(r), ppp), f::dbl(qq));
  const F y3 = f::sub(f::mul(r, f::sub(qq, x3)), f::mul(s1, ppp));
  return {x3, y3, f::mul(f::mul(p.zz, q.zz), pp), f::mul(f::mul(p.zzz, q.zzz), ppp)};
}

}  // namespace coprove::cuda
