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
#pragma once

#include <coprove/cuda/fq_device.cuh>

namespace coprove::cuda {

/// The field operations the point formulas use, per coordinate field.
template <class F>
struct field_ops;

template <>
struct field_ops<fq_device> {
  static __device__ __forceinline__ fq_device zero() { return fq_zero(); }
  static __device__ __forceinline__ fq_device one() { return fq_one(); }
  static __device__ __forceinline__ bool is_zero(const fq_device& a) { return fq_is_zero(a); }
  static __device__ __forceinline__ fq_device add(const fq_device& a, const fq_device& b) { return fq_add(a, b); }
  static __device__ __forceinline__ fq_device sub(const fq_device& a, const fq_device& b) { return fq_sub(a, b); }
  static __device__ __forceinline__ fq_device dbl(const fq_device& a) { return fq_dbl(a); }
  static __device__ __forceinline__ fq_device neg(const fq_device& a) { return fq_neg(a); }
  static __device__ __forceinline__ fq_device mul(const fq_device& a, const fq_device& b) { return fq_mul(a, b); }
  static __device__ __forceinline__ fq_device sqr(const fq_device& a) { return fq_sqr(a); }
  static __device__ __forceinline__ fq_device inv(const fq_device& a) { return fq_inv(a); }
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
  static __device__ __forceinline__ fq2_device sqr(const fq2_device& a) { return fq2_sqr(a); }
  static __device__ __forceinline__ fq2_device inv(const fq2_device& a) { return fq2_inv(a); }
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
  const F y3 = f::sub(f::mul(r, f::sub(qq, x3)), f::mul(p.y, ppp));
  return {x3, y3, f::mul(p.zz, pp), f::mul(p.zzz, ppp)};
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
