// What the engine keeps and accepts: finished jobs by the retention policy (count, bytes; the age,
// with a clock the test moves, in job_table_test.cpp) after which their ids answer expired();
// unfinished work up to max_open_jobs and max_open_partitions (queue_full_error beyond, freed at
// once by a cancel); one evaluation domain per size.
#include <coprove/engine/engine.hpp>

#include <coprove/engine/host_backend.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

namespace {

namespace test = coprove::test;
using namespace coprove::engine;
using namespace std::chrono_literals;

engine_config retention_config() { return test::record_engine_config(11); }

engine_status::job_counts jobs_of(const engine& e) { return e.status_snapshot().jobs; }

}  // namespace

TEST_CASE("finished jobs beyond the retention count are forgotten and answer expired", "[prover][engine][cpu]") {
  test::running_io rt;
  auto cfg = retention_config();
  cfg.retention.max_jobs = 2;
  engine e(rt.io.get_executor(), cfg, std::make_unique<host_backend>(1, 2));
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 3; ++i) {
    auto [ec, r] = test::prove(e, test::mimc_request(2, 10, 3 + i));
    REQUIRE_FALSE(ec);
    ids.push_back(r.job_id);
  }
  CHECK_FALSE(e.status(ids[0]));
  CHECK(e.expired(ids[0]));
  CHECK(e.status(ids[1]));
  CHECK_FALSE(e.expired(ids[1]));
  CHECK_FALSE(e.expired(ids[2] + 1));  // never given
  CHECK_FALSE(e.expired(0));
  CHECK(jobs_of(e).finished == 2);
  CHECK(jobs_of(e).expired == 1);
  CHECK(jobs_of(e).retained_bytes > 0);
  // An expired job's await says the id is unknown.
  auto [ec, gone] = e.async_await(ids[0], boost::asio::use_future).get();
  CHECK(ec);
  test::require_at_baseline(e);
}

TEST_CASE("a result larger than the retention bytes still reaches its waiter, then expires",
          "[prover][engine][cpu]") {
  test::running_io rt;
  auto cfg = retention_config();
  cfg.retention.max_bytes = 1;
  engine e(rt.io.get_executor(), cfg, std::make_unique<host_backend>(1, 2));
  auto [ec, r] = test::prove(e, test::mimc_request(3, 10, 5));
  REQUIRE_FALSE(ec);
  CHECK(r.partitions.size() == 3);
  CHECK(e.expired(r.job_id));
  CHECK(jobs_of(e).retained_bytes == 0);
  CHECK(jobs_of(e).finished == 0);
}

TEST_CASE("unfinished work beyond the open job and partition limits is refused, and a cancel frees it at once",
          "[prover][engine][cpu]") {
  test::running_io rt;
  auto cfg = retention_config();
  cfg.depth_per_device = 1;
  cfg.max_open_jobs = 2;
  cfg.max_open_partitions = 6;
  test::synthesis_gate gate;
  gate.close();
  cfg.synthesis_hook = [&](std::uint64_t, std::size_t) { gate.pass(); };
  engine e(rt.io.get_executor(), cfg, std::make_unique<host_backend>(1, 1));

  CHECK_THROWS_AS(e.submit(test::mimc_request(7, 10, 1)), std::invalid_argument);  // could never fit
  const auto a = e.submit(test::mimc_request(4, 10, 1));
  const auto b = e.submit(test::mimc_request(2, 10, 2));
  CHECK_THROWS_AS(e.submit(test::mimc_request(1, 10, 3)), queue_full_error);
  CHECK(jobs_of(e).open_partitions == 6);
  // a's first partition holds the only admission slot; b waits, and its cancel ends it at once.
  gate.wait_for_entered(1);
  REQUIRE(e.cancel(b));
  auto [ec_b, partial] = e.async_await(b, boost::asio::use_future).get();
  CHECK(ec_b == std::errc::operation_canceled);
  CHECK(jobs_of(e).open_partitions == 4);
  const auto c = e.submit(test::mimc_request(1, 10, 3));
  try {
    e.submit(test::mimc_request(2, 10, 4));  // 4 + 1 + 2 > 6
    FAIL("a job beyond max_open_partitions was accepted");
  } catch (const queue_full_error& error) {
    CHECK(std::string(error.what()).find("max_open_") != std::string::npos);
  }
  gate.release();
  for (const auto id : {a, c}) {
    auto [ec, r] = e.async_await(id, boost::asio::use_future).get();
    CHECK_FALSE(ec);
  }
  CHECK(jobs_of(e).open_partitions == 0);
  CHECK(jobs_of(e).queued == 0);
  CHECK(jobs_of(e).running == 0);
  test::require_at_baseline(e);
}

TEST_CASE("jobs of one size share one evaluation domain", "[prover][engine][cpu]") {
  test::running_io rt;
  engine e(rt.io.get_executor(), retention_config(), std::make_unique<host_backend>(1, 2));
  for (std::uint64_t seed = 1; seed <= 3; ++seed) REQUIRE_FALSE(std::get<0>(test::prove(e, test::mimc_request(1, 10, seed))));
  CHECK(e.status_snapshot().domains == 1);
  REQUIRE_FALSE(std::get<0>(test::prove(e, test::mimc_request(1, 11, 1))));
  CHECK(e.status_snapshot().domains == 2);
}

TEST_CASE("job ids count up from the configured first id", "[prover][engine][cpu]") {
  test::running_io rt;
  auto cfg = retention_config();
  cfg.first_job_id = 1'764'000'000'000'001;
  engine e(rt.io.get_executor(), cfg, std::make_unique<host_backend>(1, 2));
  auto [ec, r] = test::prove(e, test::mimc_request(1, 10, 1));
  REQUIRE_FALSE(ec);
  CHECK(r.job_id == cfg.first_job_id);
  CHECK(e.submit(test::mimc_request(1, 10, 2)) == cfg.first_job_id + 1);
  CHECK_FALSE(e.expired(cfg.first_job_id - 1));
  cfg.first_job_id = 0;
  CHECK_THROWS_AS(engine(rt.io.get_executor(), cfg, std::make_unique<host_backend>(1, 2)), std::invalid_argument);
}
