// Text conversions of scalars, for tests, test vectors and the JSON forms.
#include <coprove/field/scalar.hpp>

namespace coprove::field {

namespace {

using u128 = unsigned __int128;

/// s = s * base + digit; false when the result needs a fifth limb.
bool multiply_add(scalar_limbs& s, std::uint64_t base, std::uint64_t digit) noexcept {
  std::uint64_t carry = digit;
  for (auto& limb : s) {
    const u128 t = static_cast<u128>(limb) * base + carry;
    limb = static_cast<std::uint64_t>(t);
    carry = static_cast<std::uint64_t>(t >> 64);
  }
  return carry == 0;
}

}  // namespace

std::optional<scalar_limbs> parse_scalar(std::string_view text) {
  std::uint64_t base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  scalar_limbs s{};
  for (const char c : text) {
    std::uint64_t digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<std::uint64_t>(c - '0');
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      digit = static_cast<std::uint64_t>(c - 'a' + 10);
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      digit = static_cast<std::uint64_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    if (digit >= base || !multiply_add(s, base, digit)) return std::nullopt;
  }
  if (!scalar_is_canonical(s)) return std::nullopt;
  return s;
}

std::string scalar_to_decimal(const scalar_limbs& s) {
  scalar_limbs rest = s;
  std::string digits;
  auto is_zero = [&] { return (rest[0] | rest[1] | rest[2] | rest[3]) == 0; };
  do {
    // Divide by 10 from the top limb down; the remainder is the next digit.
    std::uint64_t remainder = 0;
    for (int i = 3; i >= 0; --i) {
      const u128 t = (static_cast<u128>(remainder) << 64) | rest[i];
      rest[i] = static_cast<std::uint64_t>(t / 10);
      remainder = static_cast<std::uint64_t>(t % 10);
    }
    digits.push_back(static_cast<char>('0' + remainder));
  } while (!is_zero());
  return {digits.rbegin(), digits.rend()};
}

}  // namespace coprove::field
