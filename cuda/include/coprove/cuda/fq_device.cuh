// BLS12-381 Fq on the GPU: 12 x 32-bit little-endian limbs in Montgomery form (R = 2^384 mod p),
// byte for byte the layout of field::fq (six 64-bit limbs), and Fq2 = Fq[u] / (u^2 + 1) as
// field::fq2 lays it out (c0, then c1).
//
// Values are kept below 2p, not below p: every operation takes operands in [0, 2p) and returns one
// there, and only fq_reduce brings a value to its canonical form (< p). The product then needs no
// final comparison with p (4p < 2^384, so the Montgomery product of two values below 2p is below
// 2p: T / R < 4p^2 / R + p < 2p), which saves about a twentieth of its instructions; the sum and
// the difference compare with 2p instead of p, at the same cost. An element is zero when its limbs
// are 0 or p (fq_is_zero), which the curve formulas use to detect P = Q and P = -Q. Whatever
// leaves the device for the host (the MSM's results, field::fq's layout) is reduced first.
//
// The multiplication is fr_device.cuh's word-by-word Montgomery product with PTX carry chains,
// widened to twelve limbs: the running value lives in two accumulators, one for the products of the
// even limbs of a (and of p) and one, a limb up, for those of the odd limbs, so that within one
// accumulator a row's products sit in disjoint limb pairs and each low half (mad.lo.cc) is followed
// by its high half (madc.hi.cc). The division by 2^32 of each round is a swap of the accumulators'
// roles. With operands below 2p < 2^382 the running value stays below 2^416 (before a round's
// division by 2^32 it is below 3p + 2^32 (2p + p) < 2^415), so the two accumulators, each carry of
// the even one passed into the odd one's top limb, never carry out of it. Every carry chain is a
// single asm statement: the carry flag does not survive between statements.
#pragma once

#include <coprove/field/fq_constants.hpp>

#include <cstdint>

// How the products are compiled. The Fq2 product and square are functions the kernels call
// (measured on an H200, docs/history/msm.md: G2's MSM 5 % faster than with them inline, where G2's
// bucket step inlined about 28 Fq products, some 330 KB of machine code, and its later levels
// spilled); -DCOPROVE_GPU_FQ2_INLINE builds them inline, for measuring. Their operands are passed by
// value, so that a call passes them in registers. Inside them the Fq product is inline; G1's point
// formulas call theirs (curve_device.cuh, g1_products).
#if defined(COPROVE_GPU_FQ2_INLINE)
#define COPROVE_FQ2_PRODUCT __device__ __forceinline__
#else
#define COPROVE_FQ2_PRODUCT __device__ __noinline__ inline
#endif

// Products by Karatsuba, for measuring (on an H200 G1's MSM was 17 % slower with them and G2's 6 %:
// more instructions than the loop's instruction supply keeps up with, docs/history/msm.md):
// -DCOPROVE_GPU_FQ_KARATSUBA turns on both halves, -DCOPROVE_GPU_G1_KARATSUBA only G1's
// (fq_mul_karatsuba, fq_sqr_karatsuba and fq_mul_sub_karatsuba in curve_device.cuh's
// field_ops<fq_device>; -DCOPROVE_GPU_G1_KARATSUBA_SQR and _MUL_SUB one of them alone),
// -DCOPROVE_GPU_G2_FQ2_LAZY only G2's (fq2_mul_lazy, fq2_sqr over fq_mul_karatsuba).
#if defined(COPROVE_GPU_FQ_KARATSUBA)
#ifndef COPROVE_GPU_G1_KARATSUBA
#define COPROVE_GPU_G1_KARATSUBA 1
#endif
#ifndef COPROVE_GPU_G2_FQ2_LAZY
#define COPROVE_GPU_G2_FQ2_LAZY 1
#endif
#endif
#if defined(COPROVE_GPU_G1_KARATSUBA)
#ifndef COPROVE_GPU_G1_KARATSUBA_SQR
#define COPROVE_GPU_G1_KARATSUBA_SQR 1
#endif
#ifndef COPROVE_GPU_G1_KARATSUBA_MUL_SUB
#define COPROVE_GPU_G1_KARATSUBA_MUL_SUB 1
#endif
#endif

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

/// a[0..11] += (l[0] + l[1] 2^64 + ... + l[5] 2^320) b as one carry chain; carry += its carry out.
__device__ __forceinline__ void chain_row(std::uint32_t* a, std::uint32_t& carry, const std::uint32_t (&l)[6],
                                          std::uint32_t b) {
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
      : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3]), "+r"(a[4]), "+r"(a[5]), "+r"(a[6]), "+r"(a[7]), "+r"(a[8]), "+r"(a[9]), "+r"(a[10]), "+r"(a[11]), "+r"(carry)
      : "r"(l[0]), "r"(l[1]), "r"(l[2]), "r"(l[3]), "r"(l[4]), "r"(l[5]), "r"(b));
}

/// chain_row(we, ce, le, b), then chain_row(wo, co, lo, b), as one carry chain. ce cannot overflow
/// (the callers' carry words hold a few carries at most), so the flag entering the second part is 0;
/// linking the parts through it keeps ptxas from interleaving two independent chains, whose carry
/// flags it would otherwise park in registers once its seven predicates run out (scripts/sass_mix.py
/// counts those moves).
__device__ __forceinline__ void chain_row_pair(std::uint32_t* we, std::uint32_t& ce, std::uint32_t* wo,
                                               std::uint32_t& co, const std::uint32_t (&le)[6],
                                               const std::uint32_t (&lo)[6], std::uint32_t b) {
  asm("mad.lo.cc.u32 %0, %26, %38, %0;\n\t"
      "madc.hi.cc.u32 %1, %26, %38, %1;\n\t"
      "madc.lo.cc.u32 %2, %27, %38, %2;\n\t"
      "madc.hi.cc.u32 %3, %27, %38, %3;\n\t"
      "madc.lo.cc.u32 %4, %28, %38, %4;\n\t"
      "madc.hi.cc.u32 %5, %28, %38, %5;\n\t"
      "madc.lo.cc.u32 %6, %29, %38, %6;\n\t"
      "madc.hi.cc.u32 %7, %29, %38, %7;\n\t"
      "madc.lo.cc.u32 %8, %30, %38, %8;\n\t"
      "madc.hi.cc.u32 %9, %30, %38, %9;\n\t"
      "madc.lo.cc.u32 %10, %31, %38, %10;\n\t"
      "madc.hi.cc.u32 %11, %31, %38, %11;\n\t"
      "addc.cc.u32 %12, %12, 0;\n\t"
      "madc.lo.cc.u32 %13, %32, %38, %13;\n\t"
      "madc.hi.cc.u32 %14, %32, %38, %14;\n\t"
      "madc.lo.cc.u32 %15, %33, %38, %15;\n\t"
      "madc.hi.cc.u32 %16, %33, %38, %16;\n\t"
      "madc.lo.cc.u32 %17, %34, %38, %17;\n\t"
      "madc.hi.cc.u32 %18, %34, %38, %18;\n\t"
      "madc.lo.cc.u32 %19, %35, %38, %19;\n\t"
      "madc.hi.cc.u32 %20, %35, %38, %20;\n\t"
      "madc.lo.cc.u32 %21, %36, %38, %21;\n\t"
      "madc.hi.cc.u32 %22, %36, %38, %22;\n\t"
      "madc.lo.cc.u32 %23, %37, %38, %23;\n\t"
      "madc.hi.cc.u32 %24, %37, %38, %24;\n\t"
      "addc.u32 %25, %25, 0;"
      : "+r"(we[0]), "+r"(we[1]), "+r"(we[2]), "+r"(we[3]), "+r"(we[4]), "+r"(we[5]), "+r"(we[6]), "+r"(we[7]), "+r"(we[8]), "+r"(we[9]), "+r"(we[10]), "+r"(we[11]), "+r"(ce),
        "+r"(wo[0]), "+r"(wo[1]), "+r"(wo[2]), "+r"(wo[3]), "+r"(wo[4]), "+r"(wo[5]), "+r"(wo[6]), "+r"(wo[7]), "+r"(wo[8]), "+r"(wo[9]), "+r"(wo[10]), "+r"(wo[11]), "+r"(co)
      : "r"(le[0]), "r"(le[1]), "r"(le[2]), "r"(le[3]), "r"(le[4]), "r"(le[5]), "r"(lo[0]), "r"(lo[1]), "r"(lo[2]), "r"(lo[3]), "r"(lo[4]), "r"(lo[5]), "r"(b));
}

/// The limbs of x at even (odd) positions.
__device__ __forceinline__ void split_limbs(const std::uint32_t (&x)[12], std::uint32_t (&even)[6],
                                            std::uint32_t (&odd)[6]) {
#pragma unroll
  for (int k = 0; k < 6; ++k) {
    even[k] = x[2 * k];
    odd[k] = x[2 * k + 1];
  }
}

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
    const std::uint32_t a_even[6] = {a[0], a[2], a[4], a[6], a[8], a[10]};
    chain_row(e, o[11], a_even, bi);
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
  const std::uint32_t p_even[6] = {modulus_limbs[0], modulus_limbs[2], modulus_limbs[4],
                                    modulus_limbs[6], modulus_limbs[8], modulus_limbs[10]};
  chain_row(e, o[11], p_even, m);
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

/// Word k of 2p (p < 2^381: no carry out of the top word).
__host__ __device__ constexpr std::uint32_t two_p_word(int k) {
  return (p_word(k) << 1) | (k == 0 ? 0u : p_word(k - 1) >> 31);
}

/// x - m when x >= m, else x, for m = p (x mod p for x < 2p) or m = 2p (TwoP: x mod 2p for x < 4p).
template <bool TwoP>
__device__ __forceinline__ fq_device subtract_if_above(const std::uint32_t (&x)[12]) {
  std::uint32_t d[12];
  std::uint32_t m[12];
#pragma unroll
  for (int i = 0; i < 12; ++i) m[i] = TwoP ? two_p_word(i) : p_word(i);
  const std::uint32_t borrow = sub_words(x, m, d);
  fq_device out;
#pragma unroll
  for (int i = 0; i < 12; ++i) out.limb[i] = borrow ? x[i] : d[i];
  return out;
}

/// Whether x equals p (the other limbs of zero below 2p).
__device__ __forceinline__ bool equals_p(const std::uint32_t (&x)[12]) {
  std::uint32_t diff = 0;
#pragma unroll
  for (int i = 0; i < 12; ++i) diff |= x[i] ^ p_word(i);
  return diff == 0;
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

/// Whether a value below 2p is 0 mod p: its limbs are 0 or p.
__device__ __forceinline__ bool fq_is_zero(const fq_device& a) {
  std::uint32_t x = 0;
#pragma unroll
  for (int i = 0; i < 12; ++i) x |= a.limb[i];
  return x == 0 || fq_detail::equals_p(a.limb);
}

/// The canonical value (< p) of a value below 2p: what the host's field::fq expects.
__device__ __forceinline__ fq_device fq_reduce(const fq_device& a) {
  return fq_detail::subtract_if_above<false>(a.limb);
}

/// a + b mod p, below 2p.
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
  return fq_detail::subtract_if_above<true>(s);  // a + b < 4p < 2^384
}

/// a - b mod p, below 2p.
__device__ __forceinline__ fq_device fq_sub(const fq_device& a, const fq_device& b) {
  std::uint32_t d[12];
  const std::uint32_t borrow = fq_detail::sub_words(a.limb, b.limb, d);
  std::uint32_t m[12];
#pragma unroll
  for (int i = 0; i < 12; ++i) m[i] = fq_detail::two_p_word(i) & borrow;  // borrowed: add 2p back
  fq_device out;
  fq_detail::add_words(d, m, out.limb);
  return out;
}

/// -a mod p, below 2p (0 stays 0).
__device__ __forceinline__ fq_device fq_neg(const fq_device& a) { return fq_sub(fq_zero(), a); }

/// 2a mod p, below 2p.
__device__ __forceinline__ fq_device fq_dbl(const fq_device& a) { return fq_add(a, a); }

/// a * b * 2^-384 mod p (the Montgomery product), below 2p for operands below 2p.
__device__ __forceinline__ fq_device fq_mul(const fq_device a, const fq_device b) {
  using namespace fq_detail;
  std::uint32_t x[12];
  std::uint32_t y[12];
#pragma unroll
  for (int i = 0; i < 12; i += 2) {
    mul_round(x, y, a.limb, b.limb[i], i == 0);
    mul_round(y, x, a.limb, b.limb[i + 1], false);
  }
  // After the last round T = Y + 2^32 X with Y_0 = 0, so T / 2^32 = X + (Y >> 32) < 2p.
  fq_device t;
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
      : "=r"(t.limb[0]), "=r"(t.limb[1]), "=r"(t.limb[2]), "=r"(t.limb[3]), "=r"(t.limb[4]), "=r"(t.limb[5]), "=r"(t.limb[6]), "=r"(t.limb[7]), "=r"(t.limb[8]), "=r"(t.limb[9]), "=r"(t.limb[10]), "=r"(t.limb[11])
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]), "r"(x[8]), "r"(x[9]), "r"(x[10]), "r"(x[11]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]), "r"(y[8]), "r"(y[9]), "r"(y[10]), "r"(y[11]));
  return t;
}

__device__ __forceinline__ fq_device fq_sqr(const fq_device& a) { return fq_mul(a, a); }

// a b - c d with one Montgomery reduction instead of two (the bucket step's Y3 in G1). The two
// products are summed 768 bits wide as a b + (2p - c) d, which is congruent, not negative and below
// 8 p^2 < p 2^384, so that its reduction is below 2p like fq_mul's. The wide value is kept in two
// accumulators (fq_split): a row's products of the even limbs of x land in disjoint word pairs
// that start at an even word of one accumulator, those of the odd limbs in the other one (a word
// up), so every pair ptxas fuses into a wide multiply-add stays at one register pair for all rows
// (as fq_mul's even and odd accumulators do). A chain's carry goes into the word above it, which
// no earlier row has reached; in the reduction, where the words above already hold the product,
// into carry words of their own (k), added once at the end.
namespace fq_detail {

/// A value of up to 768 bits: sum e[j] 2^(32 j) + sum o[j] 2^(32 (j + 1)).
struct fq_split {
  std::uint32_t e[25];
  std::uint32_t o[23];
};

/// t += x y_i 2^(32 i), row i of a product (t's words that row i reaches first hold at most the
/// carries of earlier rows, so the chains' carry words cannot overflow for up to eight products).
__device__ __forceinline__ void product_row(fq_split& t, const std::uint32_t (&even)[6], const std::uint32_t (&odd)[6],
                                            std::uint32_t yi, int i) {
  if (i % 2 == 0) {
    chain_row(t.e + i, t.e[i + 12], even, yi);
    chain_row(t.o + i, t.o[i + 12], odd, yi);
  } else {
    chain_row(t.o + i - 1, t.o[i + 11], even, yi);
    chain_row(t.e + i + 1, t.e[i + 13], odd, yi);
  }
}

/// t 2^-384 mod p for t below 8 p^2: below 2p. Round i merges the word at position i (e[i], o[i - 1]
/// and the carry of merging position i - 1), clears it with m p, m = word (-p^-1) mod 2^32, and
/// leaves the carries of its chains at positions i + 12 and i + 13 in k. Linked: a round's two chains
/// as one (chain_row_pair), which the Karatsuba products need: apart, ptxas interleaves them with the
/// products' chains (G1's level-0 kernel with -DCOPROVE_GPU_FQ_KARATSUBA: 443 carry-flag moves
/// instead of 18). fq_mul_sub keeps them apart, as it ran on the H200.
template <bool Linked = false>
__device__ __forceinline__ fq_device split_reduce(fq_split& t) {
  std::uint32_t p_even[6], p_odd[6];
#pragma unroll
  for (int k = 0; k < 6; ++k) {
    p_even[k] = modulus_limbs[2 * k];
    p_odd[k] = modulus_limbs[2 * k + 1];
  }
  std::uint32_t k[25];
#pragma unroll
  for (int j = 12; j < 25; ++j) k[j] = 0;
  std::uint32_t carry = 0;  // out of the merge of the position below
#pragma unroll
  for (int i = 0; i < 12; ++i) {
    std::uint32_t w = t.e[0];
    if (i > 0) {
      std::uint32_t out;
      asm("add.cc.u32 %0, %2, %3;\n\t"
          "addc.u32 %1, 0, 0;\n\t"
          "add.cc.u32 %0, %0, %4;\n\t"
          "addc.u32 %1, %1, 0;"
          : "=r"(w), "=r"(out)
          : "r"(t.e[i]), "r"(t.o[i - 1]), "r"(carry));
      carry = out;
    }
    const std::uint32_t m = w * p_inv;
    if (i % 2 == 0) {
      t.e[i] = w;
      if constexpr (Linked) {
        chain_row_pair(t.e + i, k[i + 12], t.o + i, k[i + 13], p_even, p_odd, m);
      } else {
        chain_row(t.e + i, k[i + 12], p_even, m);
        chain_row(t.o + i, k[i + 13], p_odd, m);
      }
    } else {
      t.o[i - 1] = w;
      if constexpr (Linked) {
        chain_row_pair(t.o + i - 1, k[i + 12], t.e + i + 1, k[i + 13], p_even, p_odd, m);
      } else {
        chain_row(t.o + i - 1, k[i + 12], p_even, m);
        chain_row(t.e + i + 1, k[i + 13], p_odd, m);
      }
    }
  }
  // Positions 12..23: e[12..23] + o[11..22] + k[12..23] and the last merge's carry; nothing reaches
  // position 24 (the total stays below 2^767).
  k[12] += carry;
  std::uint32_t high_e[12], high_o[12], carries[12], sum[12];
#pragma unroll
  for (int j = 0; j < 12; ++j) {
    high_e[j] = t.e[12 + j];
    high_o[j] = t.o[11 + j];
    carries[j] = k[12 + j];
  }
  add_words(high_e, high_o, sum);
  fq_device out;
  add_words(sum, carries, out.limb);
  return out;
}

}  // namespace fq_detail

/// a b - c d mod p, below 2p, for operands below 2p: one reduction of a b + (2p - c) d.
__device__ __forceinline__ fq_device fq_mul_sub(const fq_device& a, const fq_device& b, const fq_device& c,
                                                const fq_device& d) {
  using namespace fq_detail;
  std::uint32_t two_p[12], c_neg[12];
#pragma unroll
  for (int j = 0; j < 12; ++j) two_p[j] = two_p_word(j);
  sub_words(two_p, c.limb, c_neg);  // 2p - c > 0: no borrow
  std::uint32_t a_even[6], a_odd[6], c_even[6], c_odd[6];
  split_limbs(a.limb, a_even, a_odd);
  split_limbs(c_neg, c_even, c_odd);
  fq_split t;
#pragma unroll
  for (int j = 0; j < 25; ++j) t.e[j] = 0;
#pragma unroll
  for (int j = 0; j < 23; ++j) t.o[j] = 0;
#pragma unroll
  for (int i = 0; i < 12; ++i) {
    product_row(t, a_even, a_odd, b.limb[i], i);
    product_row(t, c_even, c_odd, d.limb[i], i);
  }
  return split_reduce(t);
}

namespace fq_detail {

// The product by one level of Karatsuba on the 192-bit halves (fq_mul_karatsuba, fq_sqr_karatsuba,
// fq_mul_sub_karatsuba, and in Fq2 fq2_mul_lazy; the point formulas use them when built with
// -DCOPROVE_GPU_FQ_KARATSUBA, for measuring): with
// x = x0 + 2^192 x1 and y likewise, x y = z0 + 2^192 z1 + 2^384 z2 where z0 = x0 y0, z2 = x1 y1 and
// z1 = (x0 + x1)(y0 + y1) - z0 - z2: three products of six words (108 word products) instead of
// 144, for about 120 more additions, which run on the integer ALU pipe, not on the multiplier that
// G1's bucket step keeps 84 % busy (docs/history/msm.md). The 768-bit product is then reduced by
// split_reduce (144 word products and 12 for the quotient digits, as fq_mul). The halves' sums have
// 193 bits: their products are taken over the low 192 bits and the top bits added back
// (2^192 (cx sy + cy sx) + 2^384 cx cy). scripts/fq_ptx_replay.py replays the chains word by word.

/// Row b of a six-word product in two accumulators: we[0..5] += (le[0] + le[1] 2^64 + le[2] 2^128) b
/// and ce += its carry, then wo[0..5] += (lo[0] + ...) b and co += its carry, as one carry chain (as
/// chain_row_pair).
__device__ __forceinline__ void chain_half_row_pair(std::uint32_t* we, std::uint32_t& ce, std::uint32_t* wo,
                                                    std::uint32_t& co, const std::uint32_t (&le)[3],
                                                    const std::uint32_t (&lo)[3], std::uint32_t b) {
  asm("mad.lo.cc.u32 %0, %14, %20, %0;\n\t"
      "madc.hi.cc.u32 %1, %14, %20, %1;\n\t"
      "madc.lo.cc.u32 %2, %15, %20, %2;\n\t"
      "madc.hi.cc.u32 %3, %15, %20, %3;\n\t"
      "madc.lo.cc.u32 %4, %16, %20, %4;\n\t"
      "madc.hi.cc.u32 %5, %16, %20, %5;\n\t"
      "addc.cc.u32 %6, %6, 0;\n\t"
      "madc.lo.cc.u32 %7, %17, %20, %7;\n\t"
      "madc.hi.cc.u32 %8, %17, %20, %8;\n\t"
      "madc.lo.cc.u32 %9, %18, %20, %9;\n\t"
      "madc.hi.cc.u32 %10, %18, %20, %10;\n\t"
      "madc.lo.cc.u32 %11, %19, %20, %11;\n\t"
      "madc.hi.cc.u32 %12, %19, %20, %12;\n\t"
      "addc.u32 %13, %13, 0;"
      : "+r"(we[0]), "+r"(we[1]), "+r"(we[2]), "+r"(we[3]), "+r"(we[4]), "+r"(we[5]), "+r"(ce),
        "+r"(wo[0]), "+r"(wo[1]), "+r"(wo[2]), "+r"(wo[3]), "+r"(wo[4]), "+r"(wo[5]), "+r"(co)
      : "r"(le[0]), "r"(le[1]), "r"(le[2]), "r"(lo[0]), "r"(lo[1]), "r"(lo[2]), "r"(b));
}

/// z = x y for six-word x and y (twelve words). Row i's products of the even limbs of x land in
/// disjoint word pairs of e from word i (i even) or of o (i odd: o is a word up), those of the odd
/// limbs in the other accumulator, as in product_row; each row's carries go to words no earlier row
/// reached, so none overflows. The first row is plain 64-bit products (no additions).
__device__ __forceinline__ void product_half(const std::uint32_t (&x)[6], const std::uint32_t (&y)[6],
                                             std::uint32_t (&z)[12]) {
  const std::uint32_t xe[3] = {x[0], x[2], x[4]}, xo[3] = {x[1], x[3], x[5]};
  std::uint32_t e[13], o[11];  // z = sum e[j] 2^(32 j) + sum o[j] 2^(32 (j + 1))
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    const std::uint64_t pe = std::uint64_t(xe[k]) * y[0], po = std::uint64_t(xo[k]) * y[0];
    e[2 * k] = static_cast<std::uint32_t>(pe);
    e[2 * k + 1] = static_cast<std::uint32_t>(pe >> 32);
    o[2 * k] = static_cast<std::uint32_t>(po);
    o[2 * k + 1] = static_cast<std::uint32_t>(po >> 32);
  }
#pragma unroll
  for (int j = 6; j < 13; ++j) e[j] = 0;
#pragma unroll
  for (int j = 6; j < 11; ++j) o[j] = 0;
#pragma unroll
  for (int i = 1; i < 6; ++i) {
    if (i % 2 == 0) {
      chain_half_row_pair(e + i, e[i + 6], o + i, o[i + 6], xe, xo, y[i]);
    } else {
      chain_half_row_pair(o + i - 1, o[i + 5], e + i + 1, e[i + 7], xe, xo, y[i]);
    }
  }
  // z = e + 2^32 o; z < 2^384, so e[12] is 0 and nothing carries out of word 11.
  z[0] = e[0];
  asm("add.cc.u32 %0, %11, %22;\n\t"
      "addc.cc.u32 %1, %12, %23;\n\t"
      "addc.cc.u32 %2, %13, %24;\n\t"
      "addc.cc.u32 %3, %14, %25;\n\t"
      "addc.cc.u32 %4, %15, %26;\n\t"
      "addc.cc.u32 %5, %16, %27;\n\t"
      "addc.cc.u32 %6, %17, %28;\n\t"
      "addc.cc.u32 %7, %18, %29;\n\t"
      "addc.cc.u32 %8, %19, %30;\n\t"
      "addc.cc.u32 %9, %20, %31;\n\t"
      "addc.u32 %10, %21, %32;"
      : "=r"(z[1]), "=r"(z[2]), "=r"(z[3]), "=r"(z[4]), "=r"(z[5]), "=r"(z[6]), "=r"(z[7]), "=r"(z[8]), "=r"(z[9]), "=r"(z[10]), "=r"(z[11])
      : "r"(e[1]), "r"(e[2]), "r"(e[3]), "r"(e[4]), "r"(e[5]), "r"(e[6]), "r"(e[7]), "r"(e[8]), "r"(e[9]), "r"(e[10]), "r"(e[11]),
        "r"(o[0]), "r"(o[1]), "r"(o[2]), "r"(o[3]), "r"(o[4]), "r"(o[5]), "r"(o[6]), "r"(o[7]), "r"(o[8]), "r"(o[9]), "r"(o[10]));
}

/// s = (low six words of x) + (high six words of x) mod 2^192; returns the carry out (0 or 1).
__device__ __forceinline__ std::uint32_t halves_sum(const std::uint32_t (&x)[12], std::uint32_t (&s)[6]) {
  std::uint32_t carry;
  asm("add.cc.u32 %0, %7, %13;\n\t"
      "addc.cc.u32 %1, %8, %14;\n\t"
      "addc.cc.u32 %2, %9, %15;\n\t"
      "addc.cc.u32 %3, %10, %16;\n\t"
      "addc.cc.u32 %4, %11, %17;\n\t"
      "addc.cc.u32 %5, %12, %18;\n\t"
      "addc.u32 %6, 0, 0;"
      : "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3]), "=r"(s[4]), "=r"(s[5]), "=r"(carry)
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]), "r"(x[8]), "r"(x[9]), "r"(x[10]), "r"(x[11]));
  return carry;
}

/// t = z0 + 2^192 z1 + 2^384 z2 for a product below 2^768 (no carry out).
__device__ __forceinline__ void assemble_karatsuba(const std::uint32_t (&z0)[12], const std::uint32_t (&z1)[13],
                                                   const std::uint32_t (&z2)[12], std::uint32_t (&t)[24]) {
#pragma unroll
  for (int k = 0; k < 6; ++k) t[k] = z0[k];
  asm("add.cc.u32 %0, %18, %30;\n\t"
      "addc.cc.u32 %1, %19, %31;\n\t"
      "addc.cc.u32 %2, %20, %32;\n\t"
      "addc.cc.u32 %3, %21, %33;\n\t"
      "addc.cc.u32 %4, %22, %34;\n\t"
      "addc.cc.u32 %5, %23, %35;\n\t"
      "addc.cc.u32 %6, %24, %36;\n\t"
      "addc.cc.u32 %7, %25, %37;\n\t"
      "addc.cc.u32 %8, %26, %38;\n\t"
      "addc.cc.u32 %9, %27, %39;\n\t"
      "addc.cc.u32 %10, %28, %40;\n\t"
      "addc.cc.u32 %11, %29, %41;\n\t"
      "addc.cc.u32 %12, %42, %43;\n\t"
      "addc.cc.u32 %13, %44, 0;\n\t"
      "addc.cc.u32 %14, %45, 0;\n\t"
      "addc.cc.u32 %15, %46, 0;\n\t"
      "addc.cc.u32 %16, %47, 0;\n\t"
      "addc.u32 %17, %48, 0;"
      : "=r"(t[6]), "=r"(t[7]), "=r"(t[8]), "=r"(t[9]), "=r"(t[10]), "=r"(t[11]), "=r"(t[12]), "=r"(t[13]), "=r"(t[14]), "=r"(t[15]), "=r"(t[16]), "=r"(t[17]), "=r"(t[18]), "=r"(t[19]), "=r"(t[20]), "=r"(t[21]), "=r"(t[22]), "=r"(t[23])
      : "r"(z0[6]), "r"(z0[7]), "r"(z0[8]), "r"(z0[9]), "r"(z0[10]), "r"(z0[11]), "r"(z2[0]), "r"(z2[1]), "r"(z2[2]), "r"(z2[3]), "r"(z2[4]), "r"(z2[5]),
        "r"(z1[0]), "r"(z1[1]), "r"(z1[2]), "r"(z1[3]), "r"(z1[4]), "r"(z1[5]), "r"(z1[6]), "r"(z1[7]), "r"(z1[8]), "r"(z1[9]), "r"(z1[10]), "r"(z1[11]),
        "r"(z2[6]), "r"(z1[12]), "r"(z2[7]), "r"(z2[8]), "r"(z2[9]), "r"(z2[10]), "r"(z2[11]));
}

/// t = x y (24 words) for x and y below 2^384, by one level of Karatsuba.
__device__ __forceinline__ void karatsuba_product(const std::uint32_t (&x)[12], const std::uint32_t (&y)[12],
                                                  std::uint32_t (&t)[24]) {
  std::uint32_t x0[6], x1[6], y0[6], y1[6];
#pragma unroll
  for (int k = 0; k < 6; ++k) {
    x0[k] = x[k];
    x1[k] = x[k + 6];
    y0[k] = y[k];
    y1[k] = y[k + 6];
  }
  std::uint32_t sx[6], sy[6];
  const std::uint32_t cx = halves_sum(x, sx), cy = halves_sum(y, sy);
  std::uint32_t z0[12], z2[12], m[12];
  product_half(x0, y0, z0);
  product_half(x1, y1, z2);
  product_half(sx, sy, m);
  // (m, m12) = (x0 + x1)(y0 + y1) = m + 2^192 (cx sy + cy sx) + 2^384 cx cy, below 2^386.
  std::uint32_t fx[6], fy[6], m12;
  const std::uint32_t mask_x = 0u - cx, mask_y = 0u - cy;
#pragma unroll
  for (int k = 0; k < 6; ++k) {
    fx[k] = sy[k] & mask_x;
    fy[k] = sx[k] & mask_y;
  }
  asm("add.cc.u32 %0, %0, %7;\n\t"
      "addc.cc.u32 %1, %1, %8;\n\t"
      "addc.cc.u32 %2, %2, %9;\n\t"
      "addc.cc.u32 %3, %3, %10;\n\t"
      "addc.cc.u32 %4, %4, %11;\n\t"
      "addc.cc.u32 %5, %5, %12;\n\t"
      "addc.u32 %6, %19, 0;\n\t"
      "add.cc.u32 %0, %0, %13;\n\t"
      "addc.cc.u32 %1, %1, %14;\n\t"
      "addc.cc.u32 %2, %2, %15;\n\t"
      "addc.cc.u32 %3, %3, %16;\n\t"
      "addc.cc.u32 %4, %4, %17;\n\t"
      "addc.cc.u32 %5, %5, %18;\n\t"
      "addc.u32 %6, %6, 0;"
      : "+r"(m[6]), "+r"(m[7]), "+r"(m[8]), "+r"(m[9]), "+r"(m[10]), "+r"(m[11]), "=r"(m12)
      : "r"(fx[0]), "r"(fx[1]), "r"(fx[2]), "r"(fx[3]), "r"(fx[4]), "r"(fx[5]),
        "r"(fy[0]), "r"(fy[1]), "r"(fy[2]), "r"(fy[3]), "r"(fy[4]), "r"(fy[5]), "r"(cx & cy));
  // z1 = m - z0 - z2 = x0 y1 + x1 y0, below 2^385 (13 words; no borrow out).
  std::uint32_t z1[13];
  asm("sub.cc.u32 %0, %13, %26;\n\t"
      "subc.cc.u32 %1, %14, %27;\n\t"
      "subc.cc.u32 %2, %15, %28;\n\t"
      "subc.cc.u32 %3, %16, %29;\n\t"
      "subc.cc.u32 %4, %17, %30;\n\t"
      "subc.cc.u32 %5, %18, %31;\n\t"
      "subc.cc.u32 %6, %19, %32;\n\t"
      "subc.cc.u32 %7, %20, %33;\n\t"
      "subc.cc.u32 %8, %21, %34;\n\t"
      "subc.cc.u32 %9, %22, %35;\n\t"
      "subc.cc.u32 %10, %23, %36;\n\t"
      "subc.cc.u32 %11, %24, %37;\n\t"
      "subc.u32 %12, %25, 0;"
      : "=r"(z1[0]), "=r"(z1[1]), "=r"(z1[2]), "=r"(z1[3]), "=r"(z1[4]), "=r"(z1[5]), "=r"(z1[6]), "=r"(z1[7]), "=r"(z1[8]), "=r"(z1[9]), "=r"(z1[10]), "=r"(z1[11]), "=r"(z1[12])
      : "r"(m[0]), "r"(m[1]), "r"(m[2]), "r"(m[3]), "r"(m[4]), "r"(m[5]), "r"(m[6]), "r"(m[7]), "r"(m[8]), "r"(m[9]), "r"(m[10]), "r"(m[11]), "r"(m12),
        "r"(z0[0]), "r"(z0[1]), "r"(z0[2]), "r"(z0[3]), "r"(z0[4]), "r"(z0[5]), "r"(z0[6]), "r"(z0[7]), "r"(z0[8]), "r"(z0[9]), "r"(z0[10]), "r"(z0[11]));
  asm("sub.cc.u32 %0, %0, %13;\n\t"
      "subc.cc.u32 %1, %1, %14;\n\t"
      "subc.cc.u32 %2, %2, %15;\n\t"
      "subc.cc.u32 %3, %3, %16;\n\t"
      "subc.cc.u32 %4, %4, %17;\n\t"
      "subc.cc.u32 %5, %5, %18;\n\t"
      "subc.cc.u32 %6, %6, %19;\n\t"
      "subc.cc.u32 %7, %7, %20;\n\t"
      "subc.cc.u32 %8, %8, %21;\n\t"
      "subc.cc.u32 %9, %9, %22;\n\t"
      "subc.cc.u32 %10, %10, %23;\n\t"
      "subc.cc.u32 %11, %11, %24;\n\t"
      "subc.u32 %12, %12, 0;"
      : "+r"(z1[0]), "+r"(z1[1]), "+r"(z1[2]), "+r"(z1[3]), "+r"(z1[4]), "+r"(z1[5]), "+r"(z1[6]), "+r"(z1[7]), "+r"(z1[8]), "+r"(z1[9]), "+r"(z1[10]), "+r"(z1[11]), "+r"(z1[12])
      : "r"(z2[0]), "r"(z2[1]), "r"(z2[2]), "r"(z2[3]), "r"(z2[4]), "r"(z2[5]), "r"(z2[6]), "r"(z2[7]), "r"(z2[8]), "r"(z2[9]), "r"(z2[10]), "r"(z2[11]));
  assemble_karatsuba(z0, z1, z2, t);
}

/// z = x^2 for six-word x (twelve words): the 15 cross products x_i x_j (i < j) once, the sum
/// doubled, the six squares x_i^2 added (21 word products instead of 36). Cross product x_i x_j sits
/// at word i + j: those of row i with j = i + 1, i + 3, ... form a chain of pairs in o (a word up)
/// from word 2i, those with j = i + 2, i + 4, ... one in e from word 2i + 2, each carrying into the
/// word above its last pair, which at most two earlier rows' carries reached. All nine chains are one
/// carry chain (as chain_row_pair: each carry word's addition leaves the flag 0), so ptxas keeps them
/// in order.
__device__ __forceinline__ void square_half(const std::uint32_t (&x)[6], std::uint32_t (&z)[12]) {
  std::uint32_t e[11], o[11];  // the cross products: sum e[j] 2^(32 j) + sum o[j] 2^(32 (j + 1))
#pragma unroll
  for (int j = 0; j < 11; ++j) e[j] = o[j] = 0;
  asm("mad.lo.cc.u32 %9, %20, %21, %9;\n\t"
      "madc.hi.cc.u32 %10, %20, %21, %10;\n\t"
      "madc.lo.cc.u32 %11, %20, %23, %11;\n\t"
      "madc.hi.cc.u32 %12, %20, %23, %12;\n\t"
      "madc.lo.cc.u32 %13, %20, %25, %13;\n\t"
      "madc.hi.cc.u32 %14, %20, %25, %14;\n\t"
      "addc.cc.u32 %15, %15, 0;\n\t"
      "madc.lo.cc.u32 %0, %20, %22, %0;\n\t"
      "madc.hi.cc.u32 %1, %20, %22, %1;\n\t"
      "madc.lo.cc.u32 %2, %20, %24, %2;\n\t"
      "madc.hi.cc.u32 %3, %20, %24, %3;\n\t"
      "addc.cc.u32 %4, %4, 0;\n\t"
      "madc.lo.cc.u32 %11, %21, %22, %11;\n\t"
      "madc.hi.cc.u32 %12, %21, %22, %12;\n\t"
      "madc.lo.cc.u32 %13, %21, %24, %13;\n\t"
      "madc.hi.cc.u32 %14, %21, %24, %14;\n\t"
      "addc.cc.u32 %15, %15, 0;\n\t"
      "madc.lo.cc.u32 %2, %21, %23, %2;\n\t"
      "madc.hi.cc.u32 %3, %21, %23, %3;\n\t"
      "madc.lo.cc.u32 %4, %21, %25, %4;\n\t"
      "madc.hi.cc.u32 %5, %21, %25, %5;\n\t"
      "addc.cc.u32 %6, %6, 0;\n\t"
      "madc.lo.cc.u32 %13, %22, %23, %13;\n\t"
      "madc.hi.cc.u32 %14, %22, %23, %14;\n\t"
      "madc.lo.cc.u32 %15, %22, %25, %15;\n\t"
      "madc.hi.cc.u32 %16, %22, %25, %16;\n\t"
      "addc.cc.u32 %17, %17, 0;\n\t"
      "madc.lo.cc.u32 %4, %22, %24, %4;\n\t"
      "madc.hi.cc.u32 %5, %22, %24, %5;\n\t"
      "addc.cc.u32 %6, %6, 0;\n\t"
      "madc.lo.cc.u32 %15, %23, %24, %15;\n\t"
      "madc.hi.cc.u32 %16, %23, %24, %16;\n\t"
      "addc.cc.u32 %17, %17, 0;\n\t"
      "madc.lo.cc.u32 %6, %23, %25, %6;\n\t"
      "madc.hi.cc.u32 %7, %23, %25, %7;\n\t"
      "addc.cc.u32 %8, %8, 0;\n\t"
      "madc.lo.cc.u32 %17, %24, %25, %17;\n\t"
      "madc.hi.cc.u32 %18, %24, %25, %18;\n\t"
      "addc.u32 %19, %19, 0;"
      : "+r"(e[2]), "+r"(e[3]), "+r"(e[4]), "+r"(e[5]), "+r"(e[6]), "+r"(e[7]), "+r"(e[8]), "+r"(e[9]), "+r"(e[10]),
        "+r"(o[0]), "+r"(o[1]), "+r"(o[2]), "+r"(o[3]), "+r"(o[4]), "+r"(o[5]), "+r"(o[6]), "+r"(o[7]), "+r"(o[8]), "+r"(o[9]), "+r"(o[10])
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]));
  // w = e + 2^32 o (e[0], e[1] are 0), below 2^383; z = 2 w + the squares, below 2^384.
  std::uint32_t w[12];
  w[0] = 0;
  w[1] = o[0];
  asm("add.cc.u32 %0, %10, %19;\n\t"
      "addc.cc.u32 %1, %11, %20;\n\t"
      "addc.cc.u32 %2, %12, %21;\n\t"
      "addc.cc.u32 %3, %13, %22;\n\t"
      "addc.cc.u32 %4, %14, %23;\n\t"
      "addc.cc.u32 %5, %15, %24;\n\t"
      "addc.cc.u32 %6, %16, %25;\n\t"
      "addc.cc.u32 %7, %17, %26;\n\t"
      "addc.cc.u32 %8, %18, %27;\n\t"
      "addc.u32 %9, %28, 0;"
      : "=r"(w[2]), "=r"(w[3]), "=r"(w[4]), "=r"(w[5]), "=r"(w[6]), "=r"(w[7]), "=r"(w[8]), "=r"(w[9]), "=r"(w[10]), "=r"(w[11])
      : "r"(e[2]), "r"(e[3]), "r"(e[4]), "r"(e[5]), "r"(e[6]), "r"(e[7]), "r"(e[8]), "r"(e[9]), "r"(e[10]),
        "r"(o[1]), "r"(o[2]), "r"(o[3]), "r"(o[4]), "r"(o[5]), "r"(o[6]), "r"(o[7]), "r"(o[8]), "r"(o[9]), "r"(o[10]));
  asm("add.cc.u32 %1, %12, %12;\n\t"
      "addc.cc.u32 %2, %13, %13;\n\t"
      "addc.cc.u32 %3, %14, %14;\n\t"
      "addc.cc.u32 %4, %15, %15;\n\t"
      "addc.cc.u32 %5, %16, %16;\n\t"
      "addc.cc.u32 %6, %17, %17;\n\t"
      "addc.cc.u32 %7, %18, %18;\n\t"
      "addc.cc.u32 %8, %19, %19;\n\t"
      "addc.cc.u32 %9, %20, %20;\n\t"
      "addc.cc.u32 %10, %21, %21;\n\t"
      "addc.u32 %11, %22, %22;\n\t"
      "mad.lo.cc.u32 %0, %23, %23, 0;\n\t"
      "madc.hi.cc.u32 %1, %23, %23, %1;\n\t"
      "madc.lo.cc.u32 %2, %24, %24, %2;\n\t"
      "madc.hi.cc.u32 %3, %24, %24, %3;\n\t"
      "madc.lo.cc.u32 %4, %25, %25, %4;\n\t"
      "madc.hi.cc.u32 %5, %25, %25, %5;\n\t"
      "madc.lo.cc.u32 %6, %26, %26, %6;\n\t"
      "madc.hi.cc.u32 %7, %26, %26, %7;\n\t"
      "madc.lo.cc.u32 %8, %27, %27, %8;\n\t"
      "madc.hi.cc.u32 %9, %27, %27, %9;\n\t"
      "madc.lo.cc.u32 %10, %28, %28, %10;\n\t"
      "madc.hi.u32 %11, %28, %28, %11;"
      : "=r"(z[0]), "=r"(z[1]), "=r"(z[2]), "=r"(z[3]), "=r"(z[4]), "=r"(z[5]), "=r"(z[6]), "=r"(z[7]), "=r"(z[8]), "=r"(z[9]), "=r"(z[10]), "=r"(z[11])
      : "r"(w[1]), "r"(w[2]), "r"(w[3]), "r"(w[4]), "r"(w[5]), "r"(w[6]), "r"(w[7]), "r"(w[8]), "r"(w[9]), "r"(w[10]), "r"(w[11]),
        "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]));
}

/// t = x^2 (24 words) for x below 2^384: z0 = x0^2 and z2 = x1^2 by square_half, z1 = 2 x0 x1
/// (78 word products, against 108 for karatsuba_product(x, x)).
__device__ __forceinline__ void karatsuba_square(const std::uint32_t (&x)[12], std::uint32_t (&t)[24]) {
  std::uint32_t x0[6], x1[6];
#pragma unroll
  for (int k = 0; k < 6; ++k) {
    x0[k] = x[k];
    x1[k] = x[k + 6];
  }
  std::uint32_t z0[12], z2[12], c[12], z1[13];
  square_half(x0, z0);
  square_half(x1, z2);
  product_half(x0, x1, c);
  asm("add.cc.u32 %0, %13, %13;\n\t"
      "addc.cc.u32 %1, %14, %14;\n\t"
      "addc.cc.u32 %2, %15, %15;\n\t"
      "addc.cc.u32 %3, %16, %16;\n\t"
      "addc.cc.u32 %4, %17, %17;\n\t"
      "addc.cc.u32 %5, %18, %18;\n\t"
      "addc.cc.u32 %6, %19, %19;\n\t"
      "addc.cc.u32 %7, %20, %20;\n\t"
      "addc.cc.u32 %8, %21, %21;\n\t"
      "addc.cc.u32 %9, %22, %22;\n\t"
      "addc.cc.u32 %10, %23, %23;\n\t"
      "addc.cc.u32 %11, %24, %24;\n\t"
      "addc.u32 %12, 0, 0;"
      : "=r"(z1[0]), "=r"(z1[1]), "=r"(z1[2]), "=r"(z1[3]), "=r"(z1[4]), "=r"(z1[5]), "=r"(z1[6]), "=r"(z1[7]), "=r"(z1[8]), "=r"(z1[9]), "=r"(z1[10]), "=r"(z1[11]), "=r"(z1[12])
      : "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(c[5]), "r"(c[6]), "r"(c[7]), "r"(c[8]), "r"(c[9]), "r"(c[10]), "r"(c[11]));
  assemble_karatsuba(z0, z1, z2, t);
}

/// t 2^-384 mod p for a 768-bit t below 8 p^2 (24 words), below 2p: t as fq_split holds it (e = t,
/// o = 0), reduced by split_reduce with its chains linked.
__device__ __forceinline__ fq_device reduce_wide(const std::uint32_t (&t)[24]) {
  fq_split s;
#pragma unroll
  for (int j = 0; j < 24; ++j) s.e[j] = t[j];
  s.e[24] = 0;
#pragma unroll
  for (int j = 0; j < 23; ++j) s.o[j] = 0;
  return split_reduce<true>(s);
}

/// out = x + y over 768 bits (the callers' sums stay below 2^768).
__device__ __forceinline__ void add_wide(const std::uint32_t (&x)[24], const std::uint32_t (&y)[24],
                                         std::uint32_t (&out)[24]) {
  asm("add.cc.u32 %0, %24, %48;\n\t"
      "addc.cc.u32 %1, %25, %49;\n\t"
      "addc.cc.u32 %2, %26, %50;\n\t"
      "addc.cc.u32 %3, %27, %51;\n\t"
      "addc.cc.u32 %4, %28, %52;\n\t"
      "addc.cc.u32 %5, %29, %53;\n\t"
      "addc.cc.u32 %6, %30, %54;\n\t"
      "addc.cc.u32 %7, %31, %55;\n\t"
      "addc.cc.u32 %8, %32, %56;\n\t"
      "addc.cc.u32 %9, %33, %57;\n\t"
      "addc.cc.u32 %10, %34, %58;\n\t"
      "addc.cc.u32 %11, %35, %59;\n\t"
      "addc.cc.u32 %12, %36, %60;\n\t"
      "addc.cc.u32 %13, %37, %61;\n\t"
      "addc.cc.u32 %14, %38, %62;\n\t"
      "addc.cc.u32 %15, %39, %63;\n\t"
      "addc.cc.u32 %16, %40, %64;\n\t"
      "addc.cc.u32 %17, %41, %65;\n\t"
      "addc.cc.u32 %18, %42, %66;\n\t"
      "addc.cc.u32 %19, %43, %67;\n\t"
      "addc.cc.u32 %20, %44, %68;\n\t"
      "addc.cc.u32 %21, %45, %69;\n\t"
      "addc.cc.u32 %22, %46, %70;\n\t"
      "addc.u32 %23, %47, %71;"
      : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3]), "=r"(out[4]), "=r"(out[5]), "=r"(out[6]), "=r"(out[7]), "=r"(out[8]), "=r"(out[9]), "=r"(out[10]), "=r"(out[11]),
        "=r"(out[12]), "=r"(out[13]), "=r"(out[14]), "=r"(out[15]), "=r"(out[16]), "=r"(out[17]), "=r"(out[18]), "=r"(out[19]), "=r"(out[20]), "=r"(out[21]), "=r"(out[22]), "=r"(out[23])
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]), "r"(x[8]), "r"(x[9]), "r"(x[10]), "r"(x[11]),
        "r"(x[12]), "r"(x[13]), "r"(x[14]), "r"(x[15]), "r"(x[16]), "r"(x[17]), "r"(x[18]), "r"(x[19]), "r"(x[20]), "r"(x[21]), "r"(x[22]), "r"(x[23]),
        "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]), "r"(y[8]), "r"(y[9]), "r"(y[10]), "r"(y[11]),
        "r"(y[12]), "r"(y[13]), "r"(y[14]), "r"(y[15]), "r"(y[16]), "r"(y[17]), "r"(y[18]), "r"(y[19]), "r"(y[20]), "r"(y[21]), "r"(y[22]), "r"(y[23]));
}


/// out = x - y over 768 bits (the callers' differences are not negative).
__device__ __forceinline__ void sub_wide(const std::uint32_t (&x)[24], const std::uint32_t (&y)[24],
                                         std::uint32_t (&out)[24]) {
  asm("sub.cc.u32 %0, %24, %48;\n\t"
      "subc.cc.u32 %1, %25, %49;\n\t"
      "subc.cc.u32 %2, %26, %50;\n\t"
      "subc.cc.u32 %3, %27, %51;\n\t"
      "subc.cc.u32 %4, %28, %52;\n\t"
      "subc.cc.u32 %5, %29, %53;\n\t"
      "subc.cc.u32 %6, %30, %54;\n\t"
      "subc.cc.u32 %7, %31, %55;\n\t"
      "subc.cc.u32 %8, %32, %56;\n\t"
      "subc.cc.u32 %9, %33, %57;\n\t"
      "subc.cc.u32 %10, %34, %58;\n\t"
      "subc.cc.u32 %11, %35, %59;\n\t"
      "subc.cc.u32 %12, %36, %60;\n\t"
      "subc.cc.u32 %13, %37, %61;\n\t"
      "subc.cc.u32 %14, %38, %62;\n\t"
      "subc.cc.u32 %15, %39, %63;\n\t"
      "subc.cc.u32 %16, %40, %64;\n\t"
      "subc.cc.u32 %17, %41, %65;\n\t"
      "subc.cc.u32 %18, %42, %66;\n\t"
      "subc.cc.u32 %19, %43, %67;\n\t"
      "subc.cc.u32 %20, %44, %68;\n\t"
      "subc.cc.u32 %21, %45, %69;\n\t"
      "subc.cc.u32 %22, %46, %70;\n\t"
      "subc.u32 %23, %47, %71;"
      : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3]), "=r"(out[4]), "=r"(out[5]), "=r"(out[6]), "=r"(out[7]), "=r"(out[8]), "=r"(out[9]), "=r"(out[10]), "=r"(out[11]),
        "=r"(out[12]), "=r"(out[13]), "=r"(out[14]), "=r"(out[15]), "=r"(out[16]), "=r"(out[17]), "=r"(out[18]), "=r"(out[19]), "=r"(out[20]), "=r"(out[21]), "=r"(out[22]), "=r"(out[23])
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]), "r"(x[8]), "r"(x[9]), "r"(x[10]), "r"(x[11]),
        "r"(x[12]), "r"(x[13]), "r"(x[14]), "r"(x[15]), "r"(x[16]), "r"(x[17]), "r"(x[18]), "r"(x[19]), "r"(x[20]), "r"(x[21]), "r"(x[22]), "r"(x[23]),
        "r"(y[0]), "r"(y[1]), "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]), "r"(y[8]), "r"(y[9]), "r"(y[10]), "r"(y[11]),
        "r"(y[12]), "r"(y[13]), "r"(y[14]), "r"(y[15]), "r"(y[16]), "r"(y[17]), "r"(y[18]), "r"(y[19]), "r"(y[20]), "r"(y[21]), "r"(y[22]), "r"(y[23]));
}

/// A 768-bit constant.
struct wide_words {
  std::uint32_t w[24];
};

/// 4 p^2 (below 2^764), from p's words.
__host__ __device__ constexpr wide_words four_p_squared_words() {
  wide_words r{};
  for (int i = 0; i < 12; ++i) {
    std::uint64_t carry = 0;
    for (int j = 0; j < 12; ++j) {
      const std::uint64_t t = std::uint64_t{p_word(i)} * p_word(j) + r.w[i + j] + carry;
      r.w[i + j] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
    r.w[i + 12] = static_cast<std::uint32_t>(carry);
  }
  std::uint32_t below = 0;
  for (int k = 0; k < 24; ++k) {
    const std::uint32_t v = r.w[k];
    r.w[k] = (v << 2) | (below >> 30);
    below = v;
  }
  return r;
}
/// four_p_squared_words() against p^2 by columns (product scanning) times 4: the same words another
/// way.
__host__ __device__ constexpr bool four_p_squared_by_columns() {
  std::uint32_t square[24] = {};
  std::uint64_t low = 0, high = 0;  // the column sum with what the columns below carried: high 2^64 + low
  for (int k = 0; k < 24; ++k) {
    for (int i = 0; i < 12; ++i) {
      if (k - i < 0 || k - i > 11) continue;
      const std::uint64_t product = std::uint64_t{p_word(i)} * p_word(k - i);
      low += product;
      if (low < product) ++high;
    }
    square[k] = static_cast<std::uint32_t>(low);
    low = (low >> 32) | (high << 32);
    high >>= 32;
  }
  const wide_words r = four_p_squared_words();
  for (int k = 0; k < 24; ++k)
    if (r.w[k] != ((square[k] << 2) | (k == 0 ? 0u : square[k - 1] >> 30))) return false;
  return true;
}
static_assert(four_p_squared_words().w[0] == 0x71c638e4u && four_p_squared_words().w[23] == 0x0a90de92u &&
                  four_p_squared_by_columns(),
              "4 p^2's words");

/// 4 p^2 in constant memory, where the additions read it as operands (as immediates, ptxas puts it in
/// registers: fq2_mul with -DCOPROVE_GPU_FQ_KARATSUBA then saves and restores 80 bytes a call instead
/// of 32). A template, so that only a translation unit that uses it (fq2_mul_lazy) holds it.
template <int = 0>
__constant__ wide_words four_p_squared = four_p_squared_words();
}  // namespace fq_detail

/// a * b * 2^-384 mod p, below 2p for operands below 2p, as fq_mul, by karatsuba_product and
/// split_reduce (a b < 4p^2).
__device__ __forceinline__ fq_device fq_mul_karatsuba(const fq_device& a, const fq_device& b) {
  using namespace fq_detail;
  std::uint32_t t[24];
  karatsuba_product(a.limb, b.limb, t);
  return reduce_wide(t);
}

/// a^2 2^-384 mod p, below 2p for a below 2p, by karatsuba_square and split_reduce.
__device__ __forceinline__ fq_device fq_sqr_karatsuba(const fq_device& a) {
  using namespace fq_detail;
  std::uint32_t t[24];
  karatsuba_square(a.limb, t);
  return reduce_wide(t);
}

/// a b - c d mod p, below 2p, for operands below 2p, as fq_mul_sub, with its two products by
/// karatsuba_product.
__device__ __forceinline__ fq_device fq_mul_sub_karatsuba(const fq_device& a, const fq_device& b,
                                                          const fq_device& c, const fq_device& d) {
  using namespace fq_detail;
  std::uint32_t two_p[12], c_neg[12];
#pragma unroll
  for (int j = 0; j < 12; ++j) two_p[j] = two_p_word(j);
  sub_words(two_p, c.limb, c_neg);  // 2p - c > 0: no borrow
  std::uint32_t ab[24], cd[24], sum[24];
  karatsuba_product(a.limb, b.limb, ab);
  karatsuba_product(c_neg, d.limb, cd);
  add_wide(ab, cd, sum);  // below 8 p^2
  return reduce_wide(sum);
}

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
__device__ __forceinline__ fq2_device fq2_reduce(const fq2_device& a) { return {fq_reduce(a.c0), fq_reduce(a.c1)}; }
__device__ __forceinline__ fq2_device fq2_add(const fq2_device& a, const fq2_device& b) {
  return {fq_add(a.c0, b.c0), fq_add(a.c1, b.c1)};
}
__device__ __forceinline__ fq2_device fq2_sub(const fq2_device& a, const fq2_device& b) {
  return {fq_sub(a.c0, b.c0), fq_sub(a.c1, b.c1)};
}
__device__ __forceinline__ fq2_device fq2_neg(const fq2_device& a) { return {fq_neg(a.c0), fq_neg(a.c1)}; }
__device__ __forceinline__ fq2_device fq2_dbl(const fq2_device& a) { return {fq_dbl(a.c0), fq_dbl(a.c1)}; }
/// (a0 + a1 u)(b0 + b1 u) with two reductions instead of three (G2's products with
/// -DCOPROVE_GPU_FQ_KARATSUBA): s = (a0 + a1)(b0 + b1), the sums not reduced (below 4p < 2^384),
/// t0 = a0 b0 and t1 = a1 b1 as 768-bit products by karatsuba_product; c1 = s - t0 - t1 =
/// a0 b1 + a1 b0 and c0 = t0 + 4p^2 - t1, both below 8p^2, each reduced once. Each product is
/// folded into c0 and c1 as soon as it is made, so that at most two 768-bit values wait beside the
/// one being made (the function is called, and what it holds it saves and restores).
template <int = 0>  // a template, so that four_p_squared is instantiated only where this is used
__device__ __forceinline__ fq2_device fq2_mul_lazy(const fq2_device& a, const fq2_device& b) {
  using namespace fq_detail;
  std::uint32_t sum_a[12], sum_b[12], s[24];
  add_words(a.c0.limb, a.c1.limb, sum_a);
  add_words(b.c0.limb, b.c1.limb, sum_b);
  karatsuba_product(sum_a, sum_b, s);
  std::uint32_t t[24], c0[24], c1[24];
  karatsuba_product(a.c0.limb, b.c0.limb, t);
  sub_wide(s, t, c1);
  add_wide(t, four_p_squared<>.w, c0);
  karatsuba_product(a.c1.limb, b.c1.limb, t);
  sub_wide(c1, t, s);
  sub_wide(c0, t, c1);
  const fq_device r0 = reduce_wide(c1);
  return {r0, reduce_wide(s)};
}

#if defined(COPROVE_GPU_G2_FQ2_LAZY)
COPROVE_FQ2_PRODUCT fq2_device fq2_mul(const fq2_device a, const fq2_device b) { return fq2_mul_lazy(a, b); }
/// (c0 + c1)(c0 - c1) + 2 c0 c1 u: two products.
COPROVE_FQ2_PRODUCT fq2_device fq2_sqr(const fq2_device a) {
  return {fq_mul_karatsuba(fq_add(a.c0, a.c1), fq_sub(a.c0, a.c1)), fq_mul_karatsuba(fq_dbl(a.c0), a.c1)};
}
#else
/// Karatsuba: three products of Fq.
COPROVE_FQ2_PRODUCT fq2_device fq2_mul(const fq2_device a, const fq2_device b) {
  const fq_device v0 = fq_mul(a.c0, b.c0);
  const fq_device v1 = fq_mul(a.c1, b.c1);
  const fq_device s = fq_mul(fq_add(a.c0, a.c1), fq_add(b.c0, b.c1));
  return {fq_sub(v0, v1), fq_sub(fq_sub(s, v0), v1)};
}
/// (c0 + c1)(c0 - c1) + 2 c0 c1 u: two products.
COPROVE_FQ2_PRODUCT fq2_device fq2_sqr(const fq2_device a) {
  return {fq_mul(fq_add(a.c0, a.c1), fq_sub(a.c0, a.c1)), fq_mul(fq_dbl(a.c0), a.c1)};
}
#endif
/// 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2) (0 for 0).
__device__ __forceinline__ fq2_device fq2_inv(const fq2_device& a) {
  const fq_device t = fq_inv(fq_add(fq_sqr(a.c0), fq_sqr(a.c1)));
  return {fq_mul(a.c0, t), fq_neg(fq_mul(a.c1, t))};
}

}  // namespace coprove::cuda
