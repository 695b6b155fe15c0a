// Scalars for G1 and G2 scalar multiplication: integers below the group order r, as four
// little-endian 64-bit limbs in canonical (not Montgomery) form. Kept apart from Fr (fr.hpp in the
// prover layer) because the curve layer sits below it; converting is fr::to_canonical().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace coprove::field {

/// A scalar: a canonical little-endian integer below r.
using scalar_limbs = std::array<std::uint64_t, 4>;

/// r, the order of G1 and G2 (little-endian limbs).
inline constexpr scalar_limbs scalar_modulus{0xffffffff00000001ULL, 0x53bda402fffe5bfeULL,
                                             0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};

/// Whether s < r.
constexpr bool scalar_is_canonical(const scalar_limbs& s) noexcept {
  for (int i = 3; i >= 0; --i) {
    if (s[i] != scalar_modulus[i]) return s[i] < scalar_modulus[i];
  }
  return false;
}

/// Parses a decimal string or a 0x-prefixed hex string; nullopt when malformed or not below r.
std::optional<scalar_limbs> parse_scalar(std::string_view text);

/// The decimal digits of s.
std::string scalar_to_decimal(const scalar_limbs& s);

/// A uniformly random scalar below r (rejection sampling on 255-bit draws; for tests, not keys).
template <class URBG>
scalar_limbs random_scalar(URBG& gen) {
  std::uniform_int_distribution<std::uint64_t> word;
  for (;;) {
    scalar_limbs s{word(gen), word(gen), word(gen), word(gen) >> 1};
    if (scalar_is_canonical(s)) return s;
  }
}

}  // namespace coprove::field
