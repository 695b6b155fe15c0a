// The waiting checkout of pinned::pool. The pool's bookkeeping (pool.cpp) sees only checkout_op,
// the result it is given and the pool it came from; the template keeps the caller's handler,
// through runtime::detail::async_op, which completes it on the handler's executor.
#pragma once

#include "coprove/pinned/lease.hpp"
#include "coprove/runtime/detail/async_op.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <system_error>
#include <tuple>
#include <utility>

namespace coprove::pinned::detail {

class pool_core;

class checkout_op : public runtime::detail::pending_op {
 public:
  /// Hands (ec, l) to the handler: schedules it on the handler's executor, never inline. Called
  /// once, by the pool, with no lock held.
  void complete(std::error_code ec, lease l) noexcept {
    result_ = ec;
    lease_ = std::move(l);
    schedule();
  }

  /// The handler's cancellation slot fired: a queued checkout, or one whose buffer is being
  /// allocated, completes with operation_aborted; otherwise nothing happens (pool.cpp).
  void cancel() noexcept;

 protected:
  checkout_op(schedule_fn fn, std::weak_ptr<pool_core> core) noexcept : pending_op(fn), core_(std::move(core)) {}
  ~checkout_op() = default;

  std::tuple<std::error_code, lease> take_result() noexcept { return {result_, std::move(lease_)}; }

 private:
  std::weak_ptr<pool_core> core_;
  std::error_code result_;
  lease lease_;
};

template <class Handler>
class checkout_op_impl final
    : public runtime::detail::async_op<checkout_op_impl<Handler>, checkout_op, Handler, boost::asio::any_io_executor> {
  using base = runtime::detail::async_op<checkout_op_impl<Handler>, checkout_op, Handler, boost::asio::any_io_executor>;

 public:
  checkout_op_impl(Handler&& handler, const boost::asio::any_io_executor& default_executor,
                   std::weak_ptr<pool_core> core)
      : base(std::move(handler), default_executor, std::move(core)) {}

  std::tuple<std::error_code, lease> completion_arguments() noexcept { return this->take_result(); }
};

}  // namespace coprove::pinned::detail
