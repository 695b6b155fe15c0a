// The operation state shared by coprove's hand-written asynchronous operations (the semaphore's
// acquire, the completion signal's wait, the pinned pool's checkout). Each of them parks a caller's
// handler in a non-template core (a mutex-guarded queue) and is completed later, often from a
// foreign thread. What they must all get right lives here, once:
// - the handler's executor keeps outstanding work (a work guard) while the operation waits;
// - the completion is submitted to that executor with blocking.never, never run inline on the
//   thread that completes it, and the handler's allocator serves the state;
// - the handler's cancellation slot is connected on start and disconnected before it runs;
// - the state is freed before the handler runs, so the handler may start the next operation;
// - the core sees only pending_op, one function pointer, not the handler's type.
#pragma once

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/recycling_allocator.hpp>

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace coprove::runtime::detail {

/// The type-erased face of a waiting operation, all that a non-template core holds.
class pending_op {
 public:
  /// Submits the completion to the handler's associated executor; never runs it inline. Callable
  /// from any thread, and should be called with no lock held.
  void schedule() noexcept { schedule_(this); }

 protected:
  using schedule_fn = void (*)(pending_op*) noexcept;
  explicit pending_op(schedule_fn fn) noexcept : schedule_(fn) {}
  pending_op(const pending_op&) = delete;
  pending_op& operator=(const pending_op&) = delete;
  ~pending_op() = default;

 private:
  schedule_fn schedule_;
};

/// Submits `f` to `ex` as a separate piece of work (blocking.never), allocated with `alloc`.
template <class Executor, class Allocator, class Function>
void execute_never_inline(const Executor& ex, const Allocator& alloc, Function&& f) {
  boost::asio::prefer(boost::asio::require(ex, boost::asio::execution::blocking.never),
                      boost::asio::execution::allocator(alloc))
      .execute(std::forward<Function>(f));
}

/// Completes `handler` with `args` on its associated executor (`default_executor` when it has
/// none), never inline: for an operation decided at once, which needs no state of its own.
template <class Handler, class DefaultExecutor, class... Args>
void post_completion(Handler&& handler, const DefaultExecutor& default_executor, Args&&... args) {
  struct bound_completion {
    std::decay_t<Handler> handler;
    std::tuple<std::decay_t<Args>...> args;
    void operator()() { std::apply(std::move(handler), std::move(args)); }
  };
  const auto ex = boost::asio::get_associated_executor(handler, default_executor);
  const auto alloc = boost::asio::get_associated_allocator(handler);
  execute_never_inline(ex, alloc,
                       bound_completion{std::forward<Handler>(handler), {std::forward<Args>(args)...}});
}

/// The state of one waiting operation: `Base` (what the core sees, derived from pending_op) plus
/// the caller's handler and a work guard on its executor.
///
/// `Derived` (final, derived from this) provides
/// - `completion_arguments()`: the handler's arguments as a std::tuple. It runs once, on the
///   handler's executor, after the cancellation slot is disconnected and just before the state is
///   freed; it also runs, its result discarded, when the executor drops the completion unrun (a
///   destroyed io_context), so that a permit or lease it would have handed over goes back;
/// - `cancel()` (noexcept): what a cancellation request of any type does. It runs on the thread
///   that emits the cancellation; it must not complete the operation inline (schedule() instead).
///
/// Flow: create() allocates the state with the handler's associated allocator and connects the
/// cancellation slot; the core holds it as a pending_op and calls schedule() once, from any
/// thread; the handler's executor then runs the completion, which frees the state and calls the
/// handler there.
template <class Derived, class Base, class Handler, class DefaultExecutor>
class async_op : public Base {
  static_assert(std::is_base_of_v<pending_op, Base>, "the core's view of an operation is a pending_op");

 public:
  using handler_type = Handler;
  using executor_type = boost::asio::associated_executor_t<Handler, DefaultExecutor>;
  using allocator_type = typename std::allocator_traits<boost::asio::associated_allocator_t<
      Handler, boost::asio::recycling_allocator<void>>>::template rebind_alloc<Derived>;

  /// A new Derived(handler, default_executor, args...) in the handler's allocator, hooked into the
  /// handler's cancellation slot when it has one. The caller hands it to its core next.
  template <class... Args>
  static Derived* create(Handler&& handler, const DefaultExecutor& default_executor, Args&&... args) {
    allocator_type alloc(
        boost::asio::get_associated_allocator(handler, boost::asio::recycling_allocator<void>()));
    Derived* self = std::allocator_traits<allocator_type>::allocate(alloc, 1);
    try {
      std::allocator_traits<allocator_type>::construct(alloc, self, std::move(handler), default_executor,
                                                       std::forward<Args>(args)...);
    } catch (...) {
      std::allocator_traits<allocator_type>::deallocate(alloc, self, 1);
      throw;
    }
    auto slot = boost::asio::get_associated_cancellation_slot(self->handler_);
    if (slot.is_connected()) {
      self->slot_connected_ = true;
      slot.template emplace<cancellation_hook>(self);
    }
    return self;
  }

 protected:
  /// `base_args` go to Base after the schedule function.
  template <class... BaseArgs>
  async_op(Handler&& handler, const DefaultExecutor& default_executor, BaseArgs&&... base_args)
      : Base(&schedule_completion, std::forward<BaseArgs>(base_args)...),
        handler_(std::move(handler)),
        work_(boost::asio::get_associated_executor(handler_, default_executor)) {}
  ~async_op() = default;

 private:
  struct cancellation_hook {
    // Asio constructs the hook with parentheses; clang before 16 has no parenthesized aggregate
    // initialization (P0960), so the fuzz build needs the constructor.
    explicit cancellation_hook(Derived* o) noexcept : op(o) {}
    Derived* op;
    void operator()(boost::asio::cancellation_type_t type) const noexcept {
      if (type != boost::asio::cancellation_type::none) op->cancel();
    }
  };

  // What the executor holds: owns the state until it runs; dropped unrun, it frees the state.
  class completion {
   public:
    explicit completion(Derived* op) noexcept : op_(op) {}
    completion(completion&& other) noexcept : op_(std::exchange(other.op_, nullptr)) {}
    completion& operator=(completion&&) = delete;
    ~completion() {
      if (Derived* op = std::exchange(op_, nullptr)) (void)finish(op);  // runs no handler
    }
    void operator()() {
      auto taken = finish(std::exchange(op_, nullptr));
      std::apply(std::move(taken.handler), std::move(taken.arguments));
    }

   private:
    Derived* op_;
  };

  static void schedule_completion(pending_op* base) noexcept {
    Derived* self = static_cast<Derived*>(base);
    execute_never_inline(self->work_.get_executor(), boost::asio::get_associated_allocator(self->handler_),
                         completion(self));
  }

  // Disconnects the cancellation hook, takes the handler and its arguments out and frees the
  // state. The work guard lives on in the caller's frame until the handler has run.
  static auto finish(Derived* self) {
    if (self->slot_connected_) boost::asio::get_associated_cancellation_slot(self->handler_).clear();
    auto args = self->completion_arguments();
    struct taken {
      Handler handler;
      decltype(args) arguments;
      boost::asio::executor_work_guard<executor_type> work;
    };
    taken out{std::move(self->handler_), std::move(args), std::move(self->work_)};
    allocator_type alloc(
        boost::asio::get_associated_allocator(out.handler, boost::asio::recycling_allocator<void>()));
    std::allocator_traits<allocator_type>::destroy(alloc, self);
    std::allocator_traits<allocator_type>::deallocate(alloc, self, 1);
    return out;
  }

  Handler handler_;
  boost::asio::executor_work_guard<executor_type> work_;
  bool slot_connected_ = false;
};

}  // namespace coprove::runtime::detail
