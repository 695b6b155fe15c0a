// The operation state of one compute_backend::async_quotient, on the runtime's shared operation
// state (runtime/detail/async_op.hpp): the caller's handler, allocated with its associated
// allocator, and a work guard on its associated executor. A backend completes it from whatever
// thread finds the work done (a worker thread, a completion bridge); the completion is then
// submitted to the handler's executor with blocking.never, and there the state is freed before the
// handler runs. The backend sees only quotient_op_base, not the handler's type.
#pragma once

#include <coprove/engine/quotient_task.hpp>
#include <coprove/runtime/detail/async_op.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>

#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>

namespace coprove::engine::detail {

// What associated_executor answers for a handler that has no executor of its own.
struct no_associated_executor {};

template <class Handler>
inline constexpr bool has_associated_executor_v =
    !std::is_same_v<boost::asio::associated_executor_t<Handler, no_associated_executor>, no_associated_executor>;

class quotient_op_base : public runtime::detail::pending_op {
 public:
  // Records the outcome and submits the handler to its executor; never runs it here. Once only.
  void complete(std::error_code ec, quotient_result&& result) noexcept {
    ec_ = ec;
    result_ = std::move(result);
    schedule();
  }

 protected:
  explicit quotient_op_base(schedule_fn fn) noexcept : pending_op(fn) {}
  ~quotient_op_base() = default;

  std::error_code ec_;
  quotient_result result_;
};

template <class Handler>
class quotient_op final
    : public runtime::detail::async_op<quotient_op<Handler>, quotient_op_base, Handler, boost::asio::any_io_executor> {
  static_assert(has_associated_executor_v<Handler>,
                "async_quotient needs a handler with an associated executor (use_awaitable, use_future, or "
                "bind_executor around a callback): a backend has none of its own to run it on");
  using op_base = runtime::detail::async_op<quotient_op, quotient_op_base, Handler, boost::asio::any_io_executor>;

 public:
  // The default executor is never used: the handler has one of its own (checked above).
  static quotient_op_base* create(Handler&& handler) { return op_base::create(std::move(handler), {}); }

  quotient_op(Handler&& handler, const boost::asio::any_io_executor& default_executor)
      : op_base(std::move(handler), default_executor) {}

  std::tuple<std::error_code, quotient_result> completion_arguments() {
    return {this->ec_, std::move(this->result_)};
  }
  // Device work is not cancellable once started: the buffers belong to the device until it is
  // done, so a cancellation request changes nothing and the operation completes as it would.
  void cancel() noexcept {}
};

}  // namespace coprove::engine::detail
