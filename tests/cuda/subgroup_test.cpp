// The GPU's subgroup test against the CPU's (field::*_curve::is_torsion_free): the same verdict on
// points in the subgroup, on random curve points outside it (cofactor not cleared) and on the
// identity; the first point outside reported by its index, across the chunks the test runs in.
#include <coprove/cuda/subgroup.hpp>

#include "field/curve_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

using namespace coprove;
using namespace coprove::field::testing;

namespace {

/// Points in and out of the subgroup (every `out_every`-th out), with the identity among them.
template <class Curve>
std::vector<field::detail::affine_point<Curve>> mixed_points(std::size_t n, std::size_t out_every, std::uint64_t seed) {
  auto gen = test_rng(seed);
  std::vector<field::detail::affine_point<Curve>> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 3) {
      out.push_back(field::detail::affine_point<Curve>::identity());
    } else if (out_every != 0 && i % out_every == out_every - 1) {
      out.push_back(random_curve_point<Curve>(gen));
    } else {
      out.push_back(random_subgroup_point<Curve>(gen));
    }
  }
  return out;
}

/// The CPU's answer: the first point that is_torsion_free refuses.
template <class Point>
std::optional<std::size_t> cpu_first_outside(std::span<const Point> points) {
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!points[i].is_torsion_free()) return i;
  return std::nullopt;
}

/// For every suffix of `points`, the GPU's first point outside equals the CPU's: each point's
/// verdict is compared, one at a time, the way a key's query reports its first bad point.
template <class Point>
void check_every_verdict(const std::vector<Point>& points) {
  for (std::size_t k = 0; k < points.size(); ++k) {
    const std::span<const Point> rest = std::span<const Point>(points).subspan(k);
    const auto gpu = cuda::first_outside_subgroup(rest, 0);
    const auto cpu = cpu_first_outside(rest);
    INFO("suffix from " << k);
    REQUIRE(gpu == cpu);
  }
}

}  // namespace

TEST_CASE("the GPU's G1 subgroup test agrees with the CPU's point by point", "[gpu][subgroup]") {
  const auto in = mixed_points<field::g1_curve>(2000, 0, 61);
  CHECK(cuda::first_outside_subgroup(std::span<const field::g1_affine>(in), 0) == std::nullopt);
  CHECK(cuda::first_outside_subgroup(std::span<const field::g1_affine>(), 0) == std::nullopt);
  // One point outside, late: its index.
  auto one_out = in;
  auto gen = test_rng(62);
  one_out[1777] = random_curve_point<field::g1_curve>(gen);
  REQUIRE_FALSE(one_out[1777].is_torsion_free());
  CHECK(cuda::first_outside_subgroup(std::span<const field::g1_affine>(one_out), 0) == std::size_t{1777});
  // The order-3 point (0, 2) is on the curve and outside.
  auto order_three = in;
  order_three[500] = field::g1_affine::from_coordinates(field::fq::zero(), field::fq::from_u64(2));
  REQUIRE(order_three[500].is_on_curve());
  CHECK(cuda::first_outside_subgroup(std::span<const field::g1_affine>(order_three), 0) == std::size_t{500});
  check_every_verdict(mixed_points<field::g1_curve>(96, 3, 63));
}

TEST_CASE("the GPU's G2 subgroup test agrees with the CPU's point by point", "[gpu][subgroup]") {
  const auto in = mixed_points<field::g2_curve>(1000, 0, 71);
  CHECK(cuda::first_outside_subgroup(std::span<const field::g2_affine>(in), 0) == std::nullopt);
  auto one_out = in;
  auto gen = test_rng(72);
  one_out[999] = random_curve_point<field::g2_curve>(gen);
  REQUIRE_FALSE(one_out[999].is_torsion_free());
  CHECK(cuda::first_outside_subgroup(std::span<const field::g2_affine>(one_out), 0) == std::size_t{999});
  check_every_verdict(mixed_points<field::g2_curve>(64, 3, 73));
}

TEST_CASE("the GPU's subgroup test reports indices across its chunks, and refuses a device that does not exist",
          "[gpu][subgroup]") {
  // More points than one pass takes (2^22): a few distinct ones tiled, one bad point past the first
  // pass and a second one later.
  const auto distinct = mixed_points<field::g1_curve>(64, 0, 81);
  std::vector<field::g1_affine> points((std::size_t{1} << 22) + 4096);
  for (std::size_t i = 0; i < points.size(); ++i) points[i] = distinct[i % distinct.size()];
  CHECK(cuda::first_outside_subgroup(std::span<const field::g1_affine>(points), 0) == std::nullopt);
  auto gen = test_rng(82);
  const std::size_t bad = (std::size_t{1} << 22) + 7;
  points[bad] = random_curve_point<field::g1_curve>(gen);
  points[bad + 100] = random_curve_point<field::g1_curve>(gen);
  CHECK(cuda::first_outside_subgroup(std::span<const field::g1_affine>(points), 0) == bad);
  CHECK_THROWS_AS(cuda::first_outside_subgroup(std::span<const field::g1_affine>(distinct), 1 << 20),
                  std::invalid_argument);
}
