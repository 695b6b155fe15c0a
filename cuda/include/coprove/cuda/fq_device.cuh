// BLS12-381 Fq on the GPU: 12 x 32-bit little-endian limbs in Montgomery form (R = 2^384 mod p),
// byte for byte the layout of field::fq (six 64-bit limbs), and Fq2 = Fq[u] / (u^2 + 1) as
// field::fq2 lays it out (c0, then c1). Values are always fully reduced (< p), so an element is zero
// exactly when its limbs are, which the curve formulas rely on to detect P = Q and P = -Q.
//
// The multiplication is fr_device.cuh's word-by-word Montgomery product with PTX carry chains,
// widened to twelve limbs: the running value lives in two accumulators, one for the products of the
// even limbs of a (and of p) and one, a limb up, for those of the odd limbs, so that within one
// accumulator a row's products sit in disjoint limb pairs and each low half (mad.lo.cc) is followed
// by its high half (madc.hi.cc). The division by 2^32 of each round is a swap of the accumulators'
// roles. p < 2^381 leaves three spare bits in 384, so neither accumulator can carry out of its top
// limb (the same bound as for Fr, with more room). Every carry chain is a single asm statement: the
// carry flag does not survive between statements.
#pragma once

#include <coprove/field/fq_constants.hpp>

#include <cstdint>

namespace coprove::cuda {

// 16-byte aligned (the size is a multiple of 16), so that points load and store as 16-byte accesses.
struct alignas(16) fq_device {
  std::uint32_t limb[12];
};

struct fq2_device {
  fq_device c0, c1;
};

namespace fq_detail {

constexpr std::uint32_t low_word(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
constexpr std::uint32_t high_word(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }
/// Word k of a six-limb constant (little-endian 32-bit words).
constexpr std::uint32_t word_of(const std::uint64_t (&limbs)[6], int k) {
  return (k & 1) ? high_word(limbs[k / 2]) : low_word(limbs[k / 2]);
}
// p and R mod p (Montgomery one) as scalar constants, from field::constants (the one copy of p):
// device code may read constexpr scalars, not constexpr arrays.
inline constexpr std::uint32_t p0 = word_of(field::constants::fq_modulus, 0), p1 = word_of(field::constants::fq_modulus, 1),
                               p2 = word_of(field::constants::fq_modulus, 2), p3 = word_of(field::constants::fq_modulus, 3),
                               p4 = word_of(field::constants::fq_modulus, 4), p5 = word_of(field::constants::fq_modulus, 5),
                               p6 = word_of(field::constants::fq_modulus, 6), p7 = word_of(field::constants::fq_modulus, 7),
                               p8 = word_of(field::constants::fq_modulus, 8), p9 = word_of(field::constants::fq_modulus, 9),
                               p10 = word_of(field::constants::fq_modulus, 10), p11 = word_of(field::constants::fq_modulus, 11);
inline constexpr std::uint32_t one0 = word_of(field::constants::fq_r, 0), one1 = word_of(field::constants::fq_r, 1),
                               one2 = word_of(field::constants::fq_r, 2), one3 = word_of(field::constants::fq_r, 3),
                               one4 = word_of(field::constants::fq_r, 4), one5 = word_of(field::constants::fq_r, 5),
                               one6 = word_of(field::constants::fq_r, 6), one7 = word_of(field::constants::fq_r, 7),
                               one8 = word_of(field::constants::fq_r, 8), one9 = word_of(field::constants::fq_r, 9),
                               one10 = word_of(field::constants::fq_r, 10), one11 = word_of(field::constants::fq_r, 11);
static_assert(p0 == 0xffffaaabu && p11 == 0x1a0111eau, "p's 32-bit limbs");
/// Word k of p (k a compile-time constant after unrolling: folds to an immediate).
__host__ __device__ constexpr std::uint32_t p_word(int k) {
  return k == 0 ? p0 : k == 1 ? p1 : k == 2 ? p2 : k == 3 ? p3 : k == 4 ? p4 : k == 5 ? p5 : k == 6 ? p6
       : k == 7 ? p7 : k == 8 ? p8 : k == 9 ? p9 : k == 10 ? p10 : p11;
}
/// Word k of R mod p.
__host__ __device__ constexpr std::uint32_t one_word(int k) {
  return k == 0 ? one0 : k == 1 ? one1 : k == 2 ? one2 : k == 3 ? one3 : k == 4 ? one4 : k == 5 ? one5
       : k == 6 ? one6 : k == 7 ? one7 : k == 8 ? one8 : k == 9 ? one9 : k == 10 ? one10 : one11;
}
/// -p^-1 mod 2^32.
inline constexpr std::uint32_t p_inv = low_word(field::constants::fq_inv);
static_assert(p_inv == 0xfffcfffdu, "-p^-1 mod 2^32");
// The same in constant memory for the multiplication's operands (a uniform load, no immediates to
// materialise in registers).
static __constant__ std::uint32_t modulus_limbs[12] = {p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11};

/// One round of the product with limb b_i (see fr_detail::mul_round: e is the even accumulator, o
/// the odd one a limb up; later rounds enter with the roles swapped, o being the previous even
/// accumulator whose limb 0 the reduction cleared).
__device__ __forceinline__ void mul_round(std::uint32_t (&e)[12], std::uint32_t (&o)[12], const std::uint32_t (&a)[12],
                                          std::uint32_t bi, bool first) {
  if (first) {
#pragma unroll
    for (int j = 0; j < 12; j += 2) {
      o[j] = a[j + 1] * bi;
      o[j + 1] = __umulhi(a[j + 1], bi);
      e[j] = a[j] * bi;
      e[j + 1] = __umulhi(a[j], bi);
    }
  } else {
    // In place: each instruction reads o[j + 2] before the chain overwrites it.
    asm("add.cc.u32 %0, %0, %2;\n\t"
        "madc.lo.cc.u32 %1, %13, %19, %3;\n\t"
        "madc.hi.cc.u32 %2, %13, %19, %4;\n\t"
        "madc.lo.cc.u32 %3, %14, %19, %5;\n\t"
        "madc.hi.cc.u32 %4, %14, %19, %6;\n\t"
        "madc.lo.cc.u32 %5, %15, %19, %7;\n\t"
        "madc.hi.cc.u32 %6, %15, %19, %8;\n\t"
        "madc.lo.cc.u32 %7, %16, %19, %9;\n\t"
        "madc.hi.cc.u32 %8, %16, %19, %10;\n\t"
        "madc.lo.cc.u32 %9, %17, %19, %11;\n\t"
        "madc.hi.cc.u32 %10, %17, %19, %12;\n\t"
        "madc.lo.cc.u32 %11, %18, %19, 0;\n\t"
        "madc.hi.u32 %12, %18, %19, 0;"
        : "+r"(e[0]), "+r"(o[0]), "+r"(o[1]), "+r"(o[2]), "+r"(o[3]), "+r"(o[4]), "+r"(o[5]), "+r"(o[6]), "+r"(o[7]), "+r"(o[8]), "+r"(o[9]), "+r"(o[10]), "+r"(o[11])
        : "r"(a[1]), "r"(a[3]), "r"(a[5]), "r"(a[7]), "r"(a[9]), "r"(a[11]), "r"(bi));
    asm("mad.lo.cc.u32 %0, %13, %19, %0;\n\t"
        "madc.hi.cc.u32 %1, %13, %19, %1;\n\t"
        "madc.lo.cc.u32 %2, %14, %19, %2;\n\t"
        "madc.hi.cc.u32 %3, %14, %19, %3;\n\t"
        "madc.lo.cc.u32 %4, %15, %19, %4;\n\t"
        "madc.hi.cc.u32 %5, %15, %19, %5;\n\t"
        "madc.lo.cc.u32 %6, %16, %19, %6;\n\t"
        "madc.hi.cc.u32 %7, %16, %19, %7;\n\t"
        "madc.lo.cc.u32 %8, %17, %19, %8;\n\t"
        "madc.hi.cc.u32 %9, %17, %19, %9;\n\t"
        "madc.lo.cc.u32 %10, %18, %19, %10;\n\t"
        "madc.hi.cc.u32 %11, %18, %19, %11;\n\t"
        "addc.u32 %12, %12, 0;"
        : "+r"(e[0]), "+r"(e[1]), "+r"(e[2]), "+r"(e[3]), "+r"(e[4]), "+r"(e[5]), "+r"(e[6]), "+r"(e[7]), "+r"(e[8]), "+r"(e[9]), "+r"(e[10]), "+r"(e[11]), "+r"(o[11])
        : "r"(a[0]), "r"(a[2]), "r"(a[4]), "r"(a[6]), "r"(a[8]), "r"(a[10]), "r"(bi));
  }
  const std::uint32_t m = e[0] * p_inv;
  asm("mad.lo.cc.u32 %0, %12, %18, %0;\n\t"
      "madc.hi.cc.u32 %1, %12, %18, %1;\n\t"
      "madc.lo.cc.u32 %2, %13, %18, %2;\n\t"
      "madc.hi.cc.u32 %3, %13, %18, %3;\n\t"
      "madc.lo.cc.u32 %4, %14, %18, %4;\n\t"
      "madc.hi.cc.u32 %5, %14, %18, %5;\n\t"
      "madc.lo.cc.u32 %6, %15, %18, %6;\n\t"
      "madc.hi.cc.u32 %7, %15, %18, %7;\n\t"
      "madc.lo.cc.u32 %8, %16, %18, %8;\n\t"
      "madc.hi.cc.u32 %9, %16, %18, %9;\n\t"
      "madc.lo.cc.u32 %10, %17, %18, %10;\n\t"
      "madc.hi.u32 %11, %17, %18, %11;"
      : "+r"(o[0]), "+r"(o[1]), "+r"(o[2]), "+r"(o[3]), "+r"(o[4]), "+r"(o[5]), "+r"(o[6]), "+r"(o[7]), "+r"(o[8]), "+r"(o[9]), "+r"(o[10]), "+r"(o[11])
      : "r"(modulus_limbs[1]), "r"(modulus_limbs[3]), "r"(modulus_limbs[5]), "r"(modulus_limbs[7]), "r"(modulus_limbs[9]), "r"(modulus_limbs[11]), "r"(m));
  asm("mad.lo.cc.u32 %0, %13, %19, %0;\n\t"
      "madc.hi.cc.u32 %1, %13, %19, %1;\n\t"
      "madc.lo.cc.u32 %2, %14, %19, %2;\n\t"
      "madc.hi.cc.u32 %3, %14, %19, %3;\n\t"
      "madc.lo.cc.u32 %4, %15, %19, %4;\n\t"
      "madc.hi.cc.u32 %5, %15, %19, %5;\n\t"
      "madc.lo.cc.u32 %6, %16, %19, %6;\n\t"
      "madc.hi.cc.u32 %7, %16, %19, %7;\n\t"
      "madc.lo.cc.u32 %8, %17, %19, %8;\n\t"
      "madc.hi.cc.u32 %9, %17, %19, %9;\n\t"
      "madc.lo.cc.u32 %10, %18, %19, %10;\n\t"
      "madc.hi.cc.u32 %11, %18, %19, %11;\n\t"
      "addc.u32 %12, %12, 0;"
      : "+r"(e[0]), "+r"(e[1]), "+r"(e[2]), "+r"(e[3]), "+r"(e[4]), "+r"(e[5]), "+r"(e[6]), "+r"(e[7]), "+r"(e[8]), "+r"(e[9]), "+r"(e[10]), "+r"(e[11]), "+r"(o[11])
      : "r"(modulus_limbs[0]), "r"(modulus_limbs[2]), "r"(modulus_limbs[4]), "r"(modulus_limbs[6]), "r"(modulus_limbs[8]), "r"(modulus_limbs[10]), "r"(m));
}

/// d = x - y over 384 bits; returns 0xffffffff when that borrowed (x < y), else 0.
__device__ __forceinline__ std::uint32_t sub_words(const std::uint32_t (&x)[12], const std::uint32_t (&y)[12],
                                                   std::uint32_t (&d)[12]) {
  std::uint32_t borrow;
  asm("sub.cc.u32 %0, %13, %25;\n\t"
      "subc.cc.u32 %1, %14, %26;\n\t"
      "subc.cc.u32 %2, %15, %27;\n\t"
      "subc.cc.u32 %3, %16, %28;\n\t"
      "subc.cc.u32 %4, %17, %29;\n\t"
      "subc.cc.u32 %5, %18, %30;\n\t"
      "subc.cc.u32 %6, %19, %31;\n\t"
      "subc.cc.u32 %7, %20, %32;\n\t"
      "subc.cc.u32 %8, %21, %33;\n\t"
      "subc.cc.u32 %9, %22, %34;\n\t"
      "subc.cc.u32 %10, %23, %35;\n\t"
      "subc.cc.u32 %11, %24, %36;\n\t"
      "subc.u32 %12, 0, 0;"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7]), "=r"(d[8]), "=r"(d[9]), "=r"(d[10]), "=r"(d[11]), "=r"(borrow)
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]), "r"(x[8]), "r"(x[9]), "r"(x[10]), "r"(x[11]), "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]), "r"(y[8]), "r"(y[9]), "r"(y[10]), "r"(y[11]));
  return borrow;
}

/// out = d + m over 384 bits (no carry out: the callers' sums stay below 2^384).
__device__ __forceinline__ void add_words(const std::uint32_t (&d)[12], const std::uint32_t (&m)[12],
                                          std::uint32_t (&out)[12]) {
  asm("add.cc.u32 %0, %12, %24;\n\t"
      "addc.cc.u32 %1, %13, %25;\n\t"
      "addc.cc.u32 %2, %14, %26;\n\t"
      "addc.cc.u32 %3, %15, %27;\n\t"
      "addc.cc.u32 %4, %16, %28;\n\t"
      "addc.cc.u32 %5, %17, %29;\n\t"
      "addc.cc.u32 %6, %18, %30;\n\t"
      "addc.cc.u32 %7, %19, %31;\n\t"
      "addc.cc.u32 %8, %20, %32;\n\t"
      "addc.cc.u32 %9, %21, %33;\n\t"
      "addc.cc.u32 %10, %22, %34;\n\t"
      "addc.u32 %11, %23, %35;"
      : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3]), "=r"(out[4]), "=r"(out[5]), "=r"(out[6]), "=r"(out[7]), "=r"(out[8]), "=r"(out[9]), "=r"(out[10]), "=r"(out[11])
      : "r"(d[0]), "r"(d[1]), "r"(d[2]), "r"(d[3]), "r"(d[4]), "r"(d[5]), "r"(d[6]), "r"(d[7]), "r"(d[8]), "r"(d[9]), "r"(d[10]), "r"(d[11]), "r"(m[0]), "r"(m[1]), "r"(m[2]), "r"(m[3]), "r"(m[4]), "r"(m[5]), "r"(m[6]), "r"(m[7]), "r"(m[8]), "r"(m[9]), "r"(m[10]), "r"(m[11]));
}

/// x mod p for x < 2p.
__device__ __forceinline__ fq_device reduce_once(const std::uint32_t (&x)[12]) {
  std::uint32_t d[12];
  std::uint32_t p[12];
#pragma unroll
  for (int i = 0; i < 12; ++i) p[i] = p_word(i);
  const std::uint32_t borrow = sub_words(x, p, d);
  fq_device out;
#pragma unroll
  for (int i = 0; i < 12; ++i) out.limb[i] = borrow ? x[i] : d[i];
  return out;
}

}  // namespace fq_detail

__device__ __forceinline__ fq_device fq_zero() {
  fq_device z;
#pragma unroll
  for (int i = 0; i < 12; ++i) z.limb[i] = 0;
  return z;
}

/// The Montgomery form of 1.
__device__ __forceinline__ fq_device fq_one() {
  fq_device r;
#pragma unroll
  for (int i = 0; i < 12; ++i) r.limb[i] = fq_detail::one_word(i);
  return r;
}

__device__ __forceinline__ bool fq_is_zero(const fq_device& a) {
  std::uint32_t x = 0;
#pragma unroll
  for (int i = 0; i < 12; ++i) x |= a.limb[i];
  return x == 0;
}

/// a + b mod p.
__device__ __forceinline__ fq_device fq_add(const fq_device& a, const fq_device& b) {
  std::uint32_t s[12];
  asm("add.cc.u32 %0, %12, %24;\n\t"
      "addc.cc.u32 %1, %13, %25;\n\t"
      "addc.cc.u32 %2, %14, %26;\n\t"
      "addc.cc.u32 %3, %15, %27;\n\t"
      "addc.cc.u32 %4, %16, %28;\n\t"
      "addc.cc.u32 %5, %17, %29;\n\t"
      "addc.cc.u32 %6, %18, %30;\n\t"
      "addc.cc.u32 %7, %19, %31;\n\t"
      "addc.cc.u32 %8, %20, %32;\n\t"
      "addc.cc.u32 %9, %21, %33;\n\t"
      "addc.cc.u32 %10, %22, %34;\n\t"
      "addc.u32 %11, %23, %35;"
      : "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3]), "=r"(s[4]), "=r"(s[5]), "=r"(s[6]), "=r"(s[7]), "=r"(s[8]), "=r"(s[9]), "=r"(s[10]), "=r"(s[11])
      : "r"(a.limb[0]), "r"(a.limb[1]), "r"(a.limb[2]), "r"(a.limb[3]), "r"(a.limb[4]), "r"(a.limb[5]), "r"(a.limb[6]), "r"(a.limb[7]), "r"(a.limb[8]), "r"(a.limb[9]), "r"(a.limb[10]), "r"(a.limb[11]), "r"(b.limb[0]), "r"(b.limb[1]), "r"(b.limb[2]), "r"(b.limb[3]), "r"(b.limb[4]), "r"(b.limb[5]), "r"(b.limb[6]), "r"(b.limb[7]), "r"(b.limb[8]), "r"(b.limb[9]), "r"(b.limb[10]), "r"(b.limb[11]));
  return fq_detail::reduce_once(s);  // a + b < 2p < 2^384
}

/// a - b mod p.
__device__ __forceinline__ fq_device fq_sub(const fq_device& a, const fq_device& b) {
  std::uint32_t d[12];
  const std::uint32_t borrow = fq_detail::sub_words(a.limb, b.limb, d);
  std::uint32_t m[12];
#pragma unroll
  for (int i = 0; i < 12; ++i) m[i] = fq_detail::p_word(i) & borrow;  // borrowed: add p back
  fq_device out;
  fq_detail::add_words(d, m, out.limb);
  return out;
}

/// -a mod p (zero stays zero).
__device__ __forceinline__ fq_device fq_neg(const fq_device& a) { return fq_sub(fq_zero(), a); }

/// 2a mod p.
__device__ __forceinline__ fq_device fq_dbl(const fq_device& a) { return fq_add(a, a); }

/// a * b * 2^-384 mod p (the Montgomery product); both operands fully reduced, the result too.
__device__ __forceinline__ fq_device fq_mul(const fq_device& a, const fq_device& b) {
  using namespace fq_detail;
  std::uint32_t x[12];
  std::uint32_t y[12];
#pragma unroll
  for (int i = 0; i < 12; i += 2) {
    mul_round(x, y, a.limb, b.limb[i], i == 0);
    mul_round(y, x, a.limb, b.limb[i + 1], false);
  }
  // After the last round T = Y + 2^32 X with Y_0 = 0, so T / 2^32 = X + (Y >> 32) < 2p.
  std::uint32_t t[12];
  asm("add.cc.u32 %0, %12, %24;\n\t"
      "addc.cc.u32 %1, %13, %25;\n\t"
      "addc.cc.u32 %2, %14, %26;\n\t"
      "addc.cc.u32 %3, %15, %27;\n\t"
      "addc.cc.u32 %4, %16, %28;\n\t"
      "addc.cc.u32 %5, %17, %29;\n\t"
      "addc.cc.u32 %6, %18, %30;\n\t"
      "addc.cc.u32 %7, %19, %31;\n\t"
      "addc.cc.u32 %8, %20, %32;\n\t"
      "addc.cc.u32 %9, %21, %33;\n\t"
      "addc.cc.u32 %10, %22, %34;\n\t"
      "addc.u32 %11, %23, 0;"
      : "=r"(t[0]), "=r"(t[1]), "=r"(t[2]), "=r"(t[3]), "=r"(t[4]), "=r"(t[5]), "=r"(t[6]), "=r"(t[7]), "=r"(t[8]), "=r"(t[9]), "=r"(t[10]), "=r"(t[11])
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]), "r"(x[8]), "r"(x[9]), "r"(x[10]), "r"(x[11]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]), "r"(y[8]), "r"(y[9]), "r"(y[10]), "r"(y[11]));
  return reduce_once(t);
}

__device__ __forceinline__ fq_device fq_sqr(const fq_device& a) { return fq_mul(a, a); }

namespace fq_detail {
// p - 2, the exponent of Fermat's inverse (p's low word is 0xffffaaab: no borrow past it).
static __constant__ std::uint32_t p_minus_2[12] = {p0 - 2, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11};
}  // namespace fq_detail

/// 1 / a = a^(p - 2) (0 for 0): 380 squarings and a product per set bit, left to right. For work
/// that is done once (the precomputed bases), not on a hot path.
__device__ __noinline__ inline fq_device fq_inv(const fq_device& a) {
  fq_device r = fq_one();
  for (int bit = 380; bit >= 0; --bit) {
    r = fq_sqr(r);
    if ((fq_detail::p_minus_2[bit / 32] >> (bit % 32)) & 1u) r = fq_mul(r, a);
  }
  return r;
}

// Fq2 = Fq[u] / (u^2 + 1).

__device__ __forceinline__ fq2_device fq2_zero() { return {fq_zero(), fq_zero()}; }
__device__ __forceinline__ fq2_device fq2_one() { return {fq_one(), fq_zero()}; }
__device__ __forceinline__ bool fq2_is_zero(const fq2_device& a) { return fq_is_zero(a.c0) && fq_is_zero(a.c1); }
__device__ __forceinline__ fq2_device fq2_add(const fq2_device& a, const fq2_device& b) {
  return {fq_add(a.c0, b.c0), fq_add(a.c1, b.c1)};
}
__device__ __forceinline__ fq2_device fq2_sub(const fq2_device& a, const fq2_device& b) {
  return {fq_sub(a.c0, b.c0), fq_sub(a.c1, b.c1)};
}
__device__ __forceinline__ fq2_device fq2_neg(const fq2_device& a) { return {fq_neg(a.c0), fq_neg(a.c1)}; }
__device__ __forceinline__ fq2_device fq2_dbl(const fq2_device& a) { return {fq_dbl(a.c0), fq_dbl(a.c1)}; }
/// Karatsuba: three products of Fq.
__device__ __forceinline__ fq2_device fq2_mul(const fq2_device& a, const fq2_device& b) {
  const fq_device v0 = fq_mul(a.c0, b.c0);
  const fq_device v1 = fq_mul(a.c1, b.c1);
  const fq_device s = fq_mul(fq_add(a.c0, a.c1), fq_add(b.c0, b.c1));
  return {fq_sub(v0, v1), fq_sub(fq_sub(s, v0), v1)};
}
/// (c0 + c1)(c0 - c1) + 2 c0 c1 u: two products.
__device__ __forceinline__ fq2_device fq2_sqr(const fq2_device& a) {
  return {fq_mul(fq_add(a.c0, a.c1), fq_sub(a.c0, a.c1)), fq_mul(fq_dbl(a.c0), a.c1)};
}
/// 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2) (0 for 0).
__device__ __forceinline__ fq2_device fq2_inv(const fq2_device& a) {
  const fq_device t = fq_inv(fq_add(fq_sqr(a.c0), fq_sqr(a.c1)));
  return {fq_mul(a.c0, t), fq_neg(fq_mul(a.c1, t))};
}

}  // namespace coprove::cuda
