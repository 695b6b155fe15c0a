// Tests of evaluation domains: sizes, roots of unity, inverses, the coset constant and the
// twiddle tables.
#include <coprove/field/domain.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

namespace {
using coprove::field::evaluation_domain;
using coprove::field::fr;
}  // namespace

TEST_CASE("a domain's root of unity has order exactly its size", "[prover][domain][cpu]") {
  for (unsigned k : {0u, 1u, 2u, 5u, 10u, 20u, 31u, 32u}) {
    const evaluation_domain domain(std::size_t{1} << k);
    CHECK(domain.size() == (std::size_t{1} << k));
    CHECK(domain.log_size() == k);
    fr w = domain.omega();
    for (unsigned i = 0; i < k; ++i) {
      if (i + 1 == k) CHECK(w == -fr::one());  // omega^(n/2) == -1: order is not n/2
      w = w.square();
    }
    CHECK(w == fr::one());
    CHECK(domain.omega() * domain.omega_inv() == fr::one());
    CHECK(domain.size_inv() * fr::from_uint64(domain.size()) == fr::one());
  }
}

TEST_CASE("the coset constant is 1/(7^n - 1)", "[prover][domain][cpu]") {
  const evaluation_domain domain(1 << 10);
  CHECK(evaluation_domain::coset_generator() == fr::from_uint64(7));
  CHECK(evaluation_domain::coset_generator() * evaluation_domain::coset_generator_inv() ==
        fr::one());
  CHECK(domain.vanishing_on_coset_inv() * (fr::from_uint64(7).pow(std::uint64_t{1} << 10) - fr::one()) ==
        fr::one());
}

TEST_CASE("sizes that are not powers of two up to 2^32 are refused with the size in the message",
          "[prover][domain][cpu]") {
  for (std::size_t bad : {std::size_t{0}, std::size_t{3}, std::size_t{12}, std::size_t{1000},
                          (std::size_t{1} << 33), (std::size_t{1} << 32) + 2}) {
    try {
      evaluation_domain domain(bad);
      FAIL("size " << bad << " was accepted");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find(std::to_string(bad)) != std::string::npos);
    }
  }
}

TEST_CASE("twiddle tables hold each level's roots and are shared by copies of a domain",
          "[prover][domain][cpu]") {
  const evaluation_domain domain(1 << 8);
  const auto forward = domain.forward_twiddles();
  const auto inverse = domain.inverse_twiddles();
  REQUIRE(forward.size() == domain.size());
  REQUIRE(inverse.size() == domain.size());
  for (std::size_t h = 1; h < domain.size(); h *= 2) {
    // omega_{2h} = omega^(n / 2h)
    const fr root = domain.omega().pow(static_cast<std::uint64_t>(domain.size() / (2 * h)));
    for (std::size_t j = 0; j < h; ++j) {
      CHECK(forward[h + j] == root.pow(static_cast<std::uint64_t>(j)));
      CHECK(inverse[h + j] * forward[h + j] == fr::one());
    }
  }
  const evaluation_domain copy = domain;
  CHECK(copy.forward_twiddles().data() == forward.data());
}

TEST_CASE("an ffjavascript domain's roots are snarkjs's Fr.w[k] (5^((r-1)/2^32) squared down)",
          "[prover][domain][cpu]") {
  using coprove::field::domain_roots;
  // Fr.w[1], Fr.w[2] and Fr.w[32] of ffjavascript's buildBls12381, printed by node.
  CHECK(evaluation_domain(2, domain_roots::ffjavascript).omega() == -fr::one());
  CHECK(evaluation_domain(4, domain_roots::ffjavascript).omega() ==
        fr::from_hex("0x8d51ccce760304d0ec030002760300000001000000000000"));
  const evaluation_domain full(std::size_t{1} << 32, domain_roots::ffjavascript);
  CHECK(full.omega() == fr::from_hex("0x212d79e5b416b6f0fd56dc8d168d6c0c4024ff270b3e0941b788f500b912f1f"));
  CHECK_THROWS_AS(full.odd_coset_shift(), std::domain_error);
  // The two conventions differ, so a zkey's quotient needs its own domain.
  CHECK(evaluation_domain(1 << 10, domain_roots::ffjavascript).omega() != evaluation_domain(1 << 10).omega());
  CHECK(evaluation_domain(1 << 10, domain_roots::ffjavascript).odd_coset_shift() ==
        evaluation_domain(1 << 11, domain_roots::ffjavascript).omega());
}
