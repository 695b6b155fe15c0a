// runtime::detail::async_op, the operation state under the semaphore, the completion signal and
// the pinned pool: completion on the handler's associated executor and never inline, the state
// freed before the handler runs, outstanding work while it waits, cancellation through the
// handler's slot, and a completion that its executor drops unrun. Driven step by step with
// poll_one on io_contexts, through a minimal operation whose "core" is the test itself.
#include "coprove/runtime/detail/async_op.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>

namespace asio = boost::asio;
using coprove::runtime::detail::async_op;
using coprove::runtime::detail::pending_op;
using coprove::runtime::detail::post_completion;

namespace {

// What the test observes of its operations.
struct probe {
  int live = 0;     // operation states allocated and not yet freed
  int cancels = 0;  // calls of cancel()
};

// The core's view of a test operation: a value to deliver and a result, completed by the test.
struct test_waiter : pending_op {
  test_waiter(schedule_fn fn, probe& p, std::shared_ptr<int> v) noexcept
      : pending_op(fn), observer(&p), value(std::move(v)) {
    ++observer->live;
  }
  ~test_waiter() { --observer->live; }

  // Like a real core: a waiting operation completes with operation_aborted, scheduled, not inline.
  void cancel() noexcept {
    ++observer->cancels;
    if (scheduled) return;
    result = std::make_error_code(std::errc::operation_canceled);
    complete();
  }
  void complete() noexcept {
    scheduled = true;
    schedule();
  }

  probe* observer;
  std::shared_ptr<int> value;
  std::error_code result;
  bool scheduled = false;
};

template <class Handler>
class test_op final : public async_op<test_op<Handler>, test_waiter, Handler, asio::any_io_executor> {
  using base = async_op<test_op<Handler>, test_waiter, Handler, asio::any_io_executor>;

 public:
  test_op(Handler&& handler, const asio::any_io_executor& default_executor, probe& p, std::shared_ptr<int> v)
      : base(std::move(handler), default_executor, p, std::move(v)) {}

  std::tuple<std::error_code, std::shared_ptr<int>> completion_arguments() noexcept {
    return {this->result, std::move(this->value)};
  }
};

template <class Handler>
test_waiter* start(Handler&& handler, const asio::any_io_executor& default_executor, probe& p,
                   std::shared_ptr<int> value = std::make_shared<int>(7)) {
  std::decay_t<Handler> h(std::forward<Handler>(handler));
  return test_op<std::decay_t<Handler>>::create(std::move(h), default_executor, p, std::move(value));
}

// What a handler saw when it ran.
struct outcome {
  bool done = false;
  std::error_code ec;
  int value = 0;
  bool on_expected_context = false;
  int live_states_then = -1;
};

// A handler that fills in `out`, on the thread of `expected`'s executor or not, then runs `then`.
auto record(outcome& out, asio::io_context& expected, const probe& p, std::function<void()> then = {}) {
  return [&out, &expected, &p, then = std::move(then)](std::error_code ec, std::shared_ptr<int> v) {
    out.done = true;
    out.ec = ec;
    out.value = v ? *v : 0;
    out.on_expected_context = expected.get_executor().running_in_this_thread();
    out.live_states_then = p.live;
    if (then) then();
  };
}

// The handler behind `out` has run, on the expected executor, with (ec, value).
void require_completed(const outcome& out, std::error_code ec, int value) {
  REQUIRE(out.done);
  CHECK(out.ec == ec);
  CHECK(out.value == value);
  CHECK(out.on_expected_context);
  CHECK(out.live_states_then == 0);  // its state was freed first
}

// One block for operation states (anything derived from test_waiter); other allocations (the
// executor's own) go to the heap. A second state allocated while the first is alive fails.
struct one_block {
  alignas(std::max_align_t) std::byte storage[1024];
  bool in_use = false;
  int allocations = 0;
};

template <class T>
struct one_block_allocator {
  using value_type = T;
  one_block* block;
  explicit one_block_allocator(one_block& b) noexcept : block(&b) {}
  template <class U>
  one_block_allocator(const one_block_allocator<U>& other) noexcept : block(other.block) {}

  T* allocate(std::size_t n) {
    if constexpr (std::is_base_of_v<test_waiter, T>) {
      if (block->in_use || n * sizeof(T) > sizeof(block->storage)) throw std::bad_alloc();
      block->in_use = true;
      ++block->allocations;
      return reinterpret_cast<T*>(block->storage);
    } else {
      return std::allocator<T>().allocate(n);
    }
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if constexpr (std::is_base_of_v<test_waiter, T>) {
      block->in_use = false;
    } else {
      std::allocator<T>().deallocate(p, n);
    }
  }
  template <class U>
  bool operator==(const one_block_allocator<U>& other) const noexcept {
    return block == other.block;
  }
};

}  // namespace

TEST_CASE("a completion runs on the handler's associated executor, never inline", "[runtime][async_op][cpu]") {
  asio::io_context default_context, handler_context;
  probe p;
  outcome out;
  test_waiter* op = start(asio::bind_executor(handler_context, record(out, handler_context, p)),
                          default_context.get_executor(), p);
  op->complete();
  CHECK_FALSE(out.done);  // schedule() only submits it
  CHECK(default_context.poll() == 0);
  CHECK_FALSE(out.done);
  REQUIRE(handler_context.poll_one() == 1);
  require_completed(out, {}, 7);
}

TEST_CASE("a handler without an executor of its own completes on the default executor", "[runtime][async_op][cpu]") {
  asio::io_context ioc;
  probe p;
  outcome out;
  test_waiter* op = start(record(out, ioc, p), ioc.get_executor(), p);
  std::thread foreign([op] { op->complete(); });  // completed from a thread that is not ioc's
  foreign.join();
  CHECK_FALSE(out.done);
  REQUIRE(ioc.poll_one() == 1);
  require_completed(out, {}, 7);
}

TEST_CASE("the state is freed before the handler runs, so the handler can start the next operation",
          "[runtime][async_op][cpu]") {
  asio::io_context ioc;
  probe p;
  one_block block;
  outcome first, second;
  test_waiter* next = nullptr;
  // The first handler starts the second operation; that fails with bad_alloc if the first state
  // still held the block.
  auto start_next = [&] {
    next = start(asio::bind_allocator(one_block_allocator<void>(block), record(second, ioc, p)), ioc.get_executor(),
                 p, std::make_shared<int>(8));
  };
  test_waiter* op = start(asio::bind_allocator(one_block_allocator<void>(block), record(first, ioc, p, start_next)),
                          ioc.get_executor(), p);
  CHECK(block.in_use);
  op->complete();
  REQUIRE(ioc.poll_one() == 1);
  require_completed(first, {}, 7);
  REQUIRE(next != nullptr);
  CHECK(static_cast<void*>(next) == static_cast<void*>(op));  // the same memory, reused
  CHECK(block.allocations == 2);
  next->complete();
  REQUIRE(ioc.poll_one() == 1);
  require_completed(second, {}, 8);
  CHECK_FALSE(block.in_use);
  CHECK(p.live == 0);
}

TEST_CASE("a waiting operation keeps its executor's io_context from running out of work", "[runtime][async_op][cpu]") {
  asio::io_context ioc;
  probe p;
  outcome out;
  test_waiter* op = start([&](std::error_code, std::shared_ptr<int>) { out.done = true; }, ioc.get_executor(), p);
  CHECK(ioc.poll() == 0);
  CHECK_FALSE(ioc.stopped());  // the work guard counts as outstanding work
  op->complete();
  CHECK(ioc.poll() == 1);
  CHECK(out.done);
  CHECK(ioc.stopped());  // the guard went with the completion: nothing is left
  ioc.restart();

  // The same, with run() on this thread and the completion from another one.
  outcome later;
  test_waiter* waiting =
      start([&](std::error_code, std::shared_ptr<int>) { later.done = true; }, ioc.get_executor(), p);
  std::thread foreign([waiting] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    waiting->complete();
  });
  ioc.run();  // returns only once the handler has run
  foreign.join();
  CHECK(later.done);
  CHECK(p.live == 0);
}

TEST_CASE("cancellation through the handler's slot reaches the operation once, and the slot is left empty",
          "[runtime][async_op][cpu]") {
  asio::io_context ioc;
  probe p;
  asio::cancellation_signal signal;
  outcome out;
  start(asio::bind_cancellation_slot(signal.slot(), record(out, ioc, p)), ioc.get_executor(), p);
  REQUIRE(signal.slot().has_handler());
  signal.emit(asio::cancellation_type::none);  // not a request: ignored
  CHECK(p.cancels == 0);
  signal.emit(asio::cancellation_type::partial);
  CHECK(p.cancels == 1);
  CHECK_FALSE(out.done);  // the operation scheduled its completion; nothing ran inline
  REQUIRE(ioc.poll_one() == 1);
  require_completed(out, std::make_error_code(std::errc::operation_canceled), 7);
  CHECK_FALSE(signal.slot().has_handler());  // disconnected before the handler ran
  signal.emit(asio::cancellation_type::terminal);  // reaches nothing
  CHECK(p.cancels == 1);
  CHECK(p.live == 0);
}

TEST_CASE("a completion that its executor drops unrun frees the state and the arguments", "[runtime][async_op][cpu]") {
  probe p;
  asio::cancellation_signal signal;
  bool ran = false;
  auto value = std::make_shared<int>(7);
  std::weak_ptr<int> watch = value;
  {
    asio::io_context ioc;
    test_waiter* op = start(asio::bind_cancellation_slot(signal.slot(),
                                                         [&ran](std::error_code, std::shared_ptr<int>) { ran = true; }),
                            ioc.get_executor(), p, std::move(value));
    op->complete();
    CHECK(p.live == 1);
  }  // destroyed with the completion still queued
  CHECK_FALSE(ran);
  CHECK(p.live == 0);
  CHECK(watch.expired());  // what the handler would have received was released
  CHECK_FALSE(signal.slot().has_handler());
}

TEST_CASE("post_completion delivers its arguments on the handler's executor, never inline", "[runtime][async_op][cpu]") {
  asio::io_context default_context, handler_context;
  outcome out;
  post_completion(asio::bind_executor(handler_context,
                                      [&](std::error_code ec, int v) {
                                        out.done = true;
                                        out.ec = ec;
                                        out.value = v;
                                        out.on_expected_context =
                                            handler_context.get_executor().running_in_this_thread();
                                      }),
                  default_context.get_executor(), std::make_error_code(std::errc::io_error), 42);
  CHECK_FALSE(out.done);
  CHECK(default_context.poll() == 0);
  REQUIRE(handler_context.poll_one() == 1);
  REQUIRE(out.done);
  CHECK(out.ec == std::errc::io_error);
  CHECK(out.value == 42);
  CHECK(out.on_expected_context);

  // Without an associated executor: the default one.
  default_context.restart();  // the poll above found no work and stopped it
  bool ran = false;
  post_completion([&ran](std::error_code) { ran = true; }, default_context.get_executor(), std::error_code());
  CHECK_FALSE(ran);
  REQUIRE(default_context.poll_one() == 1);
  CHECK(ran);
}
