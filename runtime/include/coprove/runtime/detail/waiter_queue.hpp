// The FIFO of waiting operations that a core (the semaphore's, the completion signal's) keeps
// under its mutex: intrusive, so that queueing allocates nothing and a cancelled waiter leaves
// from the middle in constant time.
#pragma once

#include <cstddef>

namespace coprove::runtime::detail {

/// An intrusive FIFO of `Waiter`s, which carry `Waiter* prev, *next` and `bool queued`. Not
/// thread-safe: the owner's lock guards it. A waiter that leaves has prev and next cleared, so
/// that its `next` can chain it into the owner's list of completions to schedule.
template <class Waiter>
class waiter_queue {
 public:
  waiter_queue() = default;
  waiter_queue(const waiter_queue&) = delete;
  waiter_queue& operator=(const waiter_queue&) = delete;

  /// The oldest waiter, or null.
  Waiter* front() const noexcept { return head_; }
  bool empty() const noexcept { return head_ == nullptr; }
  std::size_t size() const noexcept { return size_; }

  void push_back(Waiter* w) noexcept {
    w->prev = tail_;
    w->next = nullptr;
    if (tail_) tail_->next = w; else head_ = w;
    tail_ = w;
    w->queued = true;
    ++size_;
  }

  /// Unlinks `w`, which must be queued here.
  void erase(Waiter* w) noexcept {
    if (w->prev) w->prev->next = w->next; else head_ = w->next;
    if (w->next) w->next->prev = w->prev; else tail_ = w->prev;
    w->prev = w->next = nullptr;
    w->queued = false;
    --size_;
  }

  /// Empties the queue; returns its waiters, oldest first, chained through `next`.
  Waiter* take_all() noexcept {
    Waiter* all = head_;
    for (Waiter* w = head_; w; w = w->next) {
      w->prev = nullptr;
      w->queued = false;
    }
    head_ = tail_ = nullptr;
    size_ = 0;
    return all;
  }

 private:
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace coprove::runtime::detail
