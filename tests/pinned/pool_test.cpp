// Pool semantics with the pageable allocator: reuse, best fit, FIFO waits, cancellation, shrink,
// release_after, stats and metrics, the pageable fallback and bad input. Deterministic: the
// io_context is driven step by step and the allocator thread is awaited with wait_idle().
#include "coprove/pinned/pool.hpp"

#include "coprove/runtime/completion_signal.hpp"
#include "coprove/runtime/error.hpp"
#include "coprove/runtime/metrics.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using coprove::pinned::lease;
using coprove::pinned::page_bytes;
using coprove::pinned::pool;
using coprove::pinned::pool_config;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;

// Runs handlers until `done` holds; fails the test instead of hanging if it never does.
template <class Pred>
void run_until(asio::io_context& ioc, Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) FAIL("condition not reached");
    ioc.restart();
    ioc.run_one_for(5ms);
  }
}

// The outcome of one async_checkout.
struct outcome {
  std::optional<std::error_code> ec;
  lease l;
  bool done() const { return ec.has_value(); }
};

auto record(outcome& o) {
  return [&o](std::error_code ec, lease l) {
    o.ec = ec;
    o.l = std::move(l);
  };
}

pool_config config_of(std::size_t capacity) {
  pool_config cfg;
  cfg.capacity_bytes = capacity;
  return cfg;
}

// A pool whose shrink() frees every idle buffer (no idle time asked) down to `watermark` bytes.
pool_config shrinking_config(std::size_t capacity, std::size_t watermark) {
  auto cfg = config_of(capacity);
  cfg.high_watermark_bytes = watermark;
  cfg.idle_timeout = std::chrono::milliseconds(0);
  return cfg;
}

// Blocks allocate() until open() is called: makes "a buffer is being allocated" observable.
class gated_allocator final : public coprove::pinned::host_allocator {
 public:
  explicit gated_allocator(std::shared_future<void> gate)
      : inner_(coprove::pinned::make_pageable_allocator()), gate_(std::move(gate)) {}
  void* allocate(std::size_t bytes) override {
    gate_.wait();
    return inner_->allocate(bytes);
  }
  void deallocate(void* p, std::size_t bytes) noexcept override { inner_->deallocate(p, bytes); }
  std::string_view name() const noexcept override { return "pageable"; }
  bool is_pinned() const noexcept override { return false; }

 private:
  std::unique_ptr<coprove::pinned::host_allocator> inner_;
  std::shared_future<void> gate_;
};

// Opens a gate when it goes out of scope, so that a failing test never leaves the allocator
// thread blocked (declare it after the pool).
struct gate_opener {
  std::promise<void>& gate;
  bool opened = false;
  void open() {
    if (!opened) gate.set_value();
    opened = true;
  }
  ~gate_opener() { open(); }
};

// Fails every allocation.
class failing_allocator final : public coprove::pinned::host_allocator {
 public:
  void* allocate(std::size_t) override { throw std::bad_alloc(); }
  void deallocate(void*, std::size_t) noexcept override {}
  std::string_view name() const noexcept override { return "pageable"; }
  bool is_pinned() const noexcept override { return false; }
};

}  // namespace

TEST_CASE("the pageable allocator is named and not pinned", "[pinned][pool][cpu]") {
  auto a = coprove::pinned::make_pageable_allocator();
  CHECK(a->name() == "pageable");
  CHECK_FALSE(a->is_pinned());
  void* p = a->allocate(3 * page_bytes);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % page_bytes == 0);
  a->deallocate(p, 3 * page_bytes);
}

TEST_CASE("a returned buffer is reused for the same page-rounded size", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(64 * mib));
  outcome first;
  p.async_checkout(mib + 1, record(first));
  run_until(ioc, [&] { return first.done(); });
  REQUIRE_FALSE(*first.ec);
  REQUIRE(first.l);
  CHECK(first.l.size() == mib + 1);
  CHECK(first.l.capacity() == mib + page_bytes);  // whole pages, not the next power of two
  CHECK_FALSE(first.l.is_pinned());
  std::byte* data = first.l.data();
  first.l.as<std::uint32_t>()[0] = 7;
  CHECK(first.l.as<std::uint32_t>().size() == (mib + 1) / 4);
  first.l.release();
  CHECK_FALSE(first.l);

  outcome second;
  p.async_checkout(mib + 100, record(second));
  run_until(ioc, [&] { return second.done(); });
  REQUIRE_FALSE(*second.ec);
  CHECK(second.l.data() == data);
  const auto s = p.stats();
  CHECK(s.allocator == "pageable");
  CHECK(s.checkouts == 2);
  CHECK(s.reuses == 1);
  CHECK(s.allocations == 1);
  CHECK(s.bytes_in_use == mib + page_bytes);
  CHECK(s.bytes_requested_in_use == mib + 100);
  CHECK(s.bytes_allocated == mib + page_bytes);
}

TEST_CASE("the buffer returned last is reused first among buffers of one size", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), shrinking_config(64 * mib, 2 * mib));
  p.prewarm(4, mib);
  p.wait_idle();
  REQUIRE(p.stats().free_buffers == 4);
  std::vector<lease> out;
  for (int i = 0; i < 4; ++i) out.push_back(p.try_checkout(mib));
  std::vector<std::byte*> data;
  for (auto& l : out) {
    REQUIRE(l);
    data.push_back(l.data());
  }
  // Returned in the order 0, 1, 2, 3: a steady load of one buffer at a time gets 3 back every time.
  for (auto& l : out) l.release();
  for (int round = 0; round < 3; ++round) {
    auto l = p.try_checkout(mib);
    REQUIRE(l);
    CHECK(l.data() == data[3]);
  }
  // Two at a time: 3, then 2 (the next most recent).
  auto a = p.try_checkout(mib);
  auto b = p.try_checkout(mib);
  CHECK(a.data() == data[3]);
  CHECK(b.data() == data[2]);
  b.release();
  a.release();
  // The ones that were not reused are the ones shrink() frees first (same size, oldest first).
  p.shrink();
  p.wait_idle();
  const auto s = p.stats();
  CHECK(s.bytes_allocated == 2 * mib);
  auto c = p.try_checkout(mib);
  auto d = p.try_checkout(mib);
  REQUIRE(c);
  REQUIRE(d);
  CHECK(c.data() == data[3]);
  CHECK(d.data() == data[2]);
}

TEST_CASE("best fit takes the smallest free buffer within the bounded slack", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(64 * mib));
  p.prewarm(1, 4 * mib);
  p.prewarm(1, 2 * mib);
  p.prewarm(1, 3 * mib);
  p.wait_idle();
  REQUIRE(p.stats().free_buffers == 3);

  // 2 MiB - 100 bytes rounds to 2 MiB: the 2 MiB buffer, not a larger one.
  auto a = p.try_checkout(2 * mib - 100);
  REQUIRE(a);
  CHECK(a.capacity() == 2 * mib);
  // 2.5 MiB: the 3 MiB buffer would waste 20%, beyond the 1/64 slack: no fit (and try_checkout
  // never allocates).
  auto b = p.try_checkout(5 * mib / 2);
  CHECK_FALSE(b);
  // 3 MiB - 1 page is within 1/64 of 3 MiB: the 3 MiB buffer serves it.
  auto c = p.try_checkout(3 * mib - page_bytes);
  REQUIRE(c);
  CHECK(c.capacity() == 3 * mib);
  CHECK(p.stats().reuses == 2);
  CHECK(p.stats().free_buffers == 1);
}

TEST_CASE("an exhausted pool makes checkouts wait in FIFO order", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(4 * page_bytes));
  outcome a, b;
  p.async_checkout(2 * page_bytes, record(a));
  p.async_checkout(2 * page_bytes, record(b));
  run_until(ioc, [&] { return a.done() && b.done(); });
  REQUIRE(a.l);
  REQUIRE(b.l);

  std::vector<char> order;
  outcome c, d, e;
  auto tracked = [&order](outcome& o, char name) {
    return [&o, &order, name](std::error_code ec, lease l) {
      o.ec = ec;
      o.l = std::move(l);
      order.push_back(name);
    };
  };
  p.async_checkout(1 * page_bytes, tracked(c, 'c'));
  p.async_checkout(2 * page_bytes, tracked(d, 'd'));
  p.async_checkout(1 * page_bytes, tracked(e, 'e'));
  p.wait_idle();
  ioc.restart();
  ioc.poll();
  CHECK(order.empty());
  CHECK(p.stats().waiting == 3);
  CHECK(p.try_checkout(page_bytes).data() == nullptr);  // nobody overtakes the queue

  // a's 2 pages are too large for c (beyond the slack): a is freed and c gets a new page. d (2
  // pages) still does not fit; e would, but waits behind d.
  a.l.release();
  run_until(ioc, [&] { return c.done(); });
  p.wait_idle();
  ioc.restart();
  ioc.poll();
  CHECK(order == std::vector<char>{'c'});
  CHECK(c.l.capacity() == page_bytes);

  // d is served first, with b's buffer; then e fits and gets a new page. (The two handlers may run
  // in either order: e's comes from the allocator thread.)
  const std::byte* b_data = b.l.data();
  b.l.release();
  run_until(ioc, [&] { return d.done() && e.done(); });
  CHECK(d.l.data() == b_data);
  CHECK(e.l.capacity() == page_bytes);
  CHECK(order.size() == 3);
  CHECK_FALSE(*d.ec);
  CHECK_FALSE(*e.ec);
  const auto s = p.stats();
  CHECK(s.waits == 3);
  CHECK(s.waiting == 0);
  CHECK(s.frees == 1);
  CHECK(s.bytes_allocated <= 4 * page_bytes);
}

TEST_CASE("a cancelled checkout leaves the queue and every counter returns to baseline", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(3 * page_bytes));
  auto held = p.try_checkout(page_bytes);  // cold pool: try_checkout never allocates
  CHECK_FALSE(held);
  outcome a;
  p.async_checkout(2 * page_bytes, record(a));
  run_until(ioc, [&] { return a.done(); });
  const auto baseline = p.stats();

  // x (2 pages) waits at the head; y (1 page) would fit but waits behind it.
  asio::cancellation_signal cancel_x;
  outcome x, y;
  p.async_checkout(2 * page_bytes, asio::bind_cancellation_slot(cancel_x.slot(), record(x)));
  p.async_checkout(page_bytes, record(y));
  ioc.restart();
  ioc.poll();
  REQUIRE_FALSE(x.done());
  REQUIRE_FALSE(y.done());
  CHECK(p.stats().waiting == 2);

  cancel_x.emit(asio::cancellation_type::terminal);
  run_until(ioc, [&] { return x.done() && y.done(); });
  CHECK(*x.ec == std::errc::operation_canceled);
  CHECK_FALSE(x.l);
  CHECK_FALSE(*y.ec);  // the cancelled head no longer holds it back
  y.l.release();
  p.wait_idle();

  const auto s = p.stats();
  CHECK(s.cancellations == 1);
  CHECK(s.waiting == 0);
  CHECK(s.bytes_in_use == baseline.bytes_in_use);
  CHECK(s.bytes_requested_in_use == baseline.bytes_requested_in_use);
  a.l.release();
  CHECK(p.stats().bytes_in_use == 0);
  CHECK(p.stats().bytes_requested_in_use == 0);
  // A later emit on the finished operation does nothing.
  cancel_x.emit(asio::cancellation_type::terminal);
}

TEST_CASE("cancelling a checkout whose buffer is being allocated keeps the buffer", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  std::promise<void> gate;
  pool p(ioc.get_executor(), std::make_unique<gated_allocator>(gate.get_future().share()), config_of(16 * page_bytes));
  gate_opener opener{gate};
  asio::cancellation_signal cancel;
  outcome o;
  p.async_checkout(4 * page_bytes, asio::bind_cancellation_slot(cancel.slot(), record(o)));
  CHECK(p.stats().waiting == 1);
  cancel.emit(asio::cancellation_type::terminal);
  run_until(ioc, [&] { return o.done(); });
  CHECK(*o.ec == std::errc::operation_canceled);
  opener.open();
  p.wait_idle();
  const auto s = p.stats();
  CHECK(s.waiting == 0);
  CHECK(s.bytes_in_use == 0);
  CHECK(s.allocations == 1);
  CHECK(s.free_buffers == 1);
  CHECK(s.checkouts == 0);
  auto l = p.try_checkout(4 * page_bytes);  // the buffer made for the cancelled checkout
  CHECK(l);
}

TEST_CASE("a checkout that needs a new buffer completes after the allocator thread made it", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  std::promise<void> gate;
  pool p(ioc.get_executor(), std::make_unique<gated_allocator>(gate.get_future().share()), config_of(16 * page_bytes));
  gate_opener opener{gate};
  outcome o;
  p.async_checkout(page_bytes, record(o));
  ioc.restart();
  ioc.poll();
  CHECK_FALSE(o.done());
  opener.open();
  run_until(ioc, [&] { return o.done(); });
  CHECK_FALSE(*o.ec);
  CHECK(o.l.capacity() == page_bytes);
}

TEST_CASE("a coroutine awaits a checkout and a timeout cancels a waiting one", "[pinned][pool][cpu]") {
  using namespace asio::experimental::awaitable_operators;
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(2 * page_bytes));
  bool finished = false;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        // std::error_code first: use_awaitable yields (error_code, lease) rather than throwing.
        auto [ec, first] = co_await p.async_checkout(2 * page_bytes, asio::use_awaitable);
        CHECK_FALSE(ec);
        CHECK(first);
        asio::steady_timer timer(co_await asio::this_coro::executor, 1ms);
        auto r = co_await (p.async_checkout(page_bytes, asio::use_awaitable) || timer.async_wait(asio::use_awaitable));
        CHECK(r.index() == 1);  // the timer won: the checkout was cancelled
        first.release();
        auto [ec2, second] = co_await p.async_checkout(page_bytes, asio::use_awaitable);
        CHECK_FALSE(ec2);
        CHECK(second);
        finished = true;
      },
      asio::detached);
  run_until(ioc, [&] { return finished; });
  CHECK(p.stats().cancellations == 1);
  CHECK(p.stats().waiting == 0);
  CHECK(p.stats().bytes_in_use == 0);
}

TEST_CASE("shrink frees idle buffers largest first down to the high watermark", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), shrinking_config(64 * page_bytes, 5 * page_bytes));
  for (std::size_t pages : {1, 3, 4, 2}) p.prewarm(1, pages * page_bytes);
  p.wait_idle();
  p.shrink();
  p.wait_idle();
  const auto s = p.stats();
  // 10 pages: 4 goes (6 left, still above 5), then 3 (3 left).
  CHECK(s.bytes_allocated == 3 * page_bytes);
  CHECK(s.frees == 2);
  CHECK(s.free_buffers == 2);
  auto one = p.try_checkout(page_bytes);
  auto two = p.try_checkout(2 * page_bytes);
  CHECK(one);
  CHECK(two);
}

TEST_CASE("shrink keeps buffers that have not been idle for the timeout", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  auto cfg = config_of(64 * page_bytes);
  cfg.high_watermark_bytes = page_bytes;
  cfg.idle_timeout = std::chrono::hours(1);
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), cfg);
  p.prewarm(3, 2 * page_bytes);
  p.wait_idle();
  p.shrink();
  p.wait_idle();
  CHECK(p.stats().frees == 0);
  CHECK(p.stats().bytes_allocated == 6 * page_bytes);
}

TEST_CASE("release_after returns the buffer only once the signal is set", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(4 * page_bytes));
  p.prewarm(1, page_bytes);
  p.wait_idle();
  auto l = p.try_checkout(page_bytes);
  REQUIRE(l);
  coprove::runtime::completion_signal gpu_done;
  l.release_after(gpu_done);
  CHECK_FALSE(l);
  std::this_thread::sleep_for(20ms);  // give a wrong implementation the chance to return it early
  CHECK(p.stats().bytes_in_use == page_bytes);
  CHECK_FALSE(p.try_checkout(page_bytes));

  gpu_done.set();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (p.stats().bytes_in_use != 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  CHECK(p.stats().bytes_in_use == 0);
  CHECK(p.try_checkout(page_bytes));
}

TEST_CASE("release_after with a signal that is dropped unset still returns the buffer", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(4 * page_bytes));
  p.prewarm(1, page_bytes);
  p.wait_idle();
  {
    auto l = p.try_checkout(page_bytes);
    REQUIRE(l);
    coprove::runtime::completion_signal never_set;
    l.release_after(never_set);
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (p.stats().bytes_in_use != 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  CHECK(p.stats().bytes_in_use == 0);
}

TEST_CASE("stats and metrics count checkouts, reuses, allocations and bytes", "[pinned][pool][cpu]") {
  auto& reg = coprove::runtime::registry::global();
  const coprove::runtime::labels lbl{{"allocator", "pageable"}};
  auto& checkouts = reg.get_counter("coprove_pinned_checkouts_total", "", lbl);
  auto& reuses = reg.get_counter("coprove_pinned_reuses_total", "", lbl);
  auto& allocations = reg.get_counter("coprove_pinned_allocations_total", "", lbl);
  const auto c0 = checkouts.value(), r0 = reuses.value(), a0 = allocations.value();

  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(64 * page_bytes));
  std::vector<outcome> out(3);
  for (std::size_t i = 0; i < out.size(); ++i) p.async_checkout((i + 1) * page_bytes, record(out[i]));
  run_until(ioc, [&] { return out[0].done() && out[1].done() && out[2].done(); });
  auto s = p.stats();
  CHECK(s.checkouts == 3);
  CHECK(s.allocations == 3);
  CHECK(s.bytes_in_use == 6 * page_bytes);
  CHECK(s.peak_bytes_in_use == 6 * page_bytes);
  CHECK(s.capacity_bytes == 64 * page_bytes);
  for (auto& o : out) o.l.release();
  auto again = p.try_checkout(2 * page_bytes);
  CHECK(again);
  s = p.stats();
  CHECK(s.bytes_in_use == 2 * page_bytes);
  CHECK(s.peak_bytes_in_use == 6 * page_bytes);
  CHECK(s.reuses == 1);
  CHECK(checkouts.value() - c0 == 4);
  CHECK(reuses.value() - r0 == 1);
  CHECK(allocations.value() - a0 == 3);
  CHECK(reg.prometheus_text().find("coprove_pinned_checkouts_total") != std::string::npos);
}

TEST_CASE("the pageable fallback serves an exhausted pool at once and is counted", "[pinned][pool][cpu]") {
  auto& fallbacks = coprove::runtime::registry::global().get_counter("coprove_pinned_fallbacks_total", "",
                                                                        {{"allocator", "pageable"}});
  const auto f0 = fallbacks.value();
  asio::io_context ioc;
  auto cfg = config_of(page_bytes);
  cfg.fallback = pool_config::fallback_policy::pageable;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), cfg);
  outcome a, b;
  p.async_checkout(page_bytes, record(a));
  run_until(ioc, [&] { return a.done(); });
  p.async_checkout(page_bytes, record(b));  // exhausted: no wait
  run_until(ioc, [&] { return b.done(); });
  REQUIRE_FALSE(*b.ec);
  REQUIRE(b.l);
  CHECK_FALSE(b.l.is_pinned());
  auto c = p.try_checkout(page_bytes);  // the same for try_checkout
  CHECK(c);
  auto s = p.stats();
  CHECK(s.fallbacks == 2);
  CHECK(s.waits == 0);
  CHECK(s.checkouts == 3);
  CHECK(s.bytes_in_use == page_bytes);  // fallback buffers are not pool buffers
  CHECK(fallbacks.value() - f0 == 2);
  b.l.release();
  c.release();
  a.l.release();
  CHECK(p.stats().bytes_in_use == 0);
  CHECK(p.stats().bytes_allocated == page_bytes);
}

TEST_CASE("with fallback none an exhausted pool waits instead of falling back", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(page_bytes));
  outcome a, b;
  p.async_checkout(page_bytes, record(a));
  run_until(ioc, [&] { return a.done(); });
  p.async_checkout(page_bytes, record(b));
  ioc.restart();
  ioc.poll();
  CHECK_FALSE(b.done());
  CHECK(p.stats().fallbacks == 0);
  CHECK(p.stats().waits == 1);
  a.l.release();
  run_until(ioc, [&] { return b.done(); });
  CHECK_FALSE(*b.ec);
}

TEST_CASE("an allocation failure fails the checkout with its error and returns the bytes", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), std::make_unique<failing_allocator>(), config_of(4 * page_bytes));
  outcome o;
  p.async_checkout(page_bytes, record(o));
  run_until(ioc, [&] { return o.done(); });
  CHECK(*o.ec == std::errc::not_enough_memory);
  const auto s = p.stats();
  CHECK(s.allocation_failures == 1);
  CHECK(s.bytes_allocated == 0);
  CHECK(s.waiting == 0);
}

TEST_CASE("bad input gives a clear error and changes nothing", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  CHECK_THROWS_AS(pool(ioc.get_executor(), nullptr, config_of(mib)), std::invalid_argument);
  CHECK_THROWS_WITH(pool(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(0)),
                    Catch::Contains("capacity"));

  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(4 * page_bytes));
  const auto before = p.stats();
  CHECK_THROWS_WITH(p.try_checkout(0), Catch::Contains("0 bytes"));
  CHECK_THROWS_WITH(p.try_checkout(4 * page_bytes + 1), Catch::Contains("exceeds the pool capacity"));
  CHECK_THROWS_AS(p.prewarm(5, page_bytes), std::invalid_argument);
  CHECK_THROWS_AS(p.prewarm(1, 0), std::invalid_argument);
  CHECK_THROWS_AS(p.set_capacity(0), std::invalid_argument);

  outcome zero, huge;
  p.async_checkout(0, record(zero));
  p.async_checkout(5 * page_bytes, record(huge));
  CHECK_FALSE(zero.done());  // errors are posted, never inline
  run_until(ioc, [&] { return zero.done() && huge.done(); });
  CHECK(*zero.ec == coprove::runtime::errc::invalid_argument);
  CHECK(*huge.ec == coprove::runtime::errc::exceeds_capacity);
  p.wait_idle();
  const auto after = p.stats();
  CHECK(after.checkouts == before.checkouts);
  CHECK(after.allocations == before.allocations);
  CHECK(after.bytes_allocated == before.bytes_allocated);
  CHECK(after.waiting == 0);
}

TEST_CASE("lowering the capacity frees idle buffers and fails waiters that no longer fit", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(8 * page_bytes));
  p.prewarm(1, 4 * page_bytes);
  p.prewarm(1, 2 * page_bytes);
  p.wait_idle();
  auto held = p.try_checkout(2 * page_bytes);
  REQUIRE(held);
  outcome big;
  p.async_checkout(7 * page_bytes, record(big));  // 2 unallocated + 4 free < 7: waits
  ioc.restart();
  ioc.poll();
  REQUIRE_FALSE(big.done());

  p.set_capacity(3 * page_bytes);
  run_until(ioc, [&] { return big.done(); });
  CHECK(*big.ec == coprove::runtime::errc::exceeds_capacity);
  p.wait_idle();
  auto s = p.stats();
  CHECK(s.bytes_allocated == 2 * page_bytes);  // the idle 4 pages went; the leased 2 stay
  CHECK(s.capacity_bytes == 3 * page_bytes);
  held.release();
  CHECK(p.stats().free_buffers == 1);
}

TEST_CASE("destroying the pool aborts waiters while leases stay valid", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  outcome waiting;
  lease kept;
  {
    pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(page_bytes));
    outcome a;
    p.async_checkout(page_bytes, record(a));
    run_until(ioc, [&] { return a.done(); });
    kept = std::move(a.l);
    p.async_checkout(page_bytes, record(waiting));
  }
  run_until(ioc, [&] { return waiting.done(); });
  CHECK(*waiting.ec == std::errc::operation_canceled);
  REQUIRE(kept);
  kept.data()[0] = std::byte{1};
  kept.release();
}

TEST_CASE("leases released from other threads all come back", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(8 * page_bytes));
  constexpr int total = 400;
  std::atomic<int> completed{0};
  std::vector<std::thread> releasers;
  std::mutex m;
  std::vector<lease> handed;
  for (int i = 0; i < total; ++i)
    p.async_checkout((1 + i % 3) * page_bytes, [&](std::error_code ec, lease l) {
      CHECK_FALSE(ec);
      std::lock_guard lock(m);
      handed.push_back(std::move(l));
      ++completed;
    });
  std::atomic<bool> stop{false};
  for (int t = 0; t < 3; ++t)
    releasers.emplace_back([&] {
      while (!stop) {
        lease l;
        {
          std::lock_guard lock(m);
          if (!handed.empty()) {
            l = std::move(handed.back());
            handed.pop_back();
          }
        }
        if (!l) std::this_thread::yield();
      }
    });
  run_until(ioc, [&] { return completed == total; });
  stop = true;
  for (auto& t : releasers) t.join();
  handed.clear();
  const auto s = p.stats();
  CHECK(s.checkouts == static_cast<std::uint64_t>(total));
  CHECK(s.bytes_in_use == 0);
  CHECK(s.waiting == 0);
  CHECK(s.bytes_allocated <= 8 * page_bytes);
}

TEST_CASE("a mixed-size workload wastes at most 2% of the leased bytes", "[pinned][pool][cpu]") {
  asio::io_context ioc;
  // Room for the working set plus some spare, so that reuse, best fit and eviction all happen.
  pool p(ioc.get_executor(), coprove::pinned::make_pageable_allocator(), config_of(512 * mib));
  std::mt19937_64 rng(42);
  // Partition-like vectors of a few circuits (sizes jitter a little) and odd sizes in between.
  const std::size_t classes[] = {24 * mib + 123, 40 * mib + 4567, 9 * mib + 77, 64 * mib};
  auto draw = [&]() -> std::size_t {
    const auto k = rng() % 10;
    if (k < 8) return classes[k % 4] - rng() % (256 * 1024);
    return 1 * mib + rng() % (48 * mib);
  };
  std::vector<lease> held;
  std::size_t requested = 0, leased = 0;
  for (int i = 0; i < 600; ++i) {
    if (held.size() >= 8) held.erase(held.begin() + static_cast<std::ptrdiff_t>(rng() % held.size()));
    outcome o;
    p.async_checkout(draw(), record(o));
    run_until(ioc, [&] { return o.done(); });
    REQUIRE_FALSE(*o.ec);
    requested += o.l.size();
    leased += o.l.capacity();
    held.push_back(std::move(o.l));
  }
  const double waste = 1.0 - static_cast<double>(requested) / static_cast<double>(leased);
  INFO("waste " << waste * 100 << "%, reuses " << p.stats().reuses << ", allocations " << p.stats().allocations);
  CHECK(waste <= 0.02);
  CHECK(p.stats().reuses >= 250);  // 302 with this seed: exact-size buffers reuse less under jitter
  held.clear();
  CHECK(p.stats().bytes_in_use == 0);
}
