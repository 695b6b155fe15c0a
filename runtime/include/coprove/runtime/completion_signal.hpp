// A one-shot completion signal: set once, from any thread, with an optional error; awaited by any
// number of asynchronous waiters. The CUDA completion bridge and the host backend set these when
// device work finishes.
#pragma once

#include "coprove/runtime/detail/signal_state.hpp"
#include "coprove/runtime/error.hpp"

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <boost/asio/system_executor.hpp>

#include <memory>
#include <system_error>
#include <type_traits>
#include <utility>

namespace coprove::runtime {

namespace detail {

// The operation state of one async_wait; keeps work on the handler's executor, completes there
// and frees itself before the handler runs.
template <class Handler>
class signal_wait_op final : public signal_waiter {
 public:
  using executor_type = boost::asio::associated_executor_t<Handler, boost::asio::system_executor>;
  using allocator_type = typename std::allocator_traits<boost::asio::associated_allocator_t<
      Handler, boost::asio::recycling_allocator<void>>>::template rebind_alloc<signal_wait_op>;

  static void start(const std::shared_ptr<signal_state>& state, Handler&& handler) {
    allocator_type alloc(
        boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
    signal_wait_op* self = std::allocator_traits<allocator_type>::allocate(alloc, 1);
    try {
      std::allocator_traits<allocator_type>::construct(alloc, self, std::move(handler));
    } catch (...) {
      std::allocator_traits<allocator_type>::deallocate(alloc, self, 1);
      throw;
    }
    auto slot = boost::asio::get_associated_cancellation_slot(self->handler_);
    if (slot.is_connected()) {
      self->slot_connected_ = true;
      slot.template emplace<cancel_handler>(std::weak_ptr<signal_state>(state), self);
    }
    state->start(self);
  }

  explicit signal_wait_op(Handler&& handler)
      : signal_waiter(&schedule_completion),
        handler_(std::move(handler)),
        work_(boost::asio::get_associated_executor(handler_, boost::asio::system_executor())) {}

 private:
  struct cancel_handler {
    std::weak_ptr<signal_state> state;
    signal_waiter* waiter;
    cancel_handler(std::weak_ptr<signal_state> s, signal_waiter* w) : state(std::move(s)), waiter(w) {}
    void operator()(boost::asio::cancellation_type_t type) const noexcept {
      if (type == boost::asio::cancellation_type::none) return;
      // A state that is gone has already completed every waiter.
      if (auto s = state.lock()) s->cancel(waiter);
    }
  };

  struct completion {
    signal_wait_op* self;
    void operator()() const { self->complete(); }
  };

  static void schedule_completion(signal_waiter* base) noexcept {
    auto* self = static_cast<signal_wait_op*>(base);
    auto alloc = boost::asio::get_associated_allocator(self->handler_);
    boost::asio::prefer(boost::asio::require(self->work_.get_executor(), boost::asio::execution::blocking.never),
                        boost::asio::execution::allocator(alloc))
        .execute(completion{self});
  }

  // Runs on the handler's executor.
  void complete() {
    if (slot_connected_) boost::asio::get_associated_cancellation_slot(handler_).clear();
    const std::error_code ec = result;
    Handler handler(std::move(handler_));
    boost::asio::executor_work_guard<executor_type> work(std::move(work_));
    allocator_type alloc(
        boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
    std::allocator_traits<allocator_type>::destroy(alloc, this);
    std::allocator_traits<allocator_type>::deallocate(alloc, this, 1);
    std::move(handler)(ec);
  }

  Handler handler_;
  boost::asio::executor_work_guard<executor_type> work_;
  bool slot_connected_ = false;
};

}  // namespace detail

/// A one-shot signal with an error_code result. A copyable handle: copies share one state.
///
/// Fairness: every waiter completes when the signal is set, in the order they started waiting.
/// Cancellation: through the handler's associated cancellation slot; a cancelled waiter leaves
/// and completes with operation_aborted (the signal is unaffected).
/// Executor: a waiter resumes on its handler's associated executor (the system executor when it
/// has none), always through post, never inline in set() or async_wait().
/// If every handle is destroyed before set(), the waiters complete with errc::shut_down.
class completion_signal {
 public:
  completion_signal();

  /// Sets the result (any thread). A second call changes nothing, returns errc::already_set, and
  /// is logged at error and counted (coprove_completion_signal_double_set_total).
  std::error_code set(std::error_code result = {}) noexcept;
  /// True once set.
  bool is_set() const noexcept;
  /// The result given to set(); an empty error_code before that.
  std::error_code result() const;
  /// Number of waiters not yet completed.
  std::size_t waiters() const;

  /// Completes with the result once set (posted when it is already set).
  template <boost::asio::completion_token_for<void(std::error_code)> Token>
  auto async_wait(Token&& token) {
    return boost::asio::async_initiate<Token, void(std::error_code)>(initiate_wait{state_}, token);
  }

  /// True when both handles share one state.
  friend bool operator==(const completion_signal& a, const completion_signal& b) noexcept {
    return a.state_ == b.state_;
  }

 private:
  struct initiate_wait {
    std::shared_ptr<detail::signal_state> state;
    template <class Handler>
    void operator()(Handler&& handler) const {
      std::decay_t<Handler> h(std::forward<Handler>(handler));
      detail::signal_wait_op<std::decay_t<Handler>>::start(state, std::move(h));
    }
  };

  std::shared_ptr<detail::signal_state> state_;
};

}  // namespace coprove::runtime
