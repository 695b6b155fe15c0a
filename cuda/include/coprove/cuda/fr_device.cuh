// BLS12-381 Fr on the GPU: 8 x 32-bit little-endian limbs in Montgomery form (R = 2^256 mod r),
// byte for byte the layout of prover::fr. Values are always fully reduced (< r), so equal elements
// have equal bytes and GPU results compare bit for bit with the CPU's.
//
// The multiplication is word-by-word (CIOS-order) Montgomery with PTX carry chains, the running
// value split in two accumulators: one takes the products of a's and r's even limbs, the other
// (one limb up) those of their odd limbs. Within one accumulator the four products of a row sit
// in disjoint limb pairs, so each low half (mad.lo.cc) is followed by its own high half
// (madc.hi.cc) in a single chain, and the two accumulators' chains are independent of each other.
// They are added once, at the end. r's lowest limb is 1 and -r^-1 = -1 mod 2^32, so a round's m is
// minus the lowest limb and its product with r_0 is an add. Every carry chain is a single asm
// statement: the carry flag does not survive between statements.
#pragma once

#include <cstdint>

namespace coprove::cuda {

struct fr_device {
  std::uint32_t limb[8];
};

namespace fr_detail {

// r, little-endian 32-bit limbs.
inline constexpr std::uint32_t r0 = 0x00000001u, r1 = 0xffffffffu, r2 = 0xfffe5bfeu, r3 = 0x53bda402u,
                               r4 = 0x09a1d805u, r5 = 0x3339d808u, r6 = 0x299d7d48u, r7 = 0x73eda753u;
static_assert(r0 == 1, "mul_add_modulus_even relies on r's lowest limb being 1");
// -r^-1 mod 2^32.
inline constexpr std::uint32_t r_inv = 0xffffffffu;

/// acc[0..8] += (x0 + x1 2^64 + x2 2^128 + x3 2^192) * y: the four products sit in disjoint limb
/// pairs, so each low half is followed by its own high half in one carry chain (the caller
/// guarantees no carry out of acc[8]).
__device__ __forceinline__ void mul_add_pairs(std::uint32_t (&acc)[9], std::uint32_t x0, std::uint32_t x1,
                                              std::uint32_t x2, std::uint32_t x3, std::uint32_t y) {
  asm("mad.lo.cc.u32  %0, %9,  %13, %0;\n\t"
      "madc.hi.cc.u32 %1, %9,  %13, %1;\n\t"
      "madc.lo.cc.u32 %2, %10, %13, %2;\n\t"
      "madc.hi.cc.u32 %3, %10, %13, %3;\n\t"
      "madc.lo.cc.u32 %4, %11, %13, %4;\n\t"
      "madc.hi.cc.u32 %5, %11, %13, %5;\n\t"
      "madc.lo.cc.u32 %6, %12, %13, %6;\n\t"
      "madc.hi.cc.u32 %7, %12, %13, %7;\n\t"
      "addc.u32       %8, %8,  0;"
      : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]),
        "+r"(acc[7]), "+r"(acc[8])
      : "r"(x0), "r"(x1), "r"(x2), "r"(x3), "r"(y));
}

/// acc = (x0 + x1 2^64 + x2 2^128 + x3 2^192) * y: disjoint limb pairs, so no carries at all.
__device__ __forceinline__ void mul_pairs(std::uint32_t (&acc)[9], std::uint32_t x0, std::uint32_t x1,
                                          std::uint32_t x2, std::uint32_t x3, std::uint32_t y) {
  acc[0] = x0 * y;
  acc[1] = __umulhi(x0, y);
  acc[2] = x1 * y;
  acc[3] = __umulhi(x1, y);
  acc[4] = x2 * y;
  acc[5] = __umulhi(x2, y);
  acc[6] = x3 * y;
  acc[7] = __umulhi(x3, y);
  acc[8] = 0;
}

/// acc[0..8] += m * (r_0 + r_2 2^64 + r_4 2^128 + r_6 2^192) + carry_in * 2^32. r_0 = 1, so the first
/// pair is m itself (low) and nothing (high); the high slot takes carry_in instead.
__device__ __forceinline__ void mul_add_modulus_even(std::uint32_t (&acc)[9], std::uint32_t m,
                                                     std::uint32_t carry_in) {
  asm("add.cc.u32     %0, %0,  %12;\n\t"
      "addc.cc.u32    %1, %1,  %13;\n\t"
      "madc.lo.cc.u32 %2, %9,  %12, %2;\n\t"
      "madc.hi.cc.u32 %3, %9,  %12, %3;\n\t"
      "madc.lo.cc.u32 %4, %10, %12, %4;\n\t"
      "madc.hi.cc.u32 %5, %10, %12, %5;\n\t"
      "madc.lo.cc.u32 %6, %11, %12, %6;\n\t"
      "madc.hi.cc.u32 %7, %11, %12, %7;\n\t"
      "addc.u32       %8, %8,  0;"
      : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]),
        "+r"(acc[7]), "+r"(acc[8])
      : "r"(r2), "r"(r4), "r"(r6), "r"(m), "r"(carry_in));
}

/// x - r and whether that borrowed (x < r), for the final conditional subtraction.
__device__ __forceinline__ std::uint32_t sub_modulus(const std::uint32_t (&x)[8], std::uint32_t (&d)[8]) {
  std::uint32_t borrow;
  asm("sub.cc.u32  %0, %9,  %17;\n\t"
      "subc.cc.u32 %1, %10, %18;\n\t"
      "subc.cc.u32 %2, %11, %19;\n\t"
      "subc.cc.u32 %3, %12, %20;\n\t"
      "subc.cc.u32 %4, %13, %21;\n\t"
      "subc.cc.u32 %5, %14, %22;\n\t"
      "subc.cc.u32 %6, %15, %23;\n\t"
      "subc.cc.u32 %7, %16, %24;\n\t"
      "subc.u32    %8, 0, 0;"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]),
        "=r"(d[7]), "=r"(borrow)
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]),
        "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r6), "r"(r7));
  return borrow;  // 0xffffffff when x < r
}

/// x mod r for x < 2r.
__device__ __forceinline__ fr_device reduce_once(const std::uint32_t (&x)[8]) {
  std::uint32_t d[8];
  const std::uint32_t borrow = sub_modulus(x, d);
  fr_device out;
#pragma unroll
  for (int i = 0; i < 8; ++i) out.limb[i] = borrow ? x[i] : d[i];
  return out;
}

}  // namespace fr_detail

/// a + b mod r.
__device__ __forceinline__ fr_device fr_add(const fr_device& a, const fr_device& b) {
  std::uint32_t s[8];
  asm("add.cc.u32  %0, %8,  %16;\n\t"
      "addc.cc.u32 %1, %9,  %17;\n\t"
      "addc.cc.u32 %2, %10, %18;\n\t"
      "addc.cc.u32 %3, %11, %19;\n\t"
      "addc.cc.u32 %4, %12, %20;\n\t"
      "addc.cc.u32 %5, %13, %21;\n\t"
      "addc.cc.u32 %6, %14, %22;\n\t"
      "addc.u32    %7, %15, %23;"
      : "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3]), "=r"(s[4]), "=r"(s[5]), "=r"(s[6]), "=r"(s[7])
      : "r"(a.limb[0]), "r"(a.limb[1]), "r"(a.limb[2]), "r"(a.limb[3]), "r"(a.limb[4]),
        "r"(a.limb[5]), "r"(a.limb[6]), "r"(a.limb[7]), "r"(b.limb[0]), "r"(b.limb[1]),
        "r"(b.limb[2]), "r"(b.limb[3]), "r"(b.limb[4]), "r"(b.limb[5]), "r"(b.limb[6]),
        "r"(b.limb[7]));
  return fr_detail::reduce_once(s);  // a + b < 2r < 2^256: no carry out of the top limb
}

/// a - b mod r.
__device__ __forceinline__ fr_device fr_sub(const fr_device& a, const fr_device& b) {
  std::uint32_t d[8];
  std::uint32_t borrow;
  asm("sub.cc.u32  %0, %9,  %17;\n\t"
      "subc.cc.u32 %1, %10, %18;\n\t"
      "subc.cc.u32 %2, %11, %19;\n\t"
      "subc.cc.u32 %3, %12, %20;\n\t"
      "subc.cc.u32 %4, %13, %21;\n\t"
      "subc.cc.u32 %5, %14, %22;\n\t"
      "subc.cc.u32 %6, %15, %23;\n\t"
      "subc.cc.u32 %7, %16, %24;\n\t"
      "subc.u32    %8, 0, 0;"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]),
        "=r"(d[7]), "=r"(borrow)
      : "r"(a.limb[0]), "r"(a.limb[1]), "r"(a.limb[2]), "r"(a.limb[3]), "r"(a.limb[4]),
        "r"(a.limb[5]), "r"(a.limb[6]), "r"(a.limb[7]), "r"(b.limb[0]), "r"(b.limb[1]),
        "r"(b.limb[2]), "r"(b.limb[3]), "r"(b.limb[4]), "r"(b.limb[5]), "r"(b.limb[6]),
        "r"(b.limb[7]));
  // Borrowed: add r back (masked, so there is no branch).
  fr_device out;
  asm("add.cc.u32  %0, %8,  %16;\n\t"
      "addc.cc.u32 %1, %9,  %17;\n\t"
      "addc.cc.u32 %2, %10, %18;\n\t"
      "addc.cc.u32 %3, %11, %19;\n\t"
      "addc.cc.u32 %4, %12, %20;\n\t"
      "addc.cc.u32 %5, %13, %21;\n\t"
      "addc.cc.u32 %6, %14, %22;\n\t"
      "addc.u32    %7, %15, %23;"
      : "=r"(out.limb[0]), "=r"(out.limb[1]), "=r"(out.limb[2]), "=r"(out.limb[3]),
        "=r"(out.limb[4]), "=r"(out.limb[5]), "=r"(out.limb[6]), "=r"(out.limb[7])
      : "r"(d[0]), "r"(d[1]), "r"(d[2]), "r"(d[3]), "r"(d[4]), "r"(d[5]), "r"(d[6]), "r"(d[7]),
        "r"(fr_detail::r0 & borrow), "r"(fr_detail::r1 & borrow), "r"(fr_detail::r2 & borrow),
        "r"(fr_detail::r3 & borrow), "r"(fr_detail::r4 & borrow), "r"(fr_detail::r5 & borrow),
        "r"(fr_detail::r6 & borrow), "r"(fr_detail::r7 & borrow));
  return out;
}

/// a * b * 2^-256 mod r (the Montgomery product: the product of the elements a and b represent).
///
/// The running value T is held as E + 2^32 O: E (limb k at weight 2^32k) collects the products of
/// a's and r's even limbs, O (limb k at weight 2^32(k+1)) those of their odd limbs. Each product's
/// two halves then land in adjacent limbs of one accumulator, and E's and O's carry chains are
/// independent. A round adds a * b_i, picks m = -E_0 (r^-1 = -1 mod 2^32, and E_0 is T's lowest
/// limb), adds m * r, which clears E_0 and moves O_0 (weight 2^32, as E_1) into E's chain, and
/// divides by 2^32 by renaming limbs. E and O each stay below 2^227, T below 2r as in CIOS.
__device__ __forceinline__ fr_device fr_mul(const fr_device& a, const fr_device& b) {
  using namespace fr_detail;
  std::uint32_t e[9];
  std::uint32_t o[9];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const std::uint32_t bi = b.limb[i];
    if (i == 0) {  // E and O start at zero: plain products
      mul_pairs(o, a.limb[1], a.limb[3], a.limb[5], a.limb[7], bi);
      mul_pairs(e, a.limb[0], a.limb[2], a.limb[4], a.limb[6], bi);
    } else {
      mul_add_pairs(o, a.limb[1], a.limb[3], a.limb[5], a.limb[7], bi);
      mul_add_pairs(e, a.limb[0], a.limb[2], a.limb[4], a.limb[6], bi);
    }
    const std::uint32_t m = e[0] * r_inv;
    mul_add_pairs(o, r1, r3, r5, r7, m);
    mul_add_modulus_even(e, m, o[0]);
    // e[0] is now zero and o[0] has moved into e[1]: divide by 2^32.
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      e[j] = e[j + 1];
      o[j] = o[j + 1];
    }
    e[8] = 0;
    o[8] = 0;
  }
  // T = E + 2^32 O < 2r < 2^256, so O's limb 7 is zero and the sum does not carry out.
  std::uint32_t t[8];
  asm("add.cc.u32  %0, %7,  %14;\n\t"
      "addc.cc.u32 %1, %8,  %15;\n\t"
      "addc.cc.u32 %2, %9,  %16;\n\t"
      "addc.cc.u32 %3, %10, %17;\n\t"
      "addc.cc.u32 %4, %11, %18;\n\t"
      "addc.cc.u32 %5, %12, %19;\n\t"
      "addc.u32    %6, %13, %20;"
      : "=r"(t[1]), "=r"(t[2]), "=r"(t[3]), "=r"(t[4]), "=r"(t[5]), "=r"(t[6]), "=r"(t[7])
      : "r"(e[1]), "r"(e[2]), "r"(e[3]), "r"(e[4]), "r"(e[5]), "r"(e[6]), "r"(e[7]), "r"(o[0]),
        "r"(o[1]), "r"(o[2]), "r"(o[3]), "r"(o[4]), "r"(o[5]), "r"(o[6]));
  t[0] = e[0];
  return reduce_once(t);
}

__device__ __forceinline__ fr_device operator+(const fr_device& a, const fr_device& b) { return fr_add(a, b); }
__device__ __forceinline__ fr_device operator-(const fr_device& a, const fr_device& b) { return fr_sub(a, b); }
__device__ __forceinline__ fr_device operator*(const fr_device& a, const fr_device& b) { return fr_mul(a, b); }

/// Loads and stores as two 16-byte accesses (elements are 32-byte aligned).
__device__ __forceinline__ fr_device fr_load(const fr_device* p) {
  const uint4 lo = reinterpret_cast<const uint4*>(p)[0];
  const uint4 hi = reinterpret_cast<const uint4*>(p)[1];
  return fr_device{{lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w}};
}
/// A read-only load through the non-coherent cache (tables).
__device__ __forceinline__ fr_device fr_load_ldg(const fr_device* p) {
  const uint4 lo = __ldg(reinterpret_cast<const uint4*>(p));
  const uint4 hi = __ldg(reinterpret_cast<const uint4*>(p) + 1);
  return fr_device{{lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w}};
}
__device__ __forceinline__ void fr_store(fr_device* p, const fr_device& v) {
  reinterpret_cast<uint4*>(p)[0] = make_uint4(v.limb[0], v.limb[1], v.limb[2], v.limb[3]);
  reinterpret_cast<uint4*>(p)[1] = make_uint4(v.limb[4], v.limb[5], v.limb[6], v.limb[7]);
}

}  // namespace coprove::cuda
