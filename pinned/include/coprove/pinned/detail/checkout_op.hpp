// The type-erased waiting checkout of pinned::pool: the pool's bookkeeping (pool.cpp) sees only
// this base; the template below keeps the caller's handler, a work guard on its executor and the
// hook into its cancellation slot.
#pragma once

#include "coprove/pinned/lease.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <cstdint>
#include <memory>
#include <system_error>
#include <utility>

namespace coprove::pinned::detail {

class pool_core;

/// Cancels the waiting checkout `id` of `core` (does nothing when it is no longer waiting).
void cancel_checkout(const std::weak_ptr<pool_core>& core, std::uint64_t id) noexcept;

class checkout_op {
 public:
  /// Posts the handler with (ec, l) to its associated executor and destroys this op. Never inline.
  virtual void complete(std::error_code ec, lease l) = 0;
  /// Hooks the op into the handler's cancellation slot (if it has one). Called under the pool lock.
  virtual void install_cancellation(std::weak_ptr<pool_core> core, std::uint64_t id) = 0;
  /// Removes the cancellation hook; called on the thread that emitted the cancellation.
  virtual void clear_cancellation() noexcept = 0;

 protected:
  ~checkout_op() = default;
};

template <class Handler>
class checkout_op_impl final : public checkout_op {
 public:
  using executor_type = boost::asio::associated_executor_t<Handler, boost::asio::any_io_executor>;

  checkout_op_impl(Handler handler, const boost::asio::any_io_executor& fallback_executor)
      : handler_(std::move(handler)),
        work_(boost::asio::get_associated_executor(handler_, fallback_executor)) {}

  void complete(std::error_code ec, lease l) override {
    // Free this op's state before the handler runs (it may start the next checkout).
    auto handler = std::move(handler_);
    auto work = std::move(work_);
    delete this;
    boost::asio::post(work.get_executor(), [handler = std::move(handler), ec, l = std::move(l)]() mutable {
      boost::asio::get_associated_cancellation_slot(handler).clear();
      std::move(handler)(ec, std::move(l));
    });
  }

  void install_cancellation(std::weak_ptr<pool_core> core, std::uint64_t id) override {
    auto slot = boost::asio::get_associated_cancellation_slot(handler_);
    if (!slot.is_connected()) return;
    slot.template emplace<cancel_hook>(std::move(core), id);
  }

  void clear_cancellation() noexcept override { boost::asio::get_associated_cancellation_slot(handler_).clear(); }

 private:
  struct cancel_hook {
    std::weak_ptr<pool_core> core;
    std::uint64_t id;
    void operator()(boost::asio::cancellation_type_t type) {
      using ct = boost::asio::cancellation_type;
      if ((type & (ct::terminal | ct::partial | ct::total)) == ct::none) return;
      // cancel_checkout may destroy this hook (it clears the slot): copy what it needs first.
      auto c = core;
      const auto i = id;
      cancel_checkout(c, i);
    }
  };

  Handler handler_;
  boost::asio::executor_work_guard<executor_type> work_;
};

}  // namespace coprove::pinned::detail
