// The CPU MSM against plain sums of scalar multiplications: sizes from empty to past a few
// thousand, every window width, scalars that are 0, 1 or mostly so, repeated, negated and identity
// bases, in G1 and G2, on both kinds of bucket (XYZZ for narrow windows, affine batches for wide
// ones).
#include <coprove/groth16/msm.hpp>

#include "groth16/groth16_test_support.hpp"

#include <coprove/field/parallel.hpp>

#include <catch2/catch.hpp>

#include <initializer_list>
#include <random>
#include <vector>

using namespace coprove;
using namespace coprove::groth16::testing;
using field::fr;

namespace {

/// sum s_i P_i by one scalar multiplication each.
template <class Curve>
jacobian_of<Curve> naive_msm(const std::vector<affine_of<Curve>>& bases, const std::vector<fr>& scalars) {
  auto acc = jacobian_of<Curve>::identity();
  for (std::size_t i = 0; i < bases.size(); ++i) acc += bases[i].mul(scalars[i].to_canonical());
  return acc;
}

/// sum s_i P_i for bases of known logarithms: [sum s_i k_i] G.
template <class Curve>
jacobian_of<Curve> known_msm(const known_bases<Curve>& bases, const std::vector<fr>& scalars) {
  fr total = fr::zero();
  for (std::size_t i = 0; i < scalars.size(); ++i) total += scalars[i] * bases.logs[i];
  return jacobian_of<Curve>::generator().mul(total.to_canonical());
}

template <class URBG>
std::vector<fr> random_scalars(std::size_t n, URBG& gen) {
  std::vector<fr> out(n);
  for (auto& s : out) s = fr::random(gen);
  return out;
}

/// Scalars drawn as 0 with probability p0, 1 with p1, else uniform.
template <class URBG>
std::vector<fr> boolean_heavy_scalars(std::size_t n, double p0, double p1, URBG& gen) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<fr> out(n);
  for (auto& s : out) {
    const double x = u(gen);
    s = x < p0 ? fr::zero() : x < p0 + p1 ? fr::one() : fr::random(gen);
  }
  return out;
}

template <class Curve>
void check_sizes_against_naive(std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  for (const std::size_t n : {0, 1, 2, 3, 17, 255}) {
    std::vector<affine_of<Curve>> bases;
    for (std::size_t i = 0; i < n; ++i) bases.push_back(random_subgroup_point<Curve>(gen));
    const auto scalars = random_scalars(n, gen);
    INFO("n = " << n);
    CHECK(groth16::msm(bases, scalars) == naive_msm(bases, scalars));
  }
}

template <class Curve>
void check_sizes_against_known_logs(std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  for (const std::size_t n : {1000, 4097}) {
    const auto bases = known_bases<Curve>::make(n, gen);
    const auto scalars = random_scalars(n, gen);
    INFO("n = " << n);
    CHECK(groth16::msm(bases.points, scalars) == known_msm(bases, scalars));
  }
}

/// Wide windows (affine buckets, added in batches): runs of one point under one scalar (the second
/// is a doubling in its bucket, the later ones find the bucket busy in the batch and wait), P and
/// -P side by side under one scalar (they cancel in one batch), identity bases, scalars 0, 1 and
/// r - 1, then every scalar equal (every point in one bucket of each window).
template <class Curve>
void check_affine_buckets(std::uint64_t seed, std::size_t n, std::initializer_list<unsigned> widths) {
  std::mt19937_64 gen(seed);
  auto bases = known_bases<Curve>::make(n, gen);
  auto scalars = random_scalars(n, gen);
  const auto copy_term = [&](std::size_t to, std::size_t from, bool negate) {
    bases.points[to] = negate ? -bases.points[from] : bases.points[from];
    bases.logs[to] = negate ? -bases.logs[from] : bases.logs[from];
    scalars[to] = scalars[from];
  };
  for (std::size_t i = 100; i < 160; ++i) copy_term(i, 99, false);
  for (std::size_t i = 200; i < 300; i += 2) copy_term(i + 1, i, true);
  for (std::size_t i = 300; i < 340; ++i) {
    bases.points[i] = affine_of<Curve>::identity();
    bases.logs[i] = fr::zero();
  }
  scalars[400] = fr::zero();
  scalars[401] = fr::one();
  for (std::size_t i = 402; i < 420; ++i) scalars[i] = -fr::one();
  const auto expected = known_msm(bases, scalars);
  std::vector<fr> same(n, fr::random(gen));
  const auto expected_same = known_msm(bases, same);
  for (const unsigned c : widths) {
    INFO("window_bits = " << c);
    CHECK(groth16::msm(bases.points, scalars, {.window_bits = c}) == expected);
    CHECK(groth16::msm(bases.points, same, {.window_bits = c}) == expected_same);
  }
}

}  // namespace

TEST_CASE("G1 MSM equals the naive sum for small sizes", "[groth16][msm][cpu]") {
  check_sizes_against_naive<field::g1_curve>(1);
}

TEST_CASE("G2 MSM equals the naive sum for small sizes", "[groth16][msm][cpu]") {
  check_sizes_against_naive<field::g2_curve>(2);
}

TEST_CASE("G1 MSM equals the sum by known logarithms at 1000 and 4097 points", "[groth16][msm][cpu]") {
  check_sizes_against_known_logs<field::g1_curve>(3);
}

TEST_CASE("G2 MSM equals the sum by known logarithms at 1000 and 4097 points", "[groth16][msm][cpu]") {
  check_sizes_against_known_logs<field::g2_curve>(4);
}

TEST_CASE("every window width gives the same MSM", "[groth16][msm][cpu]") {
  std::mt19937_64 gen(5);
  const auto bases = known_bases<field::g1_curve>::make(300, gen);
  auto scalars = random_scalars(300, gen);
  // Scalars whose digits carry through every window: r - 1, 2^254 - 1 and small values.
  scalars[0] = -fr::one();
  scalars[1] = fr::from_canonical({~0ULL, ~0ULL, ~0ULL, (1ULL << 62) - 1});
  scalars[2] = fr::from_uint64(2);
  scalars[3] = fr::from_uint64(0xffff);
  const auto expected = known_msm(bases, scalars);
  for (unsigned c = 1; c <= groth16::msm_max_window_bits; ++c) {
    INFO("window_bits = " << c);
    CHECK(groth16::msm(bases.points, scalars, {.window_bits = c}) == expected);
  }
  const auto g2_bases = known_bases<field::g2_curve>::make(40, gen);
  const auto g2_scalars = random_scalars(40, gen);
  const auto g2_expected = known_msm(g2_bases, g2_scalars);
  for (const unsigned c : {1u, 4u, 9u, 16u}) {
    INFO("G2 window_bits = " << c);
    CHECK(groth16::msm(g2_bases.points, g2_scalars, {.window_bits = c}) == g2_expected);
  }
}

TEST_CASE("MSM of all-zero, all-one and mostly boolean scalars", "[groth16][msm][cpu]") {
  std::mt19937_64 gen(6);
  const std::size_t n = 2000;
  const auto bases = known_bases<field::g1_curve>::make(n, gen);
  const std::vector<fr> zeros(n, fr::zero());
  CHECK(groth16::msm(bases.points, zeros).is_identity());
  const std::vector<fr> ones(n, fr::one());
  CHECK(groth16::msm(bases.points, ones) == known_msm(bases, ones));
  for (const auto& [p0, p1] : {std::pair{0.5, 0.45}, std::pair{0.9, 0.09}, std::pair{0.0, 0.999}}) {
    const auto scalars = boolean_heavy_scalars(n, p0, p1, gen);
    INFO("p0 = " << p0 << ", p1 = " << p1);
    CHECK(groth16::msm(bases.points, scalars) == known_msm(bases, scalars));
  }
  const auto g2_bases = known_bases<field::g2_curve>::make(500, gen);
  const auto g2_scalars = boolean_heavy_scalars(500, 0.6, 0.35, gen);
  CHECK(groth16::msm(g2_bases.points, g2_scalars) == known_msm(g2_bases, g2_scalars));
}

TEST_CASE("MSM with repeated, negated and identity bases", "[groth16][msm][cpu]") {
  std::mt19937_64 gen(7);
  const auto p = random_subgroup_point<field::g1_curve>(gen);
  const auto q = random_subgroup_point<field::g1_curve>(gen);
  // The same point many times with the same scalar lands in the same bucket over and over
  // (doubling inside the mixed addition); P and -P cancel inside a bucket.
  std::vector<field::g1_affine> bases;
  std::vector<fr> scalars;
  const fr s = fr::random(gen);
  for (int i = 0; i < 64; ++i) {
    bases.push_back(p);
    scalars.push_back(s);
  }
  for (int i = 0; i < 32; ++i) {
    bases.push_back(q);
    scalars.push_back(s);
    bases.push_back(-q);
    scalars.push_back(s);
  }
  for (int i = 0; i < 10; ++i) {
    bases.push_back(field::g1_affine::identity());
    scalars.push_back(fr::random(gen));
  }
  bases.push_back(field::g1_affine::identity());
  scalars.push_back(fr::one());
  bases.push_back(p);
  scalars.push_back(-s);  // the negation of the first 64 terms' scalar: cancels one of them
  const auto expected = p.mul((s * fr::from_uint64(63)).to_canonical());
  CHECK(groth16::msm(bases, scalars) == expected);
  CHECK(groth16::msm(bases, scalars) == naive_msm(bases, scalars));
  for (const unsigned c : {1u, 3u, 8u}) CHECK(groth16::msm(bases, scalars, {.window_bits = c}) == expected);

  // A sum that is the identity overall: P + (-P).
  const std::vector<field::g1_affine> cancel{p, -p};
  const std::vector<fr> same{s, s};
  CHECK(groth16::msm(cancel, same).is_identity());

  std::vector<field::g2_affine> g2_bases;
  std::vector<fr> g2_scalars;
  const auto p2 = random_subgroup_point<field::g2_curve>(gen);
  for (int i = 0; i < 20; ++i) {
    g2_bases.push_back(i % 3 == 0 ? field::g2_affine::identity() : (i % 2 ? p2 : -p2));
    g2_scalars.push_back(i % 4 == 0 ? fr::one() : s);
  }
  CHECK(groth16::msm(g2_bases, g2_scalars) == naive_msm(g2_bases, g2_scalars));
}

TEST_CASE("G1 MSM with affine buckets handles doublings, cancellations and busy buckets in a batch",
          "[groth16][msm][cpu]") {
  check_affine_buckets<field::g1_curve>(10, 3000, {10u, 12u, 16u});
}

TEST_CASE("G2 MSM with affine buckets handles doublings, cancellations and busy buckets in a batch",
          "[groth16][msm][cpu]") {
  check_affine_buckets<field::g2_curve>(11, 1200, {10u, 13u});
}

TEST_CASE("MSM gives the same result on one thread and on all", "[groth16][msm][cpu]") {
  std::mt19937_64 gen(8);
  const auto bases = known_bases<field::g1_curve>::make(20000, gen);
  const auto scalars = boolean_heavy_scalars(20000, 0.2, 0.2, gen);
  const auto expected = known_msm(bases, scalars);
  const std::size_t threads = field::parallelism();
  field::set_parallelism(1);
  const auto one_thread = groth16::msm(bases.points, scalars);
  field::set_parallelism(threads);
  CHECK(one_thread == expected);
  CHECK(groth16::msm(bases.points, scalars) == expected);
}

TEST_CASE("MSM takes canonical scalars and refuses bad input", "[groth16][msm][cpu]") {
  std::mt19937_64 gen(9);
  const auto bases = known_bases<field::g1_curve>::make(50, gen);
  const auto scalars = random_scalars(50, gen);
  std::vector<field::scalar_limbs> canonical;
  for (const auto& s : scalars) canonical.push_back(s.to_canonical());
  CHECK(groth16::msm(bases.points, canonical) == known_msm(bases, scalars));
  canonical[17] = field::scalar_modulus;
  CHECK_THROWS_AS(groth16::msm(bases.points, canonical), std::invalid_argument);
  const std::vector<fr> short_scalars(49, fr::one());
  CHECK_THROWS_AS(groth16::msm(bases.points, short_scalars), std::invalid_argument);
  CHECK_THROWS_AS(groth16::msm(bases.points, scalars, {.window_bits = groth16::msm_max_window_bits + 1}), std::invalid_argument);
}

TEST_CASE("the default window grows with the count", "[groth16][msm][cpu]") {
  for (const auto window_bits : {groth16::msm_default_window_bits, groth16::msm_default_window_bits_g2}) {
    CHECK(window_bits(1) >= 1);
    unsigned previous = 0;
    for (std::size_t n = 1; n <= (std::size_t{1} << 24); n *= 4) {
      const unsigned c = window_bits(n);
      CHECK(c >= previous);
      CHECK(c <= groth16::msm_max_window_bits);
      previous = c;
    }
  }
  // G2's cheaper inversion (against its products) moves it to affine buckets sooner.
  CHECK(groth16::msm_default_window_bits_g2(std::size_t{1} << 12) >= groth16::msm_default_window_bits(std::size_t{1} << 12));
}
