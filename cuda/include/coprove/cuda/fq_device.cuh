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

// The Fq2 product and square are functions the kernels call (measured on an H200,
// docs/history/msm.md: G2's MSM 5 % faster than with them inline, where G2's bucket step inlined about
// 28 Fq products, some 330 KB of machine code, and its later levels spilled). Their operands are
// passed by value, so that a call passes them in registers. Inside them the Fq product is inline;
// G1's point formulas call theirs (curve_device.cuh, g1_products). Products by Karatsuba on the
// 192-bit halves were measured slower in G1 and G2 (more instructions, register moves and spills
// than the multiplies they save; docs/history/msm.md) and are not kept.
#define COPROVE_FQ2_PRODUCT __device__ __noinline__ inline

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
/// leaves the carries of its chains at positions i + 12 and i + 13 in k.
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
      chain_row(t.e + i, k[i + 12], p_even, m);
      chain_row(t.o + i, k[i + 13], p_odd, m);
    } else {
      t.o[i - 1] = w;
      chain_row(t.o + i - 1, k[i + 12], p_even, m);
      chain_row(t.e + i + 1, k[i + 13], p_odd, m);
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
/// Three products of Fq: a0 b0, a1 b1 and (a0 + a1)(b0 + b1).
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
/// 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2) (0 for 0).
__device__ __forceinline__ fq2_device fq2_inv(const fq2_device& a) {
  const fq_device t = fq_inv(fq_add(fq_sqr(a.c0), fq_sqr(a.c1)));
  return {fq_mul(a.c0, t), fq_neg(fq_mul(a.c1, t))};
}

}  // namespace coprove::cuda
