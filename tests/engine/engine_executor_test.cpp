// The engine with its control and synthesis executors driven by hand: what runs where and when is
// decided by the test (the host backend still computes on its own threads).
#include <coprove/engine/engine.hpp>

#include <coprove/engine/host_backend.hpp>
#include <coprove/runtime/error.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <optional>
#include <thread>

namespace {

using namespace coprove::engine;
namespace test = coprove::test;

struct manual_engine {
  boost::asio::io_context control, cpu;
  // Polling an idle context must not stop it.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> control_work{control.get_executor()},
      cpu_work{cpu.get_executor()};
  std::optional<engine> e;
  std::optional<std::pair<std::error_code, prove_result>> done;

  explicit manual_engine(std::size_t depth) {
    engine_config cfg;
    cfg.results = result_kind::evaluation_record;
    cfg.max_log_constraints = 12;  // the requests' size: the pre-warmed buffers serve every lease
    cfg.memory_budget_bytes = std::size_t{1} << 30;
    cfg.synthesis_threads = 1;
    cfg.depth_per_device = depth;
    cfg.synthesis_executor = cpu.get_executor();
    e.emplace(control.get_executor(), cfg, make_host_backend(1, 1));
    e->wait_for_prewarm();
  }
  ~manual_engine() {
    // The engine hands its core to the control executor as it goes: let that run.
    e.reset();
    settle_control();
  }
  void prove(std::size_t partitions) {
    e->async_prove(test::mimc_request(partitions, 12, 5),
                   [this](std::error_code ec, prove_result r) { done.emplace(ec, std::move(r)); });
  }
  void settle_control() {
    while (control.poll() != 0) {
    }
  }
  // Until the job completes; the device's completions arrive from the host backend's threads.
  void finish() {
    while (!done) {
      control.poll();
      cpu.poll();
      std::this_thread::yield();
    }
  }
};

}  // namespace

TEST_CASE("with an injected synthesis executor, partitions are synthesized only when it runs",
          "[engine][executor][cpu]") {
  manual_engine m(2);
  m.prove(3);
  m.settle_control();
  engine_status s = m.e->status_snapshot();
  CHECK(s.dispatch.in_flight == 2);  // the depth
  CHECK(s.dispatch.queued == 1);
  CHECK(s.dispatch.synthesizing == 2);
  CHECK(s.gpu_slots.available == 0);
  engine_report r = m.e->report();
  CHECK(r.syntheses.slow + r.syntheses.pce == 0);

  // The CPU runs them in the order they were posted: the second partition's first, leased lean
  // (the first holds a, b and c to build the circuit's PCE), which finds no PCE yet and asks for
  // b and c.
  REQUIRE(m.cpu.run_one() == 1);
  m.settle_control();
  r = m.e->report();
  CHECK(r.syntheses.late_abc == 1);
  CHECK(r.pce.builds == 0);
  CHECK(m.e->status_snapshot().dispatch.synthesizing == 2);  // the first, and the second again

  REQUIRE(m.cpu.run_one() == 1);  // the first partition builds the PCE
  m.settle_control();
  r = m.e->report();
  CHECK(r.syntheses.slow == 1);
  CHECK(r.pce.builds == 1);
  CHECK(m.e->status_snapshot().dispatch.synthesizing == 1);

  m.finish();
  REQUIRE_FALSE(m.done->first);
  CHECK(m.done->second.partitions.size() == 3);
  for (const auto& p : m.done->second.partitions) CHECK(p.verified);
  r = m.e->report();
  CHECK(r.verified == 3);
  CHECK(r.syntheses.slow == 1);
  CHECK(r.syntheses.pce == 2);
  CHECK(r.syntheses.late_abc == 1);
  CHECK(r.dispatch.max_in_flight == 2);
  m.settle_control();
  test::require_at_baseline(*m.e);
}

TEST_CASE("a job cancelled while its syntheses wait for the CPU gives everything back", "[engine][executor][cpu]") {
  manual_engine m(2);
  m.prove(4);
  m.settle_control();
  REQUIRE(m.e->status_snapshot().dispatch.synthesizing == 2);
  const std::uint64_t id = 1;
  REQUIRE(m.e->cancel(id));
  m.settle_control();
  CHECK(m.e->status_snapshot().dispatch.queued == 0);  // the queued partitions left at once
  m.finish();  // the two syntheses run, find their job stopped and give back
  CHECK(m.done->first == std::errc::operation_canceled);
  CHECK(m.done->second.partitions.empty());
  m.settle_control();
  const auto st = m.e->status(id);
  REQUIRE(st);
  CHECK(st->state == job_state::cancelled);
  const engine_report r = m.e->report();
  CHECK(r.cancelled == 2);
  CHECK(r.jobs_cancelled == 1);
  test::require_at_baseline(*m.e);
}
