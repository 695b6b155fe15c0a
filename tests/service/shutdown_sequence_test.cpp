// Shutdown on SIGINT/SIGTERM: a drain runs the started jobs and cancels the queued ones (or runs
// them too, as configured), and cancels what still runs at its deadline; a second signal cancels
// at once, a third exits.
#include "http_service_support.hpp"

#include <coprove/service/shutdown_sequence.hpp>

#include <atomic>
#include <thread>

namespace {

namespace test = coprove::test;
using namespace coprove;
using namespace std::chrono_literals;

// The service under test with one admission slot: the first job runs (held at the gate) and the
// others queue behind it.
struct stopping_service {
  test::service_under_test s{[](engine::engine_config& e, service::http_service_config&) { e.depth_per_device = 1; }};
  std::unique_ptr<service::shutdown_sequence> sequence;
  std::atomic<bool> finished{false};
  std::atomic<bool> exited{false};

  explicit stopping_service(service::shutdown_policy policy) {
    s.gate.close();
    s.on_io([&] {
      sequence = std::make_unique<service::shutdown_sequence>(
          s.executor(), s.engine(), s.service(), policy, [this] { finished = true; }, [this] { exited = true; });
    });
  }
  ~stopping_service() {
    s.gate.release();
    s.on_io([&] { sequence.reset(); });
  }
  std::uint64_t submit(std::uint64_t seed) {
    const auto r = s.request(test::json_post(R"({"seed": )" + std::to_string(seed) + "}"));
    REQUIRE(r.status == 202);
    return r.json().at("job_id").to_number<std::uint64_t>();
  }
  void signal() {
    s.on_io([&] { sequence->signal(); });
  }
  engine::job_state state(std::uint64_t id) { return s.engine().status(id)->state; }
  void wait_until_running(std::uint64_t id) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (state(id) != engine::job_state::running && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    REQUIRE(state(id) == engine::job_state::running);
  }
  bool wait_finished(std::chrono::milliseconds limit = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!finished && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
    return finished;
  }
};

}  // namespace

TEST_CASE("shutdown: a drain finishes the running job and cancels the queued one", "[service][cpu]") {
  stopping_service t({true, false, 60.0});
  const auto running = t.submit(1);
  t.wait_until_running(running);
  const auto queued = t.submit(2);
  t.signal();
  // No new connection (nor job) is taken meanwhile.
  CHECK_THROWS(t.s.request(test::json_post("{}")));
  CHECK_FALSE(t.wait_finished(100ms));
  t.s.gate.release();
  REQUIRE(t.wait_finished());
  CHECK(t.state(running) == engine::job_state::done);
  CHECK(t.state(queued) == engine::job_state::cancelled);
  CHECK_FALSE(t.exited);
  coprove::test::require_at_baseline(t.s.engine());
}

TEST_CASE("shutdown: configured to drain the queued jobs too, it runs them", "[service][cpu]") {
  stopping_service t({true, true, 60.0});
  const auto running = t.submit(1);
  t.wait_until_running(running);
  const auto queued = t.submit(2);
  t.signal();
  t.s.gate.release();
  REQUIRE(t.wait_finished());
  CHECK(t.state(running) == engine::job_state::done);
  CHECK(t.state(queued) == engine::job_state::done);
}

TEST_CASE("shutdown: a drain past server.drain_seconds cancels what still runs", "[service][cpu]") {
  stopping_service t({true, false, 0.2});
  const auto running = t.submit(1);
  t.wait_until_running(running);
  t.signal();
  std::this_thread::sleep_for(500ms);  // past the deadline, with the partition still held
  t.s.gate.release();
  REQUIRE(t.wait_finished());
  CHECK(t.state(running) == engine::job_state::cancelled);
  coprove::test::require_at_baseline(t.s.engine());
}

TEST_CASE("shutdown: a second signal cancels at once, a third exits", "[service][cpu]") {
  stopping_service t({true, false, 3600.0});
  const auto running = t.submit(1);
  t.wait_until_running(running);
  t.signal();
  t.signal();
  t.s.gate.release();
  REQUIRE(t.wait_finished());
  CHECK(t.state(running) == engine::job_state::cancelled);
  CHECK_FALSE(t.exited);
  t.signal();
  CHECK(t.exited);
}

TEST_CASE("shutdown: configured to cancel, the first signal cancels the running job", "[service][cpu]") {
  stopping_service t({false, false, 60.0});
  const auto running = t.submit(1);
  t.wait_until_running(running);
  t.signal();
  t.s.gate.release();
  REQUIRE(t.wait_finished());
  CHECK(t.state(running) == engine::job_state::cancelled);
}
