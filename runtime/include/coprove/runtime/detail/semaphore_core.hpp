// The type-erased, mutex-protected state shared by an async_semaphore, its permits and its
// pending acquire operations. Waiters form an intrusive FIFO list; completions are scheduled
// (posted to the waiter's executor) after the lock is dropped.
//
// Lifetime without reference counting on the hot path: the core lives while its semaphore does,
// while any unit is in use (permits hold a plain pointer) and while a failed or queued operation
// is pinned to it. Whoever drops the last of these deletes it.
#pragma once

#include "coprove/runtime/detail/async_op.hpp"
#include "coprove/runtime/detail/waiter_queue.hpp"

#include <atomic>
#include <cstddef>
#include <mutex>
#include <system_error>

namespace coprove::runtime::detail {

class semaphore_core;

// One pending (or completing) async_acquire. Fields other than `cancel_requested` are guarded by
// the core's mutex while the waiter is queued.
struct semaphore_waiter : pending_op {
  semaphore_waiter(schedule_fn fn, semaphore_core* c, std::size_t n) noexcept : pending_op(fn), core(c), units(n) {}

  // The handler's cancellation slot fired: see semaphore_core::cancel.
  void cancel() noexcept;

  semaphore_core* core;  // kept alive by this waiter while it is queued or failed (pinned_ops_)
  std::size_t units;
  semaphore_waiter* prev = nullptr;
  semaphore_waiter* next = nullptr;
  bool queued = false;
  bool granted = false;
  std::error_code result;
  std::atomic<bool> cancel_requested{false};  // cancellation arrived after the grant
};

class semaphore_core {
 public:
  explicit semaphore_core(std::size_t capacity) noexcept : capacity_(capacity) {}
  semaphore_core(const semaphore_core&) = delete;
  semaphore_core& operator=(const semaphore_core&) = delete;

  // The fast path of async_acquire: true when the request is decided at once (granted, ec empty,
  // or rejected with ec); false when it has to wait (nothing changed).
  bool try_complete_now(std::size_t units, std::error_code& ec);
  // Grants, rejects or queues the waiter; schedules its completion unless it was queued.
  void start(semaphore_waiter* w);
  // Per-operation cancellation: removes a queued waiter (completes it with operation_aborted) or
  // marks a granted one so that its completion gives the units back.
  void cancel(semaphore_waiter* w) noexcept;
  // A failed operation has completed and no longer refers to the core.
  void unpin() noexcept;
  // Returns units; throws std::invalid_argument when more than are in use would be returned.
  void release(std::size_t units);
  // Returns units held by a permit (never more than are in use).
  void release_held(std::size_t units) noexcept;
  bool try_acquire(std::size_t units);
  void set_capacity(std::size_t units);
  // The semaphore is gone: completes every waiter with operation_aborted; no waiter is admitted
  // afterwards. May delete the core.
  void shut_down() noexcept;

  std::size_t capacity() const;
  std::size_t available() const;
  std::size_t in_use() const;
  std::size_t waiters() const;

 private:
  // Moves grantable waiters from the head into `ready` (a list through `next`).
  void grant_from_head(semaphore_waiter*& ready) noexcept;
  static void schedule_all(semaphore_waiter* ready) noexcept;
  std::size_t available_locked() const noexcept { return capacity_ > in_use_ ? capacity_ - in_use_ : 0; }
  bool unreferenced_locked() const noexcept { return shut_down_ && in_use_ == 0 && pinned_ops_ == 0; }

  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::size_t in_use_ = 0;
  std::size_t pinned_ops_ = 0;  // queued operations, and failed ones not yet completed
  bool shut_down_ = false;
  waiter_queue<semaphore_waiter> queue_;
};

inline void semaphore_waiter::cancel() noexcept { core->cancel(this); }

}  // namespace coprove::runtime::detail
