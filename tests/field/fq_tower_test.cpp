// Tests of the extension fields Fq2, Fq6 and Fq12: field axioms on random values, the square root
// of Fq2, and the Frobenius maps against x^p computed by exponentiation.
#include <coprove/field/fq2.hpp>

#include <catch2/catch.hpp>

#include <random>

namespace {

using coprove::field::fq;
using coprove::field::fq2;
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
