// Word arithmetic shared by the fields' limb code (Fr's four limbs, Fq's six): add with carry,
// subtract with borrow and multiply-accumulate on 64-bit words, with the x86-64 carry intrinsics
// where they exist and 128-bit arithmetic elsewhere.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace coprove::field::detail {

using u128 = unsigned __int128;

/// Whether this CPU has BMI2 (MULX) and ADX (ADCX/ADOX), which the fields' assembly multiplications
/// need (CPUID leaf 7); false off x86-64.
bool cpu_has_bmi2_and_adx() noexcept;
/// The SHA extensions (and the SSSE3 / SSE4.1 their use needs): CPUID.(EAX=7,ECX=0):EBX.SHA.
bool cpu_has_sha_extensions() noexcept;

/// a + b + carry (carry 0 or 1); returns the low word, leaves the carry out in carry.
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

/// a - b - borrow (borrow 0 or 1); returns the low word, leaves the borrow out in borrow.
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

/// a + b * c + carry, which fits in 128 bits for any 64-bit inputs.
inline std::uint64_t mac(std::uint64_t a, std::uint64_t b, std::uint64_t c,
                         std::uint64_t& carry) noexcept {
  const u128 t = static_cast<u128>(b) * c + a + carry;
  carry = static_cast<std::uint64_t>(t >> 64);
  return static_cast<std::uint64_t>(t);
}

}  // namespace coprove::field::detail
