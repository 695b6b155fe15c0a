// The parts of Fq off the hot path: the choice of the multiplication path at start-up (CPUID),
// conversions to and from canonical integers, bytes and decimal strings, and the exponentiations
// (inverse, square root, Legendre symbol).
#include <coprove/field/fq.hpp>
#include <coprove/field/detail/limbs.hpp>

#include <algorithm>
#include <stdexcept>

namespace coprove::field {

namespace detail {

namespace {

limbs6 to_limbs(const std::uint64_t (&v)[6]) noexcept { return {v[0], v[1], v[2], v[3], v[4], v[5]}; }

}  // namespace

std::atomic<bool> fq_use_adx{cpu_has_bmi2_and_adx()};

}  // namespace detail

std::string_view to_string(fq_multiply_path path) noexcept {
  switch (path) {
    case fq_multiply_path::portable:
      return "portable";
    case fq_multiply_path::x86_64_adx:
      return "x86-64 mulx/adx";
  }
  return "unknown";
}

bool fq_multiply_path_supported(fq_multiply_path path) noexcept {
  switch (path) {
    case fq_multiply_path::portable:
      return true;
    case fq_multiply_path::x86_64_adx: {
      static const bool supported = detail::cpu_has_bmi2_and_adx();
      return supported;
    }
  }
  return false;
}

fq_multiply_path active_fq_multiply_path() noexcept {
  return detail::fq_use_adx.load(std::memory_order_relaxed) ? fq_multiply_path::x86_64_adx
                                                            : fq_multiply_path::portable;
}

void set_fq_multiply_path(fq_multiply_path path) {
  if (!fq_multiply_path_supported(path)) {
    throw std::invalid_argument("set_fq_multiply_path: the " + std::string(to_string(path)) +
                                " path is not supported by this build or CPU");
  }
  detail::fq_use_adx.store(path == fq_multiply_path::x86_64_adx, std::memory_order_relaxed);
}

std::array<std::uint64_t, 6> fq_mul_portable(const std::array<std::uint64_t, 6>& a,
                                             const std::array<std::uint64_t, 6>& b) noexcept {
  return detail::mont_mul_portable(a, b);
}

std::array<std::uint64_t, 6> fq_mul_adx(const std::array<std::uint64_t, 6>& a,
                                        const std::array<std::uint64_t, 6>& b) noexcept {
#if defined(COPROVE_FQ_HAVE_ADX_PATH)
  return detail::mont_mul_adx(a, b);
#else
  return detail::mont_mul_portable(a, b);
#endif
}

fq fq::from_u64(std::uint64_t v) noexcept {
  return fq{detail::mont_mul(detail::limbs6{v, 0, 0, 0, 0, 0}, detail::to_limbs(constants::fq_r2))};
}

std::optional<fq> fq::from_canonical(const std::array<std::uint64_t, 6>& v) noexcept {
  if (!detail::less_than_modulus(v)) return std::nullopt;
  return fq{detail::mont_mul(v, detail::to_limbs(constants::fq_r2))};
}

std::array<std::uint64_t, 6> fq::to_canonical() const noexcept {
  return detail::mont_mul(limbs, detail::limbs6{1, 0, 0, 0, 0, 0});
}

std::optional<fq> fq::from_bytes_be(std::span<const std::uint8_t, 48> bytes) noexcept {
  std::array<std::uint64_t, 6> v{};
  for (std::size_t i = 0; i < 48; ++i) {
    v[5 - i / 8] |= static_cast<std::uint64_t>(bytes[i]) << (8 * (7 - i % 8));
  }
  return from_canonical(v);
}

void fq::to_bytes_be(std::span<std::uint8_t, 48> out) const noexcept {
  const auto v = to_canonical();
  for (std::size_t i = 0; i < 48; ++i) {
    out[i] = static_cast<std::uint8_t>(v[5 - i / 8] >> (8 * (7 - i % 8)));
  }
}

std::optional<fq> fq::from_decimal(std::string_view s) {
  // p has 115 decimal digits; longer strings (leading zeros aside) are out of range.
  while (s.size() > 1 && s.front() == '0') s.remove_prefix(1);
  if (s.empty() || s.size() > 115) return std::nullopt;
  std::array<std::uint64_t, 7> acc{};  // 115 digits fit in 448 bits
  for (char ch : s) {
    if (ch < '0' || ch > '9') return std::nullopt;
    std::uint64_t carry = static_cast<std::uint64_t>(ch - '0');
    for (auto& limb : acc) limb = detail::mac(0, limb, 10, carry);
  }
  if (acc[6] != 0) return std::nullopt;
  return from_canonical({acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]});
}

std::string fq::to_decimal() const {
  auto v = to_canonical();
  std::string out;
  constexpr std::uint64_t chunk = 10000000000000000000ULL;  // 10^19
  for (;;) {
    // v /= 10^19, keeping the remainder: 19 digits at a time, least significant first.
    detail::u128 rem = 0;
    bool nonzero = false;
    for (int i = 5; i >= 0; --i) {
      const detail::u128 cur = (rem << 64) | v[i];
      v[i] = static_cast<std::uint64_t>(cur / chunk);
      rem = cur % chunk;
      nonzero |= v[i] != 0;
    }
    auto r = static_cast<std::uint64_t>(rem);
    for (int d = 0; d < 19 && (nonzero || r != 0); ++d) {
      out.push_back(static_cast<char>('0' + r % 10));
      r /= 10;
    }
    if (!nonzero) break;
  }
  if (out.empty()) return std::string(1, '0');
  std::reverse(out.begin(), out.end());
  return out;
}

fq fq::pow(const std::array<std::uint64_t, 6>& e) const noexcept {
  fq result = one();
  bool started = false;
  for (int limb = 5; limb >= 0; --limb) {
    for (int bit = 63; bit >= 0; --bit) {
      if (started) result = result.square();
      if ((e[limb] >> bit) & 1) {
        result = started ? result * *this : *this;
        started = true;
      }
    }
  }
  return result;
}

fq fq::inverse() const noexcept { return pow(detail::to_limbs(constants::fq_p_minus_2)); }

std::optional<fq> fq::sqrt() const noexcept {
  const fq root = pow(detail::to_limbs(constants::fq_p_plus_1_div_4));
  if (root.square() != *this) return std::nullopt;
  return root;
}

int fq::legendre() const noexcept {
  if (is_zero()) return 0;
  return pow(detail::to_limbs(constants::fq_p_minus_1_div_2)) == one() ? 1 : -1;
}

bool fq::lexicographically_largest() const noexcept {
  const auto v = to_canonical();
  const auto& half = constants::fq_p_minus_1_div_2;
  for (int i = 5; i >= 0; --i) {
    if (v[i] != half[i]) return v[i] > half[i];
  }
  return false;
}

}  // namespace coprove::field
