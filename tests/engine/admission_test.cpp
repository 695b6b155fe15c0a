// The admission strategies driven step by step on an io_context: the semaphore admits up to its
// depth and one more per ended partition, the poll strategy admits on its tick below the GPU-queue
// limit, unbounded admits everything.
#include <coprove/engine/detail/admission.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

namespace {

using namespace coprove::engine;
using namespace coprove::engine::detail;
namespace runtime = coprove::runtime;

struct admitted_log {
  std::vector<partition_key> keys;
  std::vector<runtime::permit> permits;
  admit_function function() {
    return [this](partition_key key, runtime::permit p) {
      keys.push_back(key);
      permits.push_back(std::move(p));
    };
  }
};

void fill(dispatch_queue& queue, std::uint64_t job, std::size_t partitions) {
  for (std::size_t p = 0; p < partitions; ++p) queue.push({job, p});
}

void drain(boost::asio::io_context& io) {
  while (io.poll_one() != 0) {
  }
}

}  // namespace

TEST_CASE("the semaphore strategy admits up to its depth, then one partition per permit given back",
          "[engine][admission][cpu]") {
  boost::asio::io_context io;
  const auto guard = boost::asio::make_work_guard(io);  // polling an idle context must not stop it
  const high_water_counter idle_gpu_queue;
  admitted_log log;
  dispatch_queue queue;
  std::size_t wakes = 0;
  std::shared_ptr<admission> a;
  a = make_admission({dispatch_policy::semaphore, 2}, io.get_executor(), idle_gpu_queue, log.function(), [&] {
    ++wakes;
    a->pump(queue);
  });
  fill(queue, 2, 3);
  fill(queue, 1, 2);  // an older job: admitted first
  a->pump(queue);
  REQUIRE(log.keys.size() == 2);
  CHECK(log.keys[0] == partition_key{1, 0});
  CHECK(log.keys[1] == partition_key{1, 1});
  CHECK(a->depth_full());
  CHECK(a->available() == 0);
  CHECK(a->capacity() == 2);
  drain(io);
  CHECK(log.keys.size() == 2);  // nothing until a permit comes back

  log.permits[0].release();
  drain(io);
  CHECK(wakes == 1);
  REQUIRE(log.keys.size() == 3);
  CHECK(log.keys[2] == partition_key{2, 0});
  CHECK(log.permits[2].units() == 1);

  // A grant that finds the queue empty goes back instead of idling in the strategy.
  queue.erase_job(2);
  log.permits[1].release();
  drain(io);
  CHECK(a->available() == 1);
  CHECK_FALSE(a->depth_full());
}

TEST_CASE("a grant that arrives after the semaphore strategy is gone does nothing", "[engine][admission][cpu]") {
  boost::asio::io_context io;
  const auto guard = boost::asio::make_work_guard(io);  // polling an idle context must not stop it
  const high_water_counter idle_gpu_queue;
  admitted_log log;
  dispatch_queue queue;
  std::size_t wakes = 0;
  {
    auto a = make_admission({dispatch_policy::semaphore, 1}, io.get_executor(), idle_gpu_queue,
                            log.function(), [&] { ++wakes; });
    fill(queue, 1, 2);
    a->pump(queue);
    REQUIRE(log.keys.size() == 1);
  }
  log.permits.clear();
  drain(io);
  CHECK(wakes == 0);
}

TEST_CASE("the poll strategy admits on its tick while the GPU queue is below its limit", "[engine][admission][cpu]") {
  boost::asio::io_context io;
  const auto guard = boost::asio::make_work_guard(io);  // polling an idle context must not stop it
  const high_water_counter idle_gpu_queue;
  admitted_log log;
  dispatch_queue queue;
  high_water_counter gpu_queue;
  gpu_queue.increment();
  std::size_t wakes = 0;
  auto a = make_admission({dispatch_policy::poll, 8, std::chrono::milliseconds(1), 3}, io.get_executor(), gpu_queue,
                          log.function(), [&] { ++wakes; });
  fill(queue, 1, 5);
  a->pump(queue);
  a->pump(queue);  // one tick armed at a time
  CHECK(log.keys.empty());
  io.run_one();  // the tick: admits while fewer than 3 wait for a device, counting only those
  CHECK(wakes == 1);
  // The GPU queue did not move, so the throttle let everything through in one burst.
  CHECK(log.keys.size() == 5);
  CHECK_FALSE(a->depth_full());
  CHECK(a->available() == 8);

  fill(queue, 2, 2);
  gpu_queue.increment();
  gpu_queue.increment();  // at the limit
  a->pump(queue);
  io.run_one();
  CHECK(log.keys.size() == 5);
  gpu_queue.decrement();
  a->pump(queue);
  io.run_one();
  CHECK(log.keys.size() == 7);
}

TEST_CASE("a stopped poll strategy admits nothing more", "[engine][admission][cpu]") {
  boost::asio::io_context io;
  const auto guard = boost::asio::make_work_guard(io);  // polling an idle context must not stop it
  const high_water_counter idle_gpu_queue;
  admitted_log log;
  dispatch_queue queue;
  auto a = make_admission({dispatch_policy::poll, 4, std::chrono::milliseconds(1), 4}, io.get_executor(),
                          idle_gpu_queue, log.function(), [] {});
  fill(queue, 1, 2);
  a->pump(queue);
  a->stop();
  drain(io);
  CHECK(log.keys.empty());
}

TEST_CASE("the unbounded strategy admits every queued partition at once", "[engine][admission][cpu]") {
  boost::asio::io_context io;
  const auto guard = boost::asio::make_work_guard(io);  // polling an idle context must not stop it
  const high_water_counter idle_gpu_queue;
  admitted_log log;
  dispatch_queue queue;
  auto a = make_admission({dispatch_policy::unbounded, 2}, io.get_executor(), idle_gpu_queue, log.function(),
                          [] {});
  fill(queue, 1, 6);
  a->pump(queue);
  CHECK(log.keys.size() == 6);
  CHECK(queue.empty());
  for (const auto& p : log.permits) CHECK_FALSE(p);
  CHECK_FALSE(a->depth_full());
}
