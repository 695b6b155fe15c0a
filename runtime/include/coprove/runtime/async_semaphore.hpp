// A counting and weighted asynchronous semaphore: paces the dispatcher (one unit per GPU-queue
// place) and the memory budget (one unit per byte). Waiters are served strictly FIFO, a large
// request at the head is never overtaken, and every permit returns its units when destroyed.
#pragma once

#include "coprove/runtime/detail/semaphore_core.hpp"
#include "coprove/runtime/error.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/recycling_allocator.hpp>

#include <cstddef>
#include <memory>
#include <system_error>
#include <type_traits>
#include <utility>

namespace coprove::runtime {

namespace detail {
template <class Handler>
class semaphore_acquire_op;
}

/// Units held from an async_semaphore; returns them when destroyed (RAII). Movable, not copyable.
class [[nodiscard]] permit {
 public:
  permit() noexcept = default;
  permit(permit&& other) noexcept
      : core_(std::exchange(other.core_, nullptr)), units_(std::exchange(other.units_, 0)) {}
  permit& operator=(permit&& other) noexcept {
    if (this != &other) {
      release();
      core_ = std::exchange(other.core_, nullptr);
      units_ = std::exchange(other.units_, 0);
    }
    return *this;
  }
  permit(const permit&) = delete;
  permit& operator=(const permit&) = delete;
  ~permit() { release(); }

  /// Units held.
  std::size_t units() const noexcept { return units_; }
  /// True when units() > 0.
  explicit operator bool() const noexcept { return units_ > 0; }

  /// Returns every unit to the semaphore (may admit waiters; they resume on their executors).
  void release() noexcept {
    detail::semaphore_core* core = std::exchange(core_, nullptr);
    const std::size_t n = std::exchange(units_, 0);
    if (core && n > 0) core->release_held(n);
  }
  /// Returns n of the units; throws std::invalid_argument when n > units().
  void release(std::size_t n);
  /// Moves n units into a new permit of the same semaphore; throws std::invalid_argument when
  /// n > units().
  [[nodiscard]] permit split(std::size_t n);
  /// Forgets the units without returning them (tests and diagnostics only: they are lost).
  void detach() noexcept {
    units_ = 0;
    core_ = nullptr;
  }

 private:
  friend class async_semaphore;
  template <class Handler>
  friend class detail::semaphore_acquire_op;

  permit(detail::semaphore_core* core, std::size_t units) noexcept : core_(core), units_(units) {}

  // Units in use keep the core alive: no reference count is needed.
  detail::semaphore_core* core_ = nullptr;
  std::size_t units_ = 0;
};

namespace detail {

// A completion decided at once: the handler with its arguments, run by the executor.
template <class Handler>
struct bound_acquire_completion {
  Handler handler;
  std::error_code ec;
  permit held;
  void operator()() { std::move(handler)(ec, std::move(held)); }
};

// The operation state of one async_acquire, allocated with the handler's associated allocator.
// It keeps work on the handler's executor while it waits and completes there, freeing itself
// before the handler runs.
template <class Handler>
class semaphore_acquire_op final : public semaphore_waiter {
 public:
  using executor_type = boost::asio::associated_executor_t<Handler, boost::asio::any_io_executor>;
  using allocator_type = typename std::allocator_traits<boost::asio::associated_allocator_t<
      Handler, boost::asio::recycling_allocator<void>>>::template rebind_alloc<semaphore_acquire_op>;

  static void start(semaphore_core* core,
                    const boost::asio::any_io_executor& default_executor, Handler&& handler,
                    std::size_t units) {
    allocator_type alloc(
        boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
    semaphore_acquire_op* self = std::allocator_traits<allocator_type>::allocate(alloc, 1);
    try {
      std::allocator_traits<allocator_type>::construct(alloc, self, core, default_executor,
                                                       std::move(handler), units);
    } catch (...) {
      std::allocator_traits<allocator_type>::deallocate(alloc, self, 1);
      throw;
    }
    auto slot = boost::asio::get_associated_cancellation_slot(self->handler_);
    if (slot.is_connected()) {
      self->slot_connected_ = true;
      slot.template emplace<cancel_handler>(self);
    }
    core->start(self);
  }

  semaphore_acquire_op(semaphore_core* core,
                       const boost::asio::any_io_executor& default_executor, Handler&& handler,
                       std::size_t units)
      : semaphore_waiter(&schedule_completion, core, units),
        handler_(std::move(handler)),
        work_(boost::asio::get_associated_executor(handler_, default_executor)) {}

 private:
  struct cancel_handler {
    semaphore_waiter* waiter;
    void operator()(boost::asio::cancellation_type_t type) const noexcept {
      if (type != boost::asio::cancellation_type::none) waiter->core->cancel(waiter);
    }
  };

  struct completion {
    semaphore_acquire_op* self;
    void operator()() const { self->complete(); }
  };

  static void schedule_completion(semaphore_waiter* base) noexcept {
    auto* self = static_cast<semaphore_acquire_op*>(base);
    auto alloc = boost::asio::get_associated_allocator(self->handler_);
    boost::asio::prefer(boost::asio::require(self->work_.get_executor(), boost::asio::execution::blocking.never),
                        boost::asio::execution::allocator(alloc))
        .execute(completion{self});
  }

  // Runs on the handler's executor.
  void complete() {
    if (slot_connected_) boost::asio::get_associated_cancellation_slot(handler_).clear();
    std::error_code ec = result;
    const bool give_back = cancel_requested.load(std::memory_order_acquire);
    permit held;
    if (granted && !result) held = permit(core, units);  // the units keep the core alive
    semaphore_core* const pinned = held ? nullptr : core;
    Handler handler(std::move(handler_));
    boost::asio::executor_work_guard<executor_type> work(std::move(work_));
    allocator_type alloc(
        boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
    std::allocator_traits<allocator_type>::destroy(alloc, this);
    std::allocator_traits<allocator_type>::deallocate(alloc, this, 1);
    if (pinned) pinned->unpin();
    if (give_back && held) {
      held.release();
      ec = operation_aborted();
    }
    std::move(handler)(ec, std::move(held));
  }

  Handler handler_;
  boost::asio::executor_work_guard<executor_type> work_;
  bool slot_connected_ = false;
};

}  // namespace detail

/// A counting (units = 1) or weighted (units = n) asynchronous semaphore. Thread-safe: every
/// member may be called from any thread.
///
/// Fairness: strictly FIFO. A request that cannot be met waits at the back of the queue; a
/// request at the head blocks every later one, however small (no starvation of large requests).
/// try_acquire never jumps the queue.
/// Cancellation: through the completion handler's associated cancellation slot (any type). A
/// waiting acquire leaves the queue and completes with operation_aborted; if the units were
/// already granted but the handler has not run yet, they are given back and the completion is
/// operation_aborted too. No unit is ever lost or created.
/// Executor: a waiter resumes on its handler's associated executor (the semaphore's executor
/// when it has none), always through post, never inline in release() or async_acquire().
class async_semaphore {
 public:
  using executor_type = boost::asio::any_io_executor;

  /// A semaphore of `capacity` units (capacity > 0, else std::invalid_argument); `ex` runs the
  /// handlers that have no associated executor.
  async_semaphore(executor_type ex, std::size_t capacity);
  async_semaphore(async_semaphore&& other) noexcept
      : executor_(other.executor_), core_(std::exchange(other.core_, nullptr)) {}
  async_semaphore& operator=(async_semaphore&&) = delete;
  async_semaphore(const async_semaphore&) = delete;
  async_semaphore& operator=(const async_semaphore&) = delete;
  /// Completes every waiter with operation_aborted. Outstanding permits stay valid.
  ~async_semaphore();

  /// Waits for `units` units; completes with a permit holding them. Errors:
  /// errc::invalid_argument (units == 0), errc::exceeds_capacity (units > capacity(), also when
  /// set_capacity later drops below a waiting request), operation_aborted (cancelled, or the
  /// semaphore was destroyed).
  template <boost::asio::completion_token_for<void(std::error_code, permit)> Token =
                boost::asio::default_completion_token_t<executor_type>>
  auto async_acquire(std::size_t units,
                     Token&& token = boost::asio::default_completion_token_t<executor_type>()) {
    return boost::asio::async_initiate<Token, void(std::error_code, permit)>(
        initiate_acquire{core_, executor_}, token, units);
  }

  /// The units at once if they are available and nobody waits, else an empty permit. units == 0
  /// throws std::invalid_argument.
  [[nodiscard]] permit try_acquire(std::size_t units);

  /// Returns units acquired earlier and detached from their permit; throws std::invalid_argument
  /// (changing nothing) when more units would be returned than are in use.
  void release(std::size_t units);

  /// Changes the capacity (> 0, else std::invalid_argument). Lowering it below the units in use is
  /// allowed: available() stays 0 until enough are released. Waiters asking for more than the new
  /// capacity complete with errc::exceeds_capacity; raising it admits waiters.
  void set_capacity(std::size_t units);

  std::size_t capacity() const;
  /// Units that can be acquired now (capacity minus units in use, 0 when over capacity).
  std::size_t available() const;
  /// Units held by permits (or acquired and detached).
  std::size_t in_use() const;
  /// Number of queued async_acquire operations.
  std::size_t waiters() const;

  executor_type get_executor() const { return executor_; }

 private:
  struct initiate_acquire {
    detail::semaphore_core* core;
    executor_type executor;
    template <class Handler>
    void operator()(Handler&& handler, std::size_t units) const {
      std::error_code ec;
      if (core->try_complete_now(units, ec)) {
        // Decided at once: no operation state, just the posted completion.
        // Submitted straight to the handler's executor, never run inline (blocking.never); the
        // executor counts it as outstanding work until it has run.
        permit p = ec ? permit() : permit(core, units);
        auto ex = boost::asio::get_associated_executor(handler, executor);
        auto alloc = boost::asio::get_associated_allocator(handler);
        boost::asio::prefer(boost::asio::require(ex, boost::asio::execution::blocking.never),
                            boost::asio::execution::allocator(alloc))
            .execute(detail::bound_acquire_completion<std::decay_t<Handler>>{
                std::forward<Handler>(handler), ec, std::move(p)});
        return;
      }
      using op = detail::semaphore_acquire_op<std::decay_t<Handler>>;
      std::decay_t<Handler> h(std::forward<Handler>(handler));
      op::start(core, executor, std::move(h), units);
    }
  };

  executor_type executor_;
  detail::semaphore_core* core_;  // deleted by whoever drops its last use (see semaphore_core)
};

}  // namespace coprove::runtime
