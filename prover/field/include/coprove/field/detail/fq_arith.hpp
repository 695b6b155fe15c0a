// Limb arithmetic of Fq (six 64-bit little-endian limbs, Montgomery form): the modular sum and
// difference, the Montgomery product and, for products that are summed before they are reduced
// (Fq2), the double-width product and the Montgomery reduction on its own. The sum, difference and
// product have a portable C++ body; on x86-64 the sum and difference also have inline assembly (any
// x86-64 CPU), and the products MULX/ADCX/ADOX assembly (BMI2 and ADX); the double-width product
// and the reduction exist only as that assembly (the portable Fq2 product uses mont_mul_portable). All bodies are always compiled (no dependence on
// optimisation flags, so every translation unit sees the same inline functions); which
// multiplication runs is chosen at start-up from CPUID in fq.cpp. The assembly needs at most
// twelve registers, so it also compiles without optimisation, with a frame pointer and as
// position-independent code.
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

// The assembly takes p and -p^-1 as instruction immediates (MOVABS) rather than memory operands:
// under position-independent code each global operand needs a register for its address, and the
// kernels need every register they name. It is written with named operands; these macros spell
// the steps the kernels share, and their register arguments are operand names, so one macro
// serves every rotation of the accumulator registers.
#define COPROVE_FQ_OP(name) "%[" #name "]"
// The low 32 bits of the operand (writing them clears the whole register, in fewer bytes).
#define COPROVE_FQ_OP32(name) "%k[" #name "]"

/// 2^384 - p, whose addition sets the carry exactly when the value is at least p.
inline constexpr std::uint64_t fq_modulus_negated[6] = {
    ~constants::fq_modulus[0] + 1, ~constants::fq_modulus[1], ~constants::fq_modulus[2],
    ~constants::fq_modulus[3],     ~constants::fq_modulus[4], ~constants::fq_modulus[5]};

// The immediates, as operand lists (an asm statement takes at most thirty operands in all).
#define COPROVE_FQ_MODULUS_OPERANDS                                                                \
  [p0] "n"(constants::fq_modulus[0]), [p1] "n"(constants::fq_modulus[1]),                          \
      [p2] "n"(constants::fq_modulus[2]), [p3] "n"(constants::fq_modulus[3]),                      \
      [p4] "n"(constants::fq_modulus[4]), [p5] "n"(constants::fq_modulus[5])
#define COPROVE_FQ_NEGATED_MODULUS_OPERANDS                                                        \
  [n0] "n"(fq_modulus_negated[0]), [n1] "n"(fq_modulus_negated[1]),                                \
      [n2] "n"(fq_modulus_negated[2]), [n3] "n"(fq_modulus_negated[3]),                            \
      [n4] "n"(fq_modulus_negated[4]), [n5] "n"(fq_modulus_negated[5])

// (r0..r5) <- (r0..r5) - p when that does not borrow, through the scratch registers s0..s5:
// s = r + 2^384 - p, taken when the addition carries. The conditional subtraction that leaves a
// value below 2p reduced, without a branch.
#define COPROVE_FQ_SUBTRACT_P_IF_NO_BORROW(r0, r1, r2, r3, r4, r5, s0, s1, s2, s3, s4, s5)          \
  "movabsq %[n0], " COPROVE_FQ_OP(s0) "\n\t"                                                        \
  "movabsq %[n1], " COPROVE_FQ_OP(s1) "\n\t"                                                        \
  "movabsq %[n2], " COPROVE_FQ_OP(s2) "\n\t"                                                        \
  "movabsq %[n3], " COPROVE_FQ_OP(s3) "\n\t"                                                        \
  "movabsq %[n4], " COPROVE_FQ_OP(s4) "\n\t"                                                        \
  "movabsq %[n5], " COPROVE_FQ_OP(s5) "\n\t"                                                        \
  "addq " COPROVE_FQ_OP(r0) ", " COPROVE_FQ_OP(s0) "\n\t"                                            \
  "adcq " COPROVE_FQ_OP(r1) ", " COPROVE_FQ_OP(s1) "\n\t"                                            \
  "adcq " COPROVE_FQ_OP(r2) ", " COPROVE_FQ_OP(s2) "\n\t"                                            \
  "adcq " COPROVE_FQ_OP(r3) ", " COPROVE_FQ_OP(s3) "\n\t"                                            \
  "adcq " COPROVE_FQ_OP(r4) ", " COPROVE_FQ_OP(s4) "\n\t"                                            \
  "adcq " COPROVE_FQ_OP(r5) ", " COPROVE_FQ_OP(s5) "\n\t"                                            \
  "cmovcq " COPROVE_FQ_OP(s0) ", " COPROVE_FQ_OP(r0) "\n\t"                                          \
  "cmovcq " COPROVE_FQ_OP(s1) ", " COPROVE_FQ_OP(r1) "\n\t"                                          \
  "cmovcq " COPROVE_FQ_OP(s2) ", " COPROVE_FQ_OP(r2) "\n\t"                                          \
  "cmovcq " COPROVE_FQ_OP(s3) ", " COPROVE_FQ_OP(r3) "\n\t"                                          \
  "cmovcq " COPROVE_FQ_OP(s4) ", " COPROVE_FQ_OP(r4) "\n\t"                                          \
  "cmovcq " COPROVE_FQ_OP(s5) ", " COPROVE_FQ_OP(r5) "\n\t"

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
/// registers loaded from the scalar stores just made, and the store-forwarding stalls cost more
/// than the arithmetic.
inline limbs6 add_mod_x86_64(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5];
  [[maybe_unused]] std::uint64_t s0, s1, s2, s3, s4;
  const std::uint64_t* bp = b.data();  // the pointer's register is scratch after the sum
  __asm__(
      COPROVE_FQ_ADD_B
      COPROVE_FQ_SUBTRACT_P_IF_NO_BORROW(r0, r1, r2, r3, r4, r5, s0, s1, s2, s3, s4, b)
      : COPROVE_FQ_R_OPERANDS, [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3),
        [s4] "=&r"(s4), [b] "+r"(bp)
      : "m"(b), COPROVE_FQ_NEGATED_MODULUS_OPERANDS
      : "cc");
  return {r0, r1, r2, r3, r4, r5};
}

// r_i += p_i when the carry flag (the borrow of a subtraction) is set, on the OF chain so that CF
// stays the condition throughout: t = p_i, replaced by the zero in %[zero] when CF is clear.
#define COPROVE_FQ_ADD_P_LIMB_IF_BORROW(p, r)                                                      \
  "movabsq " p ", %[t]\n\t"                                                                        \
  "cmovncq %[zero], %[t]\n\t"                                                                      \
  "adoxq %[t], " COPROVE_FQ_OP(r) "\n\t"

/// (a - b) mod p for a, b < p: one borrow chain, then p added back under the borrow.
inline limbs6 sub_mod_x86_64(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5];
  [[maybe_unused]] std::uint64_t t;
  const std::uint64_t* bp = b.data();  // the pointer's register holds zero when nothing borrowed
  __asm__(
      COPROVE_FQ_SUBTRACT_B
      // b <- -borrow: zero when nothing borrowed (all that cmovnc reads it for); keeps CF, clears OF.
      "sbbq %[b], %[b]\n\t"
      COPROVE_FQ_ADD_P_LIMB_IF_BORROW("%[p0]", r0)
      COPROVE_FQ_ADD_P_LIMB_IF_BORROW("%[p1]", r1)
      COPROVE_FQ_ADD_P_LIMB_IF_BORROW("%[p2]", r2)
      COPROVE_FQ_ADD_P_LIMB_IF_BORROW("%[p3]", r3)
      COPROVE_FQ_ADD_P_LIMB_IF_BORROW("%[p4]", r4)
      COPROVE_FQ_ADD_P_LIMB_IF_BORROW("%[p5]", r5)
      : COPROVE_FQ_R_OPERANDS, [t] "=&r"(t), [b] "+r"(bp)
      : "m"(b), [zero] "r"(std::uint64_t{0}), COPROVE_FQ_MODULUS_OPERANDS
      : "cc");
  return {r0, r1, r2, r3, r4, r5};
}

/// add_unreduced_portable: one carry chain.
inline limbs6 add_unreduced_x86_64(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5];
  __asm__(COPROVE_FQ_ADD_B : COPROVE_FQ_R_OPERANDS : [b] "r"(b.data()), "m"(b) : "cc");
  return {r0, r1, r2, r3, r4, r5};
}

/// sub_unreduced_portable: a + p on one chain, then b subtracted on another (never borrows).
inline limbs6 sub_unreduced_x86_64(const limbs6& a, const limbs6& b) noexcept {
  std::uint64_t r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5];
  [[maybe_unused]] std::uint64_t t;
  __asm__(
      "movabsq %[p0], %[t]\n\t"
      "addq %[t], %[r0]\n\t"
      "movabsq %[p1], %[t]\n\t"
      "adcq %[t], %[r1]\n\t"
      "movabsq %[p2], %[t]\n\t"
      "adcq %[t], %[r2]\n\t"
      "movabsq %[p3], %[t]\n\t"
      "adcq %[t], %[r3]\n\t"
      "movabsq %[p4], %[t]\n\t"
      "adcq %[t], %[r4]\n\t"
      "movabsq %[p5], %[t]\n\t"
      "adcq %[t], %[r5]\n\t"
      COPROVE_FQ_SUBTRACT_B
      : COPROVE_FQ_R_OPERANDS, [t] "=&r"(t)
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

// One step of a row: (l, h) += the low and high halves of d * x, the low on ADOX (OF), the high on
// ADCX (CF); `load` puts x where `x` names it first (nothing for a memory operand).
#define COPROVE_FQ_MULX_STEP(load, x, l, h)                                                        \
  load "mulxq " x ", %[lo], %[hi]\n\t"                                                            \
  "adoxq %[lo], " COPROVE_FQ_OP(l) "\n\t"                                                         \
  "adcxq %[hi], " COPROVE_FQ_OP(h) "\n\t"

// The final OF carry of a row into its top word.
#define COPROVE_FQ_ROW_END(h)                                                                      \
  "movl $0, %k[lo]\n\t"                                                                           \
  "adoxq %[lo], " COPROVE_FQ_OP(h) "\n\t"

// (l0..l5, h) += a * b[i] (byte offset `offset` into b), h zeroed first: a later row of a product.
#define COPROVE_FQ_PRODUCT_ROW(offset, l0, l1, l2, l3, l4, l5, h)                                 \
  "movq " #offset "(%[b]), %[d]\n\t"                                                              \
  "xorl " COPROVE_FQ_OP32(h) ", " COPROVE_FQ_OP32(h) "\n\t"                                       \
  COPROVE_FQ_MULX_STEP("", "0(%[a])", l0, l1)                                                     \
  COPROVE_FQ_MULX_STEP("", "8(%[a])", l1, l2)                                                     \
  COPROVE_FQ_MULX_STEP("", "16(%[a])", l2, l3)                                                    \
  COPROVE_FQ_MULX_STEP("", "24(%[a])", l3, l4)                                                    \
  COPROVE_FQ_MULX_STEP("", "32(%[a])", l4, l5)                                                    \
  COPROVE_FQ_MULX_STEP("", "40(%[a])", l5, h)                                                     \
  COPROVE_FQ_ROW_END(h)

// Loads the limb p_i of the modulus into hi, the register MULX then reads it from and overwrites.
#define COPROVE_FQ_LOAD_P(i) "movabsq %[p" #i "], %[hi]\n\t"

// (l0..l6) += m p with m = l0 * (-p^-1) mod 2^64, which clears l0: one Montgomery reduction row.
#define COPROVE_FQ_REDUCTION_ROW(l0, l1, l2, l3, l4, l5, l6)                                       \
  "movabsq %[inv], %[lo]\n\t"                                                                     \
  "movq " COPROVE_FQ_OP(l0) ", %[d]\n\t"                                                          \
  "imulq %[lo], %[d]\n\t"                                                                         \
  "xorl %k[lo], %k[lo]\n\t"                                                                       \
  COPROVE_FQ_MULX_STEP(COPROVE_FQ_LOAD_P(0), "%[hi]", l0, l1)                                     \
  COPROVE_FQ_MULX_STEP(COPROVE_FQ_LOAD_P(1), "%[hi]", l1, l2)                                     \
  COPROVE_FQ_MULX_STEP(COPROVE_FQ_LOAD_P(2), "%[hi]", l2, l3)                                     \
  COPROVE_FQ_MULX_STEP(COPROVE_FQ_LOAD_P(3), "%[hi]", l3, l4)                                     \
  COPROVE_FQ_MULX_STEP(COPROVE_FQ_LOAD_P(4), "%[hi]", l4, l5)                                     \
  COPROVE_FQ_MULX_STEP(COPROVE_FQ_LOAD_P(5), "%[hi]", l5, l6)                                     \
  COPROVE_FQ_ROW_END(l6)

/// The product of mont_mul_portable with MULX and two carry chains (ADOX for the low halves, ADCX
/// for the high halves), the CIOS schedule unrolled: each of the six rounds adds a * b[i] and then
/// m * p and retires one register, so the result ends in t6, t0, ..., t4, and the conditional
/// subtraction runs on the registers the product no longer needs. Twelve registers. Needs BMI2 and
/// ADX: call it only where fq_multiply_path_supported(fq_multiply_path::x86_64_adx).
[[gnu::always_inline]] inline limbs6 mont_mul_adx(const limbs6& a, const limbs6& b) noexcept {
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
      : "m"(a), "m"(b), COPROVE_FQ_MODULUS_OPERANDS, COPROVE_FQ_NEGATED_MODULUS_OPERANDS,
        [inv] "n"(constants::fq_inv)
      : "cc");
  return {t6, t0, t1, t2, t3, t4};
}

/// A double-width value: a product of two Fq limb vectors before its reduction.
using limbs12 = std::array<std::uint64_t, 12>;

/// a * b in full (768 bits), for a, b < 2^384: the product rows of mont_mul_adx without the
/// reduction rows, each row retiring its low word to memory. Needs BMI2 and ADX.
[[gnu::always_inline]] inline limbs12 mul_wide_adx(const limbs6& a, const limbs6& b) noexcept {
  limbs12 out;
  std::uint64_t t0, t1, t2, t3, t4, t5, t6;
  [[maybe_unused]] std::uint64_t lo, hi, d;  // scratch
  __asm__ volatile(
      COPROVE_FQ_FIRST_ROW(t0, t1, t2, t3, t4, t5, t6)
      "movq %[t0], 0(%[out])\n\t"
      COPROVE_FQ_PRODUCT_ROW(8, t1, t2, t3, t4, t5, t6, t0)
      "movq %[t1], 8(%[out])\n\t"
      COPROVE_FQ_PRODUCT_ROW(16, t2, t3, t4, t5, t6, t0, t1)
      "movq %[t2], 16(%[out])\n\t"
      COPROVE_FQ_PRODUCT_ROW(24, t3, t4, t5, t6, t0, t1, t2)
      "movq %[t3], 24(%[out])\n\t"
      COPROVE_FQ_PRODUCT_ROW(32, t4, t5, t6, t0, t1, t2, t3)
      "movq %[t4], 32(%[out])\n\t"
      COPROVE_FQ_PRODUCT_ROW(40, t5, t6, t0, t1, t2, t3, t4)
      "movq %[t5], 40(%[out])\n\t"
      "movq %[t6], 48(%[out])\n\t"
      "movq %[t0], 56(%[out])\n\t"
      "movq %[t1], 64(%[out])\n\t"
      "movq %[t2], 72(%[out])\n\t"
      "movq %[t3], 80(%[out])\n\t"
      "movq %[t4], 88(%[out])\n\t"
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
        [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi), [d] "=&d"(d)
      // The memory it reads and writes goes through the clobber rather than "m" operands (so the
      // statement is volatile: its register outputs are all scratch): without optimisation each
      // such operand takes a register of its own, and the kernel needs thirteen.
      : [a] "r"(a.data()), [b] "r"(b.data()), [out] "r"(out.data())
      : "cc", "memory");
  return out;
}

/// t * 2^-384 mod p, reduced, for t < p 2^384. The low half L alone takes the six reduction rows
/// of mont_mul_adx, giving (L + m p) / 2^384 <= p; the high half H < p is then added (t + m p =
/// (L + m p) + H 2^384), and the sum, below 2p, takes one conditional subtraction. Needs BMI2 and
/// ADX.
[[gnu::always_inline]] inline limbs6 montgomery_reduce_adx(const limbs12& t) noexcept {
  std::uint64_t t0, t1, t2, t3, t4, t6;
  [[maybe_unused]] std::uint64_t t5, lo, hi, d, s;  // scratch
  const std::uint64_t* tp = t.data();  // the pointer's register is scratch at the end
  __asm__(
      "movq 0(%[t]), %[t0]\n\t"
      "movq 8(%[t]), %[t1]\n\t"
      "movq 16(%[t]), %[t2]\n\t"
      "movq 24(%[t]), %[t3]\n\t"
      "movq 32(%[t]), %[t4]\n\t"
      "movq 40(%[t]), %[t5]\n\t"
      "xorl %k[t6], %k[t6]\n\t"
      COPROVE_FQ_REDUCTION_ROW(t0, t1, t2, t3, t4, t5, t6)
      COPROVE_FQ_REDUCTION_ROW(t1, t2, t3, t4, t5, t6, t0)
      COPROVE_FQ_REDUCTION_ROW(t2, t3, t4, t5, t6, t0, t1)
      COPROVE_FQ_REDUCTION_ROW(t3, t4, t5, t6, t0, t1, t2)
      COPROVE_FQ_REDUCTION_ROW(t4, t5, t6, t0, t1, t2, t3)
      COPROVE_FQ_REDUCTION_ROW(t5, t6, t0, t1, t2, t3, t4)
      "addq 48(%[t]), %[t6]\n\t"
      "adcq 56(%[t]), %[t0]\n\t"
      "adcq 64(%[t]), %[t1]\n\t"
      "adcq 72(%[t]), %[t2]\n\t"
      "adcq 80(%[t]), %[t3]\n\t"
      "adcq 88(%[t]), %[t4]\n\t"
      COPROVE_FQ_SUBTRACT_P_IF_NO_BORROW(t6, t0, t1, t2, t3, t4, t5, lo, hi, d, t, s)
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
        [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi), [d] "=&d"(d), [s] "=&r"(s),
        [t] "+r"(tp)
      : "m"(t), COPROVE_FQ_MODULUS_OPERANDS, COPROVE_FQ_NEGATED_MODULUS_OPERANDS, [inv] "n"(constants::fq_inv)
      : "cc");
  return {t6, t0, t1, t2, t3, t4};
}

/// The Fq2 product (a0 + a1 u)(b0 + b1 u), u^2 = -1, by Karatsuba with two reductions instead of
/// three: c0 = a0 b0 - a1 b1 (plus p 2^384 when negative) and c1 = (a0 + a1)(b0 + b1) - a0 b0 -
/// a1 b1 = a0 b1 + a1 b0 are formed double width and reduced once each. For inputs below 2p both
/// stay below p 2^384 (p < 2^381), as montgomery_reduce_adx needs. Needs BMI2 and ADX.
[[gnu::always_inline]] inline void fq2_mul_adx(const limbs6& a0, const limbs6& a1, const limbs6& b0,
                                               const limbs6& b1, limbs6& c0, limbs6& c1) noexcept {
  const limbs12 v0 = mul_wide_adx(a0, b0);
  const limbs12 v1 = mul_wide_adx(a1, b1);
  limbs12 v2 = mul_wide_adx(add_unreduced_x86_64(a0, a1), add_unreduced_x86_64(b0, b1));
  limbs12 d0;
  std::uint64_t borrow = 0;
  for (int i = 0; i < 12; ++i) d0[i] = sbb(v0[i], v1[i], borrow);
  const std::uint64_t mask = 0 - borrow;
  std::uint64_t carry = 0;
  for (int i = 0; i < 6; ++i) d0[6 + i] = adc(d0[6 + i], constants::fq_modulus[i] & mask, carry);
  borrow = 0;
  for (int i = 0; i < 12; ++i) v2[i] = sbb(v2[i], v0[i], borrow);
  borrow = 0;
  for (int i = 0; i < 12; ++i) v2[i] = sbb(v2[i], v1[i], borrow);
  c0 = montgomery_reduce_adx(d0);
  c1 = montgomery_reduce_adx(v2);
}

#endif

}  // namespace coprove::field::detail
