// Limb arithmetic of Fq (six 64-bit little-endian limbs, Montgomery form): carries, the
// conditional subtraction, and the two Montgomery multiplications, portable C++ and x86-64
// MULX/ADCX/ADOX. Both are always compiled (no dependence on optimisation flags, so every
// translation unit sees the same inline functions); which one runs is chosen at start-up from
// CPUID in fq.cpp.
#pragma once

#include <coprove/field/detail/limbs.hpp>
#include <coprove/field/fq_constants.hpp>

#include <array>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace coprove::field::detail {

using limbs6 = std::array<std::uint64_t, 6>;
/// Subtracts p once when x >= p (for x < 2p), without a data-dependent branch.
inline void reduce_once(limbs6& x) noexcept {
  std::uint64_t borrow = 0;
  limbs6 t;
  for (int i = 0; i < 6; ++i) t[i] = sbb(x[i], constants::fq_modulus[i], borrow);
  const std::uint64_t keep = 0 - borrow;  // all ones when x < p
  for (int i = 0; i < 6; ++i) x[i] = (x[i] & keep) | (t[i] & ~keep);
}

/// (a + b) mod p for a, b < p (p < 2^382, so the sum never leaves six limbs).
inline limbs6 add_mod(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t carry = 0;
  limbs6 t;
  for (int i = 0; i < 6; ++i) t[i] = adc(a[i], b[i], carry);
  reduce_once(t);
  return t;
}

/// (a - b) mod p for a, b < p.
inline limbs6 sub_mod(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t borrow = 0;
  limbs6 t;
  for (int i = 0; i < 6; ++i) t[i] = sbb(a[i], b[i], borrow);
  const std::uint64_t mask = 0 - borrow;  // add p back when the subtraction borrowed
  std::uint64_t carry = 0;
  for (int i = 0; i < 6; ++i) t[i] = adc(t[i], constants::fq_modulus[i] & mask, carry);
  return t;
}

/// Whether x < p, for a canonical-value check.
inline bool less_than_modulus(const limbs6& x) noexcept {
  for (int i = 5; i >= 0; --i) {
    if (x[i] != constants::fq_modulus[i]) return x[i] < constants::fq_modulus[i];
  }
  return false;
}

/// Montgomery product a * b * R^-1 mod p with 128-bit products (CIOS). The top limb of p leaves
/// three spare bits, so the running value never needs an eighth word.
inline limbs6 mont_mul_portable(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t t[6] = {0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 6; ++i) {
    std::uint64_t carry = 0;
    for (int j = 0; j < 6; ++j) t[j] = mac(t[j], a[j], b[i], carry);
    const std::uint64_t top = carry;
    const std::uint64_t m = t[0] * constants::fq_inv;
    carry = 0;
    (void)mac(t[0], m, constants::fq_modulus[0], carry);
    for (int j = 1; j < 6; ++j) t[j - 1] = mac(t[j], m, constants::fq_modulus[j], carry);
    t[5] = top + carry;
  }
  limbs6 out{t[0], t[1], t[2], t[3], t[4], t[5]};
  reduce_once(out);
  return out;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COPROVE_FQ_HAVE_ADX_PATH 1
/// The same product with MULX and two carry chains (ADOX for the low halves, ADCX for the high
/// halves), the CIOS schedule of mont_mul_portable unrolled: each of the six rounds adds a * b[i]
/// and then m * p, and retires one register, so the result ends in t6, t0, ..., t4. Needs BMI2
/// and ADX: call it only where fq_multiply_path_supported(fq_multiply_path::x86_64_adx). Twelve
/// registers, so it also compiles without optimisation and with a frame pointer.
inline limbs6 mont_mul_adx(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t t0, t1, t2, t3, t4, t6;
  [[maybe_unused]] std::uint64_t t5, lo, hi;  // t5 ends as scratch
  __asm__(
      "movq 0(%[b]), %%rdx\n\t"
      "mulxq 0(%[a]), %[t0], %[t1]\n\t"
      "mulxq 8(%[a]), %[lo], %[t2]\n\t"
      "addq %[lo], %[t1]\n\t"
      "mulxq 16(%[a]), %[lo], %[t3]\n\t"
      "adcq %[lo], %[t2]\n\t"
      "mulxq 24(%[a]), %[lo], %[t4]\n\t"
      "adcq %[lo], %[t3]\n\t"
      "mulxq 32(%[a]), %[lo], %[t5]\n\t"
      "adcq %[lo], %[t4]\n\t"
      "mulxq 40(%[a]), %[lo], %[t6]\n\t"
      "adcq %[lo], %[t5]\n\t"
      "adcq $0, %[t6]\n\t"
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
      "adcxq %[hi], %[t4]\n\t"
      "mulxq %[p4], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "mulxq %[p5], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "movq 8(%[b]), %%rdx\n\t"
      "xorl %k[t0], %k[t0]\n\t"
      "mulxq 0(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "mulxq 8(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "mulxq 16(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t4]\n\t"
      "mulxq 24(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "mulxq 32(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq 40(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
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
      "adcxq %[hi], %[t4]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "mulxq %[p4], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq %[p5], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "movq 16(%[b]), %%rdx\n\t"
      "xorl %k[t1], %k[t1]\n\t"
      "mulxq 0(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "mulxq 8(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t4]\n\t"
      "mulxq 16(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "mulxq 24(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq 32(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq 40(%[a]), %[lo], %[hi]\n\t"
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
      "adcxq %[hi], %[t4]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq %[p4], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq %[p5], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "movq 24(%[b]), %%rdx\n\t"
      "xorl %k[t2], %k[t2]\n\t"
      "mulxq 0(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t4]\n\t"
      "mulxq 8(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "mulxq 16(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq 24(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq 32(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "mulxq 40(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "movq %[t3], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t4]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq %[p4], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "mulxq %[p5], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "movq 32(%[b]), %%rdx\n\t"
      "xorl %k[t3], %k[t3]\n\t"
      "mulxq 0(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "mulxq 8(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq 16(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq 24(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "mulxq 32(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "mulxq 40(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "movq %[t4], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "adcxq %[hi], %[t5]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "mulxq %[p4], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "mulxq %[p5], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "movq 40(%[b]), %%rdx\n\t"
      "xorl %k[t4], %k[t4]\n\t"
      "mulxq 0(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq 8(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq 16(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "mulxq 24(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "mulxq 32(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "mulxq 40(%[a]), %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t4]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      "movq %[t5], %%rdx\n\t"
      "imulq %[inv], %%rdx\n\t"
      "xorl %k[lo], %k[lo]\n\t"
      "mulxq %[p0], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t5]\n\t"
      "adcxq %[hi], %[t6]\n\t"
      "mulxq %[p1], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t6]\n\t"
      "adcxq %[hi], %[t0]\n\t"
      "mulxq %[p2], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t0]\n\t"
      "adcxq %[hi], %[t1]\n\t"
      "mulxq %[p3], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t1]\n\t"
      "adcxq %[hi], %[t2]\n\t"
      "mulxq %[p4], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t2]\n\t"
      "adcxq %[hi], %[t3]\n\t"
      "mulxq %[p5], %[lo], %[hi]\n\t"
      "adoxq %[lo], %[t3]\n\t"
      "adcxq %[hi], %[t4]\n\t"
      "movl $0, %k[lo]\n\t"
      "adoxq %[lo], %[t4]\n\t"
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
        [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi)
      : [a] "r"(a.data()), [b] "r"(b.data()), [p0] "m"(constants::fq_modulus[0]),
        [p1] "m"(constants::fq_modulus[1]), [p2] "m"(constants::fq_modulus[2]),
        [p3] "m"(constants::fq_modulus[3]), [p4] "m"(constants::fq_modulus[4]),
        [p5] "m"(constants::fq_modulus[5]), [inv] "m"(constants::fq_inv), "m"(a), "m"(b)
      : "rdx", "cc");
  limbs6 out{t6, t0, t1, t2, t3, t4};
  reduce_once(out);
  return out;
}
#endif

}  // namespace coprove::field::detail
