// The parts of Fr that are not on the hot path: conversions, encodings, inverse and pow, and the
// choice of the multiplication path at start-up (CPUID).
#include <coprove/field/fr.hpp>
#include <coprove/field/detail/limbs.hpp>

#include <coprove/runtime/log.hpp>
#include <coprove/runtime/metrics.hpp>

#include <mutex>
#include <stdexcept>
#include <string>

namespace coprove::field {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

int hex_value(char ch) noexcept {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

bool less_than_r(const std::array<std::uint64_t, 4>& x) noexcept {
  for (int i = 3; i >= 0; --i) {
    if (x[i] != detail::fr_modulus[i]) return x[i] < detail::fr_modulus[i];
  }
  return false;
}

}  // namespace

namespace detail {

std::atomic<bool> fr_use_adx{cpu_has_bmi2_and_adx()};

}  // namespace detail

std::string_view to_string(fr_multiply_path path) noexcept {
  switch (path) {
    case fr_multiply_path::portable:
      return "portable";
    case fr_multiply_path::x86_64_adx:
      return "x86-64 mulx/adx";
  }
  return "unknown";
}

bool fr_multiply_path_supported(fr_multiply_path path) noexcept {
  switch (path) {
    case fr_multiply_path::portable:
      return true;
    case fr_multiply_path::x86_64_adx: {
      static const bool supported = detail::cpu_has_bmi2_and_adx();
      return supported;
    }
  }
  return false;
}

fr_multiply_path active_fr_multiply_path() noexcept {
  return detail::fr_use_adx.load(std::memory_order_relaxed) ? fr_multiply_path::x86_64_adx
                                                            : fr_multiply_path::portable;
}

std::string_view fr_multiply_path_name() noexcept { return to_string(active_fr_multiply_path()); }

void set_fr_multiply_path(fr_multiply_path path) {
  if (!fr_multiply_path_supported(path)) {
    throw std::invalid_argument("set_fr_multiply_path: the " + std::string(to_string(path)) +
                                " path is not supported by this build or CPU");
  }
  detail::fr_use_adx.store(path == fr_multiply_path::x86_64_adx, std::memory_order_relaxed);
}

void log_fr_multiply_path_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const fr_multiply_path path = active_fr_multiply_path();
    runtime::log(runtime::severity::info, "field",
                 "Fr multiplication path: " + std::string(to_string(path)));
#if defined(__x86_64__)
    if (path == fr_multiply_path::portable) {
      runtime::registry::global()
          .get_counter("coprove_fr_portable_multiply_total",
                       "processes whose Fr multiplication took the portable path on x86-64")
          .inc();
      runtime::warn_once("field.portable_multiply", "field",
                         fr_multiply_path_supported(fr_multiply_path::x86_64_adx)
                             ? "Fr multiplication forced onto the portable path although the CPU "
                               "has BMI2/ADX: CPU field arithmetic runs slower"
                             : "the CPU lacks BMI2/ADX: Fr multiplication takes the portable path "
                               "(CPU field arithmetic runs slower)");
    }
#endif
  });
}

fr fr::from_canonical(const std::array<std::uint64_t, 4>& x) {
  if (!less_than_r(x)) throw std::invalid_argument("fr::from_canonical: value is not below r");
  return fr{detail::mont_mul(x, detail::fr_r2)};
}

fr fr::from_hex(std::string_view hex) {
  const std::string_view original = hex;
  if (hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
  if (hex.empty()) throw std::invalid_argument("fr::from_hex: no hex digits in \"" + std::string(original) + "\"");
  if (hex.size() > 64) {
    throw std::invalid_argument("fr::from_hex: more than 64 hex digits (" +
                                std::to_string(hex.size()) + ")");
  }
  std::array<std::uint64_t, 4> x{};
  for (std::size_t i = 0; i < hex.size(); ++i) {
    const int v = hex_value(hex[hex.size() - 1 - i]);
    if (v < 0) {
      throw std::invalid_argument("fr::from_hex: not a hex digit in \"" + std::string(original) + "\"");
    }
    x[i / 16] |= static_cast<std::uint64_t>(v) << (4 * (i % 16));
  }
  if (!less_than_r(x)) {
    throw std::invalid_argument("fr::from_hex: value is not below r: " + std::string(original));
  }
  return fr{detail::mont_mul(x, detail::fr_r2)};
}

std::string fr::to_hex() const {
  const auto x = to_canonical();
  std::string out = "0x";
  out.reserve(66);
  for (int limb = 3; limb >= 0; --limb) {
    for (int shift = 60; shift >= 0; shift -= 4) out.push_back(hex_digits[(x[limb] >> shift) & 0xf]);
  }
  return out;
}

std::array<std::byte, 32> fr::to_bytes_le() const noexcept {
  const auto x = to_canonical();
  std::array<std::byte, 32> out;
  for (std::size_t i = 0; i < 32; ++i) out[i] = static_cast<std::byte>(x[i / 8] >> (8 * (i % 8)));
  return out;
}

fr fr::from_bytes_le(std::span<const std::byte, 32> bytes) {
  std::array<std::uint64_t, 4> x{};
  for (std::size_t i = 0; i < 32; ++i) {
    x[i / 8] |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(bytes[i])) << (8 * (i % 8));
  }
  if (!less_than_r(x)) throw std::invalid_argument("fr::from_bytes_le: value is not below r");
  return fr{detail::mont_mul(x, detail::fr_r2)};
}

fr fr::pow(std::uint64_t e) const noexcept {
  fr result = one();
  fr base = *this;
  while (e != 0) {
    if (e & 1) result *= base;
    base = base.square();
    e >>= 1;
  }
  return result;
}

fr fr::pow(const std::array<std::uint64_t, 4>& e) const noexcept {
  fr result = one();
  for (int limb = 3; limb >= 0; --limb) {
    for (int bit = 63; bit >= 0; --bit) {
      result = result.square();
      if ((e[limb] >> bit) & 1) result *= *this;
    }
  }
  return result;
}

fr fr::inverse() const {
  if (is_zero()) throw std::invalid_argument("fr::inverse: zero has no inverse");
  // r - 2 (r's low limb is odd and >= 2, so no borrow leaves it).
  std::array<std::uint64_t, 4> e = detail::fr_modulus;
  e[0] -= 2;
  return pow(e);
}

}  // namespace coprove::field
