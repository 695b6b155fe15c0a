// The bottleneck named from a report's figures: each kind, in its order, with the figures a person
// acts on in its message.
#include <coprove/engine/bottleneck.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace coprove::engine;

namespace {

// One device of 2 slots and 16 synthesis threads; a partition takes 10 ms on a slot and 5 ms of
// the device's busy time (the devices could take 200 a second: the window's throughput is 200 x
// busy) and 100 ms of CPU (16 threads give 160 a second).
engine_report report_of(double busy) {
  engine_report r;
  r.devices = {"gpu"};
  r.worker_slots_per_device = 2;
  r.synthesis_threads = 16;
  r.verified = 100;
  r.elapsed_s = 10;
  r.throughput_partitions_per_s = 200 * busy;
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

TEST_CASE("the devices' capacity is the partitions verified per second of device busy time", "[engine][bottleneck][cpu]") {
  // Three slots sharing one device each measure 600 ms of device time a partition, 5 a second by
  // the slots' stage times; the device was busy 80 % of the window at 4 a second: it could take 5.
  engine_report r = report_of(0.8);
  r.worker_slots_per_device = 3;
  r.throughput_partitions_per_s = 4;
  r.stages["gpu_compute"].mean_ms = 47;  // with the copies' 3 ms and the MSMs: 600 ms on a slot
  r.stages["msm"].mean_ms = 550;
  r.stages["synthesis"].mean_ms = 3500;  // 16 threads give 4.4 a second: below the device's 5
  auto b = name_bottleneck(r);
  CHECK(b.kind == "synthesis");
  CHECK(contains(b.message, "the devices could take 5.0 (busy 80.0 %)"));
  // Before any busy time is measured the slots' stage times stand in (the MSM among them).
  r.gpu_busy_fraction = 0;
  b = name_bottleneck(r);
  CHECK(contains(b.message, "the devices could take 5.0 (busy 0.0 %)"));
}

TEST_CASE("a key whose upload and copies took most of the idle window is named", "[engine][bottleneck][cpu]") {
  auto r = report_of(0.78);
  r.stages["synthesis"].mean_ms = 20;  // not the CPU
  r.dispatch.starved_by_depth = 9;     // a few idle slots behind the depth, which explain less
  r.elapsed_s = 20.64;
  r.key_residency_s = 4.7;
  r.device_keys.copies = 13;
  r.device_keys.source = "auto";
  auto b = name_bottleneck(r);
  CHECK(b.kind == "key");
  CHECK(contains(b.message, "took 4.70 s of the 20.64 s window (23 %; its upload and 13 copies of its points, "
                            "msm_copies auto)"));
  CHECK(contains(b.message, "busy 78.0 % of the window, 100.0 % of the rest"));
  CHECK(contains(b.message, "msm_copies 1 makes no copies"));
  // One copy: only the upload, and no copies to drop.
  r.device_keys.copies = 1;
  b = name_bottleneck(r);
  CHECK(b.kind == "key");
  CHECK(contains(b.message, "(23 %; its upload)"));
  CHECK_FALSE(contains(b.message, "msm_copies"));
  // A key that explains less than half of the idle time leaves the others to be named.
  r.key_residency_s = 2.0;
  CHECK(name_bottleneck(r).kind == "depth");
  // Nor is it named on a busy device.
  r.key_residency_s = 4.7;
  r.gpu_busy_fraction = 0.96;
  r.throughput_partitions_per_s = 192;
  CHECK(name_bottleneck(r).kind == "device");
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
