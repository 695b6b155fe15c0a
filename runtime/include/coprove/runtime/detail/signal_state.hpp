// The shared state of a completion_signal: the one-shot result and an intrusive list of waiters,
// under a mutex. Completions are scheduled (posted to each waiter's executor) after the mutex is
// dropped.
#pragma once

#include <memory>
#include <mutex>
#include <system_error>

namespace coprove::runtime::detail {

struct signal_waiter {
  using schedule_fn = void (*)(signal_waiter*) noexcept;
  explicit signal_waiter(schedule_fn fn) noexcept : schedule(fn) {}

  schedule_fn schedule;  // posts the completion to the waiter's executor; called without the lock
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
  std::size_t waiter_count_ = 0;
  signal_waiter* head_ = nullptr;
  signal_waiter* tail_ = nullptr;
};

}  // namespace coprove::runtime::detail
