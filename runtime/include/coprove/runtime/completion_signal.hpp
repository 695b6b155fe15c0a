// A one-shot completion signal: set once, from any thread, with an optional error; awaited by any
// number of asynchronous waiters. The CUDA completion bridge and the host backend set these when
// device work finishes.
#pragma once

#include "coprove/runtime/detail/async_op.hpp"
#include "coprove/runtime/detail/signal_state.hpp"
#include "coprove/runtime/error.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/system_executor.hpp>

#include <memory>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>

namespace coprove::runtime {

namespace detail {

// The state of one async_wait; async_op keeps work on the handler's executor, completes there and
// frees the state before the handler runs.
template <class Handler>
class signal_wait_op final
    : public async_op<signal_wait_op<Handler>, signal_waiter, Handler, boost::asio::system_executor> {
  using base = async_op<signal_wait_op<Handler>, signal_waiter, Handler, boost::asio::system_executor>;

 public:
  signal_wait_op(Handler&& handler, const boost::asio::system_executor& default_executor,
                 const std::shared_ptr<signal_state>& state)
      : base(std::move(handler), default_executor, state) {}

  std::tuple<std::error_code> completion_arguments() noexcept { return {this->result}; }
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
      state->start(detail::signal_wait_op<std::decay_t<Handler>>::create(std::move(h), {}, state));
    }
  };

  std::shared_ptr<detail::signal_state> state_;
};

}  // namespace coprove::runtime
