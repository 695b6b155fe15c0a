// The observer: one call per event moves report, counters and trace together; the report is read
// as typed fields.
#include <coprove/engine/detail/partition_observer.hpp>

#include <coprove/runtime/error.hpp>
#include <coprove/runtime/trace.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

namespace {

using namespace coprove::engine;
using namespace coprove::engine::detail;

observer_config two_devices(bool trace = false) {
  observer_config cfg;
  cfg.backend = "test";
  cfg.device_names = {"d0", "d1"};
  cfg.slots_per_device = 2;
  cfg.depth_per_device = 3;
  cfg.synthesis_threads = 2;
  cfg.trace = trace;
  return cfg;
}

engine_report report_of(const partition_observer& o) {
  engine_report r;
  o.fill(r);
  return r;
}

}  // namespace

TEST_CASE("the observer counts a partition's way from the queue to its end", "[engine][observer][cpu]") {
  partition_observer o(two_devices());
  o.partitions_queued(3);
  CHECK(o.queued() == 3);
  const partition_ref first{1, 0, o.admitted()};
  const partition_ref second{1, 1, o.admitted()};
  CHECK(first.lane == 0);
  CHECK(second.lane == 1);
  CHECK(o.queued() == 1);
  CHECK(o.in_flight().current() == 2);

  o.synthesis_started();
  o.synthesis_started();
  CHECK(o.synthesizing().current() == 2);
  o.synthesis_stopped();
  o.synthesized(first, 0, 10, 20, synthesis_path::slow, false);
  o.synthesis_stopped();
  o.synthesized(second, 1, 10, 30, synthesis_path::pce, true);
  o.gpu_queued();
  o.gpu_queued();
  CHECK(o.gpu_queue().current() == 2);

  o.device_started(1);
  quotient_timings t;
  t.h2d_ns = 1000;
  t.h2d_bytes = 4000;
  o.device_done(first, {1, 0}, 100, 2100, t);
  o.left_gpu_queue();
  partition_timings timings;
  timings.synthesis_ns = 10;
  o.partition_ended(first, 0, 3000, 5, &timings, true, {});
  o.left_gpu_queue();
  o.partition_ended(second, 0, 3000, 5, nullptr, false, coprove::runtime::operation_aborted());
  o.partitions_dropped(1);
  o.job_ended(job_state::cancelled);

  const engine_report r = report_of(o);
  CHECK(r.backend == "test");
  CHECK(r.verified == 1);
  CHECK(r.cancelled == 1);
  CHECK(r.failed == 0);
  CHECK(r.partitions() == 2);
  CHECK(r.pinned_partitions == 1);
  CHECK(r.jobs_cancelled == 1);
  CHECK(r.syntheses.slow == 1);
  CHECK(r.syntheses.pce == 1);
  CHECK(r.syntheses.spmv_on_backend == 1);
  CHECK(r.dispatch.max_in_flight == 2);
  CHECK(r.dispatch.max_concurrent_synthesis == 2);
  CHECK(r.dispatch.max_gpu_queue == 2);
  CHECK(r.dispatch.depth == 3);
  CHECK(r.dispatch.devices == 2);
  CHECK(r.h2d_gb_per_s == Approx(4.0));
  CHECK(r.stages.at("synthesis").count == 1);
  CHECK(r.stages.at("total").count == 1);
  REQUIRE(r.gpu_busy_fraction_per_device.size() == 2);
  CHECK(o.in_flight().current() == 0);
  CHECK(o.gpu_queue().current() == 0);
  CHECK(o.queued() == 0);
  // The lanes came back: the next admission takes the first again.
  CHECK(o.admitted() == 0);
}

TEST_CASE("an idle worker slot is counted by what held the partitions back", "[engine][observer][cpu]") {
  partition_observer o(two_devices());
  o.partitions_queued(4);
  // Two in flight, both on the GPU queue: nothing before the devices, fewer than the synthesis
  // threads, so the depth is what starves the slot.
  o.admitted();
  o.admitted();
  o.gpu_queued();
  o.gpu_queued();
  o.slot_idle({0, 1});
  // Two more in flight still being synthesized: as many as the threads, so synthesis is the cause.
  o.admitted();
  o.admitted();
  o.slot_idle({1, 1});
  const engine_report r = report_of(o);
  CHECK(r.dispatch.starved_by_depth == 1);
  CHECK(r.dispatch.starved_by_synthesis == 1);
}

TEST_CASE("resetting the report forgets counts and maxima but not what is in flight", "[engine][observer][cpu]") {
  partition_observer o(two_devices());
  o.partitions_queued(2);
  const partition_ref p{1, 0, o.admitted()};
  o.admitted();
  o.partition_ended(p, 0, 10, 0, nullptr, false, make_error_code(engine_errc::backend_failed));
  o.job_ended(job_state::failed);
  CHECK(report_of(o).failed == 1);
  o.reset();
  const engine_report r = report_of(o);
  CHECK(r.failed == 0);
  CHECK(r.jobs_failed == 0);
  CHECK(r.dispatch.max_in_flight == 1);  // the one still in flight
  CHECK(o.in_flight().current() == 1);
}

TEST_CASE("with a trace, each event of a partition lands on its lanes", "[engine][observer][cpu]") {
  partition_observer o(two_devices(true));
  REQUIRE(o.trace());
  o.partitions_queued(1);
  const partition_ref p{4, 2, o.admitted()};
  o.memory_reserved(p, 1, 2);
  o.buffers_leased(p, 2, 3);
  o.synthesized(p, o.synthesis_lane(), 3, 4, synthesis_path::configured, false);
  o.on_worker(p, 4, 5);
  o.device_started(0);
  o.device_done(p, {0, 1}, 5, 9, quotient_timings{});
  o.partition_ended(p, 1, 10, 0, nullptr, false, coprove::runtime::operation_aborted());
  // memory, checkout, synthesis x2, gpu_queue, quotient, evaluation, device, partition
  CHECK(o.trace()->size() == 9);
  CHECK(o.trace()->to_json().find("\"outcome\":\"" + coprove::runtime::operation_aborted().message()) !=
        std::string::npos);
  CHECK(report_of(o).syntheses.configured == 1);
}

TEST_CASE("the window's time spent making a key resident counts once, however many slots waited", "[engine][observer][cpu]") {
  partition_observer o(two_devices());
  o.partitions_queued(3);
  const partition_ref p{1, 0, o.admitted()};  // the window starts here and stays open while p is in flight
  const std::uint64_t t0 = coprove::runtime::trace_writer::now_ns();
  constexpr std::uint64_t ms = 1'000'000;
  // Device 0: one slot uploads for 20 ms; a second slot waited for the same upload from 5 ms until
  // 25 ms: 25 ms in all. Device 1: 15 ms, and a span before the window counts from its start.
  o.key_uploaded(p, {0, 0}, t0, t0 + 20 * ms);
  o.key_uploaded(p, {0, 1}, t0 + 5 * ms, t0 + 25 * ms);
  o.key_uploaded(p, {0, 0}, t0 + 2 * ms, t0 + 15 * ms);  // inside what was counted already
  o.key_uploaded(p, {1, 0}, t0 - 10'000 * ms, t0 + 15 * ms);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));  // a window longer than the spans
  engine_report r = report_of(o);
  // The mean over the devices (device 1's span began a few microseconds before t0, at the window).
  CHECK(r.key_residency_s >= 0.020);
  CHECK(r.key_residency_s <= 0.0205);
  o.reset();
  CHECK(report_of(o).key_residency_s == 0);
}
