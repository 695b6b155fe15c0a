// The engine end to end on the host backend: results verify, the dispatch policies keep their
// bounds, PCE `wait` sends one partition down the slow path, cancellation and injected failures
// give back every permit, byte and buffer, jobs are admitted in (job, partition) order, and every
// completion token kind works.
#include <coprove/engine/engine.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/field/evaluation.hpp>
#include <coprove/engine/host_backend.hpp>
#include <support/synthesis_replay.hpp>
#include <coprove/runtime/error.hpp>
#include <coprove/runtime/trace.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>

namespace {

namespace pinned = coprove::pinned;
namespace runtime = coprove::runtime;
namespace test = coprove::test;
using namespace coprove::field;
using namespace coprove::r1cs;
using namespace coprove::engine;
using coprove::test::replay_content;
using coprove::test::synthesis_replay;
using namespace std::chrono_literals;

using test::prove;
using test::require_at_baseline;
using test::running_io;

// The pipeline's mechanics with evaluation records (engine_proof_test.cpp proves).
engine_config small_config() { return test::record_engine_config(12); }

prove_request small_request(std::size_t partitions, unsigned log_constraints = 10, std::uint64_t seed = 7) {
  return test::mimc_request(partitions, log_constraints, seed);
}

void require_all_verified(const prove_result& r, std::size_t partitions) {
  REQUIRE(r.partitions.size() == partitions);
  for (std::size_t i = 0; i < partitions; ++i) {
    CHECK(r.partitions[i].index == i);
    CHECK(r.partitions[i].verified);
    CHECK(verify(r.partitions[i].record, std::size_t{1} << r.request.log_constraints));
    CHECK(r.partitions[i].device == 0);
    CHECK_FALSE(r.partitions[i].is_pinned);  // the host backend's allocator is pageable
  }
}

// Proves a request that must fail with `code`, its status naming `message`; everything is given back.
void require_job_fails(engine& e, const prove_request& r, engine_errc code, const std::string& message) {
  const auto id = e.submit(r);
  auto [ec, partial] = e.async_await(id, boost::asio::use_future).get();
  CHECK(ec == make_error_code(code));
  const auto st = e.status(id);
  REQUIRE(st);
  CHECK(st->error.find(message) != std::string::npos);
  require_at_baseline(e);
}

// A backend that forwards to the host backend, failing or holding work on demand.
class test_backend final : public compute_backend {
 public:
  explicit test_backend(std::size_t slots) : inner_(1, slots) {}

  std::string_view name() const noexcept override { return "test"; }
  std::size_t device_count() const noexcept override { return inner_.device_count(); }
  std::size_t worker_slots_per_device() const noexcept override { return inner_.worker_slots_per_device(); }
  std::vector<std::string> device_names() const override { return inner_.device_names(); }
  std::unique_ptr<pinned::host_allocator> make_host_allocator() const override {
    return inner_.make_host_allocator();
  }
  bool copies_to_device() const noexcept override { return inner_.copies_to_device(); }
  void start_quotient(worker_slot worker, quotient_task task, quotient_completion done) noexcept override {
    const std::size_t call = calls_++;
    if (track_matrices && task.matrices && !matrices_resident(worker.device, *task.matrices)) ++unprepared_enqueues;
    if (call == refuse_on_call) {
      // A task the inner backend cannot take: it refuses it in its own category.
      task.domain = nullptr;
      inner_.start_quotient(worker, std::move(task), std::move(done));
      return;
    }
    if (call == fail_on_call) {
      // Fails from another thread, as a device error would.
      std::thread([done = std::move(done)]() mutable {
        done.complete(make_error_code(host_backend_errc::computation_failed), {});
      }).detach();
      return;
    }
    std::unique_lock lock(mutex_);
    if (held_) {
      parked_.push_back({worker, std::move(task), std::move(done)});
      changed_.notify_all();
      return;
    }
    lock.unlock();
    inner_.start_quotient(worker, std::move(task), std::move(done));
  }

  // Residency as a GPU backend keeps it, when track_matrices is set: prepare_matrices makes a
  // circuit's matrices resident (and fails on demand).
  void prepare_matrices(std::size_t, const std::shared_ptr<const pce_matrices>& m) override {
    std::lock_guard lock(mutex_);
    prepare_threads.push_back(std::this_thread::get_id());
    if (fail_prepare) throw std::runtime_error("injected upload failure");
    resident_.push_back(m.get());
  }
  bool matrices_resident(std::size_t, const pce_matrices& m) const override {
    if (!track_matrices) return true;
    std::lock_guard lock(mutex_);
    return std::find(resident_.begin(), resident_.end(), &m) != resident_.end();
  }

  /// Parks enqueued work until release().
  void hold() {
    std::lock_guard lock(mutex_);
    held_ = true;
  }
  void release() {
    std::vector<parked> work;
    {
      std::lock_guard lock(mutex_);
      held_ = false;
      work.swap(parked_);
    }
    for (auto& p : work) inner_.start_quotient(p.worker, std::move(p.task), std::move(p.done));
  }
  /// Waits until the backend has been given `count` quotients (whatever became of them).
  void wait_calls(std::size_t count) const {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (calls_.load() < count) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(1ms);
    }
  }
  /// Waits until `count` quotients are parked.
  void wait_parked(std::size_t count) {
    std::unique_lock lock(mutex_);
    REQUIRE(changed_.wait_for(lock, 30s, [&] { return parked_.size() >= count; }));
  }

  std::size_t refuse_on_call = SIZE_MAX;
  std::size_t fail_on_call = SIZE_MAX;
  bool track_matrices = false;
  std::atomic<bool> fail_prepare{false};
  std::vector<std::thread::id> prepare_threads;
  std::atomic<std::size_t> unprepared_enqueues{0};

 private:
  struct parked {
    worker_slot worker;
    quotient_task task;
    quotient_completion done;
  };
  host_backend inner_;
  std::atomic<std::size_t> calls_{0};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool held_ = false;
  std::vector<parked> parked_;
  std::vector<const pce_matrices*> resident_;
};

}  // namespace

TEST_CASE("a job on the host backend returns a verified record for every partition", "[prover][engine][cpu]") {
  running_io rt;
  engine e(rt.io.get_executor(), small_config(), make_host_backend(1, 2));
  auto [ec, result] = prove(e, small_request(4));
  REQUIRE_FALSE(ec);
  CHECK(result.job_id >= 1);
  require_all_verified(result, 4);
  for (const auto& p : result.partitions) {
    CHECK(p.timings.synthesis_ns > 0);
    CHECK(p.timings.gpu_compute_ns > 0);
    CHECK(p.timings.evaluation_ns > 0);
    CHECK(p.timings.total_ns >= p.timings.synthesis_ns + p.timings.gpu_compute_ns + p.timings.evaluation_ns);
  }
  const auto st = e.status(result.job_id);
  REQUIRE(st);
  CHECK(st->state == job_state::done);
  CHECK(st->completed == 4);
  const auto report = e.report_json();
  CHECK(report.at("verified").to_number<std::uint64_t>() == 4);
  CHECK(report.at("failed").to_number<std::uint64_t>() == 0);
  CHECK(report.at("backend").as_string() == "host");
  CHECK(report.at("pinned_pool").at("allocator").as_string() == "pageable");
  require_at_baseline(e);
}

TEST_CASE("after the pre-warm a job at the planned size allocates no pinned buffer", "[prover][engine][cpu]") {
  running_io rt;
  engine e(rt.io.get_executor(), small_config(), make_host_backend(1, 2));
  e.wait_for_prewarm();
  const auto before = e.status_json().at("pinned_pool").as_object();
  const auto allocations = before.at("allocations").to_number<std::uint64_t>();
  const auto reuses = before.at("reuses").to_number<std::uint64_t>();
  CHECK(allocations >= 4);  // at least a, b, c and h of one partition
  auto [ec, result] = prove(e, small_request(6, 12));
  REQUIRE_FALSE(ec);
  require_all_verified(result, 6);
  const auto after = e.status_json().at("pinned_pool").as_object();
  CHECK(after.at("allocations").to_number<std::uint64_t>() == allocations);
  // Every checkout reused a buffer: four a partition (a, b, c, h) until the circuit's PCE exists,
  // two (the assignment and h) once it does.
  const auto checkouts = after.at("checkouts").to_number<std::uint64_t>() - before.at("checkouts").to_number<std::uint64_t>();
  CHECK(after.at("reuses").to_number<std::uint64_t>() == reuses + checkouts);
  CHECK(checkouts >= 4 + 5 * 2);
  CHECK(checkouts <= 6 * 4);
  // The PCE exists now: a second job's partitions hold two buffers each.
  auto [ec2, second] = prove(e, small_request(6, 12, 8));
  REQUIRE_FALSE(ec2);
  require_all_verified(second, 6);
  const auto last = e.status_json().at("pinned_pool").as_object();
  CHECK(last.at("checkouts").to_number<std::uint64_t>() - after.at("checkouts").to_number<std::uint64_t>() == 6 * 2);
  CHECK(last.at("allocations").to_number<std::uint64_t>() == allocations);
  require_at_baseline(e);
}

TEST_CASE("the same request gives bit-identical records", "[prover][engine][cpu]") {
  running_io rt;
  engine e(rt.io.get_executor(), small_config(), make_host_backend(1, 2));
  auto [ec1, first] = prove(e, small_request(3, 10, 99));
  auto [ec2, second] = prove(e, small_request(3, 10, 99));
  auto [ec3, other] = prove(e, small_request(3, 10, 100));
  REQUIRE_FALSE(ec1);
  REQUIRE_FALSE(ec2);
  REQUIRE_FALSE(ec3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(first.partitions[i].record == second.partitions[i].record);
    CHECK_FALSE(first.partitions[i].record == other.partitions[i].record);
  }
  CHECK_FALSE(first.partitions[0].record == first.partitions[1].record);
}

TEST_CASE("with the semaphore policy partitions in flight and syntheses never exceed the depth",
          "[prover][engine][cpu]") {
  running_io rt;
  auto cfg = small_config();
  cfg.depth_per_device = 2;
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  CHECK(e.depth_per_device() == 2);
  auto [ec, result] = prove(e, small_request(8));
  REQUIRE_FALSE(ec);
  require_all_verified(result, 8);
  const auto report = e.report_json();
  const auto& dispatch = report.at("dispatch").as_object();
  CHECK(dispatch.at("policy").as_string() == "semaphore");
  CHECK(dispatch.at("max_in_flight").to_number<std::size_t>() <= 2);
  CHECK(dispatch.at("max_in_flight").to_number<std::size_t>() >= 1);
  CHECK(dispatch.at("max_concurrent_synthesis").to_number<std::size_t>() <= 2);
  require_at_baseline(e);
}

TEST_CASE("the unbounded policy admits every partition at once and still verifies", "[prover][engine][cpu]") {
  running_io rt;
  auto cfg = small_config();
  cfg.policy = dispatch_policy::unbounded;
  cfg.depth_per_device = 2;
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  // At the plan's size, so that the memory reservation is what bounds the syntheses.
  auto [ec, result] = prove(e, small_request(8, 12));
  REQUIRE_FALSE(ec);
  require_all_verified(result, 8);
  // Admission is not throttled; the memory reservation still bounds the syntheses.
  CHECK(e.report_json().at("dispatch").at("max_in_flight").to_number<std::size_t>() == 8);
  CHECK(e.report_json().at("dispatch").at("max_concurrent_synthesis").to_number<std::size_t>() <= 2);
  require_at_baseline(e);
}

TEST_CASE("the poll policy admits on its timer and verifies", "[prover][engine][cpu]") {
  running_io rt;
  auto cfg = small_config();
  cfg.policy = dispatch_policy::poll;
  cfg.poll_interval = 1ms;
  cfg.poll_queue_limit = 1;
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  auto [ec, result] = prove(e, small_request(6));
  REQUIRE_FALSE(ec);
  require_all_verified(result, 6);
  CHECK(e.report_json().at("dispatch").at("policy").as_string() == "poll");
  require_at_baseline(e);
}

TEST_CASE("with PCE wait only the first partition of a circuit takes the slow path", "[prover][engine][cpu]") {
  running_io rt;
  auto cfg = small_config();
  cfg.pce = pce_policy::wait;
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  auto [ec, result] = prove(e, small_request(6, 12));
  REQUIRE_FALSE(ec);
  require_all_verified(result, 6);
  std::size_t slow = 0;
  for (const auto& p : result.partitions) slow += p.pce_used ? 0 : 1;
  CHECK(slow == 1);
  // A second job of the same circuit never takes the slow path.
  auto [ec2, again] = prove(e, small_request(3, 12, 8));
  REQUIRE_FALSE(ec2);
  for (const auto& p : again.partitions) CHECK(p.pce_used);
  const auto report = e.report_json();
  CHECK(report.at("pce").at("slow_path").to_number<std::uint64_t>() == 1);
  CHECK(report.at("pce").at("hits").to_number<std::uint64_t>() == 8);
}

TEST_CASE("two jobs are admitted in (job, partition) order", "[prover][engine][cpu]") {
  running_io rt;
  auto cfg = small_config();
  cfg.depth_per_device = 2;
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  const auto first = e.submit(small_request(4, 10, 1));
  const auto second = e.submit(small_request(4, 10, 2));
  CHECK(second > first);
  auto [ec1, a] = e.async_await(first, boost::asio::use_future).get();
  auto [ec2, b] = e.async_await(second, boost::asio::use_future).get();
  REQUIRE_FALSE(ec1);
  REQUIRE_FALSE(ec2);
  require_all_verified(a, 4);
  require_all_verified(b, 4);
  const std::uint64_t base = a.partitions[0].dispatch_sequence;
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(a.partitions[i].dispatch_sequence == base + i);
    CHECK(b.partitions[i].dispatch_sequence == base + 4 + i);
  }
  require_at_baseline(e);
}

TEST_CASE("cancelling a job mid-flight returns every permit, byte and buffer", "[prover][engine][cpu]") {
  running_io rt;
  auto backend = std::make_unique<test_backend>(2);
  test_backend* gate = backend.get();
  auto cfg = small_config();
  cfg.depth_per_device = 3;
  engine e(rt.io.get_executor(), cfg, std::move(backend));
  gate->hold();
  const auto id = e.submit(small_request(8));
  // Two partitions are on the device, one more waits for a worker slot, five wait for admission.
  gate->wait_parked(2);
  CHECK(e.status(id)->state == job_state::running);
  CHECK(e.cancel(id));
  auto waited = e.async_await(id, boost::asio::use_future);
  // The device work must finish before its buffers come back; nothing completes before that.
  CHECK(waited.wait_for(50ms) == std::future_status::timeout);
  CHECK(e.status_json().at("pinned_pool").at("bytes_in_use").to_number<std::size_t>() > 0);
  gate->release();
  auto [ec, result] = waited.get();
  CHECK(ec == std::errc::operation_canceled);
  CHECK(result.partitions.size() <= 2);
  CHECK(e.status(id)->state == job_state::cancelled);
  CHECK_FALSE(e.cancel(id));
  require_at_baseline(e);
  // The engine goes on with the next job.
  auto [ec2, next] = prove(e, small_request(2));
  REQUIRE_FALSE(ec2);
  require_all_verified(next, 2);
  require_at_baseline(e);
}

TEST_CASE("a failing backend operation fails only its job", "[prover][engine][cpu]") {
  running_io rt;
  SECTION("the backend refuses the task") {
    auto backend = std::make_unique<test_backend>(2);
    backend->refuse_on_call = 1;
    engine e(rt.io.get_executor(), small_config(), std::move(backend));
    auto failing = e.async_prove(small_request(4, 10, 1), boost::asio::use_future);
    auto [ec, result] = failing.get();
    CHECK(ec == make_error_code(engine_errc::backend_failed));
    const auto st = e.status(result.job_id);
    REQUIRE(st);
    CHECK(st->state == job_state::failed);
    CHECK(st->error.find(make_error_code(host_backend_errc::invalid_task).message()) != std::string::npos);
    require_at_baseline(e);
    auto [ec2, ok] = prove(e, small_request(3, 10, 2));
    REQUIRE_FALSE(ec2);
    require_all_verified(ok, 3);
    require_at_baseline(e);
  }
  SECTION("the device reports an error") {
    auto backend = std::make_unique<test_backend>(2);
    backend->fail_on_call = 0;
    const test_backend& calls = *backend;
    engine e(rt.io.get_executor(), small_config(), std::move(backend));
    const auto bad = e.submit(small_request(4, 10, 1));
    // The failing first call must be the bad job's: the good one is submitted once it was made.
    calls.wait_calls(1);
    const auto good = e.submit(small_request(3, 10, 2));
    auto [ec, failed] = e.async_await(bad, boost::asio::use_future).get();
    auto [ec2, ok] = e.async_await(good, boost::asio::use_future).get();
    CHECK(ec == make_error_code(engine_errc::backend_failed));
    CHECK(e.status(bad)->state == job_state::failed);
    CHECK(e.status(bad)->error.find(make_error_code(host_backend_errc::computation_failed).message()) !=
          std::string::npos);
    REQUIRE_FALSE(ec2);
    require_all_verified(ok, 3);
    CHECK(e.report_json().at("failed").to_number<std::uint64_t>() == 1);
    require_at_baseline(e);
  }
}

TEST_CASE("a failing synthesis fails only its job", "[prover][engine][cpu]") {
  running_io rt;
  auto cfg = small_config();
  std::atomic<std::uint64_t> doomed_job{0};
  cfg.synthesis_hook = [&](std::uint64_t job, std::size_t partition) {
    if (job == doomed_job.load() && partition == 2) throw std::runtime_error("injected synthesis failure");
  };
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  doomed_job = 1;
  const auto bad = e.submit(small_request(6, 10, 1));
  REQUIRE(bad == 1);
  const auto good = e.submit(small_request(3, 10, 2));
  auto [ec, failed] = e.async_await(bad, boost::asio::use_future).get();
  auto [ec2, ok] = e.async_await(good, boost::asio::use_future).get();
  CHECK(ec == make_error_code(engine_errc::synthesis_failed));
  const auto st = e.status(bad);
  CHECK(st->state == job_state::failed);
  CHECK(st->error.find("injected synthesis failure") != std::string::npos);
  CHECK(st->error.find("partition 2") != std::string::npos);
  for (const auto& p : failed.partitions) CHECK(p.verified);
  REQUIRE_FALSE(ec2);
  require_all_verified(ok, 3);
  require_at_baseline(e);
}

TEST_CASE("the SpMV on the backend gives the records of the SpMV on the host", "[prover][engine][cpu]") {
  running_io rt;
  auto host_cfg = small_config();
  host_cfg.backend_spmv = false;
  engine on_host(rt.io.get_executor(), host_cfg, make_host_backend(1, 2));
  engine on_backend(rt.io.get_executor(), small_config(), make_host_backend(1, 2));
  for (const char* circuit : {"mimc", "merkle"}) {
    prove_request r = small_request(4, 11, 21);
    r.circuit = circuit;
    auto [ec1, expected] = prove(on_host, r);
    auto [ec2, got] = prove(on_backend, r);
    REQUIRE_FALSE(ec1);
    REQUIRE_FALSE(ec2);
    require_all_verified(got, 4);
    // One partition builds the PCE on the slow path (whichever starts its synthesis first); the
    // others send their assignment.
    std::size_t slow = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(got.partitions[i].record == expected.partitions[i].record);
      CHECK_FALSE(expected.partitions[i].spmv_on_backend);
      slow += got.partitions[i].pce_used ? 0 : 1;
      CHECK(got.partitions[i].spmv_on_backend == got.partitions[i].pce_used);
      CHECK((got.partitions[i].timings.spmv_ns > 0) == got.partitions[i].pce_used);
    }
    CHECK(slow == 1);
  }
  CHECK(on_backend.report_json().at("syntheses").at("spmv_on_backend").to_number<std::uint64_t>() == 6);
  CHECK(on_host.report_json().at("syntheses").at("spmv_on_backend").to_number<std::uint64_t>() == 0);
  require_at_baseline(on_host);
  require_at_baseline(on_backend);
}

TEST_CASE("a lean partition whose synthesis finds no PCE leases b and c late and builds it",
          "[prover][engine][cpu]") {
  running_io rt;
  auto cfg = small_config();
  // Partition 0 (which leased a full set to build the PCE) starts its synthesis late, so partition
  // 1, leased lean behind it, finds no PCE yet.
  cfg.synthesis_hook = [](std::uint64_t job, std::size_t partition) {
    if (job == 1 && partition == 0) std::this_thread::sleep_for(200ms);
  };
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  REQUIRE(e.status_json().at("full_input_slots").at("capacity").to_number<std::size_t>() == 2);
  auto [ec, result] = prove(e, small_request(4, 12, 31));
  REQUIRE_FALSE(ec);
  require_all_verified(result, 4);
  std::size_t slow = 0;
  for (const auto& p : result.partitions) slow += p.pce_used ? 0 : 1;
  CHECK(slow == 1);
  CHECK(e.report_json().at("syntheses").at("late_abc").to_number<std::uint64_t>() >= 1);
  // The same records as an engine that copies a, b and c.
  auto host_cfg = small_config();
  host_cfg.backend_spmv = false;
  engine reference(rt.io.get_executor(), host_cfg, make_host_backend(1, 2));
  CHECK(reference.status_json().at("full_input_slots").at("capacity").to_number<std::size_t>() == 0);
  // The host backend's own a, b, c (two slots) are in the plan only when it does the SpMV.
  CHECK(e.report_json().at("memory_plan").at("backend_bytes").to_number<std::size_t>() == 2 * 3 * 4096 * sizeof(fr));
  CHECK(reference.report_json().at("memory_plan").at("backend_bytes").to_number<std::size_t>() == 0);
  auto [ec2, expected] = prove(reference, small_request(4, 12, 31));
  REQUIRE_FALSE(ec2);
  for (std::size_t i = 0; i < 4; ++i) CHECK(result.partitions[i].record == expected.partitions[i].record);
  require_at_baseline(e);
  require_at_baseline(reference);
}

TEST_CASE("a configured synthesizer replays recorded partitions bit-identically and is counted",
          "[prover][engine][cpu]") {
  running_io rt;
  synthesis_replay replay;
  CHECK_THROWS_AS(replay.record(test::mimc_request(2, 30, 1)), std::invalid_argument);
  CHECK(replay.partitions() == 0);
  replay.record(small_request(4, 10, 11));
  replay.record(small_request(4, 10, 11));  // already held: nothing redone or added
  REQUIRE(replay.partitions() == 4);
  CHECK(replay.bytes() == 4 * 3 * (std::size_t{1} << 10) * sizeof(fr));

  engine reference(rt.io.get_executor(), small_config(), make_host_backend(1, 2));
  auto [ec_ref, expected] = prove(reference, small_request(4, 10, 11));
  REQUIRE_FALSE(ec_ref);

  auto cfg = small_config();
  cfg.synthesizer = replay.synthesizer();
  cfg.synthesizer_name = "replay of 4 recorded partitions";
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  auto [ec, replayed] = prove(e, small_request(4, 10, 11));
  REQUIRE_FALSE(ec);
  require_all_verified(replayed, 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(replayed.partitions[i].record == expected.partitions[i].record);
  const auto report = e.report_json();
  CHECK(report.at("syntheses").at("configured").to_number<std::uint64_t>() == 4);
  CHECK(report.at("syntheses").at("pce").to_number<std::uint64_t>() == 0);
  CHECK(report.at("syntheses").at("slow").to_number<std::uint64_t>() == 0);
  CHECK(reference.report_json().at("syntheses").at("configured").to_number<std::uint64_t>() == 0);

  // A partition the replay does not hold fails its job with a clear error and gives all back.
  require_job_fails(e, small_request(5, 10, 11), engine_errc::synthesis_failed,
                    "partition 4 of mimc/10 seed 11 was not recorded");
  require_at_baseline(reference);
}

TEST_CASE("a replay of assignments holds the assignment and the matrices, and replays into a alone",
          "[prover][engine][cpu]") {
  const auto request = small_request(3, 10, 5);
  synthesis_replay abc, assignments;
  abc.record(request);
  assignments.record(request, replay_content::assignment);
  REQUIRE(assignments.partitions() == 3);
  CHECK(assignments.assignments() == 3);  // the one that built the PCE was recorded again
  CHECK(abc.assignments() == 0);
  CHECK(assignments.bytes() < abc.bytes() / 2);
  const std::size_t n = std::size_t{1} << 10;
  for (std::size_t p = 0; p < 3; ++p) {
    std::vector<fr> a(n), b(n), c(n), a2(n), b2(n), c2(n);
    const deferred_synthesis full = abc.replay(request, p, a, b, c);
    CHECK_FALSE(full.matrices);
    CHECK_FALSE(full.needs_abc);
    const deferred_synthesis lean = assignments.replay(request, p, a2, {}, {});
    REQUIRE(lean.matrices);
    CHECK_FALSE(lean.needs_abc);
    REQUIRE(lean.assignment_size <= n);
    CHECK(lean.output.public_inputs == full.output.public_inputs);
    // The matrices make the same a, b, c of the assignment.
    const std::vector<fr> w(a2.begin(), a2.begin() + static_cast<std::ptrdiff_t>(lean.assignment_size));
    lean.matrices->evaluate(w, a2, b2, c2);
    CHECK(a2 == a);
    CHECK(b2 == b);
    CHECK(c2 == c);
  }
  // Held as a, b, c and given a alone: it asks for b and c and writes nothing.
  std::vector<fr> a(n, fr::one());
  const deferred_synthesis asks = abc.replay(request, 0, a, {}, {});
  CHECK(asks.needs_abc);
  CHECK(std::all_of(a.begin(), a.end(), [](const fr& x) { return x == fr::one(); }));
  std::vector<fr> short_a(n / 2);
  CHECK_THROWS_AS(assignments.replay(request, 0, short_a, {}, {}), std::invalid_argument);
  CHECK_THROWS_AS(assignments.replay(request, 7, a, {}, {}), std::out_of_range);
}

TEST_CASE("a configured synthesizer that sends assignments runs lean, and late b, c when it needs them",
          "[prover][engine][cpu]") {
  running_io rt;
  const auto request = small_request(4, 10, 13);
  engine reference(rt.io.get_executor(), small_config(), make_host_backend(1, 2));
  auto [ec_ref, expected] = prove(reference, request);
  REQUIRE_FALSE(ec_ref);

  synthesis_replay replay;
  const bool assignments = GENERATE(true, false);
  replay.record(request, assignments ? replay_content::assignment : replay_content::abc);
  auto cfg = small_config();
  cfg.synthesizer = replay.synthesizer();
  cfg.synthesizer_sends_assignment = true;
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  CHECK(e.status_json().at("full_input_slots").at("capacity").to_number<std::size_t>() == 2);
  auto [ec, replayed] = prove(e, request);
  REQUIRE_FALSE(ec);
  require_all_verified(replayed, 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(replayed.partitions[i].record == expected.partitions[i].record);
    CHECK(replayed.partitions[i].spmv_on_backend == assignments);
  }
  const auto syntheses = e.report_json().at("syntheses");
  CHECK(syntheses.at("configured").to_number<std::uint64_t>() == 4);
  CHECK(syntheses.at("spmv_on_backend").to_number<std::uint64_t>() == (assignments ? 4 : 0));
  // Every partition leased a and h; held as a, b, c, each then leased b and c late.
  CHECK(syntheses.at("late_abc").to_number<std::uint64_t>() == (assignments ? 0 : 4));
  require_at_baseline(e);
  require_at_baseline(reference);
}

TEST_CASE("a configured synthesizer's bad answers fail its job and give everything back", "[prover][engine][cpu]") {
  running_io rt;
  boost::asio::io_context idle;
  auto cfg = small_config();
  cfg.synthesizer_sends_assignment = true;
  CHECK_THROWS_WITH(engine(idle.get_executor(), cfg, make_host_backend(1, 2)),
                    Catch::Contains("no synthesizer is configured"));

  synthesis_replay replay;
  const auto request = small_request(2, 10, 17);
  replay.record(request, replay_content::assignment);
  cfg.synthesizer = replay.synthesizer();
  cfg.backend_spmv = false;
  CHECK_THROWS_WITH(engine(idle.get_executor(), cfg, make_host_backend(1, 2)), Catch::Contains("needs backend_spmv"));

  // Without sends_assignment it is handed a, b, c; an assignment back finds nothing to evaluate it.
  cfg.synthesizer_sends_assignment = false;
  engine host_spmv(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  require_job_fails(host_spmv, request, engine_errc::synthesis_failed, "backend_spmv is off");

  // Asking for b and c when it had them, or an assignment longer than a.
  for (const int fault : {0, 1}) {
    auto bad = small_config();
    bad.synthesizer = [inner = replay.synthesizer(), fault](const prove_request& rq, std::size_t p, std::span<fr> a,
                                                            std::span<fr> b, std::span<fr> c) {
      deferred_synthesis d = inner(rq, p, a, b, c);
      if (fault == 0) {
        d = {};
        d.needs_abc = true;
      } else {
        d.assignment_size = a.size() + 1;
      }
      return d;
    };
    bad.synthesizer_sends_assignment = true;
    engine e(rt.io.get_executor(), bad, make_host_backend(1, 2));
    require_job_fails(e, request, engine_errc::synthesis_failed,
                      fault == 0 ? "asked for b and c, which it was given" : "more than a holds");
  }
}

TEST_CASE("a circuit's matrices reach a device on the CPU pool before its first task, never on the io thread",
          "[prover][engine][cpu]") {
  running_io rt;
  const std::thread::id io_thread = rt.thread.get_id();
  auto backend = std::make_unique<test_backend>(2);
  test_backend& tb = *backend;
  tb.track_matrices = true;
  engine e(rt.io.get_executor(), small_config(), std::move(backend));
  auto [ec, result] = prove(e, small_request(6, 10, 23));
  REQUIRE_FALSE(ec);
  std::size_t deferred = 0;
  for (const auto& p : result.partitions) deferred += p.spmv_on_backend ? 1 : 0;
  CHECK(deferred == 5);  // all but the partition that built the PCE
  CHECK(tb.unprepared_enqueues == 0);
  REQUIRE_FALSE(tb.prepare_threads.empty());
  CHECK(tb.prepare_threads.size() <= 2);  // at most once a worker slot that raced to it
  for (const auto& id : tb.prepare_threads) CHECK(id != io_thread);
  require_at_baseline(e);
}

TEST_CASE("a failed matrices upload fails its job and gives everything back", "[prover][engine][cpu]") {
  running_io rt;
  auto backend = std::make_unique<test_backend>(2);
  test_backend& tb = *backend;
  tb.track_matrices = true;
  tb.fail_prepare = true;
  engine e(rt.io.get_executor(), small_config(), std::move(backend));
  require_job_fails(e, small_request(4, 10, 29), engine_errc::backend_failed,
                    "could not take the matrices of mimc/10");
  require_job_fails(e, small_request(4, 10, 30), engine_errc::backend_failed, "injected upload failure");
  // The engine goes on: with uploads working again, the next job proves.
  tb.fail_prepare = false;
  auto [ec2, ok] = prove(e, small_request(4, 10, 31));
  REQUIRE_FALSE(ec2);
  require_all_verified(ok, 4);
  require_at_baseline(e);
}

TEST_CASE("worker slots left idle behind a full depth are counted by cause", "[prover][engine][cpu]") {
  running_io rt;
  // Every synthesis takes 20 ms, far longer than a 2^10 quotient. Returns the slots idle behind the
  // depth and behind synthesis.
  auto run = [&](dispatch_policy policy, std::size_t depth, std::size_t threads, std::size_t partitions) {
    auto cfg = small_config();
    cfg.synthesis_hook = [](std::uint64_t, std::size_t) { std::this_thread::sleep_for(20ms); };
    cfg.policy = policy;
    cfg.depth_per_device = depth;
    cfg.synthesis_threads = threads;
    engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
    auto [ec, r] = prove(e, small_request(partitions));
    REQUIRE_FALSE(ec);
    require_all_verified(r, partitions);
    require_at_baseline(e);
    const auto starved = e.report_json().at("dispatch").at("starved_slots");
    return std::pair{starved.at("depth").to_number<std::uint64_t>(), starved.at("synthesis").to_number<std::uint64_t>()};
  };
  // The depth: synthesis threads to spare.
  const auto [depth_bound, cpu_idle] = run(dispatch_policy::semaphore, 2, 4, 8);
  CHECK(depth_bound >= 1);
  CHECK(cpu_idle == 0);
  // Synthesis: every thread busy.
  const auto [not_depth, cpu_bound] = run(dispatch_policy::semaphore, 8, 1, 16);
  CHECK(cpu_bound >= 1);
  CHECK(not_depth == 0);
  // Not counted for the policies without a depth.
  const auto [unbounded_depth, unbounded_cpu] = run(dispatch_policy::unbounded, 2, 4, 8);
  CHECK(unbounded_depth + unbounded_cpu == 0);
}

TEST_CASE("bad requests are rejected naming the field and change nothing", "[prover][engine][cpu]") {
  running_io rt;
  engine e(rt.io.get_executor(), small_config(), make_host_backend(1, 2));
  auto rejects = [&](prove_request r, const std::string& field) {
    try {
      (void)e.submit(r);
      FAIL("accepted a bad request");
    } catch (const std::invalid_argument& ex) {
      CHECK(std::string(ex.what()).find(field) != std::string::npos);
    }
    CHECK_THROWS_AS(e.async_prove(r, boost::asio::use_future), std::invalid_argument);
  };
  auto r = small_request(2);
  r.circuit = "sha3";
  rejects(r, "circuit");
  r = small_request(2, 13);
  rejects(r, "log_constraints");
  r = small_request(2, 4);
  rejects(r, "log_constraints");
  r = small_request(0);
  rejects(r, "partitions");
  r = small_request(5000);
  rejects(r, "partitions");
  const auto s = e.status_json();
  CHECK(s.at("jobs").at("queued").to_number<std::size_t>() == 0);
  CHECK(s.at("jobs").at("finished").to_number<std::size_t>() == 0);
  CHECK_FALSE(e.status(1));
  CHECK_FALSE(e.cancel(1));
  auto [ec, none] = e.async_await(42, boost::asio::use_future).get();
  CHECK(ec == make_error_code(runtime::errc::invalid_argument));
  require_at_baseline(e);
}

TEST_CASE("a configuration the memory plan cannot hold is refused", "[prover][engine][cpu]") {
  boost::asio::io_context io;
  auto cfg = small_config();
  cfg.memory_budget_bytes = 1 << 20;
  CHECK_THROWS_AS(engine(io.get_executor(), cfg, make_host_backend(1, 2)), memory_plan_error);
  cfg = small_config();
  cfg.plan_circuit = "nope";
  CHECK_THROWS_WITH(engine(io.get_executor(), cfg, make_host_backend(1, 2)), Catch::Contains("plan_circuit"));
  cfg = small_config();
  CHECK_THROWS_AS(engine(io.get_executor(), cfg, nullptr), std::invalid_argument);
}

TEST_CASE("every completion token kind works", "[prover][engine][cpu]") {
  running_io rt;
  engine e(rt.io.get_executor(), small_config(), make_host_backend(1, 2));
  SECTION("use_future") {
    auto [ec, r] = e.async_prove(small_request(2), boost::asio::use_future).get();
    REQUIRE_FALSE(ec);
    require_all_verified(r, 2);
  }
  SECTION("use_awaitable") {
    auto done = boost::asio::co_spawn(
        rt.io,
        [&]() -> boost::asio::awaitable<prove_result> {
          auto [ec, r] = co_await e.async_prove(small_request(2), boost::asio::use_awaitable);
          if (ec) throw std::system_error(ec);
          co_return r;
        },
        boost::asio::use_future);
    require_all_verified(done.get(), 2);
  }
  SECTION("a callback") {
    std::promise<std::pair<std::error_code, prove_result>> promise;
    e.async_prove(small_request(2), [&](std::error_code ec, prove_result r) { promise.set_value({ec, std::move(r)}); });
    auto [ec, r] = promise.get_future().get();
    REQUIRE_FALSE(ec);
    require_all_verified(r, 2);
  }
  require_at_baseline(e);
}

TEST_CASE("shutting down without draining cancels the jobs in flight", "[prover][engine][cpu]") {
  running_io rt;
  auto backend = std::make_unique<test_backend>(2);
  test_backend* gate = backend.get();
  engine e(rt.io.get_executor(), small_config(), std::move(backend));
  gate->hold();
  const auto id = e.submit(small_request(6));
  gate->wait_parked(1);
  auto stopped = e.async_shutdown(false, boost::asio::use_future);
  gate->release();
  stopped.get();
  CHECK(e.status(id)->state == job_state::cancelled);
  require_at_baseline(e);
  const auto late = e.submit(small_request(1));
  auto [ec, r] = e.async_await(late, boost::asio::use_future).get();
  CHECK(ec == make_error_code(engine_errc::shut_down));
  CHECK(e.status(late)->state == job_state::cancelled);
}

TEST_CASE("the trace holds every stage of every partition", "[prover][engine][cpu]") {
  running_io rt;
  auto cfg = small_config();
  cfg.trace = true;
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  auto [ec, r] = prove(e, small_request(3));
  REQUIRE_FALSE(ec);
  REQUIRE(e.trace() != nullptr);
  const std::string json = e.trace()->to_json();
  for (const char* stage : {"\"synthesis\"", "\"quotient\"", "\"evaluation\"", "queue_wait_ns", "\"partition\"",
                            "worker slot 0", "cpu thread 0", "in flight 0"})
    CHECK(json.find(stage) != std::string::npos);
  // Each of the 3 partitions records: memory reservation, pinned checkout, synthesis (its thread's
  // lane and its own), gpu queue, quotient and evaluation (the worker slot's lane), device,
  // partition; the two PCE hits also the backend's SpMV, and a partition whose synthesis found no
  // PCE to defer to after leasing only a and h its second checkout (b and c).
  CHECK(json.find("\"spmv\"") != std::string::npos);
  const auto late = e.report_json().at("syntheses").at("late_abc").to_number<std::size_t>();
  CHECK(e.trace()->size() == 3 * 9 + 2 + late);
  CHECK(e.trace()->dropped() == 0);
}

TEST_CASE("cancelling an async_prove through its cancellation slot cancels the job", "[prover][engine][cpu]") {
  running_io rt;
  auto backend = std::make_unique<test_backend>(2);
  test_backend* gate = backend.get();
  engine e(rt.io.get_executor(), small_config(), std::move(backend));
  gate->hold();
  boost::asio::cancellation_signal signal;
  std::promise<std::tuple<std::error_code, prove_result>> promise;
  e.async_prove(small_request(4), boost::asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, prove_result r) {
                  promise.set_value({ec, std::move(r)});
                }));
  gate->wait_parked(1);
  // Emitted on the control thread: a cancellation slot is not thread-safe.
  boost::asio::post(rt.io, [&] { signal.emit(boost::asio::cancellation_type::terminal); });
  gate->release();
  auto [ec, r] = promise.get_future().get();
  CHECK(ec == std::errc::operation_canceled);
  CHECK(e.status(r.job_id)->state == job_state::cancelled);
  require_at_baseline(e);
}

TEST_CASE("cancelling an async_await abandons the wait but not the job", "[prover][engine][cpu]") {
  running_io rt;
  auto backend = std::make_unique<test_backend>(2);
  test_backend* gate = backend.get();
  engine e(rt.io.get_executor(), small_config(), std::move(backend));
  gate->hold();
  const auto id = e.submit(small_request(3));
  boost::asio::cancellation_signal signal;
  std::promise<std::error_code> abandoned;
  e.async_await(id, boost::asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, prove_result) {
                  abandoned.set_value(ec);
                }));
  gate->wait_parked(1);
  boost::asio::post(rt.io, [&] { signal.emit(boost::asio::cancellation_type::terminal); });
  CHECK(abandoned.get_future().get() == std::errc::operation_canceled);
  gate->release();
  auto [ec, r] = e.async_await(id, boost::asio::use_future).get();
  REQUIRE_FALSE(ec);
  require_all_verified(r, 3);
  require_at_baseline(e);
}
