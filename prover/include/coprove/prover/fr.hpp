// The BLS12-381 scalar field Fr on the CPU: four 64-bit little-endian limbs in Montgomery form
// (R = 2^256 mod r). The bytes of an fr are exactly the bytes of the GPU's 8 x 32-bit Montgomery
// representation, so buffers move between host and device without conversion. The arithmetic is
// inline because the NTT, the quotient and synthesis spend nearly all their time in it. The
// multiplication has two paths with identical results: portable C++ on 128-bit products, and on
// x86-64 MULX/ADCX/ADOX assembly, taken when CPUID reports BMI2 and ADX (chosen once at start-up,
// not at compile time, so one binary runs on any x86-64 CPU); fr_multiply_path_name() says which.
#pragma once

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

namespace coprove::prover {

namespace detail {

using limbs4 = std::array<std::uint64_t, 4>;
using u128 = unsigned __int128;

/// r, the group order of BLS12-381 (little-endian limbs).
inline constexpr limbs4 fr_modulus{0xffffffff00000001ULL, 0x53bda402fffe5bfeULL,
                                   0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};
/// R = 2^256 mod r: the Montgomery form of one.
inline constexpr limbs4 fr_r{0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
                             0x1824b159acc5056fULL};
/// R^2 mod r: converts a canonical value into Montgomery form with one multiplication.
inline constexpr limbs4 fr_r2{0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL,
                              0x0748d9d99f59ff11ULL};
/// -r^-1 mod 2^64.
inline constexpr std::uint64_t fr_inv = 0xfffffffeffffffffULL;

/// a + b + carry (carry is 0 or 1), returning the low word and leaving the carry out in carry.
inline std::uint64_t adc(std::uint64_t a, std::uint64_t b, std::uint64_t& carry) noexcept {
#if defined(__x86_64__)
  unsigned long long out;
  carry = _addcarry_u64(static_cast<unsigned char>(carry), a, b, &out);
  return out;
#else
  const u128 t = static_cast<u128>(a) + b + carry;
  carry = static_cast<std::uint64_t>(t >> 64);
  return static_cast<std::uint64_t>(t);
#endif
}

/// a - b - borrow (borrow is 0 or 1), returning the low word and the new borrow.
inline std::uint64_t sbb(std::uint64_t a, std::uint64_t b, std::uint64_t& borrow) noexcept {
#if defined(__x86_64__)
  unsigned long long out;
  borrow = _subborrow_u64(static_cast<unsigned char>(borrow), a, b, &out);
  return out;
#else
  const u128 t = static_cast<u128>(a) - b - borrow;
  borrow = static_cast<std::uint64_t>(t >> 127);
  return static_cast<std::uint64_t>(t);
#endif
}

/// a + b * c + carry: fits in 128 bits for any 64-bit inputs.
inline std::uint64_t mac(std::uint64_t a, std::uint64_t b, std::uint64_t c,
                         std::uint64_t& carry) noexcept {
  const u128 t = static_cast<u128>(b) * c + a + carry;
  carry = static_cast<std::uint64_t>(t >> 64);
  return static_cast<std::uint64_t>(t);
}

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
#if defined(__OPTIMIZE__)
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

#if defined(__OPTIMIZE__)
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
#endif  // __OPTIMIZE__
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

}  // namespace coprove::prover
