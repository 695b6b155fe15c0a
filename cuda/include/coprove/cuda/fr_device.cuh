// BLS12-381 Fr on the GPU: 8 x 32-bit little-endian limbs in Montgomery form (R = 2^256 mod r),
// byte for byte the layout of field::fr. Values are always fully reduced (< r), so equal elements
// have equal bytes and GPU results compare bit for bit with the CPU's.
//
// The multiplication is word-by-word (CIOS-order) Montgomery with PTX carry chains, the running
// value split in two accumulators, one for the products of a's and r's even limbs and one, a limb
// up, for those of the odd limbs: within one accumulator a row's four products sit in disjoint limb
// pairs, so each low half (mad.lo.cc) is followed by its own high half (madc.hi.cc) on adjacent
// registers and ptxas issues the pair as one wide multiply-add (IMAD.WIDE.U32.X). The division by
// 2^32 of each round is a swap of the two accumulators' roles (the odd one, a limb up, becomes the
// new even one), with the shift by two limbs of the old even one folded into the next round's
// multiply-adds, so no limb is moved. r's limbs and -r^-1 are read from constant memory: when
// ptxas can see that -r^-1 = -1 (m = -e_0), it rewrites the products with m into about 25% more
// instructions. Every carry chain is a single asm statement: the carry flag does not survive
// between statements.
//
// fr_sub_lazy leaves a difference in [1, 2r - 1] for a multiplication's second operand: the
// Montgomery product of a < r and b < 2r is below a b / 2^256 + r < 2r before its final
// subtraction, so it still comes out fully reduced (the bounds inside the product depend only on
// a < r and on b's limbs being 32-bit words).
#pragma once

#include <coprove/field/fr_constants.hpp>

#include <cstdint>

namespace coprove::cuda {

struct fr_device {
  std::uint32_t limb[8];
};

namespace fr_detail {

// r, little-endian 32-bit limbs, from field::constants (the one copy of r).
constexpr std::uint32_t low_word(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
constexpr std::uint32_t high_word(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }
inline constexpr std::uint32_t r0 = low_word(field::constants::fr_modulus[0]),
                               r1 = high_word(field::constants::fr_modulus[0]),
                               r2 = low_word(field::constants::fr_modulus[1]),
                               r3 = high_word(field::constants::fr_modulus[1]),
                               r4 = low_word(field::constants::fr_modulus[2]),
                               r5 = high_word(field::constants::fr_modulus[2]),
                               r6 = low_word(field::constants::fr_modulus[3]),
                               r7 = high_word(field::constants::fr_modulus[3]);
static_assert(r1 == 0xffffffffu && r7 == 0x73eda753u, "r's 32-bit limbs");
static_assert(r0 == 1, "mul_round adds m for the product m * r_0");
// -r^-1 mod 2^32.
inline constexpr std::uint32_t r_inv = low_word(field::constants::fr_inv);
static_assert(r_inv == 0xffffffffu, "-r^-1 mod 2^32");
// The same in constant memory, for the multiplication: not const, so the compiler cannot fold them
// (see the top of the file).
static __constant__ std::uint32_t modulus_limbs[8] = {r0, r1, r2, r3, r4, r5, r6, r7};
static __constant__ std::uint32_t modulus_inv = r_inv;

/// One round of the product with limb b_i: e is the even accumulator (limb k at weight 2^32k), o
/// the odd one (limb k at weight 2^32(k+1)). The first round starts both from the plain products.
/// Later rounds enter with the previous round's roles swapped: o is the old even accumulator,
/// whose limb 0 is zero and whose limb 1 now sits at weight 1, so it is added into e's limb 0 and
/// o's other limbs move down two places as the odd products are added. Then m = -e_0 r^-1 and
/// m r is added (even limbs of r into e, odd ones into o), which clears e's limb 0. The carries
/// out of e's chains land in o's top limb (the same weight); o's own chains cannot carry out: the
/// round's sum e + 2^32 o = T + a b_i + m r < 2r + 2 (2^32 - 1) r = 2^33 r < 2^288 (CIOS keeps
/// T < 2r for a < r), and every step only adds, so o stays below 2^256 throughout.
__device__ __forceinline__ void mul_round(std::uint32_t (&e)[8], std::uint32_t (&o)[8], const std::uint32_t (&a)[8],
                                          std::uint32_t bi, bool first) {
  if (first) {
#pragma unroll
    for (int j = 0; j < 8; j += 2) {
      o[j] = a[j + 1] * bi;
      o[j + 1] = __umulhi(a[j + 1], bi);
      e[j] = a[j] * bi;
      e[j + 1] = __umulhi(a[j], bi);
    }
  } else {
    // In place: each instruction reads o[j + 2] before the chain overwrites it.
    asm("add.cc.u32     %0, %0,  %2;\n\t"
        "madc.lo.cc.u32 %1, %9,  %13, %3;\n\t"
        "madc.hi.cc.u32 %2, %9,  %13, %4;\n\t"
        "madc.lo.cc.u32 %3, %10, %13, %5;\n\t"
        "madc.hi.cc.u32 %4, %10, %13, %6;\n\t"
        "madc.lo.cc.u32 %5, %11, %13, %7;\n\t"
        "madc.hi.cc.u32 %6, %11, %13, %8;\n\t"
        "madc.lo.cc.u32 %7, %12, %13, 0;\n\t"
        "madc.hi.u32    %8, %12, %13, 0;"
        : "+r"(e[0]), "+r"(o[0]), "+r"(o[1]), "+r"(o[2]), "+r"(o[3]), "+r"(o[4]), "+r"(o[5]), "+r"(o[6]),
          "+r"(o[7])
        : "r"(a[1]), "r"(a[3]), "r"(a[5]), "r"(a[7]), "r"(bi));
    asm("mad.lo.cc.u32  %0, %9,  %13, %0;\n\t"
        "madc.hi.cc.u32 %1, %9,  %13, %1;\n\t"
        "madc.lo.cc.u32 %2, %10, %13, %2;\n\t"
        "madc.hi.cc.u32 %3, %10, %13, %3;\n\t"
        "madc.lo.cc.u32 %4, %11, %13, %4;\n\t"
        "madc.hi.cc.u32 %5, %11, %13, %5;\n\t"
        "madc.lo.cc.u32 %6, %12, %13, %6;\n\t"
        "madc.hi.cc.u32 %7, %12, %13, %7;\n\t"
        "addc.u32       %8, %8,  0;"
        : "+r"(e[0]), "+r"(e[1]), "+r"(e[2]), "+r"(e[3]), "+r"(e[4]), "+r"(e[5]), "+r"(e[6]), "+r"(e[7]),
          "+r"(o[7])
        : "r"(a[0]), "r"(a[2]), "r"(a[4]), "r"(a[6]), "r"(bi));
  }
  const std::uint32_t m = e[0] * modulus_inv;
  asm("mad.lo.cc.u32  %0, %8,  %12, %0;\n\t"
      "madc.hi.cc.u32 %1, %8,  %12, %1;\n\t"
      "madc.lo.cc.u32 %2, %9,  %12, %2;\n\t"
      "madc.hi.cc.u32 %3, %9,  %12, %3;\n\t"
      "madc.lo.cc.u32 %4, %10, %12, %4;\n\t"
      "madc.hi.cc.u32 %5, %10, %12, %5;\n\t"
      "madc.lo.cc.u32 %6, %11, %12, %6;\n\t"
      "madc.hi.u32    %7, %11, %12, %7;"
      : "+r"(o[0]), "+r"(o[1]), "+r"(o[2]), "+r"(o[3]), "+r"(o[4]), "+r"(o[5]), "+r"(o[6]), "+r"(o[7])
      : "r"(modulus_limbs[1]), "r"(modulus_limbs[3]), "r"(modulus_limbs[5]), "r"(modulus_limbs[7]), "r"(m));
  // r_0 = 1: the first even product is m itself, an add (two integer-pipe additions instead of a wide
  // multiply-add on the busier multiply pipe).
  asm("add.cc.u32     %0, %0,  %12;\n\t"
      "addc.cc.u32    %1, %1,  0;\n\t"
      "madc.lo.cc.u32 %2, %9,  %12, %2;\n\t"
      "madc.hi.cc.u32 %3, %9,  %12, %3;\n\t"
      "madc.lo.cc.u32 %4, %10, %12, %4;\n\t"
      "madc.hi.cc.u32 %5, %10, %12, %5;\n\t"
      "madc.lo.cc.u32 %6, %11, %12, %6;\n\t"
      "madc.hi.cc.u32 %7, %11, %12, %7;\n\t"
      "addc.u32       %8, %8,  0;"
      : "+r"(e[0]), "+r"(e[1]), "+r"(e[2]), "+r"(e[3]), "+r"(e[4]), "+r"(e[5]), "+r"(e[6]), "+r"(e[7]),
        "+r"(o[7])
      : "r"(modulus_limbs[2]), "r"(modulus_limbs[4]), "r"(modulus_limbs[6]), "r"(m));
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

/// a - b + r for a, b < r: congruent to a - b and in [1, 2r - 1], not fully reduced (no compare and
/// no select). Only for the second operand of fr_mul, which accepts values below 2r.
__device__ __forceinline__ fr_device fr_sub_lazy(const fr_device& a, const fr_device& b) {
  fr_device out;
  asm("sub.cc.u32  %0, %8,  %16;\n\t"
      "subc.cc.u32 %1, %9,  %17;\n\t"
      "subc.cc.u32 %2, %10, %18;\n\t"
      "subc.cc.u32 %3, %11, %19;\n\t"
      "subc.cc.u32 %4, %12, %20;\n\t"
      "subc.cc.u32 %5, %13, %21;\n\t"
      "subc.cc.u32 %6, %14, %22;\n\t"
      "subc.u32    %7, %15, %23;\n\t"
      "add.cc.u32  %0, %0,  %24;\n\t"
      "addc.cc.u32 %1, %1,  %25;\n\t"
      "addc.cc.u32 %2, %2,  %26;\n\t"
      "addc.cc.u32 %3, %3,  %27;\n\t"
      "addc.cc.u32 %4, %4,  %28;\n\t"
      "addc.cc.u32 %5, %5,  %29;\n\t"
      "addc.cc.u32 %6, %6,  %30;\n\t"
      "addc.u32    %7, %7,  %31;"
      : "=r"(out.limb[0]), "=r"(out.limb[1]), "=r"(out.limb[2]), "=r"(out.limb[3]), "=r"(out.limb[4]),
        "=r"(out.limb[5]), "=r"(out.limb[6]), "=r"(out.limb[7])
      : "r"(a.limb[0]), "r"(a.limb[1]), "r"(a.limb[2]), "r"(a.limb[3]), "r"(a.limb[4]), "r"(a.limb[5]),
        "r"(a.limb[6]), "r"(a.limb[7]), "r"(b.limb[0]), "r"(b.limb[1]), "r"(b.limb[2]), "r"(b.limb[3]),
        "r"(b.limb[4]), "r"(b.limb[5]), "r"(b.limb[6]), "r"(b.limb[7]), "n"(fr_detail::r0), "n"(fr_detail::r1),
        "n"(fr_detail::r2), "n"(fr_detail::r3), "n"(fr_detail::r4), "n"(fr_detail::r5), "n"(fr_detail::r6),
        "n"(fr_detail::r7));
  return out;
}

/// a * b * 2^-256 mod r (the Montgomery product: the product of the elements a and b represent).
/// a must be fully reduced (< r); b may also be a lazy value below 2r (fr_sub_lazy). The result is
/// fully reduced.
__device__ __forceinline__ fr_device fr_mul(const fr_device& a, const fr_device& b) {
  using namespace fr_detail;
  std::uint32_t x[8];
  std::uint32_t y[8];
#pragma unroll
  for (int i = 0; i < 8; i += 2) {
    mul_round(x, y, a.limb, b.limb[i], i == 0);
    mul_round(y, x, a.limb, b.limb[i + 1], false);
  }
  // After the last round T = Y + 2^32 X with Y_0 = 0, so T / 2^32 = X + (Y >> 32) < 2r < 2^256.
  std::uint32_t t[8];
  asm("add.cc.u32  %0, %8,  %16;\n\t"
      "addc.cc.u32 %1, %9,  %17;\n\t"
      "addc.cc.u32 %2, %10, %18;\n\t"
      "addc.cc.u32 %3, %11, %19;\n\t"
      "addc.cc.u32 %4, %12, %20;\n\t"
      "addc.cc.u32 %5, %13, %21;\n\t"
      "addc.cc.u32 %6, %14, %22;\n\t"
      "addc.u32    %7, %15, 0;"
      : "=r"(t[0]), "=r"(t[1]), "=r"(t[2]), "=r"(t[3]), "=r"(t[4]), "=r"(t[5]), "=r"(t[6]), "=r"(t[7])
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]), "r"(y[1]),
        "r"(y[2]), "r"(y[3]), "r"(y[4]), "r"(y[5]), "r"(y[6]), "r"(y[7]));
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
