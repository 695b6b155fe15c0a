// Tests of the extension fields Fq2, Fq6 and Fq12: field axioms on random values, the square root
// of Fq2, the Frobenius maps against x^p computed by exponentiation, the sparse line product
// against the full product, and cyclotomic squaring against plain squaring.
#include <coprove/field/fq2.hpp>
#include <coprove/field/fq12.hpp>
#include <coprove/field/fq6.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <vector>

namespace {

using coprove::field::fq;
using coprove::field::fq2;
using coprove::field::fq6;
using coprove::field::fq12;
namespace constants = coprove::field::constants;

std::array<std::uint64_t, 6> modulus() {
  const auto& p = constants::fq_modulus;
  return {p[0], p[1], p[2], p[3], p[4], p[5]};
}

}  // namespace

TEST_CASE("fq2 satisfies the field axioms on random values", "[field][fq2][cpu]") {
  std::mt19937_64 gen(21);
  const fq2 u{fq::zero(), fq::one()};
  CHECK(u.square() == -fq2::one());
  for (int i = 0; i < 100; ++i) {
    const fq2 a = fq2::random(gen), b = fq2::random(gen), c = fq2::random(gen);
    REQUIRE(a * b == b * a);
    REQUIRE((a * b) * c == a * (b * c));
    REQUIRE(a * (b + c) == a * b + a * c);
    REQUIRE(a.square() == a * a);
    REQUIRE(a - b + b == a);
    REQUIRE(a * a.inverse() == fq2::one());
    REQUIRE(a.mul_by_nonresidue() == a * fq2{fq::one(), fq::one()});
    REQUIRE(a.mul_by_fq(b.c0) == a * fq2{b.c0, fq::zero()});
    REQUIRE(a.doubled() == a + a);
    REQUIRE(a.norm() == (a * a.conjugate()).c0);
  }
  CHECK(fq2::zero().inverse() == fq2::zero());
}

TEST_CASE("fq2 products and squares equal the schoolbook formulas on edge inputs on both paths",
          "[field][fq2][cpu]") {
  // Components 0, 1, p - 1, 2^384 - 1 reduced mod p, and random values.
  std::array<std::uint64_t, 6> all_ones;
  all_ones.fill(~0ULL);
  std::vector<fq> parts = {fq::zero(), fq::one(), -fq::one(), fq::from_u64(2),
                           fq{coprove::field::fq_mul_portable(all_ones, {1, 0, 0, 0, 0, 0})}};
  std::mt19937_64 gen(24);
  for (int i = 0; i < 4; ++i) parts.push_back(fq::random(gen));
  std::vector<fq2> values;
  for (const fq& x : parts) {
    for (const fq& y : parts) values.push_back(fq2{x, y});
  }
  const auto start = coprove::field::active_fq_multiply_path();
  for (const auto path : {coprove::field::fq_multiply_path::portable,
                          coprove::field::fq_multiply_path::x86_64_adx}) {
    if (!coprove::field::fq_multiply_path_supported(path)) continue;
    coprove::field::set_fq_multiply_path(path);
    for (const fq2& a : values) {
      REQUIRE(a.square() == fq2{a.c0 * a.c0 - a.c1 * a.c1, a.c0 * a.c1 + a.c1 * a.c0});
      for (const fq2& b : values) {
        REQUIRE(a * b == fq2{a.c0 * b.c0 - a.c1 * b.c1, a.c0 * b.c1 + a.c1 * b.c0});
      }
    }
  }
  coprove::field::set_fq_multiply_path(start);
}

TEST_CASE("fq2 square roots exist exactly for squares", "[field][fq2][cpu]") {
  std::mt19937_64 gen(22);
  int non_squares = 0;
  for (int i = 0; i < 50; ++i) {
    const fq2 a = fq2::random(gen);
    const auto root = a.square().sqrt();
    REQUIRE(root.has_value());
    REQUIRE((*root == a || *root == -a));
    // Half the elements are non-squares; the norm being a square in Fq decides it.
    const fq2 b = fq2::random(gen);
    const bool is_square = b.norm().legendre() == 1;
    REQUIRE(b.sqrt().has_value() == is_square);
    if (!is_square) ++non_squares;
  }
  CHECK(non_squares > 5);
  // Elements of Fq embed as squares in Fq2: -1 = u^2.
  const auto root = (-fq2::one()).sqrt();
  REQUIRE(root.has_value());
  CHECK(root->square() == -fq2::one());
  CHECK(fq2::zero().sqrt() == fq2::zero());
  // Roots of pure imaginary and pure real elements take the other branch of the algorithm.
  const fq2 real{fq::from_u64(5), fq::zero()};
  REQUIRE(real.sqrt().has_value());
  CHECK(real.sqrt()->square() == real);
}

TEST_CASE("fq2 frobenius is x^p and the sign rule follows zcash", "[field][fq2][cpu]") {
  std::mt19937_64 gen(23);
  const fq2 a = fq2::random(gen);
  CHECK(a.frobenius_map(1) == a.pow(modulus()));
  CHECK(a.frobenius_map(2) == a);
  CHECK(a.frobenius_map(1).frobenius_map(1) == a);
  const fq big = -fq::one();  // p - 1 is largest
  CHECK(fq2{fq::zero(), big}.lexicographically_largest());
  CHECK_FALSE(fq2{big, fq::one()}.lexicographically_largest());
  CHECK(fq2{big, fq::zero()}.lexicographically_largest());
  CHECK_FALSE(fq2{fq::one(), fq::zero()}.lexicographically_largest());
}

TEST_CASE("fq6 and fq12 satisfy the field axioms on random values", "[field][fq6][fq12][cpu]") {
  std::mt19937_64 gen(31);
  const fq6 v{fq2::zero(), fq2::one(), fq2::zero()};
  CHECK(v * v * v == fq6{fq2{fq::one(), fq::one()}, fq2::zero(), fq2::zero()});  // v^3 = u + 1
  const fq12 w{fq6::zero(), fq6::one()};
  CHECK(w.square() == fq12{v, fq6::zero()});  // w^2 = v
  for (int i = 0; i < 30; ++i) {
    const fq6 a = fq6::random(gen), b = fq6::random(gen), c = fq6::random(gen);
    REQUIRE(a * b == b * a);
    REQUIRE((a * b) * c == a * (b * c));
    REQUIRE(a * (b + c) == a * b + a * c);
    REQUIRE(a.square() == a * a);
    REQUIRE(a * a.inverse() == fq6::one());
    REQUIRE(a.mul_by_nonresidue() == a * v);
    REQUIRE(a.mul_by_01(b.c0, b.c1) == a * fq6{b.c0, b.c1, fq2::zero()});
    REQUIRE(a.mul_by_1(b.c1) == a * fq6{fq2::zero(), b.c1, fq2::zero()});
    REQUIRE(a - a == fq6::zero());
    const fq12 x = fq12::random(gen), y = fq12::random(gen), z = fq12::random(gen);
    REQUIRE(x * y == y * x);
    REQUIRE((x * y) * z == x * (y * z));
    REQUIRE(x * (y + z) == x * y + x * z);
    REQUIRE(x.square() == x * x);
    REQUIRE(x * x.inverse() == fq12::one());
    REQUIRE(x + (-x) == fq12::zero());
  }
  CHECK(fq6::zero().inverse() == fq6::zero());
  CHECK(fq12::zero().inverse() == fq12::zero());
}

TEST_CASE("fq6 and fq12 frobenius maps equal x^(p^k)", "[field][fq6][fq12][cpu]") {
  std::mt19937_64 gen(32);
  const auto p = modulus();
  const fq12 x = fq12::random(gen);
  const fq12 xp = x.pow(p.data(), p.size());
  CHECK(x.frobenius_map(1) == xp);
  const fq6 a = fq6::random(gen);
  CHECK(fq12{a, fq6::zero()}.pow(p.data(), p.size()) == fq12{a.frobenius_map(1), fq6::zero()});
  fq12 repeated = x;
  fq6 repeated6 = a;
  for (unsigned k = 1; k <= 12; ++k) {
    repeated = repeated.frobenius_map(1);
    repeated6 = repeated6.frobenius_map(1);
    INFO("k = " << k);
    REQUIRE(x.frobenius_map(k) == repeated);
    REQUIRE(a.frobenius_map(k) == repeated6);
  }
  CHECK(repeated == x);  // x^(p^12) = x
  CHECK(x.frobenius_map(6) == x.conjugate());
}

TEST_CASE("the sparse line product equals the full fq12 product", "[field][fq12][cpu]") {
  std::mt19937_64 gen(33);
  for (int i = 0; i < 20; ++i) {
    const fq12 f = fq12::random(gen);
    const fq2 a = fq2::random(gen), b = fq2::random(gen), c = fq2::random(gen);
    const fq12 line{fq6{a, b, fq2::zero()}, fq6{fq2::zero(), c, fq2::zero()}};
    REQUIRE(f.mul_by_014(a, b, c) == f * line);
  }
}

TEST_CASE("cyclotomic squaring and exponentiation agree with the generic ones in the subgroup",
          "[field][fq12][cpu]") {
  std::mt19937_64 gen(34);
  for (int i = 0; i < 10; ++i) {
    const fq12 f = fq12::random(gen);
    // f^((p^6 - 1)(p^2 + 1)) lies in the cyclotomic subgroup.
    const fq12 t = f.conjugate() * f.inverse();
    const fq12 g = t.frobenius_map(2) * t;
    REQUIRE(g.cyclotomic_square() == g.square());
    REQUIRE(g * g.conjugate() == fq12::one());
    const std::uint64_t e = 0xd201000000010000ULL ^ static_cast<std::uint64_t>(i * 7919);
    REQUIRE(g.cyclotomic_pow(e) == g.pow(&e, 1));
  }
  // Outside the subgroup the formula does not square.
  const fq12 f = fq12::random(gen);
  CHECK(f.cyclotomic_square() != f.square());
}
