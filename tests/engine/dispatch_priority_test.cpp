// Admission by priority: the dispatch queue gives the most urgent job's partitions first, then the
// oldest job's lowest partition; and through the engine, a critical job submitted behind others is
// admitted as soon as a slot frees, before them.
#include <coprove/engine/dispatch.hpp>
#include <coprove/engine/engine.hpp>
#include <coprove/engine/host_backend.hpp>

#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <thread>
#include <vector>

namespace {

using namespace coprove::engine;
namespace test = coprove::test;
using namespace std::chrono_literals;

}  // namespace

TEST_CASE("the dispatch queue pops by priority, then job, then partition", "[engine][dispatch][cpu]") {
  dispatch_queue queue;
  for (std::size_t p = 0; p < 2; ++p) queue.push({1, p}, job_priority::low);
  for (std::size_t p = 0; p < 2; ++p) queue.push({2, p});
  for (std::size_t p = 0; p < 2; ++p) queue.push({3, p}, job_priority::critical);
  for (std::size_t p = 0; p < 2; ++p) queue.push({4, p}, job_priority::high);
  queue.push({5, 0}, job_priority::critical);
  CHECK(queue.size() == 9);
  // A job's partitions leave with it, whatever its priority.
  CHECK(queue.erase_job(4) == 2);
  CHECK(queue.erase_job(4) == 0);
  std::vector<partition_key> order;
  while (!queue.empty()) order.push_back(queue.pop());
  const std::vector<partition_key> expected = {{3, 0}, {3, 1}, {5, 0}, {2, 0}, {2, 1}, {1, 0}, {1, 1}};
  CHECK(order == expected);
  CHECK(queue.erase_job(1) == 0);
  CHECK(parse_job_priority("critical") == job_priority::critical);
  CHECK_FALSE(parse_job_priority("urgent"));
  CHECK(to_string(job_priority::low) == "low");
}

TEST_CASE("a critical job submitted behind others is admitted before them", "[prover][engine][cpu]") {
  test::running_io rt;
  engine_config cfg = test::record_engine_config(10);
  cfg.synthesis_threads = 1;
  cfg.depth_per_device = 1;  // one partition in flight: the queue's order is the admission order
  test::synthesis_gate gate;
  gate.close();
  cfg.synthesis_hook = [&](std::uint64_t, std::size_t) { gate.pass(); };
  engine e(rt.io.get_executor(), cfg, std::make_unique<host_backend>(1, 1));
  auto request = [](std::uint64_t seed, job_priority priority) {
    auto r = test::mimc_request(2, 10, seed);
    r.priority = priority;
    return r;
  };
  const auto first = e.submit(request(1, job_priority::normal));
  gate.wait_for_entered(1);  // its first partition holds the only slot
  const auto low = e.submit(request(2, job_priority::low));
  const auto normal = e.submit(request(3, job_priority::normal));
  const auto critical = e.submit(request(4, job_priority::critical));
  // Let the submissions reach the queue before the slot frees.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (e.status_snapshot().dispatch.queued < 7 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  gate.release();
  auto sequence_of = [&](std::uint64_t id) {
    auto [ec, r] = e.async_await(id, boost::asio::use_future).get();
    REQUIRE_FALSE(ec);
    REQUIRE(r.partitions.size() == 2);
    return std::make_pair(r.partitions[0].dispatch_sequence, r.partitions[1].dispatch_sequence);
  };
  const auto f = sequence_of(first);
  const auto c = sequence_of(critical);
  const auto n = sequence_of(normal);
  const auto l = sequence_of(low);
  CHECK(f.first < c.first);
  // The first job's second partition was queued behind the critical job's.
  CHECK(c.second < f.second);
  CHECK(f.second < n.first);
  CHECK(n.second < l.first);
  test::require_at_baseline(e);
}
