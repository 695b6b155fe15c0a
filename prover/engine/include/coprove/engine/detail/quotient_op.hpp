// The operation state of one compute_backend::async_quotient: the caller's handler, allocated with
// its associated allocator, and a work guard on its associated executor. A backend completes it
// from whatever thread finds the work done (a worker thread, a completion bridge); the completion
// is then submitted to the handler's executor with blocking.never, and there the state is freed
// before the handler runs. The backend sees only quotient_op_base, not the handler's type.
#pragma once

#include <coprove/engine/quotient_task.hpp>

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/recycling_allocator.hpp>

#include <memory>
#include <system_error>
#include <type_traits>
#include <utility>

namespace coprove::engine::detail {

// What associated_executor answers for a handler that has no executor of its own.
struct no_associated_executor {};

template <class Handler>
inline constexpr bool has_associated_executor_v =
    !std::is_same_v<boost::asio::associated_executor_t<Handler, no_associated_executor>, no_associated_executor>;

class quotient_op_base {
 public:
  // Records the outcome and submits the handler to its executor; never runs it here. Once only.
  void complete(std::error_code ec, quotient_result&& result) noexcept {
    ec_ = ec;
    result_ = std::move(result);
    schedule_(this);
  }

 protected:
  using schedule_fn = void (*)(quotient_op_base*) noexcept;
  explicit quotient_op_base(schedule_fn fn) noexcept : schedule_(fn) {}
  quotient_op_base(const quotient_op_base&) = delete;
  quotient_op_base& operator=(const quotient_op_base&) = delete;
  ~quotient_op_base() = default;

  std::error_code ec_;
  quotient_result result_;

 private:
  schedule_fn schedule_;
};

template <class Handler>
class quotient_op final : public quotient_op_base {
  static_assert(has_associated_executor_v<Handler>,
                "async_quotient needs a handler with an associated executor (use_awaitable, use_future, or "
                "bind_executor around a callback): a backend has none of its own to run it on");

 public:
  using executor_type = boost::asio::associated_executor_t<Handler>;
  using allocator_type = typename std::allocator_traits<boost::asio::associated_allocator_t<
      Handler, boost::asio::recycling_allocator<void>>>::template rebind_alloc<quotient_op>;

  static quotient_op_base* create(Handler&& handler) {
    allocator_type alloc(boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
    quotient_op* self = std::allocator_traits<allocator_type>::allocate(alloc, 1);
    try {
      std::allocator_traits<allocator_type>::construct(alloc, self, std::move(handler));
    } catch (...) {
      std::allocator_traits<allocator_type>::deallocate(alloc, self, 1);
      throw;
    }
    return self;
  }

  explicit quotient_op(Handler&& handler)
      : quotient_op_base(&schedule),
        handler_(std::move(handler)),
        work_(boost::asio::get_associated_executor(handler_)) {}

 private:
  // What the executor holds: owns the state until it runs; dropped unrun (its executor shut
  // down), it frees the state and the handler without calling it.
  class invoker {
   public:
    explicit invoker(quotient_op* op) noexcept : op_(op) {}
    invoker(invoker&& other) noexcept : op_(std::exchange(other.op_, nullptr)) {}
    invoker& operator=(invoker&&) = delete;
    ~invoker() {
      if (quotient_op* op = std::exchange(op_, nullptr)) op->destroy(op->allocator());
    }

    // Runs on the handler's executor.
    void operator()() {
      quotient_op* op = std::exchange(op_, nullptr);
      Handler handler(std::move(op->handler_));
      boost::asio::executor_work_guard<executor_type> work(std::move(op->work_));
      const std::error_code ec = op->ec_;
      quotient_result result = std::move(op->result_);
      op->destroy(allocator_type(
          boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>())));
      std::move(handler)(ec, std::move(result));
    }

   private:
    quotient_op* op_;
  };

  static void schedule(quotient_op_base* base) noexcept {
    auto* self = static_cast<quotient_op*>(base);
    const auto alloc = boost::asio::get_associated_allocator(self->handler_);
    boost::asio::prefer(boost::asio::require(self->work_.get_executor(), boost::asio::execution::blocking.never),
                        boost::asio::execution::allocator(alloc))
        .execute(invoker{self});
  }

  allocator_type allocator() const noexcept {
    return allocator_type(boost::asio::get_associated_allocator(handler_, boost::asio::recycling_allocator<void>()));
  }

  void destroy(allocator_type alloc) noexcept {
    std::allocator_traits<allocator_type>::destroy(alloc, this);
    std::allocator_traits<allocator_type>::deallocate(alloc, this, 1);
  }

  Handler handler_;
  boost::asio::executor_work_guard<executor_type> work_;
};

}  // namespace coprove::engine::detail
