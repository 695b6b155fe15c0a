// async_semaphore: FIFO and weighted head-of-line order, cancellation before and after a grant,
// destruction with waiters, capacity changes, every completion token kind, and a two-thread
// stress run (for ThreadSanitizer). Deterministic tests drive an io_context with poll_one.
#include "coprove/runtime/async_semaphore.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <future>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using coprove::runtime::async_semaphore;
using coprove::runtime::errc;
using coprove::runtime::permit;

namespace {

// The outcome of one acquire, filled in by its callback.
struct outcome {
  bool done = false;
  std::error_code ec;
  permit held;
};

auto record(outcome& out) {
  return [&out](std::error_code ec, permit p) {
    out.done = true;
    out.ec = ec;
    out.held = std::move(p);
  };
}

void require_baseline(const async_semaphore& sem, std::size_t capacity) {
  REQUIRE(sem.capacity() == capacity);
  REQUIRE(sem.available() == capacity);
  REQUIRE(sem.in_use() == 0);
  REQUIRE(sem.waiters() == 0);
}

std::size_t drain(asio::io_context& ioc) {
  std::size_t n = 0;
  while (ioc.poll_one() > 0) ++n;
  ioc.restart();
  return n;
}

}  // namespace

TEST_CASE("an uncontended acquire completes on the next poll, never inline", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 3);
  outcome a;
  sem.async_acquire(2, record(a));
  CHECK_FALSE(a.done);
  CHECK(sem.available() == 1);  // granted at once, delivered later
  REQUIRE(ioc.poll_one() == 1);
  REQUIRE(a.done);
  CHECK_FALSE(a.ec);
  CHECK(a.held.units() == 2);
  CHECK(static_cast<bool>(a.held));
  a.held = permit();
  require_baseline(sem, 3);
}

TEST_CASE("waiters are admitted in FIFO order", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 1);
  std::vector<int> order;
  std::vector<permit> held(4);
  for (int i = 0; i < 4; ++i) {
    sem.async_acquire(1, [&, i](std::error_code ec, permit p) {
      REQUIRE_FALSE(ec);
      order.push_back(i);
      held[static_cast<std::size_t>(i)] = std::move(p);
    });
  }
  drain(ioc);
  REQUIRE(order == std::vector<int>{0});
  CHECK(sem.waiters() == 3);
  for (int i = 0; i < 3; ++i) {
    held[static_cast<std::size_t>(i)].release();
    CHECK(order.size() == static_cast<std::size_t>(i) + 1);  // not inline in release
    drain(ioc);
    REQUIRE(order.size() == static_cast<std::size_t>(i) + 2);
  }
  REQUIRE(order == std::vector<int>{0, 1, 2, 3});
  held[3].release();
  require_baseline(sem, 1);
}

TEST_CASE("a large request at the head is not overtaken by later small ones", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 4);
  permit first = sem.try_acquire(3);
  REQUIRE(first.units() == 3);
  outcome large, small;
  sem.async_acquire(4, record(large));
  sem.async_acquire(1, record(small));
  drain(ioc);
  CHECK_FALSE(large.done);
  CHECK_FALSE(small.done);  // one unit is free, but the head waits for four
  CHECK(sem.available() == 1);
  CHECK(sem.try_acquire(1).units() == 0);  // try_acquire does not jump the queue either
  first.release();
  drain(ioc);
  REQUIRE(large.done);
  CHECK(large.held.units() == 4);
  CHECK_FALSE(small.done);
  large.held.release();
  drain(ioc);
  REQUIRE(small.done);
  CHECK(small.held.units() == 1);
  small.held.release();
  require_baseline(sem, 4);
}

TEST_CASE("a cancelled acquire leaves the queue and completes with operation_aborted", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 2);
  permit all = sem.try_acquire(2);
  asio::cancellation_signal cancel;
  outcome a, b;
  sem.async_acquire(1, asio::bind_cancellation_slot(cancel.slot(), record(a)));
  sem.async_acquire(1, record(b));
  CHECK(sem.waiters() == 2);
  cancel.emit(asio::cancellation_type::terminal);
  CHECK(sem.waiters() == 1);
  drain(ioc);
  REQUIRE(a.done);
  CHECK(a.ec == std::errc::operation_canceled);
  CHECK(a.ec == coprove::runtime::operation_aborted());
  CHECK_FALSE(a.held);
  CHECK_FALSE(b.done);
  all.release();
  drain(ioc);
  REQUIRE(b.done);
  CHECK(b.held.units() == 1);
  b.held.release();
  require_baseline(sem, 2);
}

TEST_CASE("cancelling a large head admits the smaller waiters behind it", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 4);
  permit some = sem.try_acquire(2);
  asio::cancellation_signal cancel;
  outcome large, small;
  sem.async_acquire(4, asio::bind_cancellation_slot(cancel.slot(), record(large)));
  sem.async_acquire(2, record(small));
  drain(ioc);
  CHECK_FALSE(small.done);
  cancel.emit(asio::cancellation_type::partial);
  drain(ioc);
  REQUIRE(large.done);
  CHECK(large.ec == std::errc::operation_canceled);
  REQUIRE(small.done);
  CHECK(small.held.units() == 2);
  small.held.release();
  some.release();
  require_baseline(sem, 4);
}

TEST_CASE("a grant that races with cancellation is given back", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 1);
  permit holder = sem.try_acquire(1);
  asio::cancellation_signal cancel;
  outcome a, b;
  sem.async_acquire(1, asio::bind_cancellation_slot(cancel.slot(), record(a)));
  sem.async_acquire(1, record(b));
  holder.release();  // grants a; its completion is posted but has not run
  CHECK(sem.in_use() == 1);
  CHECK(sem.waiters() == 1);
  cancel.emit(asio::cancellation_type::terminal);  // arrives after the grant
  REQUIRE(ioc.poll_one() == 1);
  REQUIRE(a.done);
  CHECK(a.ec == std::errc::operation_canceled);
  CHECK_FALSE(a.held);
  drain(ioc);  // the unit given back went to b
  REQUIRE(b.done);
  CHECK_FALSE(b.ec);
  CHECK(b.held.units() == 1);
  b.held.release();
  require_baseline(sem, 1);
}

TEST_CASE("cancellation after the handler ran has no effect", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 1);
  asio::cancellation_signal cancel;
  outcome a;
  sem.async_acquire(1, asio::bind_cancellation_slot(cancel.slot(), record(a)));
  drain(ioc);
  REQUIRE(a.done);
  cancel.emit(asio::cancellation_type::terminal);  // the slot was cleared on completion
  CHECK(a.held.units() == 1);
  CHECK(sem.in_use() == 1);
  a.held.release();
  require_baseline(sem, 1);
}

TEST_CASE("destroying the semaphore completes its waiters with operation_aborted", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  outcome a, b;
  permit outlives;
  {
    async_semaphore sem(ioc.get_executor(), 2);
    outlives = sem.try_acquire(2);
    sem.async_acquire(1, record(a));
    sem.async_acquire(2, record(b));
    drain(ioc);
    CHECK(sem.waiters() == 2);
  }
  CHECK_FALSE(a.done);  // completions are posted, not run inline by the destructor
  drain(ioc);
  REQUIRE(a.done);
  REQUIRE(b.done);
  CHECK(a.ec == std::errc::operation_canceled);
  CHECK(b.ec == std::errc::operation_canceled);
  CHECK_FALSE(a.held);
  CHECK(outlives.units() == 2);
  outlives.release();  // safe after the semaphore is gone
  CHECK(ioc.poll() == 0);
}

TEST_CASE("bad requests complete with a clear error and change nothing", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 4);
  outcome too_big, zero;
  sem.async_acquire(5, record(too_big));
  sem.async_acquire(0, record(zero));
  CHECK(sem.waiters() == 0);
  drain(ioc);
  REQUIRE(too_big.done);
  CHECK(too_big.ec == errc::exceeds_capacity);
  REQUIRE(zero.done);
  CHECK(zero.ec == errc::invalid_argument);
  CHECK(zero.ec == std::errc::invalid_argument);
  CHECK_THROWS_AS(sem.try_acquire(0), std::invalid_argument);
  CHECK(sem.try_acquire(5).units() == 0);
  CHECK_THROWS_AS(sem.release(1), std::invalid_argument);
  CHECK_THROWS_AS(sem.set_capacity(0), std::invalid_argument);
  CHECK_THROWS_AS(async_semaphore(ioc.get_executor(), 0), std::invalid_argument);
  CHECK(coprove::runtime::make_error_code(errc::exceeds_capacity).message().find("capacity") != std::string::npos);
  require_baseline(sem, 4);
}

TEST_CASE("set_capacity raises and lowers the capacity at run time", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 3);
  permit three = sem.try_acquire(3);
  outcome a, b;
  sem.async_acquire(3, record(a));
  sem.async_acquire(1, record(b));
  drain(ioc);
  CHECK_FALSE(a.done);

  SECTION("raising it admits waiters") {
    sem.set_capacity(7);
    drain(ioc);
    REQUIRE(a.done);
    REQUIRE(b.done);
    CHECK(a.held.units() == 3);
    CHECK(b.held.units() == 1);
    CHECK(sem.available() == 0);
    a.held.release();
    b.held.release();
    three.release();
  }
  SECTION("lowering it below the units in use leaves nothing available until enough is released") {
    sem.set_capacity(1);
    drain(ioc);
    REQUIRE(a.done);  // 3 can never fit in 1
    CHECK(a.ec == errc::exceeds_capacity);
    CHECK_FALSE(b.done);
    CHECK(sem.available() == 0);
    CHECK(sem.in_use() == 3);
    three.release(2);
    drain(ioc);
    CHECK_FALSE(b.done);  // in use 1 == capacity 1
    CHECK(sem.available() == 0);
    three.release();
    drain(ioc);
    REQUIRE(b.done);
    CHECK(b.held.units() == 1);
    b.held.release();
  }
  sem.set_capacity(3);
  require_baseline(sem, 3);
}

TEST_CASE("a permit can be moved, split and released in part", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 10);
  permit p = sem.try_acquire(10);
  REQUIRE(p.units() == 10);
  permit part = p.split(4);
  CHECK(part.units() == 4);
  CHECK(p.units() == 6);
  CHECK(sem.in_use() == 10);
  p.release(2);
  CHECK(p.units() == 4);
  CHECK(sem.available() == 2);
  CHECK_THROWS_AS(p.release(5), std::invalid_argument);
  CHECK_THROWS_AS(p.split(5), std::invalid_argument);
  CHECK(p.units() == 4);
  permit moved(std::move(p));
  CHECK(p.units() == 0);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  CHECK_FALSE(p);
  CHECK(moved.units() == 4);
  moved = std::move(part);  // releases the 4 it held, takes the other 4
  CHECK(sem.in_use() == 4);
  {
    permit scoped = std::move(moved);
  }
  require_baseline(sem, 10);

  permit lost = sem.try_acquire(3);
  lost.detach();
  CHECK(sem.in_use() == 3);
  sem.release(3);
  require_baseline(sem, 10);
}

TEST_CASE("a waiter resumes on its own associated executor", "[runtime][semaphore][cpu]") {
  asio::io_context sem_context, waiter_context;
  async_semaphore sem(sem_context.get_executor(), 1);
  permit held = sem.try_acquire(1);
  outcome a;
  sem.async_acquire(1, asio::bind_executor(waiter_context.get_executor(), record(a)));
  held.release();
  CHECK(sem_context.poll() == 0);  // nothing for the semaphore's own executor
  sem_context.restart();
  CHECK_FALSE(a.done);
  CHECK(waiter_context.poll_one() == 1);
  REQUIRE(a.done);
  CHECK(a.held.units() == 1);
  a.held.release();
  require_baseline(sem, 1);
}

TEST_CASE("a pending acquire keeps its executor's io_context running", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 1);
  permit held = sem.try_acquire(1);
  outcome a;
  sem.async_acquire(1, record(a));
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    held.release();  // from a foreign thread
  });
  ioc.run();  // returns only once the waiter has completed
  releaser.join();
  REQUIRE(a.done);
  CHECK(a.held.units() == 1);
  a.held.release();
  require_baseline(sem, 1);
}

TEST_CASE("every completion token kind works", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 2);

  // Asio treats only boost::system::error_code as an error type, so with use_awaitable and
  // use_future a std::error_code signature yields std::tuple<std::error_code, permit>.
  SECTION("use_awaitable") {
    std::size_t units = 0;
    std::error_code second_ec;
    // A named lambda: its captures must outlive the coroutine frame.
    auto body = [&]() -> asio::awaitable<void> {
      auto [ec, p] = co_await sem.async_acquire(2, asio::use_awaitable);
      CHECK_FALSE(ec);
      units = p.units();
      auto [ec2, q] = co_await sem.async_acquire(3, asio::use_awaitable);
      second_ec = ec2;
      CHECK_FALSE(q);
    };
    asio::co_spawn(ioc, body(), [&](std::exception_ptr e) { CHECK_FALSE(e); });
    drain(ioc);
    CHECK(units == 2);
    CHECK(second_ec == errc::exceeds_capacity);
  }
  SECTION("use_awaitable waits and resumes") {
    permit held = sem.try_acquire(2);
    bool resumed = false;
    auto body = [&]() -> asio::awaitable<void> {
      auto [ec, p] = co_await sem.async_acquire(1, asio::use_awaitable);
      resumed = !ec && p.units() == 1;
    };
    asio::co_spawn(ioc, body(), asio::detached);
    drain(ioc);
    CHECK_FALSE(resumed);
    CHECK(sem.waiters() == 1);
    held.release();
    drain(ioc);
    CHECK(resumed);
  }
  SECTION("use_future") {
    // use_future's handler runs on the system executor, off this thread.
    std::future<std::tuple<std::error_code, permit>> f = sem.async_acquire(2, asio::use_future);
    REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    auto [ec, p] = f.get();
    CHECK_FALSE(ec);
    CHECK(p.units() == 2);
  }
  SECTION("deferred") {
    auto op = sem.async_acquire(1, asio::deferred);
    CHECK(sem.in_use() == 0);  // nothing happens until the deferred operation is started
    outcome a;
    std::move(op)(record(a));
    drain(ioc);
    REQUIRE(a.done);
    CHECK(a.held.units() == 1);
  }
  SECTION("callback") {
    outcome a;
    sem.async_acquire(1, record(a));
    drain(ioc);
    REQUIRE(a.done);
  }
  drain(ioc);
  require_baseline(sem, 2);
}

TEST_CASE("acquire, release and cancel from two threads lose and create no unit", "[runtime][semaphore][cpu]") {
  constexpr std::size_t capacity = 4;
  constexpr int iterations = 20000;  // about 1 s under ThreadSanitizer
  asio::io_context contexts[2];
  async_semaphore sem(contexts[0].get_executor(), capacity);
  std::atomic<int> granted{0}, cancelled{0}, unexpected{0};

  std::atomic<int> finished{0};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work[2] = {
      asio::make_work_guard(contexts[0]), asio::make_work_guard(contexts[1])};
  // Both contexts run until both workers are done: each may still release the other's units.
  auto worker_done = [&] {
    if (finished.fetch_add(1) + 1 == 2) {
      for (int i = 0; i < 2; ++i) asio::post(contexts[i], [&work, i] { work[i].reset(); });
    }
  };

  struct worker {
    asio::io_context* own;
    asio::io_context* other;
    async_semaphore* sem;
    std::atomic<int>* granted;
    std::atomic<int>* cancelled;
    std::atomic<int>* unexpected;
    std::function<void()> done;
    std::minstd_rand rng;
    asio::cancellation_signal cancel;
    int remaining = iterations;

    void next() {
      if (remaining-- == 0) {
        done();
        return;
      }
      const std::size_t units = 1 + rng() % 3;
      auto handler = [this](std::error_code ec, permit p) {
        if (ec) {
          // Catch2 assertions are not thread-safe: count here, check on the main thread.
          (ec == std::errc::operation_canceled ? *cancelled : *unexpected).fetch_add(1);
        } else {
          granted->fetch_add(1);
          if (rng() % 2 == 0) {
            // Released on the other thread.
            asio::post(*other, [q = std::make_shared<permit>(std::move(p))] { q->release(); });
          }
        }
        next();
      };
      // The handler runs on this worker's own context, where the cancellation is emitted too.
      sem->async_acquire(units, asio::bind_cancellation_slot(
                                    cancel.slot(), asio::bind_executor(own->get_executor(), std::move(handler))));
      if (rng() % 3 == 0) asio::post(*own, [this] { cancel.emit(asio::cancellation_type::terminal); });
    }
  };

  worker workers[2] = {
      {&contexts[0], &contexts[1], &sem, &granted, &cancelled, &unexpected, worker_done, std::minstd_rand(1), {}, iterations},
      {&contexts[1], &contexts[0], &sem, &granted, &cancelled, &unexpected, worker_done, std::minstd_rand(2), {}, iterations}};
  for (auto& w : workers) asio::post(*w.own, [&w] { w.next(); });
  std::thread second([&] { contexts[1].run(); });
  contexts[0].run();
  second.join();
  CHECK(unexpected.load() == 0);
  CHECK(granted.load() + cancelled.load() == 2 * iterations);
  CHECK(granted.load() > 0);
  CHECK(cancelled.load() > 0);
  require_baseline(sem, capacity);
}

TEST_CASE("raising the capacity admits at most the difference, lowering it admits none", "[runtime][semaphore][cpu]") {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 2);
  permit first = sem.try_acquire(1), second = sem.try_acquire(1);
  std::vector<outcome> waiters(5);
  for (auto& w : waiters) sem.async_acquire(1, record(w));
  drain(ioc);
  auto granted = [&] {
    std::size_t n = 0;
    for (const auto& w : waiters) n += w.done ? 1 : 0;
    return n;
  };
  CHECK(granted() == 0);

  sem.set_capacity(4);  // two more: exactly two of the five, the oldest
  drain(ioc);
  CHECK(granted() == 2);
  CHECK(waiters[0].done);
  CHECK(waiters[1].done);
  CHECK(sem.in_use() == 4);

  sem.set_capacity(3);  // below the units in use: nobody new, and one release admits nobody either
  drain(ioc);
  CHECK(granted() == 2);
  first.release();
  drain(ioc);
  CHECK(granted() == 2);
  CHECK(sem.in_use() == 3);
  second.release();  // now below the capacity: one, in FIFO order
  drain(ioc);
  CHECK(granted() == 3);
  CHECK(waiters[2].done);

  sem.set_capacity(3);  // unchanged: nothing
  drain(ioc);
  CHECK(granted() == 3);
  for (auto& w : waiters) w.held.release();
  drain(ioc);
  CHECK(granted() == 5);
  for (auto& w : waiters) w.held.release();
  require_baseline(sem, 3);
}

TEST_CASE("capacity changes from one thread while another acquires and releases lose no unit",
          "[runtime][semaphore][cpu]") {
  constexpr int iterations = 20000;
  constexpr int give_up_after = 50 * iterations;  // a semaphore that never admits two ends here
  constexpr int chains = 10;
  constexpr int least_resizes = 100;
  constexpr std::size_t most = 6;
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 2);
  std::size_t most_in_use = 0;
  int started = 0, granted = 0, unexpected = 0, stopped = 0;
  std::atomic<int> resizes{0};
  std::atomic<bool> acquiring_done{false};

  // Ten chains of acquires on the io_context's thread; each permit is held until the next turn of
  // the loop, so that the units in use press against the capacity the other thread keeps moving.
  // The chains go on past `iterations` until the other thread has resized a while and a raise has
  // let two units be in use: on a loaded machine the resizer may not run at all for the first
  // thousands of acquires, and the test is about the two threads overlapping.
  auto pressed = [&] { return resizes.load() >= least_resizes && most_in_use > 1; };
  std::function<void()> acquire_one = [&] {
    if ((started >= iterations && pressed()) || started >= give_up_after) {
      if (++stopped == chains) acquiring_done.store(true);
      return;
    }
    ++started;
    sem.async_acquire(1, [&](std::error_code ec, permit p) {
      if (ec) {
        ++unexpected;
      } else {
        ++granted;
        most_in_use = std::max(most_in_use, sem.in_use());
      }
      asio::post(ioc, [&, held = std::make_shared<permit>(std::move(p))] {
        held->release();
        acquire_one();
      });
    });
  };
  for (int i = 0; i < chains; ++i) asio::post(ioc, acquire_one);
  std::thread resizer([&] {
    std::minstd_rand rng(7);
    while (!acquiring_done.load()) {
      sem.set_capacity(1 + rng() % most);
      resizes.fetch_add(1);
      std::this_thread::yield();
    }
  });
  ioc.run();
  resizer.join();
  CHECK(unexpected == 0);
  CHECK(granted == started);
  CHECK(most_in_use <= most);
  CHECK(most_in_use > 1);
  sem.set_capacity(most);
  require_baseline(sem, most);
}
