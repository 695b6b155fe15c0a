// Tests of the CPU quotient: the identity h * Z == A*B - C as polynomials and at random points,
// agreement with the unfused sequence of public transforms, and argument checks.
#include <coprove/field/quotient.hpp>

#include <coprove/field/ntt.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <stdexcept>
#include <vector>

namespace {

using namespace coprove::field;

std::vector<fr> random_vector(std::size_t n, std::mt19937_64& gen) {
  std::vector<fr> v(n);
  for (auto& x : v) x = fr::random(gen);
  return v;
}

fr horner(const std::vector<fr>& coeffs, const fr& x) {
  fr acc = fr::zero();
  for (std::size_t j = coeffs.size(); j-- > 0;) acc = acc * x + coeffs[j];
  return acc;
}

struct quotient_case {
  std::vector<fr> a, b, c, h;
};

/// Random A and B; C = A*B on the domain, so Z divides A*B - C.
quotient_case divisible_case(const evaluation_domain& domain, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  quotient_case q;
  q.a = random_vector(domain.size(), gen);
  q.b = random_vector(domain.size(), gen);
  q.c.resize(domain.size());
  for (std::size_t i = 0; i < domain.size(); ++i) q.c[i] = q.a[i] * q.b[i];
  q.h.resize(domain.size());
  compute_quotient(q.a, q.b, q.c, q.h, domain);
  return q;
}

std::vector<fr> coefficients(std::vector<fr> evals, const evaluation_domain& domain) {
  intt(evals, domain);
  return evals;
}

}  // namespace

TEST_CASE("h times X^n - 1 equals A*B - C as polynomials", "[prover][quotient][cpu]") {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{16}, std::size_t{64}}) {
    const evaluation_domain domain(n);
    const auto q = divisible_case(domain, n);
    const auto a = coefficients(q.a, domain), b = coefficients(q.b, domain),
               c = coefficients(q.c, domain);
    std::vector<fr> lhs(2 * n, fr::zero());  // A*B - C
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) lhs[i + j] += a[i] * b[j];
      lhs[i] -= c[i];
    }
    std::vector<fr> rhs(2 * n, fr::zero());  // h * X^n - h
    for (std::size_t i = 0; i < n; ++i) {
      rhs[i + n] += q.h[i];
      rhs[i] -= q.h[i];
    }
    CHECK(lhs == rhs);
    CHECK(q.h[n - 1] == fr::zero());  // deg h <= n - 2
  }
}

TEST_CASE("the quotient identity holds at random points for 2^12 and 2^15",
          "[prover][quotient][cpu]") {
  for (std::size_t n : {std::size_t{1} << 12, std::size_t{1} << 15}) {
    const evaluation_domain domain(n);
    const auto q = divisible_case(domain, 77 + n);
    const auto a = coefficients(q.a, domain), b = coefficients(q.b, domain),
               c = coefficients(q.c, domain);
    std::mt19937_64 gen(n);
    for (int trial = 0; trial < 4; ++trial) {
      const fr x = fr::random(gen);
      const fr z = x.pow(static_cast<std::uint64_t>(n)) - fr::one();
      CHECK(horner(q.h, x) * z == horner(a, x) * horner(b, x) - horner(c, x));
    }
  }
}

TEST_CASE("the quotient identity fails at random points when Z does not divide A*B - C",
          "[prover][quotient][cpu]") {
  const evaluation_domain domain(256);
  auto q = divisible_case(domain, 5);
  q.c[17] += fr::one();  // C no longer agrees with A*B on the domain
  compute_quotient(q.a, q.b, q.c, q.h, domain);
  const auto a = coefficients(q.a, domain), b = coefficients(q.b, domain),
             c = coefficients(q.c, domain);
  const fr x = fr::from_uint64(123456789);
  const fr z = x.pow(std::uint64_t{256}) - fr::one();
  CHECK(horner(q.h, x) * z != horner(a, x) * horner(b, x) - horner(c, x));
}

TEST_CASE("compute_quotient equals intt, coset_ntt, pointwise division and coset_intt",
          "[prover][quotient][cpu]") {
  for (std::size_t n : {std::size_t{8}, std::size_t{1} << 13, std::size_t{1} << 16}) {
    const evaluation_domain domain(n);
    std::mt19937_64 gen(n);
    // Arbitrary c: the two paths must agree bit for bit whether or not Z divides.
    const auto a = random_vector(n, gen), b = random_vector(n, gen), c = random_vector(n, gen);
    std::vector<fr> h(n);
    compute_quotient(a, b, c, h, domain);

    auto ta = a, tb = b, tc = c;
    for (auto* v : {&ta, &tb, &tc}) {
      intt(*v, domain);
      coset_ntt(*v, domain);
    }
    const fr z_inv = domain.vanishing_on_coset_inv();
    for (std::size_t i = 0; i < n; ++i) ta[i] = (ta[i] * tb[i] - tc[i]) * z_inv;
    coset_intt(ta, domain);
    CHECK(h == ta);
  }
}

/// The textbook seven-transform quotient from the public transforms: intt and coset_ntt of a, b
/// and c, (A_c * B_c - C_c) / (g^n - 1) pointwise, coset_intt.
std::vector<fr> seven_transform_quotient(std::vector<fr> a, std::vector<fr> b, std::vector<fr> c,
                                         const evaluation_domain& domain) {
  for (auto* v : {&a, &b, &c}) {
    intt(*v, domain);
    coset_ntt(*v, domain);
  }
  const fr z_inv = domain.vanishing_on_coset_inv();
  for (std::size_t i = 0; i < domain.size(); ++i) a[i] = (a[i] * b[i] - c[i]) * z_inv;
  coset_intt(a, domain);
  return a;
}

TEST_CASE("the six-transform quotient equals the seven-transform sequence with and without a*b == c",
          "[prover][quotient][cpu]") {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{32}, std::size_t{1} << 10,
                        std::size_t{1} << 14}) {
    CAPTURE(n);
    const evaluation_domain domain(n);
    std::mt19937_64 gen(1000 + n);
    const auto a = random_vector(n, gen), b = random_vector(n, gen);
    // Unsatisfied: c independent of a*b (checked, so the case cannot silently become divisible).
    const auto c_random = random_vector(n, gen);
    bool unsatisfied = false;
    for (std::size_t i = 0; i < n; ++i) unsatisfied = unsatisfied || a[i] * b[i] != c_random[i];
    REQUIRE(unsatisfied);
    // Satisfied except at one row, and fully satisfied.
    std::vector<fr> c_product(n);
    for (std::size_t i = 0; i < n; ++i) c_product[i] = a[i] * b[i];
    auto c_one_off = c_product;
    c_one_off[n / 2] += fr::one();
    const std::vector<const std::vector<fr>*> cs{&c_random, &c_one_off, &c_product};
    for (const std::vector<fr>* c : cs) {
      std::vector<fr> h(n, fr::from_uint64(99));
      compute_quotient(a, b, *c, h, domain);
      CHECK(h == seven_transform_quotient(a, b, *c, domain));
    }
  }
}

TEST_CASE("compute_quotient refuses wrong lengths and an output that overlaps an input",
          "[prover][quotient][cpu]") {
  const evaluation_domain domain(16);
  std::mt19937_64 gen(1);
  auto a = random_vector(16, gen), b = random_vector(16, gen), c = random_vector(16, gen);
  std::vector<fr> h(16, fr::one());
  std::vector<fr> short_vector(8);
  CHECK_THROWS_AS(compute_quotient(short_vector, b, c, h, domain), std::invalid_argument);
  CHECK_THROWS_AS(compute_quotient(a, b, c, std::span<fr>(short_vector), domain),
                  std::invalid_argument);
  CHECK_THROWS_AS(compute_quotient(a, b, c, std::span<fr>(a), domain), std::invalid_argument);
  CHECK(h == std::vector<fr>(16, fr::one()));
}

TEST_CASE("the odd-coset form holds A*B - C at omega_2n * omega^i with C interpolating a*b",
          "[prover][quotient][cpu]") {
  for (const domain_roots roots : {domain_roots::standard, domain_roots::ffjavascript}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{16}, std::size_t{64}}) {
      const evaluation_domain domain(n, roots);
      std::mt19937_64 gen(n + 100);
      const auto a_evals = random_vector(n, gen);
      const auto b_evals = random_vector(n, gen);
      std::vector<fr> c_evals(n);
      for (std::size_t i = 0; i < n; ++i) c_evals[i] = a_evals[i] * b_evals[i];
      std::vector<fr> h(n);
      compute_quotient_odd_coset(a_evals, b_evals, h, domain);

      const auto a = coefficients(a_evals, domain), b = coefficients(b_evals, domain),
                 c = coefficients(c_evals, domain);
      const fr shift = domain.odd_coset_shift();
      CHECK(shift * shift == domain.omega());
      fr x = shift;
      for (std::size_t i = 0; i < n; ++i) {
        CHECK(h[i] == horner(a, x) * horner(b, x) - horner(c, x));
        x *= domain.omega();
      }
    }
  }
}

TEST_CASE("the odd-coset form refuses spans of the wrong size or overlapping h", "[prover][quotient][cpu]") {
  const evaluation_domain domain(8, domain_roots::ffjavascript);
  std::vector<fr> a(8, fr::one()), b(8, fr::one()), h(8), short_h(7);
  CHECK_THROWS_AS(compute_quotient_odd_coset(a, b, short_h, domain), std::invalid_argument);
  CHECK_THROWS_AS(compute_quotient_odd_coset(a, b, a, domain), std::invalid_argument);
  CHECK_NOTHROW(compute_quotient_odd_coset(a, b, h, domain));
}
