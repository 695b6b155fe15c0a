// A counting and weighted asynchronous semaphore: paces the dispatcher (one unit per GPU-queue
// place) and the memory budget (one unit per byte). Waiters are served strictly FIFO, a large
// request at the head is never overtaken, and every permit returns its units when destroyed.
#pragma once

#include "coprove/runtime/detail/async_op.hpp"
#include "coprove/runtime/detail/semaphore_core.hpp"
#include "coprove/runtime/error.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <cstddef>
#include <system_error>
#include <tuple>
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

// The state of one waiting async_acquire; async_op keeps work on the handler's executor, completes
// there and frees the state before the handler runs.
template <class Handler>
class semaphore_acquire_op final
    : public async_op<semaphore_acquire_op<Handler>, semaphore_waiter, Handler, boost::asio::any_io_executor> {
  using base = async_op<semaphore_acquire_op<Handler>, semaphore_waiter, Handler, boost::asio::any_io_executor>;

 public:
  semaphore_acquire_op(Handler&& handler, const boost::asio::any_io_executor& default_executor,
                       semaphore_core* core, std::size_t units)
      : base(std::move(handler), default_executor, core, units) {}

  // A grant becomes a permit, unless a cancellation arrived after it: then the units go back and
  // the result is operation_aborted. A failed operation lets go of the core.
  std::tuple<std::error_code, permit> completion_arguments() noexcept {
    std::error_code ec = this->result;
    permit held;
    if (this->granted && !this->result) {
      held = permit(this->core, this->units);  // the units keep the core alive
    } else {
      this->core->unpin();
    }
    if (held && this->cancel_requested.load(std::memory_order_acquire)) {
      held.release();
      ec = operation_aborted();
    }
    return {ec, std::move(held)};
  }
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
        // Decided at once: no operation state, just the completion, never run inline.
        permit p = ec ? permit() : permit(core, units);
        detail::post_completion(std::forward<Handler>(handler), executor, ec, std::move(p));
        return;
      }
      std::decay_t<Handler> h(std::forward<Handler>(handler));
      core->start(detail::semaphore_acquire_op<std::decay_t<Handler>>::create(std::move(h), executor, core, units));
    }
  };

  executor_type executor_;
  detail::semaphore_core* core_;  // deleted by whoever drops its last use (see semaphore_core)
};

}  // namespace coprove::runtime
