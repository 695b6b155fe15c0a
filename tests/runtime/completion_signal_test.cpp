// completion_signal: one-shot result, many waiters, completion on the waiter's executor (never
// inline), set from a foreign thread, double set reported, cancellation and abandonment.
#include "coprove/runtime/completion_signal.hpp"

#include <catch2/catch.hpp>

#include "coprove/runtime/metrics.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <optional>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using coprove::runtime::completion_signal;
using coprove::runtime::errc;

namespace {

std::size_t drain(asio::io_context& ioc) {
  std::size_t n = 0;
  while (ioc.poll_one() > 0) ++n;
  ioc.restart();
  return n;
}

auto on(asio::io_context& ioc, std::optional<std::error_code>& out) {
  return asio::bind_executor(ioc.get_executor(), [&out](std::error_code ec) { out = ec; });
}

}  // namespace

TEST_CASE("every waiter completes with the result once the signal is set", "[runtime][signal][cpu]") {
  asio::io_context ioc;
  completion_signal done;
  std::vector<std::optional<std::error_code>> results(3);
  for (auto& r : results) done.async_wait(on(ioc, r));
  drain(ioc);
  CHECK(done.waiters() == 3);
  CHECK_FALSE(done.is_set());
  const auto failure = std::make_error_code(std::errc::io_error);
  CHECK_FALSE(done.set(failure));
  CHECK(done.is_set());
  CHECK(done.result() == failure);
  CHECK_FALSE(results[0].has_value());  // posted, not run inline in set()
  drain(ioc);
  for (auto& r : results) {
    REQUIRE(r.has_value());
    CHECK(*r == failure);
  }
  CHECK(done.waiters() == 0);
}

TEST_CASE("waiting on a signal that is already set completes on the next poll", "[runtime][signal][cpu]") {
  asio::io_context ioc;
  completion_signal done;
  completion_signal copy = done;  // copies share the state
  CHECK(copy == done);
  CHECK_FALSE(copy.set());
  std::optional<std::error_code> r;
  done.async_wait(on(ioc, r));
  CHECK_FALSE(r.has_value());
  REQUIRE(ioc.poll_one() == 1);
  REQUIRE(r.has_value());
  CHECK_FALSE(*r);
}

TEST_CASE("setting a signal twice is reported, counted and changes nothing", "[runtime][signal][cpu]") {
  auto& double_sets = coprove::runtime::registry::global().get_counter(
      "coprove_completion_signal_double_set_total", "completion_signal::set called on a signal that was already set");
  const auto before = double_sets.value();
  completion_signal done;
  CHECK_FALSE(done.set());
  const auto ec = done.set(std::make_error_code(std::errc::io_error));
  CHECK(ec == errc::already_set);
  CHECK_FALSE(done.result());  // the first result stays
  CHECK(double_sets.value() == before + 1);
}

TEST_CASE("a signal set from a foreign thread resumes the waiter on its own executor", "[runtime][signal][cpu]") {
  asio::io_context ioc;
  completion_signal done;
  std::thread::id resumed_on;
  std::optional<std::error_code> result;
  done.async_wait(asio::bind_executor(ioc.get_executor(), [&](std::error_code ec) {
    resumed_on = std::this_thread::get_id();
    result = ec;
  }));
  std::thread setter([done]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    done.set();
  });
  ioc.run();  // the pending wait keeps run() going until the signal arrives
  setter.join();
  REQUIRE(result.has_value());
  CHECK_FALSE(*result);
  CHECK(resumed_on == std::this_thread::get_id());
}

TEST_CASE("a cancelled wait completes with operation_aborted and leaves the signal alone", "[runtime][signal][cpu]") {
  asio::io_context ioc;
  completion_signal done;
  asio::cancellation_signal cancel;
  std::optional<std::error_code> cancelled, kept;
  done.async_wait(asio::bind_cancellation_slot(cancel.slot(), on(ioc, cancelled)));
  done.async_wait(on(ioc, kept));
  cancel.emit(asio::cancellation_type::terminal);
  CHECK(done.waiters() == 1);
  drain(ioc);
  REQUIRE(cancelled.has_value());
  CHECK(*cancelled == std::errc::operation_canceled);
  CHECK_FALSE(done.is_set());
  CHECK_FALSE(kept.has_value());
  done.set();
  drain(ioc);
  REQUIRE(kept.has_value());
  CHECK_FALSE(*kept);
}

TEST_CASE("waiters of a signal that nobody can set any more complete with shut_down", "[runtime][signal][cpu]") {
  asio::io_context ioc;
  std::optional<std::error_code> r;
  {
    completion_signal done;
    done.async_wait(on(ioc, r));
  }
  drain(ioc);
  REQUIRE(r.has_value());
  CHECK(*r == errc::shut_down);
}

TEST_CASE("completion_signal works with every completion token kind", "[runtime][signal][cpu]") {
  asio::io_context ioc;
  completion_signal done;

  SECTION("use_awaitable") {
    std::optional<std::error_code> r;
    auto body = [&]() -> asio::awaitable<void> {
      // std::error_code is a value for Asio: the awaitable yields it.
      r = co_await done.async_wait(asio::use_awaitable);
    };
    asio::co_spawn(ioc, body(), asio::detached);
    drain(ioc);
    CHECK_FALSE(r.has_value());
    done.set(std::make_error_code(std::errc::timed_out));
    drain(ioc);
    REQUIRE(r.has_value());
    CHECK(*r == std::errc::timed_out);
  }
  SECTION("use_future") {
    std::future<std::error_code> f = done.async_wait(asio::use_future);
    done.set();
    REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    CHECK_FALSE(f.get());
  }
  SECTION("deferred") {
    auto op = done.async_wait(asio::deferred);
    CHECK(done.waiters() == 0);
    std::optional<std::error_code> r;
    std::move(op)(on(ioc, r));
    CHECK(done.waiters() == 1);
    done.set();
    drain(ioc);
    REQUIRE(r.has_value());
  }
}
