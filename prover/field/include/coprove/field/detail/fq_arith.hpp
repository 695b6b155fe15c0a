// Limb arithmetic of Fq (six 64-bit little-endian limbs, Montgomery form): the modular sum and
// difference, the Montgomery product and, for products that are summed before they are reduced
// (Fq2), the double-width product and the Montgomery reduction on its own. Each has a portable C++
// body; on x86-64 the sum and difference also have inline assembly (any x86-64 CPU), and the
// products MULX/ADCX/ADOX assembly (BMI2 and ADX). All bodies are always compiled (no dependence on
// optimisation flags, so every translation unit sees the same inline functions); which
// multiplication runs is chosen at start-up from CPUID in fq.cpp. The assembly needs at most
// thirteen registers, so it also compiles without optimisation and with a frame pointer.
//
// Bounds: p < 2^381, so a sum of two reduced values fits six limbs unreduced, and the products
// accept such sums (inputs below 2p) and still return reduced values (see mont_mul_portable).
#pragma once

#include <coprove/field/detail/limbs.hpp>
#include <coprove/field/fq_constants.hpp>

#include <array>
#include <cstdint>

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

/// (a + b) mod p for a, b < p (p < 2^381, so the sum never leaves six limbs).
inline limbs6 add_mod_portable(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t carry = 0;
  limbs6 t;
  for (int i = 0; i < 6; ++i) t[i] = adc(a[i], b[i], carry);
  reduce_once(t);
  return t;
}

/// (a - b) mod p for a, b < p.
inline limbs6 sub_mod_portable(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t borrow = 0;
  limbs6 t;
  for (int i = 0; i < 6; ++i) t[i] = sbb(a[i], b[i], borrow);
  const std::uint64_t mask = 0 - borrow;  // add p back when the subtraction borrowed
  std::uint64_t carry = 0;
  for (int i = 0; i < 6; ++i) t[i] = adc(t[i], constants::fq_modulus[i] & mask, carry);
  return t;
}

/// a + b without the reduction, below 2p for a, b < p: an input the products accept as it is.
inline limbs6 add_unreduced_portable(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t carry = 0;
  limbs6 t;
  for (int i = 0; i < 6; ++i) t[i] = adc(a[i], b[i], carry);
  return t;
}

/// a - b + p, in (0, 2p) for a, b < p: a difference the products accept without the borrow test.
inline limbs6 sub_unreduced_portable(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t carry = 0, borrow = 0;
  limbs6 t;
  for (int i = 0; i < 6; ++i) t[i] = adc(a[i], constants::fq_modulus[i], carry);
  for (int i = 0; i < 6; ++i) t[i] = sbb(t[i], b[i], borrow);
  return t;
}

/// Whether x < p, for a canonical-value check.
inline bool less_than_modulus(const limbs6& x) noexcept {
  for (int i = 5; i >= 0; --i) {
    if (x[i] != constants::fq_modulus[i]) return x[i] < constants::fq_modulus[i];
  }
  return false;
}

/// Montgomery product a * b * R^-1 mod p with 128-bit products (CIOS), for a, b < 2p. The
/// result before the last subtraction is (ab + mp) / R < (4p^2 + pR) / R < 1.5p, so one
/// subtraction reduces it; the top limb of p leaves three spare bits, so the running value never
/// needs an eighth word.
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
// The sum and difference below need only x86-64; the products also BMI2 and ADX, a property of the
// CPU checked at run time (fq_use_adx).
#define COPROVE_FQ_HAVE_X86_64_ASM 1
#define COPROVE_FQ_HAVE_ADX_PATH 1

// The assembly below is written with named operands. These macros spell the steps the kernels
// share; their register arguments are operand names, so one macro serves every rotation of the
// accumulator registers.
#define COPROVE_FQ_OP(name) "%[" #name "]"
// The low 32 bits of the operand (writing them clears the whole register, in fewer bytes).
#define COPROVE_FQ_OP32(name) "%k[" #name "]"

// (r0..r5) <- (r0..r5) - p when that does not borrow, through the scratch registers s0..s5: the
// conditional subtraction that leaves a value below 2p reduced, without a branch.
#define COPROVE_FQ_SUBTRACT_P_IF_NO_BORROW(r0, r1, r2, r3, r4, r5, s0, s1, s2, s3, s4, s5)          \
  "movq " COPROVE_FQ_OP(r0) ", " COPROVE_FQ_OP(s0) "\n\t"                                            \
  "movq " COPROVE_FQ_OP(r1) ", " COPROVE_FQ_OP(s1) "\n\t"                                            \
  "movq " COPROVE_FQ_OP(r2) ", " COPROVE_FQ_OP(s2) "\n\t"                                            \
  "movq " COPROVE_FQ_OP(r3) ", " COPROVE_FQ_OP(s3) "\n\t"                                            \
  "movq " COPROVE_FQ_OP(r4) ", " COPROVE_FQ_OP(s4) "\n\t"                                            \
  "movq " COPROVE_FQ_OP(r5) ", " COPROVE_FQ_OP(s5) "\n\t"                                            \
  "subq %[p0], " COPROVE_FQ_OP(s0) "\n\t"                                                            \
  "sbbq %[p1], " COPROVE_FQ_OP(s1) "\n\t"                                                            \
  "sbbq %[p2], " COPROVE_FQ_OP(s2) "\n\t"                                                            \
  "sbbq %[p3], " COPROVE_FQ_OP(s3) "\n\t"                                                            \
  "sbbq %[p4], " COPROVE_FQ_OP(s4) "\n\t"                                                            \
  "sbbq %[p5], " COPROVE_FQ_OP(s5) "\n\t"                                                            \
  "cmovncq " COPROVE_FQ_OP(s0) ", " COPROVE_FQ_OP(r0) "\n\t"                                         \
  "cmovncq " COPROVE_FQ_OP(s1) ", " COPROVE_FQ_OP(r1) "\n\t"                                         \
  "cmovncq " COPROVE_FQ_OP(s2) ", " COPROVE_FQ_OP(r2) "\n\t"                                         \
  "cmovncq " COPROVE_FQ_OP(s3) ", " COPROVE_FQ_OP(r3) "\n\t"                                         \
  "cmovncq " COPROVE_FQ_OP(s4) ", " COPROVE_FQ_OP(r4) "\n\t"                                         \
  "cmovncq " COPROVE_FQ_OP(s5) ", " COPROVE_FQ_OP(r5) "\n\t"

// The modulus and -p^-1 mod 2^64 as memory operands (RIP-relative: they take no register).
#define COPROVE_FQ_MODULUS_OPERANDS                                                                 \
  [p0] "m"(constants::fq_modulus[0]), [p1] "m"(constants::fq_modulus[1]),                          \
      [p2] "m"(constants::fq_modulus[2]), [p3] "m"(constants::fq_modulus[3]),                      \
      [p4] "m"(constants::fq_modulus[4]), [p5] "m"(constants::fq_modulus[5])

// (r0..r5) += or -= the six limbs at %[b], on one carry chain: the first step of the sums and
// differences, whose operands r0..r5 start as a's limbs.
#define COPROVE_FQ_ADD_B                                                                           \
  "addq 0(%[b]), %[r0]\n\t"                                                                        \
  "adcq 8(%[b]), %[r1]\n\t"                                                                        \
  "adcq 16(%[b]), %[r2]\n\t"                                                                       \
  "adcq 24(%[b]), %[r3]\n\t"                                                                       \
  "adcq 32(%[b]), %[r4]\n\t"                                                                       \
  "adcq 40(%[b]), %[r5]\n\t"
#define COPROVE_FQ_SUBTRACT_B                                                                      \
  "subq 0(%[b]), %[r0]\n\t"                                                                        \
  "sbbq 8(%[b]), %[r1]\n\t"                                                                        \
  "sbbq 16(%[b]), %[r2]\n\t"                                                                       \
  "sbbq 24(%[b]), %[r3]\n\t"                                                                       \
  "sbbq 32(%[b]), %[r4]\n\t"                                                                       \
  "sbbq 40(%[b]), %[r5]\n\t"
#define COPROVE_FQ_R_OPERANDS                                                                      \
  [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [r3] "+r"(r3), [r4] "+r"(r4), [r5] "+r"(r5)

/// (a + b) mod p for a, b < p: one carry chain, then the conditional subtraction. Plain x86-64
/// (no CPU feature needed); the compiler's code for add_mod_portable selects through vector
/// registers and loses more time than the arithmetic takes.
inline limbs6 add_mod_x86_64(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5];
  [[maybe_unused]] std::uint64_t s0, s1, s2, s3, s4, s5;
  __asm__(
      COPROVE_FQ_ADD_B
      COPROVE_FQ_SUBTRACT_P_IF_NO_BORROW(r0, r1, r2, r3, r4, r5, s0, s1, s2, s3, s4, s5)
      : COPROVE_FQ_R_OPERANDS,
        [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [s4] "=&r"(s4),
        [s5] "=&r"(s5)
      : [b] "r"(b.data()), "m"(b), COPROVE_FQ_MODULUS_OPERANDS
      : "cc");
  return {r0, r1, r2, r3, r4, r5};
}

/// (a - b) mod p for a, b < p: one borrow chain, then p added to a copy and the copy taken when
/// the chain borrowed.
inline limbs6 sub_mod_x86_64(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5];
  [[maybe_unused]] std::uint64_t s0, s1, s2, s3, s4, s5;
  const std::uint64_t* bp = b.data();  // the pointer's register holds the borrow mask at the end
  __asm__(
      COPROVE_FQ_SUBTRACT_B
      "sbbq %[b], %[b]\n\t"  // all ones when a < b
      "movq %[r0], %[s0]\n\t"
      "movq %[r1], %[s1]\n\t"
      "movq %[r2], %[s2]\n\t"
      "movq %[r3], %[s3]\n\t"
      "movq %[r4], %[s4]\n\t"
      "movq %[r5], %[s5]\n\t"
      "addq %[p0], %[s0]\n\t"
      "adcq %[p1], %[s1]\n\t"
      "adcq %[p2], %[s2]\n\t"
      "adcq %[p3], %[s3]\n\t"
      "adcq %[p4], %[s4]\n\t"
      "adcq %[p5], %[s5]\n\t"
      "testq %[b], %[b]\n\t"
      "cmovnzq %[s0], %[r0]\n\t"
      "cmovnzq %[s1], %[r1]\n\t"
      "cmovnzq %[s2], %[r2]\n\t"
      "cmovnzq %[s3], %[r3]\n\t"
      "cmovnzq %[s4], %[r4]\n\t"
      "cmovnzq %[s5], %[r5]\n\t"
      : COPROVE_FQ_R_OPERANDS,
        [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [s4] "=&r"(s4),
        [s5] "=&r"(s5), [b] "+r"(bp)
      : "m"(b), COPROVE_FQ_MODULUS_OPERANDS
      : "cc");
  return {r0, r1, r2, r3, r4, r5};
}


/// add_unreduced_portable: one carry chain.
inline limbs6 add_unreduced_x86_64(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5];
  __asm__(
      COPROVE_FQ_ADD_B
      : COPROVE_FQ_R_OPERANDS
      : [b] "r"(b.data()), "m"(b)
      : "cc");
  return {r0, r1, r2, r3, r4, r5};
}

/// sub_unreduced_portable: a + p on one chain, then b subtracted on another (never borrows).
inline limbs6 sub_unreduced_x86_64(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5];
  __asm__(
      "addq %[p0], %[r0]\n\t"
      "adcq %[p1], %[r1]\n\t"
      "adcq %[p2], %[r2]\n\t"
      "adcq %[p3], %[r3]\n\t"
      "adcq %[p4], %[r4]\n\t"
      "adcq %[p5], %[r5]\n\t"
      COPROVE_FQ_SUBTRACT_B
      : COPROVE_FQ_R_OPERANDS
      : [b] "r"(b.data()), "m"(b), COPROVE_FQ_MODULUS_OPERANDS
      : "cc");
  return {r0, r1, r2, r3, r4, r5};
}

// (t0..t6) <- a * b[0]: the first row of a product, on one carry chain.
#define COPROVE_FQ_FIRST_ROW(t0, t1, t2, t3, t4, t5, t6)                                           \
  "movq 0(%[b]), %[d]\n\t"                                                                        \
  "mulxq 0(%[a]), " COPROVE_FQ_OP(t0) ", " COPROVE_FQ_OP(t1) "\n\t"                                \
  "mulxq 8(%[a]), %[lo], " COPROVE_FQ_OP(t2) "\n\t"                                               \
  "addq %[lo], " COPROVE_FQ_OP(t1) "\n\t"                                                         \
  "mulxq 16(%[a]), %[lo], " COPROVE_FQ_OP(t3) "\n\t"                                              \
  "adcq %[lo], " COPROVE_FQ_OP(t2) "\n\t"                                                         \
  "mulxq 24(%[a]), %[lo], " COPROVE_FQ_OP(t4) "\n\t"                                              \
  "adcq %[lo], " COPROVE_FQ_OP(t3) "\n\t"                                                         \
  "mulxq 32(%[a]), %[lo], " COPROVE_FQ_OP(t5) "\n\t"                                              \
  "adcq %[lo], " COPROVE_FQ_OP(t4) "\n\t"                                                         \
  "mulxq 40(%[a]), %[lo], " COPROVE_FQ_OP(t6) "\n\t"                                              \
  "adcq %[lo], " COPROVE_FQ_OP(t5) "\n\t"                                                         \
  "adcq $0, " COPROVE_FQ_OP(t6) "\n\t"

// One product and its two carry chains: (l0..l5, h) += lo and hi halves of x * a[0..5], the low
// halves on ADOX (OF) and the high ones on ADCX (CF), with x already in d and both flags clear.
#define COPROVE_FQ_MULX_ROW(x0, x1, x2, x3, x4, x5, l0, l1, l2, l3, l4, l5, h)                    \
  "mulxq " x0 ", %[lo], %[hi]\n\t"                                                                \
  "adoxq %[lo], " COPROVE_FQ_OP(l0) "\n\t"                                                        \
  "adcxq %[hi], " COPROVE_FQ_OP(l1) "\n\t"                                                        \
  "mulxq " x1 ", %[lo], %[hi]\n\t"                                                                \
  "adoxq %[lo], " COPROVE_FQ_OP(l1) "\n\t"                                                        \
  "adcxq %[hi], " COPROVE_FQ_OP(l2) "\n\t"                                                        \
  "mulxq " x2 ", %[lo], %[hi]\n\t"                                                                \
  "adoxq %[lo], " COPROVE_FQ_OP(l2) "\n\t"                                                        \
  "adcxq %[hi], " COPROVE_FQ_OP(l3) "\n\t"                                                        \
  "mulxq " x3 ", %[lo], %[hi]\n\t"                                                                \
  "adoxq %[lo], " COPROVE_FQ_OP(l3) "\n\t"                                                        \
  "adcxq %[hi], " COPROVE_FQ_OP(l4) "\n\t"                                                        \
  "mulxq " x4 ", %[lo], %[hi]\n\t"                                                                \
  "adoxq %[lo], " COPROVE_FQ_OP(l4) "\n\t"                                                        \
  "adcxq %[hi], " COPROVE_FQ_OP(l5) "\n\t"                                                        \
  "mulxq " x5 ", %[lo], %[hi]\n\t"                                                                \
  "adoxq %[lo], " COPROVE_FQ_OP(l5) "\n\t"                                                        \
  "adcxq %[hi], " COPROVE_FQ_OP(h) "\n\t"                                                         \
  "movl $0, %k[lo]\n\t"                                                                           \
  "adoxq %[lo], " COPROVE_FQ_OP(h) "\n\t"

// (l0..l5, h) += a * b[i] (byte offset `offset` into b), h zeroed first: a later row of a product.
#define COPROVE_FQ_PRODUCT_ROW(offset, l0, l1, l2, l3, l4, l5, h)                                 \
  "movq " #offset "(%[b]), %[d]\n\t"                                                              \
  "xorl " COPROVE_FQ_OP32(h) ", " COPROVE_FQ_OP32(h) "\n\t"                                       \
  COPROVE_FQ_MULX_ROW("0(%[a])", "8(%[a])", "16(%[a])", "24(%[a])", "32(%[a])", "40(%[a])", l0, l1, \
                      l2, l3, l4, l5, h)

// (l0..l6) += m p with m = l0 * (-p^-1) mod 2^64, which clears l0: one Montgomery reduction row.
#define COPROVE_FQ_REDUCTION_ROW(l0, l1, l2, l3, l4, l5, l6)                                       \
  "movq " COPROVE_FQ_OP(l0) ", %[d]\n\t"                                                          \
  "imulq %[inv], %[d]\n\t"                                                                        \
  "xorl %k[lo], %k[lo]\n\t"                                                                       \
  COPROVE_FQ_MULX_ROW("%[p0]", "%[p1]", "%[p2]", "%[p3]", "%[p4]", "%[p5]", l0, l1, l2, l3, l4, l5, \
                      l6)

/// The product of mont_mul_portable with MULX and two carry chains (ADOX for the low halves, ADCX
/// for the high halves), the CIOS schedule unrolled: each of the six rounds adds a * b[i] and then
/// m * p and retires one register, so the result ends in t6, t0, ..., t4, and the conditional
/// subtraction runs on the registers the product no longer needs. Needs BMI2 and ADX: call it only
/// where fq_multiply_path_supported(fq_multiply_path::x86_64_adx).
inline limbs6 mont_mul_adx(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t t0, t1, t2, t3, t4, t6;
  [[maybe_unused]] std::uint64_t t5, lo, hi, d;  // scratch
  const std::uint64_t* ap = a.data();  // the pointers' registers are scratch at the end
  const std::uint64_t* bp = b.data();
  __asm__(
      COPROVE_FQ_FIRST_ROW(t0, t1, t2, t3, t4, t5, t6)
      COPROVE_FQ_REDUCTION_ROW(t0, t1, t2, t3, t4, t5, t6)
      COPROVE_FQ_PRODUCT_ROW(8, t1, t2, t3, t4, t5, t6, t0)
      COPROVE_FQ_REDUCTION_ROW(t1, t2, t3, t4, t5, t6, t0)
      COPROVE_FQ_PRODUCT_ROW(16, t2, t3, t4, t5, t6, t0, t1)
      COPROVE_FQ_REDUCTION_ROW(t2, t3, t4, t5, t6, t0, t1)
      COPROVE_FQ_PRODUCT_ROW(24, t3, t4, t5, t6, t0, t1, t2)
      COPROVE_FQ_REDUCTION_ROW(t3, t4, t5, t6, t0, t1, t2)
      COPROVE_FQ_PRODUCT_ROW(32, t4, t5, t6, t0, t1, t2, t3)
      COPROVE_FQ_REDUCTION_ROW(t4, t5, t6, t0, t1, t2, t3)
      COPROVE_FQ_PRODUCT_ROW(40, t5, t6, t0, t1, t2, t3, t4)
      COPROVE_FQ_REDUCTION_ROW(t5, t6, t0, t1, t2, t3, t4)
      COPROVE_FQ_SUBTRACT_P_IF_NO_BORROW(t6, t0, t1, t2, t3, t4, t5, lo, hi, d, a, b)
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
        [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi), [d] "=&d"(d),
        [a] "+r"(ap), [b] "+r"(bp)
      : COPROVE_FQ_MODULUS_OPERANDS, [inv] "m"(constants::fq_inv), "m"(a), "m"(b)
      : "cc");
  return {t6, t0, t1, t2, t3, t4};
}

#endif

}  // namespace coprove::field::detail
