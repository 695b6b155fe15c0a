// The bottleneck named from a report's figures: each kind, in its order, with the figures a person
// acts on in its message.
#include <coprove/engine/bottleneck.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace coprove::engine;

namespace {

// One device of 2 slots and 16 synthesis threads; a partition takes 10 ms on a slot (the devices
// could take 200 a second) and 100 ms of CPU (16 threads give 160 a second).
engine_report report_of(double busy) {
  engine_report r;
  r.devices = {"gpu"};
  r.worker_slots_per_device = 2;
  r.synthesis_threads = 16;
  r.verified = 100;
  r.throughput_partitions_per_s = 150;
  r.gpu_busy_fraction = busy;
  r.stages["synthesis"].mean_ms = 80;
  r.stages["prove"].mean_ms = 15;
  r.stages["proof_verify"].mean_ms = 5;
  r.stages["h2d"].mean_ms = 2;
  r.stages["gpu_compute"].mean_ms = 7;
  r.stages["d2h"].mean_ms = 1;
  r.dispatch.depth = 8;
  r.dispatch.basis.source = "measured";
  r.dispatch.basis.max = 20;
  r.dispatch.basis.max_reason = "cpu";
  return r;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a device busy 95% of the window is the bottleneck", "[engine][bottleneck][cpu]") {
  const auto b = name_bottleneck(report_of(0.97));
  CHECK(b.kind == "device");
  CHECK(contains(b.message, "97.0 %"));
}

TEST_CASE("copies that fill most of a busy device's time are named", "[engine][bottleneck][cpu]") {
  auto r = report_of(0.99);
  r.stages["h2d"].mean_ms = 30;
  const auto b = name_bottleneck(r);
  CHECK(b.kind == "copies");
  CHECK(contains(b.message, "copies are"));
}

TEST_CASE("synthesis slower than the devices' demand is CPU-bound, with the thread count", "[engine][bottleneck][cpu]") {
  const auto b = name_bottleneck(report_of(0.7));
  CHECK(b.kind == "synthesis");
  CHECK(contains(b.message, "CPU-bound: 16 synthesis threads give 160.0 partitions/s"));
  CHECK(contains(b.message, "the devices could take 200.0"));
}

TEST_CASE("slots idle behind the depth name the depth, or memory at the plan's limit", "[engine][bottleneck][cpu]") {
  auto r = report_of(0.6);
  r.stages["synthesis"].mean_ms = 20;  // 16 threads give 400 a second: not the CPU
  r.dispatch.starved_by_depth = 12;
  r.dispatch.basis.source = "configured";
  auto b = name_bottleneck(r);
  CHECK(b.kind == "depth");
  CHECK(contains(b.message, "12 times"));
  CHECK(contains(b.message, "engine.depth_per_device"));
  // Measured below its limit: what the stage times asked for, and how often it moved.
  r.dispatch.basis.source = "measured";
  r.dispatch.basis.max_reason = "cpu";
  r.dispatch.basis.max = 54;
  r.dispatch.basis.wanted = 9;
  r.dispatch.basis.changes = 3;
  r.dispatch.depth = 9;
  b = name_bottleneck(r);
  CHECK(b.kind == "depth");
  CHECK(contains(b.message, "the stage times asked for 9 (at most 54), and it changed 3 times"));
  r.dispatch.basis.max_reason = "memory";
  r.dispatch.basis.max = 8;
  r.dispatch.depth = 8;
  b = name_bottleneck(r);
  CHECK(b.kind == "memory");
  CHECK(contains(b.message, "engine.memory_budget"));
}

TEST_CASE("nothing saturated and nothing measured are said as such", "[engine][bottleneck][cpu]") {
  auto r = report_of(0.3);
  r.stages["synthesis"].mean_ms = 20;
  CHECK(name_bottleneck(r).kind == "none");
  CHECK(contains(name_bottleneck(r).message, "nothing saturated"));
  r.verified = 0;
  CHECK(name_bottleneck(r).kind == "none");
  CHECK(contains(name_bottleneck(r).message, "nothing measured"));
}
