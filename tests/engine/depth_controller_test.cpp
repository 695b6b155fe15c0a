// The measured admission depth: where it starts, its formula, its limits and how it follows stage
// times up and down, fed by hand (no clock).
#include <coprove/engine/detail/depth_controller.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

using coprove::engine::detail::depth_controller;
using coprove::engine::detail::depth_limits;
using coprove::engine::detail::depth_sample;

namespace {

constexpr std::uint64_t ms = 1'000'000;

depth_sample sample(std::uint64_t synthesis_ms, std::uint64_t device_ms, std::uint64_t after_ms = 0) {
  return {synthesis_ms * ms, device_ms * ms, after_ms * ms, false};
}

// Feeds `n` equal samples; returns every depth it changed to, in order, and checks that each
// change stays within [1, upper].
std::vector<std::size_t> feed(depth_controller& c, const depth_sample& s, int n, std::size_t upper) {
  std::vector<std::size_t> changes;
  for (int i = 0; i < n; ++i) {
    if (auto d = c.record(s)) {
      CHECK(*d >= 1);
      CHECK(*d <= upper);
      changes.push_back(*d);
    }
  }
  return changes;
}

}  // namespace

TEST_CASE("the depth formula is slots x ((1 + CPU time / device time) x margin + 1)", "[engine][depth][cpu]") {
  static_assert(depth_controller::margin == 2.0);
  // 2 slots, synthesis 3 x the device: 2 x (4 x 2 + 1) = 18.
  CHECK(depth_controller::wanted(2, 30.0, 10.0, 0.0) == 18);
  // The proof after the device holds the permit too: 2 x ((1 + (30 + 10) / 10) x 2 + 1) = 22.
  CHECK(depth_controller::wanted(2, 30.0, 10.0, 10.0) == 22);
  // A fraction rounds up: 3 slots, synthesis 27.2 ms, 23.9 on a slot (an H200 at 2^22):
  // 3 x ((1 + 27.2 / 23.9) x 2 + 1) = 15.8 -> 16.
  CHECK(depth_controller::wanted(3, 27.2, 23.9, 0.0) == 16);
  // Fast synthesis still keeps every slot busy, with one ready behind each.
  CHECK(depth_controller::wanted(4, 0.0, 10.0, 0.0) == 12);
  CHECK(depth_controller::wanted(3, 0.0, 0.0, 0.0) == 9);
  // A device that takes no time asks for as much as the limits allow.
  CHECK(depth_controller::wanted(1, 5.0, 0.0, 0.0) > 1000);
}

TEST_CASE("the CPU limit is three times the synthesis threads a device plus two partitions a slot",
          "[engine][depth][cpu]") {
  CHECK(depth_controller::cpu_limit({1, 2, 16, 100}) == 52);
  CHECK(depth_controller::cpu_limit({4, 2, 16, 100}) == 16);
  CHECK(depth_controller::cpu_limit({3, 1, 16, 100}) == 20);  // 16 / 3 rounded up, three times, + 2
}

TEST_CASE("the depth starts at the top of its range", "[engine][depth][cpu]") {
  // The CPU's limit: 3 x 16 threads + 2 x 2 slots = 52, under the plan's 64.
  depth_controller c({1, 2, 16, 64});
  CHECK(c.depth() == 52);
  CHECK_FALSE(c.figures().measured);
  // The plan's limit when it is lower.
  CHECK(depth_controller({1, 2, 16, 3}).depth() == 3);
  // 1 thread, 1 slot: 3 + 2.
  CHECK(depth_controller({1, 1, 1, 64}).depth() == 5);
  CHECK(depth_controller({1, 2, 1, 64}).depth() == 7);
  CHECK_THROWS_AS(depth_controller({0, 1, 1, 1}), std::invalid_argument);
  CHECK_THROWS_AS(depth_controller({1, 1, 1, 0}), std::invalid_argument);
}

TEST_CASE("the depth waits for a device's worth of samples before it moves", "[engine][depth][cpu]") {
  depth_controller c({1, 4, 64, 1000});
  const std::size_t start = c.depth();
  CHECK(start == 200);  // 3 x 64 + 2 x 4
  for (int i = 0; i < 3; ++i) CHECK_FALSE(c.record(sample(90, 10)).has_value());
  CHECK(c.depth() == start);
  const auto changed = c.record(sample(90, 10));
  REQUIRE(changed.has_value());
  CHECK(*changed == 84);  // 4 x ((1 + 9) x 2 + 1)
  CHECK(c.figures().measured);
  CHECK(c.figures().samples == 4);
}

TEST_CASE("the depth follows stage times up and down within the limits", "[engine][depth][cpu]") {
  const depth_limits limits{1, 2, 16, 30};
  depth_controller c(limits);
  const std::size_t upper = 30;  // min(cpu 52, plan 30)

  CHECK(c.depth() == upper);
  // Synthesis as fast as the device: wants 2 x (2 x 2 + 1) = 10; it comes down at once.
  auto first = feed(c, sample(10, 10), 2, upper);
  REQUIRE(first.size() == 1);
  CHECK(first[0] == 10);

  // Synthesis 8 x the device: wants 2 x (9 x 2 + 1) = 38, capped by the plan.
  auto up = feed(c, sample(80, 10), 40, upper);
  REQUIRE_FALSE(up.empty());
  CHECK(c.depth() == 30);
  CHECK(c.figures().wanted == 38);
  CHECK(c.figures().plan_limit == 30);
  // It only ever rose on the way.
  for (std::size_t i = 1; i < up.size(); ++i) CHECK(up[i] > up[i - 1]);

  // Synthesis falls to the device's time: 2 x (2 x 2 + 1) = 10, reached without passing below it.
  auto down = feed(c, sample(10, 10), 80, upper);
  REQUIRE_FALSE(down.empty());
  for (std::size_t i = 1; i < down.size(); ++i) CHECK(down[i] < down[i - 1]);
  for (auto d : down) CHECK(d >= 10);
  // It settles within two above the target (11: the mean approaches 10 ms from above) and does
  // not flap by one.
  CHECK(c.figures().wanted == 11);
  CHECK(c.depth() <= 12);

  // And back up when synthesis slows again.
  feed(c, sample(30, 10), 80, upper);
  CHECK(c.depth() == 18);  // 2 x (4 x 2 + 1)
}

TEST_CASE("the depth falls only by two or a quarter of it", "[engine][depth][cpu]") {
  CHECK(depth_controller::least_fall(1) == 2);
  CHECK(depth_controller::least_fall(8) == 2);
  CHECK(depth_controller::least_fall(16) == 4);
  CHECK(depth_controller::least_fall(38) == 9);
  // 16 threads, 3 slots, held at 38 by the plan (the CPU's limit is 3 x 16 + 2 x 3 = 54).
  depth_controller c({1, 3, 16, 38});
  REQUIRE(c.depth() == 38);
  // Synthesis 5 x the device asks for 3 x (6 x 2 + 1) = 39, one above: no change.
  CHECK(feed(c, sample(50, 10), 20, 38).empty());
  CHECK(c.figures().wanted == 39);
  CHECK(c.depth() == 38);
  // 4.5 x asks for 3 x (5.5 x 2 + 1) = 36 (37 while the smoothed mean is still a hair above 45):
  // one or two fewer is not enough.
  CHECK(feed(c, sample(45, 10), 80, 38).empty());
  CHECK(c.figures().wanted >= 36);
  CHECK(c.figures().wanted <= 37);
  CHECK(c.depth() == 38);
  // 3 x asks for 3 x (4 x 2 + 1) = 27; it falls once the smoothed times ask for 29 or fewer, nine
  // below.
  const auto down = feed(c, sample(30, 10), 40, 38);
  REQUIRE_FALSE(down.empty());
  CHECK(down.front() <= 29);
  CHECK(down.front() >= 27);
  CHECK(c.depth() >= 27);
  CHECK(c.depth() <= 29);
}

TEST_CASE("the CPU limit caps a CPU-bound workload", "[engine][depth][cpu]") {
  // 4 threads, one device of 2 slots: synthesis 50 x the device wants 206; the CPU can use 12 + 4.
  depth_controller c({1, 2, 4, 1000});
  feed(c, sample(500, 10), 20, 16);
  CHECK(c.depth() == 16);
  CHECK(c.figures().cpu_limit == 16);
}

TEST_CASE("a constraint-cache build is not taken for a partition's synthesis", "[engine][depth][cpu]") {
  depth_controller c({1, 1, 64, 1000});
  // The first partition builds the cache: 100 x the device.
  depth_sample build = sample(1000, 10);
  build.synthesis_one_off = true;
  c.record(build);
  CHECK(c.figures().synthesis_ms == 1000.0);  // all there is so far
  // The steady ones replace it at once, and later one-offs are ignored.
  c.record(sample(10, 10));
  CHECK(c.figures().synthesis_ms == 10.0);
  c.record(build);
  CHECK(c.figures().synthesis_ms == 10.0);
  CHECK(c.depth() == 5);  // 1 x (2 x 2 + 1)
}
