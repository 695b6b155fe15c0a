// The worker-slot pool driven step by step: free slots spread across devices, waiters are served
// by partition key rather than arrival, and a cancelled acquire gives its place back.
#include <coprove/engine/detail/worker_pool.hpp>

#include <coprove/runtime/error.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <optional>
#include <vector>

namespace {

using namespace coprove::engine;
using namespace coprove::engine::detail;

struct grant {
  std::error_code ec;
  worker_ref worker;
};

// An acquire whose completion lands in `into`.
void acquire(worker_pool& pool, partition_key key, std::optional<grant>& into) {
  pool.async_acquire(key, [&into](std::error_code ec, worker_ref w) { into = grant{ec, w}; });
}

}  // namespace

TEST_CASE("free worker slots go to the device with the most of them, and never inside the call",
          "[engine][worker_pool][cpu]") {
  boost::asio::io_context io;
  const auto guard = boost::asio::make_work_guard(io);  // polling an idle context must not stop it
  worker_pool pool(io.get_executor(), 2, 2);
  std::vector<std::optional<grant>> grants(4);
  for (std::size_t i = 0; i < 4; ++i) acquire(pool, {1, i}, grants[i]);
  for (const auto& g : grants) CHECK_FALSE(g);  // completions are posted
  io.poll();
  CHECK(grants[0]->worker == worker_ref{0, 0});
  CHECK(grants[1]->worker == worker_ref{1, 0});
  CHECK(grants[2]->worker == worker_ref{0, 1});
  CHECK(grants[3]->worker == worker_ref{1, 1});
  CHECK(pool.busy() == 4);
  CHECK(pool.release(worker_ref{1, 0}));  // nobody waits: it is left idle
  CHECK(pool.busy() == 3);
  CHECK_THROWS_AS(pool.release(worker_ref{1, 0}), std::logic_error);
}

TEST_CASE("a released worker slot goes to the smallest partition key waiting, not the first to ask",
          "[engine][worker_pool][cpu]") {
  boost::asio::io_context io;
  const auto guard = boost::asio::make_work_guard(io);  // polling an idle context must not stop it
  worker_pool pool(io.get_executor(), 1, 1);
  std::optional<grant> holder, late_job, early_job_high, early_job_low;
  acquire(pool, {5, 0}, holder);
  io.poll();
  REQUIRE(holder);
  acquire(pool, {7, 0}, late_job);
  acquire(pool, {3, 4}, early_job_high);
  acquire(pool, {3, 1}, early_job_low);
  io.poll();
  CHECK(pool.waiting() == 3);
  CHECK_FALSE(pool.release(holder->worker));
  io.poll();
  REQUIRE(early_job_low);
  CHECK_FALSE(early_job_high);
  CHECK_FALSE(late_job);
  CHECK_FALSE(pool.release(early_job_low->worker));
  io.poll();
  REQUIRE(early_job_high);
  CHECK_FALSE(late_job);
  CHECK(pool.waiting() == 1);
}

TEST_CASE("a cancelled worker-slot acquire gives its place back and completes aborted", "[engine][worker_pool][cpu]") {
  boost::asio::io_context io;
  const auto guard = boost::asio::make_work_guard(io);  // polling an idle context must not stop it
  worker_pool pool(io.get_executor(), 1, 1);
  std::optional<grant> holder, cancelled, next;
  acquire(pool, {1, 0}, holder);
  io.poll();
  boost::asio::cancellation_signal cancel;
  pool.async_acquire(partition_key{1, 1}, boost::asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec, worker_ref w) {
                       cancelled = grant{ec, w};
                     }));
  acquire(pool, {1, 2}, next);
  cancel.emit(boost::asio::cancellation_type::terminal);
  cancel.emit(boost::asio::cancellation_type::terminal);  // a second emission finds nothing
  io.poll();
  REQUIRE(cancelled);
  CHECK(cancelled->ec == coprove::runtime::operation_aborted());
  CHECK(pool.waiting() == 1);
  CHECK_FALSE(pool.release(holder->worker));
  io.poll();
  REQUIRE(next);
  CHECK_FALSE(next->ec);
  CHECK(next->worker == worker_ref{0, 0});
}
