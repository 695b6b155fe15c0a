// The shared state of a completion_signal: the one-shot result and an intrusive list of waiters,
// under a mutex. Completions are scheduled (posted to each waiter's executor) after the mutex is
// dropped.
#pragma once

#include "coprove/runtime/detail/async_op.hpp"
#include "coprove/runtime/detail/waiter_queue.hpp"

#include <memory>
#include <mutex>
#include <system_error>

namespace coprove::runtime::detail {

class signal_state;

// One async_wait. The links and the result are guarded by the state's mutex while it is queued.
struct signal_waiter : pending_op {
  signal_waiter(schedule_fn fn, std::weak_ptr<signal_state> s) noexcept : pending_op(fn), state(std::move(s)) {}

  // The handler's cancellation slot fired: see signal_state::cancel.
  void cancel() noexcept;

  std::weak_ptr<signal_state> state;  // a state that is gone has already completed every waiter
  signal_waiter* prev = nullptr;
  signal_waiter* next = nullptr;
  bool queued = false;
  std::error_code result;
};

class signal_state {
 public:
  signal_state() = default;
  signal_state(const signal_state&) = delete;
  signal_state& operator=(const signal_state&) = delete;
  // Nobody can set the signal any more: waiters complete with errc::shut_down.
  ~signal_state();

  // Completes the waiter at once (posted) when set, else queues it.
  void start(signal_waiter* w);
  // Removes a queued waiter and completes it with operation_aborted.
  void cancel(signal_waiter* w) noexcept;
  // Sets the result once; a second call returns errc::already_set.
  std::error_code set(std::error_code result) noexcept;
  bool is_set() const noexcept;
  std::error_code result() const;
  std::size_t waiters() const;

 private:
  static void schedule_all(signal_waiter* ready) noexcept;

  mutable std::mutex mutex_;
  bool set_ = false;
  std::error_code result_;
  waiter_queue<signal_waiter> queue_;
};

inline void signal_waiter::cancel() noexcept {
  if (auto s = state.lock()) s->cancel(this);
}

}  // namespace coprove::runtime::detail
