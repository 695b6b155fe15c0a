// The BLS12-381 scalar field Fr on the CPU: four 64-bit little-endian limbs in Montgomery form
// (R = 2^256 mod r). The bytes of an fr are exactly the bytes of the GPU's 8 x 32-bit Montgomery
// representation, so buffers move between host and device without conversion. The arithmetic is
// inline because the NTT, the quotient and synthesis spend nearly all their time in it. The
// multiplication has two paths with identical results: portable C++ on 128-bit products, and on
// x86-64 MULX/ADCX/ADOX assembly, taken when CPUID reports BMI2 and ADX (chosen once at start-up,
// not at compile time, so one binary runs on any x86-64 CPU); fr_multiply_path_name() says which.
// The x86-64 path also has latency-oriented kernels for dependent chains (the MiMC witness), in
// optimized builds.
#pragma once

#include <coprove/field/detail/limbs.hpp>
#include <coprove/field/fr_constants.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace coprove::field {

namespace detail {

using limbs4 = std::array<std::uint64_t, 4>;

/// r, the group order of BLS12-381 (little-endian limbs; the numbers live in fr_constants.hpp).
inline constexpr limbs4 fr_modulus{constants::fr_modulus[0], constants::fr_modulus[1], constants::fr_modulus[2],
                                   constants::fr_modulus[3]};
/// R = 2^256 mod r: the Montgomery form of one.
inline constexpr limbs4 fr_r{constants::fr_r[0], constants::fr_r[1], constants::fr_r[2], constants::fr_r[3]};
/// R^2 mod r: converts a canonical value into Montgomery form with one multiplication.
inline constexpr limbs4 fr_r2{constants::fr_r2[0], constants::fr_r2[1], constants::fr_r2[2], constants::fr_r2[3]};
/// -r^-1 mod 2^64.
inline constexpr std::uint64_t fr_inv = constants::fr_inv;

/// Subtracts r once when x >= r (x < 2r).
inline void reduce_once(limbs4& x) noexcept {
  std::uint64_t borrow = 0;
  limbs4 t;
  t[0] = sbb(x[0], fr_modulus[0], borrow);
  t[1] = sbb(x[1], fr_modulus[1], borrow);
  t[2] = sbb(x[2], fr_modulus[2], borrow);
  t[3] = sbb(x[3], fr_modulus[3], borrow);
  // Branch-free select: whether x >= r is data-dependent and unpredictable.
  const std::uint64_t keep = 0 - borrow;  // all ones when x < r
  x[0] = (x[0] & keep) | (t[0] & ~keep);
  x[1] = (x[1] & keep) | (t[1] & ~keep);
  x[2] = (x[2] & keep) | (t[2] & ~keep);
  x[3] = (x[3] & keep) | (t[3] & ~keep);
}

/// Montgomery product a * b * R^-1 mod r with 128-bit products, for any 64-bit target (CIOS; r's
/// top limb leaves a spare bit, so the running value never needs a fifth carry word).
inline limbs4 mont_mul_portable(const limbs4& a, const limbs4& b) noexcept {
  std::uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  for (int i = 0; i < 4; ++i) {
    std::uint64_t carry = 0;
    t0 = mac(t0, a[0], b[i], carry);
    t1 = mac(t1, a[1], b[i], carry);
    t2 = mac(t2, a[2], b[i], carry);
    t3 = mac(t3, a[3], b[i], carry);
    const std::uint64_t top = carry;
    const std::uint64_t m = t0 * fr_inv;
    carry = 0;
    (void)mac(t0, m, fr_modulus[0], carry);
    t0 = mac(t1, m, fr_modulus[1], carry);
    t1 = mac(t2, m, fr_modulus[2], carry);
    t2 = mac(t3, m, fr_modulus[3], carry);
    t3 = top + carry;
  }
  limbs4 out{t0, t1, t2, t3};
  reduce_once(out);
  return out;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COPROVE_FR_HAVE_ADX_PATH 1
// COPROVE_FR_ASM (1 or 0) is fixed for a whole build by CMake (option COPROVE_FR_ASM, carried by
// the coprove::field target): 1 compiles the full assembly (squaring and the lazy products too),
// which needs an optimizing compile; 0 is for unoptimized builds. It must not follow each
// translation unit's own flags: inline bodies that differ between units break the one-definition
// rule (a debug test linked with a release library would mix them).
#if !defined(COPROVE_FR_ASM)
#error "COPROVE_FR_ASM is not defined: link the coprove::field target, or define it (1 or 0) as the library was built"
#elif COPROVE_FR_ASM && !defined(__OPTIMIZE__)
#error "coprove::field was built with COPROVE_FR_ASM=1, whose assembly needs an optimizing compile (-O1 or more): build this unit optimized, or configure coprove with -DCOPROVE_FR_ASM=OFF"
#endif
/// The same product with MULX and two independent carry chains (ADCX on CF, ADOX on OF), the
/// same CIOS schedule as mont_mul_portable, unrolled. Needs BMI2 and ADX: call it only when
/// fr_multiply_path_supported(fr_multiply_path::x86_64_adx) (inline asm, so the compiler flags
/// need not enable those extensions).
inline limbs4 mont_mul_adx(const limbs4& a, const limbs4& b) noexcept {
  std::uint64_t r0, r1, r2, r4;
  [[maybe_unused]] std::uint64_t r3, lo, hi;  // r3 ends as scratch, like lo and hi
  __asm__(
      "movq 0(%[b]), %%rdx\n\t"
      "mulxq 0(%[a]), %[r0], %[r1]\n\t"
      "mulxq 8(%[a]), %[lo], %[r2]\n\t"
      "addq %[lo], %[r1]\n\t"
      "mulxq 16(%[a]), %[lo], %[r3]\n\t"
      "adcq %[lo], %[r2]\n\t"
      "mulxq 24(%[a]), %[lo], %[r4]\n\t"
      "adcq %[lo], %[r3]\n\t"
      "adcq $0, %[r4]\n\t"
      "movq %[r0], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r0]\n\t"
      "adcxq %[hi], %[r1]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r1]\n\t"
      "adcxq %[hi], %[r2]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r2]\n\t"
      "adcxq %[hi], %[r3]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r3]\n\t"
      "adcxq %[hi], %[r4]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[r4]\n\t"
      "movq 8(%[b]), %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "movq $0, %[r0]\n\t"
      "mulxq 0(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r1]\n\t"
      "adcxq %[hi], %[r2]\n\t"
      "mulxq 8(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r2]\n\t"
      "adcxq %[hi], %[r3]\n\t"
      "mulxq 16(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r3]\n\t"
      "adcxq %[hi], %[r4]\n\t"
      "mulxq 24(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r4]\n\t"
      "adcxq %[hi], %[r0]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[r0]\n\t"
      "movq %[r1], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r1]\n\t"
      "adcxq %[hi], %[r2]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r2]\n\t"
      "adcxq %[hi], %[r3]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r3]\n\t"
      "adcxq %[hi], %[r4]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r4]\n\t"
      "adcxq %[hi], %[r0]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[r0]\n\t"
      "movq 16(%[b]), %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "movq $0, %[r1]\n\t"
      "mulxq 0(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r2]\n\t"
      "adcxq %[hi], %[r3]\n\t"
      "mulxq 8(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r3]\n\t"
      "adcxq %[hi], %[r4]\n\t"
      "mulxq 16(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r4]\n\t"
      "adcxq %[hi], %[r0]\n\t"
      "mulxq 24(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r0]\n\t"
      "adcxq %[hi], %[r1]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[r1]\n\t"
      "movq %[r2], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r2]\n\t"
      "adcxq %[hi], %[r3]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r3]\n\t"
      "adcxq %[hi], %[r4]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r4]\n\t"
      "adcxq %[hi], %[r0]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r0]\n\t"
      "adcxq %[hi], %[r1]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[r1]\n\t"
      "movq 24(%[b]), %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "movq $0, %[r2]\n\t"
      "mulxq 0(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r3]\n\t"
      "adcxq %[hi], %[r4]\n\t"
      "mulxq 8(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r4]\n\t"
      "adcxq %[hi], %[r0]\n\t"
      "mulxq 16(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r0]\n\t"
      "adcxq %[hi], %[r1]\n\t"
      "mulxq 24(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r1]\n\t"
      "adcxq %[hi], %[r2]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[r2]\n\t"
      "movq %[r3], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r3]\n\t"
      "adcxq %[hi], %[r4]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r4]\n\t"
      "adcxq %[hi], %[r0]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r0]\n\t"
      "adcxq %[hi], %[r1]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[r1]\n\t"
      "adcxq %[hi], %[r2]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[r2]\n\t"
      : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4),
        [lo] "=&r"(lo), [hi] "=&r"(hi)
      : [a] "r"(a.data()), [b] "r"(b.data()), [p0] "m"(fr_modulus[0]), [p1] "m"(fr_modulus[1]),
        [p2] "m"(fr_modulus[2]), [p3] "m"(fr_modulus[3]), [inv] "m"(fr_inv)
#if COPROVE_FR_ASM
        // The limbs read through the pointers. Unoptimized builds run out of registers for these
        // addresses and take a memory clobber instead.
        , "m"(a), "m"(b)
      : "rdx", "cc");
#else
      : "rdx", "cc", "memory");
#endif
  // After four rounds the value sits in r4, r0, r1, r2 (each round retires one register).
  limbs4 out{r4, r0, r1, r2};
  reduce_once(out);
  return out;
}

#if COPROVE_FR_ASM
// Unoptimized builds cannot give this asm the registers it asks for; they square by multiplying.
#define COPROVE_FR_HAVE_ADX_SQUARE 1
/// a^2 * R^-1 mod r with MULX/ADCX/ADOX: the six cross products once, doubled, plus the four
/// squares (10 multiplications instead of 16), then a Montgomery reduction of the low half added
/// to the high half (< 2r, so one conditional subtraction). Same requirements as mont_mul_adx.
inline limbs4 mont_square_adx(const limbs4& a) noexcept {
  std::uint64_t t4, t5, t6, t7;
  [[maybe_unused]] std::uint64_t t0, t1, t2, t3, lo, hi;  // the reduced low half, scratch
  __asm__(
      "movq %[a0], %%rdx\n\t"
      "mulxq %[a1], %[t1], %[t2]\n\t"
      "mulxq %[a2], %[lo], %[t3]\n\t"
      "addq %[lo], %[t2]\n\t"
      "mulxq %[a3], %[lo], %[t4]\n\t"
      "adcq %[lo], %[t3]\n\t"
      "adcq $0, %[t4]\n\t"
      "movq %[a1], %%rdx\n\t"
      "xorl %k[t5], %k[t5]\n\t"
      "mulxq %[a2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t4]\n\t"
      "mulxq %[a3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "movq %[a2], %%rdx\n\t"
      "mulxq %[a3], %[lo], %[t6]\n\t"
      "addq %[lo], %[t5]\n\t"
      "adcq $0, %[t6]\n\t"
      "xorl %k[t7], %k[t7]\n\t"
      "movq %[a0], %%rdx\n\t"
      "mulxq %%rdx, %[t0], %[hi]\n\t"
      "adcxq %[t1], %[t1]\n\t"
      "adoxq %[hi], %[t1]\n\t"
      "movq %[a1], %%rdx\n\t"
      "mulxq %%rdx, %[lo], %[hi]\n\t"
      "adcxq %[t2], %[t2]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[t3], %[t3]\n\t"
      "adoxq %[hi], %[t3]\n\t"
      "movq %[a2], %%rdx\n\t"
      "mulxq %%rdx, %[lo], %[hi]\n\t"
      "adcxq %[t4], %[t4]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[t5], %[t5]\n\t"
      "adoxq %[hi], %[t5]\n\t"
      "movq %[a3], %%rdx\n\t"
      "mulxq %%rdx, %[lo], %[hi]\n\t"
      "adcxq %[t6], %[t6]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[t7], %[t7]\n\t"
      "adoxq %[hi], %[t7]\n\t"
      "movq %[t0], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "movq %[t1], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "movq %[t2], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "movq %[t3], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "addq %[t0], %[t4]\n\t"
      "adcq %[t1], %[t5]\n\t"
      "adcq %[t2], %[t6]\n\t"
      "adcq %[t3], %[t7]\n\t"
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
        [t5] "=&r"(t5), [t6] "=&r"(t6), [t7] "=&r"(t7), [lo] "=&r"(lo), [hi] "=&r"(hi)
      : [a0] "m"(a[0]), [a1] "m"(a[1]), [a2] "m"(a[2]), [a3] "m"(a[3]), [p0] "m"(fr_modulus[0]),
        [p1] "m"(fr_modulus[1]), [p2] "m"(fr_modulus[2]), [p3] "m"(fr_modulus[3]),
        [inv] "m"(fr_inv)
      : "rdx", "cc");
  limbs4 out{t4, t5, t6, t7};
  reduce_once(out);
  return out;
}

// Kernels for dependent chains (the MiMC witness: t -> t^2 -> t^4 -> t^5 -> next round). A chain
// waits for each result, so what counts is the latency from the last input word to the result,
// not the work: operands and results stay in registers (no store and reload between steps), the
// 512-bit product is formed first and only its low half is reduced (so the reduction of word 0
// starts as soon as that word exists, while the rest of the product is still being formed), the
// reduction multiplies by r's special low limb with a shift and a subtraction, and the "lazy"
// forms leave out the final conditional subtraction, which the next step does not need when the
// bounds below hold. mont_mul_adx / mont_square_adx stay the kernels behind fr's operators (the
// NTT, the quotient, everything else); these serve the MiMC round (prover/src/mimc.cpp), and
// bench_field's "...latency[x86-64 chain kernel]" and "mimc_round" rows measure them.
#define COPROVE_FR_HAVE_ADX_LATENCY 1

// One word-by-word Montgomery reduction step of the low half: m = X0 * -r^-1, then
// X0..X3 + m * r, whose low word is zero; its carry word lands in X0 (the register falls out of
// the low half as the value moves down one word). ADCX carries the high products, ADOX the low.
// r's low limb 2^64 - 2^32 + 1 spares the multiplication by it: X0 + m * r0 is exactly
// 2^64 * (m - (m >> 32) + carry(X0 + m)), because X0 + m - (m << 32) is 0 mod 2^64 by the
// choice of m. So the word X1 waits on one MULX (m * r1) rather than two. (hi holds
// m - (m >> 32) until the first MULX.)
#define COPROVE_FR_REDC_STEP(X0, X1, X2, X3)  \
  "movq %[" X0 "], %%rdx\n\t"                 \
  "imulq %[inv], %%rdx\n\t"                   \
  "movq %%rdx, %[lo]\n\t"                     \
  "shrq $32, %[lo]\n\t"                       \
  "movq %%rdx, %[hi]\n\t"                     \
  "subq %[lo], %[hi]\n\t"                     \
  "xorl %k[lo], %k[lo]\n\t"                   \
  "adcxq %%rdx, %[" X0 "]\n\t"                \
  "adcxq %[hi], %[" X1 "]\n\t"                \
  "mulxq %[p1], %[lo], %[hi]\n\t"             \
  "adoxq %[lo], %[" X1 "]\n\t"                \
  "adcxq %[hi], %[" X2 "]\n\t"                \
  "mulxq %[p2], %[lo], %[hi]\n\t"             \
  "adoxq %[lo], %[" X2 "]\n\t"                \
  "adcxq %[hi], %[" X3 "]\n\t"                \
  "mulxq %[p3], %[lo], %[hi]\n\t"             \
  "movl $0, %k[" X0 "]\n\t"                   \
  "adoxq %[lo], %[" X3 "]\n\t"                \
  "adcxq %[hi], %[" X0 "]\n\t"                \
  "movl $0, %k[lo]\n\t"                       \
  "adoxq %[lo], %[" X0 "]\n\t"

// The four reduction steps of t0..t3 (a value below r + 1 afterwards), added to t4..t7.
#define COPROVE_FR_REDC_LOW_HALF                   \
  COPROVE_FR_REDC_STEP("t0", "t1", "t2", "t3")     \
  COPROVE_FR_REDC_STEP("t1", "t2", "t3", "t0")     \
  COPROVE_FR_REDC_STEP("t2", "t3", "t0", "t1")     \
  COPROVE_FR_REDC_STEP("t3", "t0", "t1", "t2")     \
  "addq %[t0], %[t4]\n\t"                          \
  "adcq %[t1], %[t5]\n\t"                          \
  "adcq %[t2], %[t6]\n\t"                          \
  "adcq %[t3], %[t7]\n\t"

#define COPROVE_FR_REDC_CONSTANTS \
  [p1] "m"(fr_modulus[1]), [p2] "m"(fr_modulus[2]), [p3] "m"(fr_modulus[3]), [inv] "m"(fr_inv)

/// a^2 * R^-1 mod r, possibly plus r: a value below a^2 / 2^256 + r, congruent to the Montgomery
/// square. Needs a^2 < r * 2^256 (a < 1.486 r), which keeps the result below 2r; for any a < r
/// the result is below 1.453 r, so it can be squared again this way. Same requirements as
/// mont_mul_adx (BMI2 and ADX).
inline limbs4 mont_square_lazy_adx(const limbs4& a) noexcept {
  // a0 is read once, into rdx, before its register becomes t0; a1..a3 are read up to the end
  // of the product (the diagonal squares), so with a frame pointer (14 free registers for the
  // 11 of the kernel and these three) the compiler may pass one of them from memory.
  std::uint64_t t0 = a[0], t1, t2, t3, t4, t5, t6, t7, lo, hi;
  __asm__(
      // a0 * (a0, a1, a2, a3): a0^2 waits in t0 (low word of the product) and t7.
      "movq %[t0], %%rdx\n\t"
      "mulxq %%rdx, %[t0], %[t7]\n\t"
      "mulxq %[a1], %[t1], %[t2]\n\t"
      "mulxq %[a2], %[lo], %[t3]\n\t"
      "mulxq %[a3], %[hi], %[t4]\n\t"
      "addq %[lo], %[t2]\n\t"
      "adcq %[hi], %[t3]\n\t"
      "adcq $0, %[t4]\n\t"
      // a1 * (a2, a3) at words 3..5, t6 as scratch.
      "movq %[a1], %%rdx\n\t"
      "mulxq %[a2], %[lo], %[hi]\n\t"
      "mulxq %[a3], %[t6], %[t5]\n\t"
      "addq %[lo], %[t3]\n\t"
      "adcq %[hi], %[t4]\n\t"
      "adcq $0, %[t5]\n\t"
      "addq %[t6], %[t4]\n\t"
      // a2 * a3 at words 5..6 (the carry of the previous addition included).
      "movq %[a2], %%rdx\n\t"
      "mulxq %[a3], %[lo], %[t6]\n\t"
      "adcq %[lo], %[t5]\n\t"
      "adcq $0, %[t6]\n\t"
      // Double the cross products (ADCX) and add the squares (ADOX).
      "movq %[t7], %[hi]\n\t"
      "xorl %k[t7], %k[t7]\n\t"
      "adcxq %[t1], %[t1]\n\t"
      "adoxq %[hi], %[t1]\n\t"
      "movq %[a1], %%rdx\n\t"
      "mulxq %%rdx, %[lo], %[hi]\n\t"
      "adcxq %[t2], %[t2]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[t3], %[t3]\n\t"
      "adoxq %[hi], %[t3]\n\t"
      "movq %[a2], %%rdx\n\t"
      "mulxq %%rdx, %[lo], %[hi]\n\t"
      "adcxq %[t4], %[t4]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[t5], %[t5]\n\t"
      "adoxq %[hi], %[t5]\n\t"
      "movq %[a3], %%rdx\n\t"
      "mulxq %%rdx, %[lo], %[hi]\n\t"
      "adcxq %[t6], %[t6]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[t7], %[t7]\n\t"
      "adoxq %[hi], %[t7]\n\t"
      COPROVE_FR_REDC_LOW_HALF
      : [t0] "+&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
        [t5] "=&r"(t5), [t6] "=&r"(t6), [t7] "=&r"(t7), [lo] "=&r"(lo), [hi] "=&r"(hi)
      : [a1] "rm"(a[1]), [a2] "rm"(a[2]), [a3] "rm"(a[3]), COPROVE_FR_REDC_CONSTANTS
      : "rdx", "cc");
  return {t4, t5, t6, t7};
}

/// a * b * R^-1 mod r, possibly plus r: a value below a * b / 2^256 + r, congruent to the
/// Montgomery product. Needs a * b < r * 2^256 (e.g. a < 2r and b < r), which keeps the result
/// below 2r. `a` is the operand the chain waits for (kept in registers); `b` is read from memory.
/// Same requirements as mont_mul_adx (BMI2 and ADX).
inline limbs4 mont_mul_lazy_adx(const limbs4& a, const limbs4& b) noexcept {
  // Each a_i is read once, into rdx, at the start of its row; the product words t5..t7 take the
  // registers of a1..a3 as those rows begin, so the kernel needs 11 registers besides b's address.
  std::uint64_t t0 = a[0], t5 = a[1], t6 = a[2], t7 = a[3], t1, t2, t3, t4, lo, hi;
  __asm__(
      "movq %[t0], %%rdx\n\t"
      "mulxq 0(%[b]), %[t0], %[t1]\n\t"
      "mulxq 8(%[b]), %[lo], %[t2]\n\t"
      "mulxq 16(%[b]), %[hi], %[t3]\n\t"
      "addq %[lo], %[t1]\n\t"
      "adcq %[hi], %[t2]\n\t"
      "mulxq 24(%[b]), %[lo], %[t4]\n\t"
      "adcq %[lo], %[t3]\n\t"
      "adcq $0, %[t4]\n\t"
// a_i * b added at words i..i+4 (X5 is the register that held a_i, now the row's top word).
#define COPROVE_FR_MUL_ROW(X1, X2, X3, X4, X5) \
  "movq %[" X5 "], %%rdx\n\t"                \
  "xorl %k[" X5 "], %k[" X5 "]\n\t"          \
  "mulxq 0(%[b]), %[lo], %[hi]\n\t"          \
  "adoxq %[lo], %[" X1 "]\n\t"               \
  "adcxq %[hi], %[" X2 "]\n\t"               \
  "mulxq 8(%[b]), %[lo], %[hi]\n\t"          \
  "adoxq %[lo], %[" X2 "]\n\t"               \
  "adcxq %[hi], %[" X3 "]\n\t"               \
  "mulxq 16(%[b]), %[lo], %[hi]\n\t"         \
  "adoxq %[lo], %[" X3 "]\n\t"               \
  "adcxq %[hi], %[" X4 "]\n\t"               \
  "mulxq 24(%[b]), %[lo], %[hi]\n\t"         \
  "adoxq %[lo], %[" X4 "]\n\t"               \
  "adcxq %[hi], %[" X5 "]\n\t"               \
  "movl $0, %k[lo]\n\t"                      \
  "adoxq %[lo], %[" X5 "]\n\t"
      COPROVE_FR_MUL_ROW("t1", "t2", "t3", "t4", "t5")
      COPROVE_FR_MUL_ROW("t2", "t3", "t4", "t5", "t6")
      COPROVE_FR_MUL_ROW("t3", "t4", "t5", "t6", "t7")
#undef COPROVE_FR_MUL_ROW
      COPROVE_FR_REDC_LOW_HALF
      : [t0] "+&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
        [t5] "+&r"(t5), [t6] "+&r"(t6), [t7] "+&r"(t7), [lo] "=&r"(lo), [hi] "=&r"(hi)
      // b through one address register (operands of the form base + index would take two); the
      // "m" operand tells the compiler that the limbs are read.
      : [b] "r"(b.data()), "m"(b), COPROVE_FR_REDC_CONSTANTS
      : "rdx", "cc");
  return {t4, t5, t6, t7};
}

#undef COPROVE_FR_REDC_CONSTANTS
#undef COPROVE_FR_REDC_LOW_HALF
#undef COPROVE_FR_REDC_STEP

/// x - r when x >= r (x < 2r): reduce_once with the subtraction and the selection in one asm
/// block (SUB/SBB and CMOV only, so any x86-64), the operands in registers throughout.
inline limbs4 reduce_once_x86_64(const limbs4& x) noexcept {
  std::uint64_t y0 = x[0], y1 = x[1], y2 = x[2], y3 = x[3];
  __asm__(
      "subq %[p0], %[y0]\n\t"
      "sbbq %[p1], %[y1]\n\t"
      "sbbq %[p2], %[y2]\n\t"
      "sbbq %[p3], %[y3]\n\t"
      // Borrow: x < r, keep x.
      "cmovcq %[x0], %[y0]\n\t"
      "cmovcq %[x1], %[y1]\n\t"
      "cmovcq %[x2], %[y2]\n\t"
      "cmovcq %[x3], %[y3]\n\t"
      : [y0] "+&r"(y0), [y1] "+&r"(y1), [y2] "+&r"(y2), [y3] "+&r"(y3)
      : [x0] "r"(x[0]), [x1] "r"(x[1]), [x2] "r"(x[2]), [x3] "r"(x[3]),
        [p0] "m"(fr_modulus[0]), [p1] "m"(fr_modulus[1]), [p2] "m"(fr_modulus[2]),
        [p3] "m"(fr_modulus[3])
      : "cc");
  return {y0, y1, y2, y3};
}

/// The addend k of add_reduce_x86_64 with its shifted copies, prepared away from the chain.
struct lazy_addend {
  limbs4 k;            ///< k < r
  limbs4 k_minus_r;    ///< k - r + 2^256
  limbs4 k_minus_2r;   ///< k - 2r + 2^256
};

/// Prepares k (< r) for add_reduce_x86_64.
inline lazy_addend make_lazy_addend(const limbs4& k) noexcept {
  lazy_addend out{k, {}, {}};
  std::uint64_t borrow = 0;
  for (int i = 0; i < 4; ++i) out.k_minus_r[i] = sbb(k[i], fr_modulus[i], borrow);
  // 2r < 2^256: r's top bit is clear.
  const limbs4 two_r{fr_modulus[0] << 1, (fr_modulus[1] << 1) | (fr_modulus[0] >> 63),
                     (fr_modulus[2] << 1) | (fr_modulus[1] >> 63),
                     (fr_modulus[3] << 1) | (fr_modulus[2] >> 63)};
  borrow = 0;
  for (int i = 0; i < 4; ++i) out.k_minus_2r[i] = sbb(k[i], two_r[i], borrow);
  return out;
}

/// (y + k) mod r, fully reduced, for y < 2r (a lazy result) and k < r: the three candidates
/// y + k, y + k - r and y + k - 2r are formed side by side and the one in [0, r) is selected, so
/// the chain pays one addition and two selections instead of a subtraction, an addition and a
/// second subtraction.
inline limbs4 add_reduce_x86_64(const limbs4& y, const lazy_addend& k) noexcept {
  std::uint64_t v0 = y[0], v1 = y[1], v2 = y[2], v3 = y[3];
  std::uint64_t w0 = y[0], w1 = y[1], w2 = y[2], w3 = y[3];
  __asm__(
      "addq %[k0], %[v0]\n\t"
      "adcq %[k1], %[v1]\n\t"
      "adcq %[k2], %[v2]\n\t"
      "adcq %[k3], %[v3]\n\t"
      "addq %[m0], %[w0]\n\t"
      "adcq %[m1], %[w1]\n\t"
      "adcq %[m2], %[w2]\n\t"
      "adcq %[m3], %[w3]\n\t"
      // Carry: y + k >= r, take y + k - r.
      "cmovcq %[w0], %[v0]\n\t"
      "cmovcq %[w1], %[v1]\n\t"
      "cmovcq %[w2], %[v2]\n\t"
      "cmovcq %[w3], %[v3]\n\t"
      : [v0] "+&r"(v0), [v1] "+&r"(v1), [v2] "+&r"(v2), [v3] "+&r"(v3), [w0] "+&r"(w0),
        [w1] "+&r"(w1), [w2] "+&r"(w2), [w3] "+&r"(w3)
      : [k0] "m"(k.k[0]), [k1] "m"(k.k[1]), [k2] "m"(k.k[2]), [k3] "m"(k.k[3]),
        [m0] "m"(k.k_minus_r[0]), [m1] "m"(k.k_minus_r[1]), [m2] "m"(k.k_minus_r[2]),
        [m3] "m"(k.k_minus_r[3])
      : "cc");
  w0 = y[0], w1 = y[1], w2 = y[2], w3 = y[3];
  __asm__(
      "addq %[n0], %[w0]\n\t"
      "adcq %[n1], %[w1]\n\t"
      "adcq %[n2], %[w2]\n\t"
      "adcq %[n3], %[w3]\n\t"
      // Carry: y + k >= 2r, take y + k - 2r.
      "cmovcq %[w0], %[v0]\n\t"
      "cmovcq %[w1], %[v1]\n\t"
      "cmovcq %[w2], %[v2]\n\t"
      "cmovcq %[w3], %[v3]\n\t"
      : [v0] "+&r"(v0), [v1] "+&r"(v1), [v2] "+&r"(v2), [v3] "+&r"(v3), [w0] "+&r"(w0),
        [w1] "+&r"(w1), [w2] "+&r"(w2), [w3] "+&r"(w3)
      : [n0] "m"(k.k_minus_2r[0]), [n1] "m"(k.k_minus_2r[1]), [n2] "m"(k.k_minus_2r[2]),
        [n3] "m"(k.k_minus_2r[3])
      : "cc");
  return {v0, v1, v2, v3};
}

/// a^2 * R^-1 mod r for a < r (fully reduced), latency-oriented: see mont_square_lazy_adx.
inline limbs4 mont_square_latency_adx(const limbs4& a) noexcept {
  return reduce_once_x86_64(mont_square_lazy_adx(a));
}

/// a * b * R^-1 mod r for a, b < r (fully reduced), latency-oriented: see mont_mul_lazy_adx.
inline limbs4 mont_mul_latency_adx(const limbs4& a, const limbs4& b) noexcept {
  return reduce_once_x86_64(mont_mul_lazy_adx(a, b));
}
#endif  // COPROVE_FR_ASM
#endif  // x86-64

/// Whether mont_mul takes mont_mul_adx (chosen once at start-up from CPUID; see
/// set_fr_multiply_path). Zero-initialized, so code running before that choice takes the
/// portable path, which gives the same results.
extern std::atomic<bool> fr_use_adx;

/// Montgomery product a * b * R^-1 mod r on the path chosen at start-up.
inline limbs4 mont_mul(const limbs4& a, const limbs4& b) noexcept {
#if defined(COPROVE_FR_HAVE_ADX_PATH)
  if (fr_use_adx.load(std::memory_order_relaxed)) return mont_mul_adx(a, b);
#endif
  return mont_mul_portable(a, b);
}

/// a^2 * R^-1 mod r on the path chosen at start-up.
inline limbs4 mont_square(const limbs4& a) noexcept {
#if defined(COPROVE_FR_HAVE_ADX_SQUARE)
  if (fr_use_adx.load(std::memory_order_relaxed)) return mont_square_adx(a);
#elif defined(COPROVE_FR_HAVE_ADX_PATH)
  if (fr_use_adx.load(std::memory_order_relaxed)) return mont_mul_adx(a, a);
#endif
  return mont_mul_portable(a, a);
}

}  // namespace detail

/// The implementations of the Fr multiplication.
enum class fr_multiply_path {
  portable,    ///< 128-bit products in C++, any 64-bit target
  x86_64_adx,  ///< x86-64 MULX/ADCX/ADOX inline assembly (needs BMI2 and ADX)
};

/// The path's name: "portable" or "x86-64 mulx/adx".
std::string_view to_string(fr_multiply_path path) noexcept;
/// Whether this build and this CPU can run the path (x86_64_adx: x86-64 with BMI2 and ADX).
bool fr_multiply_path_supported(fr_multiply_path path) noexcept;
/// The path every Fr multiplication takes now: at start-up the fastest one the CPU supports.
fr_multiply_path active_fr_multiply_path() noexcept;
/// The name of the active path (to_string(active_fr_multiply_path())).
std::string_view fr_multiply_path_name() noexcept;
/// Switches every Fr multiplication to `path` (benchmarks and tests compare paths; results are
/// identical). Throws std::invalid_argument if the path is not supported here. Call it while no
/// other thread multiplies, or accept that they see the switch at some point.
void set_fr_multiply_path(fr_multiply_path path);
/// Logs the active path once per process at info; when it is the portable path on an x86-64
/// build (a CPU without BMI2/ADX, or a forced switch), also once at warning through
/// runtime::warn_once, counted in coprove_fr_portable_multiply_total. Later calls do nothing.
void log_fr_multiply_path_once();

/// An element of Fr, stored in Montgomery form (limbs = value * 2^256 mod r, little-endian).
struct fr {
  std::array<std::uint64_t, 4> limbs;

  static constexpr fr zero() noexcept { return fr{{0, 0, 0, 0}}; }
  static constexpr fr one() noexcept { return fr{detail::fr_r}; }
  /// The element equal to the integer v.
  static fr from_uint64(std::uint64_t v) noexcept {
    return fr{detail::mont_mul(detail::limbs4{v, 0, 0, 0}, detail::fr_r2)};
  }
  /// The element with canonical value x; throws std::invalid_argument if x >= r.
  static fr from_canonical(const std::array<std::uint64_t, 4>& x);
  /// The canonical value (0 <= value < r), little-endian limbs.
  std::array<std::uint64_t, 4> to_canonical() const noexcept {
    return detail::mont_mul(limbs, detail::limbs4{1, 0, 0, 0});
  }
  /// Parses up to 64 hex digits of a canonical value, "0x" prefix optional; throws
  /// std::invalid_argument on an empty string, a non-hex character, too many digits or a value >= r.
  static fr from_hex(std::string_view hex);
  /// "0x" followed by exactly 64 lowercase hex digits of the canonical value.
  std::string to_hex() const;
  /// The canonical value as 32 little-endian bytes.
  std::array<std::byte, 32> to_bytes_le() const noexcept;
  /// Reads 32 little-endian bytes of a canonical value; throws std::invalid_argument if >= r.
  static fr from_bytes_le(std::span<const std::byte, 32> bytes);
  /// A uniformly random element (rejection sampling on 255-bit values).
  template <class URBG>
  static fr random(URBG& gen) {
    std::uniform_int_distribution<std::uint64_t> word;
    for (;;) {
      detail::limbs4 x{word(gen), word(gen), word(gen), word(gen) & 0x7fffffffffffffffULL};
      if (less_than_modulus(x)) return fr{detail::mont_mul(x, detail::fr_r2)};
    }
  }

  fr operator+(const fr& o) const noexcept {
    // r < 2^255, so a + b < 2^256 never carries out of the top limb.
    std::uint64_t carry = 0;
    detail::limbs4 t;
    t[0] = detail::adc(limbs[0], o.limbs[0], carry);
    t[1] = detail::adc(limbs[1], o.limbs[1], carry);
    t[2] = detail::adc(limbs[2], o.limbs[2], carry);
    t[3] = detail::adc(limbs[3], o.limbs[3], carry);
    detail::reduce_once(t);
    return fr{t};
  }
  fr operator-(const fr& o) const noexcept {
    std::uint64_t borrow = 0;
    detail::limbs4 t;
    t[0] = detail::sbb(limbs[0], o.limbs[0], borrow);
    t[1] = detail::sbb(limbs[1], o.limbs[1], borrow);
    t[2] = detail::sbb(limbs[2], o.limbs[2], borrow);
    t[3] = detail::sbb(limbs[3], o.limbs[3], borrow);
    // Add r back when the subtraction borrowed, without a branch.
    const std::uint64_t mask = 0 - borrow;
    std::uint64_t carry = 0;
    t[0] = detail::adc(t[0], detail::fr_modulus[0] & mask, carry);
    t[1] = detail::adc(t[1], detail::fr_modulus[1] & mask, carry);
    t[2] = detail::adc(t[2], detail::fr_modulus[2] & mask, carry);
    t[3] = detail::adc(t[3], detail::fr_modulus[3] & mask, carry);
    return fr{t};
  }
  fr operator-() const noexcept { return zero() - *this; }
  fr operator*(const fr& o) const noexcept { return fr{detail::mont_mul(limbs, o.limbs)}; }
  fr& operator+=(const fr& o) noexcept { return *this = *this + o; }
  fr& operator-=(const fr& o) noexcept { return *this = *this - o; }
  fr& operator*=(const fr& o) noexcept { return *this = *this * o; }
  bool operator==(const fr& o) const noexcept { return limbs == o.limbs; }
  bool operator!=(const fr& o) const noexcept { return limbs != o.limbs; }

  fr square() const noexcept { return fr{detail::mont_square(limbs)}; }
  /// The multiplicative inverse (Fermat: x^(r-2)); throws std::invalid_argument for zero, which has
  /// none.
  fr inverse() const;
  /// x^e for a 64-bit exponent.
  fr pow(std::uint64_t e) const noexcept;
  /// x^e for a 256-bit exponent given as little-endian limbs.
  fr pow(const std::array<std::uint64_t, 4>& e) const noexcept;
  bool is_zero() const noexcept { return (limbs[0] | limbs[1] | limbs[2] | limbs[3]) == 0; }

 private:
  static bool less_than_modulus(const detail::limbs4& x) noexcept {
    for (int i = 3; i >= 0; --i) {
      if (x[i] != detail::fr_modulus[i]) return x[i] < detail::fr_modulus[i];
    }
    return false;
  }
};

static_assert(sizeof(fr) == 32 && std::is_trivially_copyable_v<fr>);
static_assert(std::is_standard_layout_v<fr>);

}  // namespace coprove::field
