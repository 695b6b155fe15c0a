// Tests of the two Fr multiplication paths (portable 128-bit products, x86-64 MULX/ADCX/ADOX):
// each against an independent big-integer reference on random and edge inputs, against each
// other, and the switch between them; and the x86-64 chain kernels of the MiMC witness (lazy
// square and product, reduction, lazy addition) against the portable product, also over long
// dependent chains.
#include <coprove/field/fr.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using coprove::field::fr;
using coprove::field::fr_multiply_path;
namespace detail = coprove::field::detail;
using limbs4 = std::array<std::uint64_t, 4>;
using u512 = std::array<std::uint64_t, 8>;

u512 wide_product(const limbs4& x, const limbs4& y) {
  u512 t{};
  for (int i = 0; i < 4; ++i) {
    unsigned __int128 carry = 0;
    for (int j = 0; j < 4; ++j) {
      const unsigned __int128 s = static_cast<unsigned __int128>(x[i]) * y[j] + t[i + j] + carry;
      t[i + j] = static_cast<std::uint64_t>(s);
      carry = s >> 64;
    }
    t[i + 4] = static_cast<std::uint64_t>(carry);
  }
  return t;
}

bool at_least_r(const limbs4& x) {
  for (int i = 3; i >= 0; --i) {
    if (x[i] != detail::fr_modulus[i]) return x[i] > detail::fr_modulus[i];
  }
  return true;
}

// t mod r by binary long division (no Montgomery arithmetic involved).
limbs4 reduce_mod_r(const u512& t) {
  limbs4 rem{};
  for (int bit = 511; bit >= 0; --bit) {
    // rem < r < 2^255, so the shift cannot leave four words.
    rem[3] = (rem[3] << 1) | (rem[2] >> 63);
    rem[2] = (rem[2] << 1) | (rem[1] >> 63);
    rem[1] = (rem[1] << 1) | (rem[0] >> 63);
    rem[0] = (rem[0] << 1) | ((t[bit / 64] >> (bit % 64)) & 1);
    if (at_least_r(rem)) {
      unsigned __int128 borrow = 0;
      for (int i = 0; i < 4; ++i) {
        const unsigned __int128 d = static_cast<unsigned __int128>(rem[i]) - detail::fr_modulus[i] - borrow;
        rem[i] = static_cast<std::uint64_t>(d);
        borrow = (d >> 64) & 1;
      }
    }
  }
  return rem;
}

/// Whether z is the Montgomery product of x and y: z < r and z * 2^256 == x * y (mod r).
bool is_montgomery_product(const limbs4& z, const limbs4& x, const limbs4& y) {
  if (at_least_r(z)) return false;
  const u512 shifted{0, 0, 0, 0, z[0], z[1], z[2], z[3]};
  return reduce_mod_r(shifted) == reduce_mod_r(wide_product(x, y));
}

limbs4 minus(const limbs4& x, std::uint64_t v) {
  limbs4 out = x;
  for (int i = 0; i < 4 && v != 0; ++i) {
    const std::uint64_t before = out[i];
    out[i] -= v;
    v = out[i] > before ? 1 : 0;
  }
  return out;
}

/// Inputs below r where carries and the final subtraction are most likely to go wrong.
std::vector<limbs4> edge_inputs() {
  const limbs4 r = detail::fr_modulus;
  return {
      {0, 0, 0, 0},
      {1, 0, 0, 0},
      {2, 0, 0, 0},
      {~std::uint64_t{0}, 0, 0, 0},
      {0, 0, 0, 1},
      {0, 0, 0, std::uint64_t{1} << 62},
      detail::fr_r,
      detail::fr_r2,
      minus(r, 1),
      minus(r, 2),
      minus(r, 3),
      minus(r, std::uint64_t{1} << 32),
      minus(r, ~std::uint64_t{0}),
      {~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}, r[3] - 1},
      {0, 0, 0, r[3]},
      {r[0], r[1], r[2], r[3] - 1},
  };
}

std::vector<limbs4> random_inputs(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<limbs4> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(fr::random(gen).limbs);
  // Values with long runs of ones, still below r.
  for (std::size_t i = 0; i < count / 4; ++i) {
    limbs4 x{gen() | 0xffffffff00000000ULL, gen() | 0xffff0000ffff0000ULL, ~std::uint64_t{0},
             detail::fr_modulus[3] - 1 - (gen() & 0xff)};
    out.push_back(x);
  }
  return out;
}

bool adx_supported() {
  return coprove::field::fr_multiply_path_supported(fr_multiply_path::x86_64_adx);
}

/// Restores the path active when the test began.
struct path_guard {
  fr_multiply_path saved = coprove::field::active_fr_multiply_path();
  ~path_guard() { coprove::field::set_fr_multiply_path(saved); }
};

limbs4 plus(const limbs4& x, const limbs4& y) {
  limbs4 out;
  unsigned __int128 carry = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned __int128 s = static_cast<unsigned __int128>(x[i]) + y[i] + carry;
    out[i] = static_cast<std::uint64_t>(s);
    carry = s >> 64;
  }
  return out;
}

/// Whether x < bound (both as 256-bit integers).
bool below(const limbs4& x, const limbs4& bound) {
  for (int i = 3; i >= 0; --i) {
    if (x[i] != bound[i]) return x[i] < bound[i];
  }
  return false;
}

const limbs4 two_r = plus(detail::fr_modulus, detail::fr_modulus);

/// x mod r for x < 2r, by the reference subtraction.
limbs4 reduced(const limbs4& x) {
  if (!at_least_r(x)) return x;
  return reduce_mod_r(u512{x[0], x[1], x[2], x[3], 0, 0, 0, 0});
}

/// Lazy values (in [r, 2r) and below r) as chain steps produce them: r + v for small and large v.
std::vector<limbs4> lazy_inputs(std::size_t count, std::uint64_t seed) {
  std::vector<limbs4> out = edge_inputs();
  const std::size_t edges = out.size();
  for (std::size_t i = 0; i < edges; ++i) out.push_back(plus(detail::fr_modulus, out[i]));
  std::mt19937_64 gen(seed);
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back(plus(detail::fr_modulus, fr::random(gen).limbs));
  }
  return out;
}

}  // namespace

TEST_CASE("the portable product matches a big-integer reference on edge and random inputs",
          "[prover][field][cpu]") {
  const auto edges = edge_inputs();
  for (const auto& x : edges) {
    for (const auto& y : edges) {
      INFO("x[3] " << x[3] << " x[0] " << x[0] << " y[3] " << y[3] << " y[0] " << y[0]);
      CHECK(is_montgomery_product(detail::mont_mul_portable(x, y), x, y));
    }
  }
  const auto values = random_inputs(200, 7);
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    CHECK(is_montgomery_product(detail::mont_mul_portable(values[i], values[i + 1]), values[i],
                                values[i + 1]));
  }
}

#if defined(COPROVE_FR_HAVE_ADX_PATH)
TEST_CASE("the MULX/ADX product and square match the reference and the portable product bit for bit",
          "[prover][field][cpu]") {
  if (!adx_supported()) {
    WARN("this CPU lacks BMI2/ADX: the x86-64 multiplication path cannot run here");
    return;
  }
  const auto edges = edge_inputs();
  for (const auto& x : edges) {
    for (const auto& y : edges) {
      INFO("x[3] " << x[3] << " x[0] " << x[0] << " y[3] " << y[3] << " y[0] " << y[0]);
      const limbs4 z = detail::mont_mul_adx(x, y);
      CHECK(is_montgomery_product(z, x, y));
      CHECK(z == detail::mont_mul_portable(x, y));
    }
  }
  const auto values = random_inputs(200, 11);
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    CHECK(is_montgomery_product(detail::mont_mul_adx(values[i], values[i + 1]), values[i],
                                values[i + 1]));
  }
#if defined(COPROVE_FR_HAVE_ADX_SQUARE)
  for (const auto& x : edges) {
    const limbs4 z = detail::mont_square_adx(x);
    CHECK(is_montgomery_product(z, x, x));
    CHECK(z == detail::mont_mul_portable(x, x));
  }
  for (const auto& x : values) CHECK(is_montgomery_product(detail::mont_square_adx(x), x, x));
#endif
  // Many more random pairs against the portable path only (the reference is slow).
  std::mt19937_64 gen(99);
  std::size_t mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    const limbs4 x = fr::random(gen).limbs, y = fr::random(gen).limbs;
    if (detail::mont_mul_adx(x, y) != detail::mont_mul_portable(x, y)) ++mismatches;
#if defined(COPROVE_FR_HAVE_ADX_SQUARE)
    if (detail::mont_square_adx(x) != detail::mont_mul_portable(x, x)) ++mismatches;
#endif
  }
  CHECK(mismatches == 0);
}
#endif

#if defined(COPROVE_FR_HAVE_ADX_LATENCY)
TEST_CASE("the chain kernels' square and product match the reference and the portable product bit "
          "for bit, lazily below 2r",
          "[prover][field][cpu]") {
  if (!adx_supported()) {
    WARN("this CPU lacks BMI2/ADX: the x86-64 chain kernels cannot run here");
    return;
  }
  const auto edges = edge_inputs();
  for (const auto& x : edges) {
    for (const auto& y : edges) {
      INFO("x[3] " << x[3] << " x[0] " << x[0] << " y[3] " << y[3] << " y[0] " << y[0]);
      const limbs4 lazy = detail::mont_mul_lazy_adx(x, y);
      CHECK(below(lazy, two_r));
      CHECK(reduced(lazy) == detail::mont_mul_portable(x, y));
      const limbs4 z = detail::mont_mul_latency_adx(x, y);
      CHECK(is_montgomery_product(z, x, y));
      CHECK(z == detail::mont_mul_portable(x, y));
    }
    const limbs4 lazy = detail::mont_square_lazy_adx(x);
    CHECK(below(lazy, two_r));
    CHECK(reduced(lazy) == detail::mont_mul_portable(x, x));
    const limbs4 z = detail::mont_square_latency_adx(x);
    CHECK(is_montgomery_product(z, x, x));
    CHECK(z == detail::mont_mul_portable(x, x));
  }
  const auto values = random_inputs(200, 13);
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    CHECK(is_montgomery_product(detail::mont_mul_latency_adx(values[i], values[i + 1]), values[i],
                                values[i + 1]));
    CHECK(is_montgomery_product(detail::mont_square_latency_adx(values[i]), values[i], values[i]));
  }
  std::mt19937_64 gen(101);
  std::size_t mismatches = 0;
  for (int i = 0; i < 100000; ++i) {
    const limbs4 x = fr::random(gen).limbs, y = fr::random(gen).limbs;
    if (detail::mont_mul_latency_adx(x, y) != detail::mont_mul_portable(x, y)) ++mismatches;
    if (detail::mont_square_latency_adx(x) != detail::mont_mul_portable(x, x)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("the lazy kernels accept lazy operands within their documented bounds",
          "[prover][field][cpu]") {
  if (!adx_supported()) {
    WARN("this CPU lacks BMI2/ADX: the x86-64 chain kernels cannot run here");
    return;
  }
  // The product takes a < 2r (a lazy value) times b < r.
  const auto lazy = lazy_inputs(300, 17);
  const auto canonical = random_inputs(40, 19);
  std::vector<limbs4> factors = edge_inputs();
  factors.insert(factors.end(), canonical.begin(), canonical.end());
  for (const auto& a : lazy) {
    for (const auto& b : factors) {
      const limbs4 z = detail::mont_mul_lazy_adx(a, b);
      CHECK(below(z, two_r));
      CHECK(reduced(z) == detail::mont_mul_portable(reduced(a), b));
    }
  }
  // The square takes a < 1.486 r: every lazy square of a value below r, and the largest values
  // that still fit.
  std::vector<limbs4> squarable;
  for (const auto& x : edge_inputs()) squarable.push_back(detail::mont_square_lazy_adx(x));
  for (const auto& x : canonical) squarable.push_back(detail::mont_square_lazy_adx(x));
  // floor(sqrt(r * 2^256)), the largest a with a^2 < r * 2^256, and a few below it.
  const limbs4 largest{0, 0x8000000000000000ULL, 0x00000000ffffffffULL, 0xac45a4010001a402ULL};
  squarable.push_back(minus(largest, 0));
  squarable.push_back(minus(largest, 1));
  squarable.push_back(minus(largest, 0xffffffffULL));
  for (const auto& a : squarable) {
    INFO("a[3] " << a[3] << " a[0] " << a[0]);
    const limbs4 z = detail::mont_square_lazy_adx(a);
    CHECK(below(z, two_r));
    CHECK(is_montgomery_product(reduced(z), reduced(a), reduced(a)));
    CHECK(reduced(z) == detail::mont_mul_portable(reduced(a), reduced(a)));
  }
}

TEST_CASE("the reduction and the lazy addition give the canonical value on every edge",
          "[prover][field][cpu]") {
  if (!adx_supported()) {
    WARN("this CPU lacks BMI2/ADX: the x86-64 chain kernels cannot run here");
    return;
  }
  const limbs4 r = detail::fr_modulus;
  std::vector<limbs4> ys = lazy_inputs(200, 23);
  ys.push_back(minus(two_r, 1));
  ys.push_back(minus(two_r, 2));
  std::vector<limbs4> ks = edge_inputs();
  ks.push_back(limbs4{~0ULL, ~0ULL, ~0ULL, ~0ULL >> 2});  // the largest round constant
  const auto more = random_inputs(30, 29);
  ks.insert(ks.end(), more.begin(), more.end());
  for (const auto& y : ys) {
    INFO("y[3] " << y[3] << " y[0] " << y[0]);
    CHECK(detail::reduce_once_x86_64(y) == reduced(y));
    for (const auto& k : ks) {
      const limbs4 sum = detail::add_reduce_x86_64(y, detail::make_lazy_addend(k));
      // The reference: (y mod r) + k, reduced by the portable addition.
      CHECK(sum == (fr{reduced(y)} + fr{k}).limbs);
      CHECK_FALSE(at_least_r(sum));
    }
  }
  CHECK(detail::reduce_once_x86_64(r) == limbs4{0, 0, 0, 0});
  CHECK(detail::add_reduce_x86_64(minus(two_r, 1), detail::make_lazy_addend(minus(r, 1))) ==
        minus(r, 2));  // 3r - 2 mod r
}

TEST_CASE("long chains on the lazy kernels stay bit-identical to the portable path",
          "[prover][field][cpu]") {
  if (!adx_supported()) {
    WARN("this CPU lacks BMI2/ADX: the x86-64 chain kernels cannot run here");
    return;
  }
  // x -> x^5 + k as the MiMC round chains it (squares and the product on lazy values), against
  // the same chain on the portable product, 5000 steps from several starts.
  std::mt19937_64 gen(31);
  std::vector<limbs4> starts = {limbs4{0, 0, 0, 0}, detail::fr_r, minus(detail::fr_modulus, 1)};
  for (int i = 0; i < 5; ++i) starts.push_back(fr::random(gen).limbs);
  for (const auto& start : starts) {
    limbs4 fast = start, slow = start;
    std::size_t mismatches = 0;
    for (int step = 0; step < 5000; ++step) {
      const limbs4 k = fr::random(gen).limbs;
      const limbs4 s = detail::mont_square_lazy_adx(fast);
      const limbs4 q = detail::mont_square_lazy_adx(s);
      const limbs4 y = detail::mont_mul_lazy_adx(q, fast);
      const limbs4 slow_s = detail::mont_mul_portable(slow, slow);
      const limbs4 slow_q = detail::mont_mul_portable(slow_s, slow_s);
      const limbs4 slow_y = detail::mont_mul_portable(slow_q, slow);
      if (detail::reduce_once_x86_64(s) != slow_s || detail::reduce_once_x86_64(q) != slow_q ||
          detail::reduce_once_x86_64(y) != slow_y) {
        ++mismatches;
      }
      fast = detail::add_reduce_x86_64(y, detail::make_lazy_addend(k));
      slow = (fr{slow_y} + fr{k}).limbs;
    }
    CHECK(mismatches == 0);
    CHECK(fast == slow);
  }
}
#endif

TEST_CASE("the multiplication path is named, switchable to supported paths only, and both give "
          "the same field",
          "[prover][field][cpu]") {
  using namespace coprove::field;
  path_guard guard;
  CHECK(fr_multiply_path_supported(fr_multiply_path::portable));
  CHECK(fr_multiply_path_name() == to_string(active_fr_multiply_path()));
  CHECK(to_string(fr_multiply_path::portable) == "portable");
  CHECK(to_string(fr_multiply_path::x86_64_adx) == "x86-64 mulx/adx");
  // At start-up the fastest supported path is active.
  CHECK(active_fr_multiply_path() ==
        (adx_supported() ? fr_multiply_path::x86_64_adx : fr_multiply_path::portable));
  if (!adx_supported()) {
    CHECK_THROWS_AS(set_fr_multiply_path(fr_multiply_path::x86_64_adx), std::invalid_argument);
    CHECK(active_fr_multiply_path() == fr_multiply_path::portable);
  }

  std::mt19937_64 gen(3);
  std::vector<std::array<fr, 2>> pairs;
  for (int i = 0; i < 64; ++i) pairs.push_back({fr::random(gen), fr::random(gen)});
  pairs.push_back({-fr::one(), -fr::one()});
  pairs.push_back({fr::zero(), -fr::one()});
  std::vector<std::vector<fr>> results;
  for (fr_multiply_path path : {fr_multiply_path::portable, fr_multiply_path::x86_64_adx}) {
    if (!fr_multiply_path_supported(path)) continue;
    set_fr_multiply_path(path);
    CHECK(active_fr_multiply_path() == path);
    CHECK(fr_multiply_path_name() == to_string(path));
    std::vector<fr> out;
    for (const auto& [a, b] : pairs) {
      out.push_back(a * b);
      out.push_back(a.square());
      if (!a.is_zero()) CHECK(a * a.inverse() == fr::one());
    }
    CHECK((-fr::one()).square() == fr::one());
    CHECK(fr::from_uint64(7).to_canonical() == std::array<std::uint64_t, 4>{7, 0, 0, 0});
    results.push_back(std::move(out));
  }
  for (std::size_t i = 1; i < results.size(); ++i) CHECK(results[i] == results[0]);
}
