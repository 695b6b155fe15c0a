// The BLS12-381 base field Fq on the CPU: six 64-bit little-endian limbs in Montgomery form
// (R = 2^384 mod p). G1 coordinates, the towers Fq2/Fq6/Fq12 and the pairing are built on it.
// Addition and multiplication are inline because the curve code and the pairing spend nearly all
// their time in them. The multiplication has two paths with identical results, portable C++ and
// x86-64 MULX/ADCX/ADOX assembly, the latter taken when CPUID reports BMI2 and ADX (chosen once at
// start-up, not at compile time, so one binary runs on any x86-64 CPU). The sum and difference are
// x86-64 assembly on every x86-64 target (they need no CPU feature), portable C++ elsewhere.
#pragma once

#include <coprove/field/detail/fq_arith.hpp>
#include <coprove/field/fq_constants.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace coprove::field {

namespace detail {
/// Whether fq multiplications take the MULX/ADX kernels (set at start-up from CPUID, see
/// set_fq_multiply_path). Zero-initialised, so code running before that takes the portable path.
/// A relaxed load and a predicted branch per product: a few cycles beside a product's seventy.
extern std::atomic<bool> fq_use_adx;

/// Montgomery product on the path chosen at start-up (a, b < 2p; the result is reduced). Always
/// inlined, as is the kernel: called out of line, the compiler's choice for the large assembly
/// body, the MSM ran about 5% slower.
[[gnu::always_inline]] inline limbs6 mont_mul(const limbs6& a, const limbs6& b) noexcept {
#if defined(COPROVE_FQ_HAVE_ADX_PATH)
  if (fq_use_adx.load(std::memory_order_relaxed)) return mont_mul_adx(a, b);
#endif
  return mont_mul_portable(a, b);
}

// The sum and difference take the x86-64 assembly where there is one (it needs no CPU feature).
// So do the unreduced forms the products accept (below 2p), which skip the conditional step.
#if defined(COPROVE_FQ_HAVE_X86_64_ASM)
inline limbs6 add_mod(const limbs6& a, const limbs6& b) noexcept { return add_mod_x86_64(a, b); }
inline limbs6 sub_mod(const limbs6& a, const limbs6& b) noexcept { return sub_mod_x86_64(a, b); }
inline limbs6 add_unreduced(const limbs6& a, const limbs6& b) noexcept { return add_unreduced_x86_64(a, b); }
inline limbs6 sub_unreduced(const limbs6& a, const limbs6& b) noexcept { return sub_unreduced_x86_64(a, b); }
#else
inline limbs6 add_mod(const limbs6& a, const limbs6& b) noexcept { return add_mod_portable(a, b); }
inline limbs6 sub_mod(const limbs6& a, const limbs6& b) noexcept { return sub_mod_portable(a, b); }
inline limbs6 add_unreduced(const limbs6& a, const limbs6& b) noexcept { return add_unreduced_portable(a, b); }
inline limbs6 sub_unreduced(const limbs6& a, const limbs6& b) noexcept { return sub_unreduced_portable(a, b); }
#endif
}  // namespace detail

/// The implementations of the Fq multiplication.
enum class fq_multiply_path {
  portable,    ///< 128-bit products in C++, any 64-bit target
  x86_64_adx,  ///< x86-64 MULX/ADCX/ADOX inline assembly (needs BMI2 and ADX)
};

/// The path's name: "portable" or "x86-64 mulx/adx".
std::string_view to_string(fq_multiply_path path) noexcept;
/// Whether this build and this CPU can run the path.
bool fq_multiply_path_supported(fq_multiply_path path) noexcept;
/// The path every Fq multiplication takes now (at start-up the fastest one supported).
fq_multiply_path active_fq_multiply_path() noexcept;
/// Switches every Fq multiplication to `path` (tests and benchmarks compare the paths); throws
/// std::invalid_argument when the path is not supported here. Call it while no other thread
/// multiplies.
void set_fq_multiply_path(fq_multiply_path path);

/// The Montgomery product of two Fq limb vectors on the portable path (for tests and benchmarks).
std::array<std::uint64_t, 6> fq_mul_portable(const std::array<std::uint64_t, 6>& a,
                                             const std::array<std::uint64_t, 6>& b) noexcept;
/// The same product on the MULX/ADX path; only where fq_multiply_path_supported(x86_64_adx).
std::array<std::uint64_t, 6> fq_mul_adx(const std::array<std::uint64_t, 6>& a,
                                        const std::array<std::uint64_t, 6>& b) noexcept;

/// An element of Fq, stored in Montgomery form (limbs = value * 2^384 mod p, little-endian).
struct fq {
  std::array<std::uint64_t, 6> limbs;

  static constexpr fq zero() noexcept { return fq{{0, 0, 0, 0, 0, 0}}; }
  static fq one() noexcept {
    const auto& r = constants::fq_r;
    return fq{{r[0], r[1], r[2], r[3], r[4], r[5]}};
  }
  /// The element equal to the integer v.
  static fq from_u64(std::uint64_t v) noexcept;
  /// The element with canonical value v (little-endian limbs); nullopt when v >= p.
  static std::optional<fq> from_canonical(const std::array<std::uint64_t, 6>& v) noexcept;
  /// The canonical value (0 <= value < p) as little-endian limbs.
  std::array<std::uint64_t, 6> to_canonical() const noexcept;
  /// Reads 48 big-endian bytes of a canonical value; nullopt when the value is >= p.
  static std::optional<fq> from_bytes_be(std::span<const std::uint8_t, 48> bytes) noexcept;
  /// Writes the canonical value as 48 big-endian bytes.
  void to_bytes_be(std::span<std::uint8_t, 48> out) const noexcept;
  /// Parses a decimal string of digits only; nullopt when empty, not decimal or >= p.
  static std::optional<fq> from_decimal(std::string_view s);
  /// The canonical value in decimal, without leading zeros ("0" for zero).
  std::string to_decimal() const;
  /// A uniformly random element (rejection sampling on 381-bit values).
  template <class URBG>
  static fq random(URBG& gen) {
    std::uniform_int_distribution<std::uint64_t> word;
    for (;;) {
      std::array<std::uint64_t, 6> v{word(gen), word(gen), word(gen), word(gen), word(gen),
                                     word(gen) & ((1ULL << 61) - 1)};
      if (auto x = from_canonical(v)) return *x;
    }
  }

  bool is_zero() const noexcept {
    return (limbs[0] | limbs[1] | limbs[2] | limbs[3] | limbs[4] | limbs[5]) == 0;
  }
  friend bool operator==(const fq& a, const fq& b) noexcept { return a.limbs == b.limbs; }

  fq operator+(const fq& o) const noexcept { return fq{detail::add_mod(limbs, o.limbs)}; }
  fq operator-(const fq& o) const noexcept { return fq{detail::sub_mod(limbs, o.limbs)}; }
  fq operator-() const noexcept { return fq{detail::sub_mod(zero().limbs, limbs)}; }
  fq operator*(const fq& o) const noexcept { return fq{detail::mont_mul(limbs, o.limbs)}; }
  fq& operator+=(const fq& o) noexcept { return *this = *this + o; }
  fq& operator-=(const fq& o) noexcept { return *this = *this - o; }
  fq& operator*=(const fq& o) noexcept { return *this = *this * o; }

  /// x^2 (shares the multiplication).
  fq square() const noexcept { return fq{detail::mont_mul(limbs, limbs)}; }
  /// 2x.
  fq doubled() const noexcept { return *this + *this; }
  /// x^e for an exponent of six little-endian limbs (square and multiply, variable time).
  fq pow(const std::array<std::uint64_t, 6>& e) const noexcept;
  /// The multiplicative inverse (Fermat, x^(p-2)); the inverse of zero is zero.
  fq inverse() const noexcept;
  /// A square root (x^((p+1)/4), p = 3 mod 4); nullopt when x is not a square.
  std::optional<fq> sqrt() const noexcept;
  /// The Legendre symbol: 0 for zero, 1 for a nonzero square, -1 otherwise.
  int legendre() const noexcept;
  /// Whether the canonical value exceeds (p-1)/2 (the zcash sign flag of a y coordinate).
  bool lexicographically_largest() const noexcept;
};

static_assert(sizeof(fq) == 48 && std::is_trivially_copyable_v<fq>);
static_assert(std::is_standard_layout_v<fq>);

}  // namespace coprove::field
