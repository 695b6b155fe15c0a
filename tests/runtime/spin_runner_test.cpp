// run_spinning: runs handlers posted from other threads, returns when stopped or out of work,
// finds work by polling within its spin window and blocks (using next to no CPU) after it.
#include "coprove/runtime/spin_runner.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

namespace asio = boost::asio;
using coprove::runtime::run_spinning;
using coprove::runtime::spin_stats;
using namespace std::chrono_literals;

namespace {

// A window no test outlives: the runner never blocks again once it ran a handler.
constexpr std::chrono::microseconds forever = std::chrono::hours(1);

// Runs `handler` on `io` from the calling thread and waits until it ran there.
template <class F>
void run_on(asio::io_context& io, F handler) {
  std::promise<void> ran;
  asio::post(io, [&] {
    handler();
    ran.set_value();
  });
  ran.get_future().get();
}

double thread_cpu_ms(std::thread& t) {
  clockid_t id{};
  REQUIRE(pthread_getcpuclockid(t.native_handle(), &id) == 0);
  timespec ts{};
  REQUIRE(clock_gettime(id, &ts) == 0);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

TEST_CASE("run_spinning runs handlers posted from another thread until the context is stopped",
          "[runtime][spin_runner][cpu]") {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  spin_stats stats;
  std::size_t returned = 0;
  std::thread runner([&] { returned = run_spinning(io, coprove::runtime::default_spin_window, stats); });

  constexpr int posts = 500;
  int ran = 0;  // only touched on the runner thread
  std::promise<void> all_ran;
  for (int i = 0; i < posts; ++i)
    asio::post(io, [&] {
      if (++ran == posts) all_ran.set_value();
    });
  all_ran.get_future().get();
  io.stop();
  runner.join();

  CHECK(ran == posts);
  CHECK(returned == static_cast<std::size_t>(posts));
  CHECK(stats.handlers == static_cast<std::uint64_t>(posts));
  CHECK(stats.handlers_spinning <= stats.handlers);
  CHECK(stats.blocking_waits >= 1);
  CHECK(io.stopped());
}

TEST_CASE("run_spinning returns once the io_context runs out of work, like run()", "[runtime][spin_runner][cpu]") {
  SECTION("with handlers that post further handlers") {
    asio::io_context io;
    int ran = 0;
    asio::post(io, [&] {
      ++ran;
      asio::post(io, [&] { ++ran; });
    });
    asio::post(io, [&] { ++ran; });
    CHECK(run_spinning(io, forever) == 3);
    CHECK(ran == 3);
    CHECK(io.stopped());
  }
  SECTION("with no work at all") {
    asio::io_context io;
    spin_stats stats;
    CHECK(run_spinning(io, forever, stats) == 0);
    CHECK(stats.handlers == 0);
    CHECK(stats.blocking_waits == 1);
  }
  SECTION("on a context already stopped, even with handlers queued") {
    asio::io_context io;
    bool ran = false;
    asio::post(io, [&] { ran = true; });
    io.stop();
    CHECK(run_spinning(io) == 0);
    CHECK_FALSE(ran);
    io.restart();
    CHECK(run_spinning(io) == 1);
    CHECK(ran);
  }
}

TEST_CASE("stop() ends run_spinning within its spin window", "[runtime][spin_runner][cpu]") {
  SECTION("called by a handler") {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    asio::post(io, [&] { io.stop(); });
    CHECK(run_spinning(io, forever) == 1);
  }
  SECTION("called from another thread while it polls") {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    spin_stats stats;
    std::thread runner([&] { run_spinning(io, forever, stats); });
    run_on(io, [] {});  // the runner now polls for an hour unless stopped
    io.stop();
    runner.join();
    CHECK(stats.handlers == 1);
    CHECK(stats.blocking_waits == 1);
  }
}

TEST_CASE("within the spin window handlers are found by polling, without a blocking wait",
          "[runtime][spin_runner][cpu]") {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  spin_stats stats;
  std::thread runner([&] { run_spinning(io, forever, stats); });
  constexpr int rounds = 50;
  for (int i = 0; i < rounds; ++i) run_on(io, [] {});  // one at a time: each after the last ran
  io.stop();
  runner.join();
  CHECK(stats.handlers == rounds);
  CHECK(stats.blocking_waits == 1);  // the wait for the first one only
  CHECK(stats.handlers_spinning == rounds - 1);
}

TEST_CASE("after its spin window run_spinning blocks until the next handler is ready",
          "[runtime][spin_runner][cpu]") {
  // Two timers far apart: a zero window blocks between them, a long one polls until the second.
  asio::io_context io;
  asio::steady_timer first(io, std::chrono::steady_clock::now());
  asio::steady_timer second(io, std::chrono::steady_clock::now() + 100ms);
  int fired = 0;
  first.async_wait([&](boost::system::error_code) { ++fired; });
  second.async_wait([&](boost::system::error_code) { ++fired; });
  spin_stats stats;

  SECTION("zero window") {
    CHECK(run_spinning(io, 0us, stats) == 2);
    CHECK(stats.blocking_waits == 2);
    CHECK(stats.handlers_spinning == 0);
  }
  SECTION("a window longer than the gap") {
    CHECK(run_spinning(io, forever, stats) == 2);
    CHECK(stats.blocking_waits == 1);
    CHECK(stats.handlers_spinning == 1);
  }
  CHECK(fired == 2);
}

TEST_CASE("an idle run_spinning uses next to no CPU once its window has passed", "[runtime][spin_runner][cpu]") {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  spin_stats stats;
  std::thread runner([&] { run_spinning(io, 100us, stats); });
  run_on(io, [] {});
  const double cpu_before = thread_cpu_ms(runner);
  std::this_thread::sleep_for(200ms);  // idle: a thread that kept polling would burn much of this
  const double idle_cpu = thread_cpu_ms(runner) - cpu_before;
  io.stop();
  runner.join();
  // Loose on purpose: the window is 0.1 ms; a thread polling through the 200 ms would use tens of ms
  // even on a loaded machine.
  CHECK(idle_cpu < 20.0);
  CHECK(stats.handlers == 1);
  CHECK(stats.blocking_waits == 2);  // the first wait, and the one after the window
}

TEST_CASE("run_spinning refuses a negative window and runs nothing", "[runtime][spin_runner][cpu]") {
  asio::io_context io;
  bool ran = false;
  asio::post(io, [&] { ran = true; });
  CHECK_THROWS_AS(run_spinning(io, -1us), std::invalid_argument);
  CHECK_FALSE(ran);
  CHECK(run_spinning(io) == 1);
  CHECK(ran);
}

TEST_CASE("an exception from a handler leaves run_spinning, which a later call continues",
          "[runtime][spin_runner][cpu]") {
  asio::io_context io;
  int ran = 0;
  asio::post(io, [&] {
    ++ran;
    throw std::runtime_error("handler failed");
  });
  asio::post(io, [&] { ++ran; });
  CHECK_THROWS_AS(run_spinning(io, forever), std::runtime_error);
  CHECK(ran == 1);
  CHECK(run_spinning(io, forever) == 1);
  CHECK(ran == 2);
}

namespace {

// A stand-in for the completion bridge: `pending` completions in flight, of which the test makes
// some ready; poll_ready() finishes the ready ones by posting a handler to the io_context (as a
// completion_signal posts its waiter) and records the thread it ran on.
class fake_source final : public coprove::runtime::spin_source {
 public:
  explicit fake_source(asio::io_context& io) : io_(io) {}
  bool busy() const noexcept override { return pending.load() != 0; }
  std::size_t poll_ready() noexcept override {
    ++polls;
    last_poller = std::this_thread::get_id();
    std::size_t done = 0;
    for (int r = ready.load(); r > 0; r = ready.load()) {
      if (!ready.compare_exchange_weak(r, r - 1)) continue;
      --pending;
      ++done;
      asio::post(io_, [this] { ++delivered; });
    }
    return done;
  }

  std::atomic<int> pending{0};
  std::atomic<int> ready{0};
  std::atomic<std::uint64_t> polls{0};
  std::atomic<int> delivered{0};  // written on the io thread
  std::thread::id last_poller;    // written by the poller; read after it stopped

 private:
  asio::io_context& io_;
};

}  // namespace

TEST_CASE("run_spinning finishes a busy spin_source's work on its own thread within the window",
          "[runtime][spin_runner][cpu]") {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  fake_source source(io);
  spin_stats stats;
  std::thread runner([&] { run_spinning(io, forever, stats, &source); });
  constexpr int completions = 100;
  for (int i = 0; i < completions; ++i) {
    // As a coroutine would: start the work from the io thread, then it completes elsewhere.
    run_on(io, [&] { ++source.pending; });
    ++source.ready;
    while (source.pending.load() != 0) std::this_thread::yield();
  }
  run_on(io, [] {});  // every delivery posted before this one has run
  const std::thread::id runner_id = runner.get_id();
  io.stop();
  runner.join();
  CHECK(source.delivered.load() == completions);
  CHECK(stats.source_completions == static_cast<std::uint64_t>(completions));
  CHECK(source.last_poller == runner_id);
  CHECK(stats.blocking_waits == 1);  // the window never ran out: nothing woke the thread
}

TEST_CASE("run_spinning never polls a spin_source that is not busy", "[runtime][spin_runner][cpu]") {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  fake_source source(io);
  source.ready = 5;  // ready but not pending: not the runner's business
  spin_stats stats;
  std::thread runner([&] { run_spinning(io, 2000us, stats, &source); });
  for (int i = 0; i < 20; ++i) run_on(io, [] {});
  io.stop();
  runner.join();
  CHECK(source.polls.load() == 0);
  CHECK(stats.source_completions == 0);
  CHECK(source.ready.load() == 5);
}

TEST_CASE("after its window run_spinning blocks even while its spin_source is busy",
          "[runtime][spin_runner][cpu]") {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  fake_source source(io);
  source.pending = 1;  // in flight, never ready: someone else must finish it
  spin_stats stats;
  std::thread runner([&] { run_spinning(io, 100us, stats, &source); });
  run_on(io, [] {});
  // Loose on purpose (a loaded machine): the window is 0.1 ms, so after 100 ms the runner blocks.
  std::this_thread::sleep_for(100ms);
  const auto polls_then = source.polls.load();
  std::this_thread::sleep_for(50ms);
  const auto polls_later = source.polls.load();
  io.stop();
  runner.join();
  CHECK(polls_then > 0);
  CHECK(polls_later == polls_then);
  CHECK(stats.blocking_waits == 2);
  CHECK(source.delivered.load() == 0);
}
