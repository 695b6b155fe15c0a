// The non-template part of async_semaphore: the waiter queue, grants, cancellation and capacity
// changes, all under one mutex; completions are scheduled after the mutex is dropped.
#include "coprove/runtime/async_semaphore.hpp"

#include <stdexcept>
#include <string>

namespace coprove::runtime {
namespace detail {

void semaphore_core::grant_from_head(semaphore_waiter*& ready) noexcept {
  semaphore_waiter* last = ready;
  while (last && last->next) last = last->next;
  while (!queue_.empty() && queue_.front()->units <= available_locked()) {
    semaphore_waiter* w = queue_.front();
    queue_.erase(w);
    in_use_ += w->units;
    w->granted = true;
    --pinned_ops_;  // from here on its units keep the core alive
    if (last) last->next = w; else ready = w;
    last = w;
  }
}

void semaphore_core::schedule_all(semaphore_waiter* ready) noexcept {
  while (ready) {
    semaphore_waiter* next = ready->next;
    ready->next = nullptr;
    ready->schedule();  // may free nothing yet: the op frees itself on its executor
    ready = next;
  }
}

bool semaphore_core::try_complete_now(std::size_t units, std::error_code& ec) {
  std::lock_guard lock(mutex_);
  if (units == 0) {
    ec = make_error_code(errc::invalid_argument);
  } else if (shut_down_) {
    ec = operation_aborted();
  } else if (units > capacity_) {
    ec = make_error_code(errc::exceeds_capacity);
  } else if (queue_.empty() && units <= available_locked()) {
    in_use_ += units;
  } else {
    return false;
  }
  return true;
}

void semaphore_core::start(semaphore_waiter* w) {
  {
    std::lock_guard lock(mutex_);
    if (w->units == 0) {
      w->result = make_error_code(errc::invalid_argument);
    } else if (shut_down_) {
      w->result = operation_aborted();
    } else if (w->units > capacity_) {
      w->result = make_error_code(errc::exceeds_capacity);
    } else if (queue_.empty() && w->units <= available_locked()) {
      in_use_ += w->units;
      w->granted = true;
    } else {
      ++pinned_ops_;
      queue_.push_back(w);
      return;
    }
    if (!w->granted) ++pinned_ops_;  // until its completion has run
  }
  w->schedule();
}

void semaphore_core::unpin() noexcept {
  std::unique_lock lock(mutex_);
  --pinned_ops_;
  const bool last = unreferenced_locked();
  lock.unlock();
  if (last) delete this;
}

void semaphore_core::cancel(semaphore_waiter* w) noexcept {
  semaphore_waiter* ready = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!w->queued) {
      // Already granted (or failed) and its completion is on the way: give the grant back there.
      w->cancel_requested.store(true, std::memory_order_release);
      return;
    }
    queue_.erase(w);
    w->result = operation_aborted();
    ready = w;
    // A cancelled head may have been all that blocked the requests behind it.
    grant_from_head(ready);
  }
  schedule_all(ready);
}

void semaphore_core::release(std::size_t units) {
  std::unique_lock lock(mutex_);
  if (units > in_use_) {
    throw std::invalid_argument("async_semaphore::release: returning " + std::to_string(units) +
                                " units but only " + std::to_string(in_use_) + " are in use");
  }
  in_use_ -= units;
  semaphore_waiter* ready = nullptr;
  grant_from_head(ready);
  lock.unlock();
  schedule_all(ready);
}

void semaphore_core::release_held(std::size_t units) noexcept {
  std::unique_lock lock(mutex_);
  in_use_ -= units <= in_use_ ? units : in_use_;
  semaphore_waiter* ready = nullptr;
  grant_from_head(ready);
  const bool last = unreferenced_locked();
  lock.unlock();
  schedule_all(ready);
  if (last) delete this;  // the semaphore is gone and this was the last unit in use
}

bool semaphore_core::try_acquire(std::size_t units) {
  if (units == 0) throw std::invalid_argument("async_semaphore::try_acquire: units must be > 0");
  std::lock_guard lock(mutex_);
  if (shut_down_ || !queue_.empty() || units > available_locked()) return false;
  in_use_ += units;
  return true;
}

void semaphore_core::set_capacity(std::size_t units) {
  if (units == 0) throw std::invalid_argument("async_semaphore::set_capacity: capacity must be > 0");
  semaphore_waiter* ready = nullptr;
  {
    std::lock_guard lock(mutex_);
    capacity_ = units;
    semaphore_waiter* last = nullptr;
    for (semaphore_waiter* w = queue_.front(); w;) {
      semaphore_waiter* next = w->next;
      if (w->units > capacity_) {
        queue_.erase(w);
        w->result = make_error_code(errc::exceeds_capacity);
        if (last) last->next = w; else ready = w;
        last = w;
      }
      w = next;
    }
    grant_from_head(ready);
  }
  schedule_all(ready);
}

void semaphore_core::shut_down() noexcept {
  std::unique_lock lock(mutex_);
  shut_down_ = true;
  // Each stays pinned until its completion has run.
  for (semaphore_waiter* w = queue_.front(); w; w = w->next) w->result = operation_aborted();
  semaphore_waiter* ready = queue_.take_all();
  const bool unreferenced = unreferenced_locked();
  lock.unlock();
  schedule_all(ready);
  if (unreferenced) delete this;
}

std::size_t semaphore_core::capacity() const {
  std::lock_guard lock(mutex_);
  return capacity_;
}

std::size_t semaphore_core::available() const {
  std::lock_guard lock(mutex_);
  return available_locked();
}

std::size_t semaphore_core::in_use() const {
  std::lock_guard lock(mutex_);
  return in_use_;
}

std::size_t semaphore_core::waiters() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace detail

void permit::release(std::size_t n) {
  if (n > units_) {
    throw std::invalid_argument("permit::release: returning " + std::to_string(n) +
                                " units but the permit holds " + std::to_string(units_));
  }
  if (n == 0) return;
  if (n == units_) {
    release();
    return;
  }
  units_ -= n;
  core_->release_held(n);  // units_ > 0 remain: the core stays alive
}

permit permit::split(std::size_t n) {
  if (n > units_) {
    throw std::invalid_argument("permit::split: taking " + std::to_string(n) +
                                " units but the permit holds " + std::to_string(units_));
  }
  if (n == 0) return permit();
  units_ -= n;
  permit part(core_, n);
  if (units_ == 0) core_ = nullptr;
  return part;
}

async_semaphore::async_semaphore(executor_type ex, std::size_t capacity)
    : executor_(std::move(ex)), core_(nullptr) {
  if (capacity == 0) throw std::invalid_argument("async_semaphore: capacity must be > 0");
  core_ = new detail::semaphore_core(capacity);
}

async_semaphore::~async_semaphore() {
  if (core_) core_->shut_down();
}

permit async_semaphore::try_acquire(std::size_t units) {
  if (!core_->try_acquire(units)) return permit();
  return permit(core_, units);
}

void async_semaphore::release(std::size_t units) { core_->release(units); }
void async_semaphore::set_capacity(std::size_t units) { core_->set_capacity(units); }
std::size_t async_semaphore::capacity() const { return core_->capacity(); }
std::size_t async_semaphore::available() const { return core_->available(); }
std::size_t async_semaphore::in_use() const { return core_->in_use(); }
std::size_t async_semaphore::waiters() const { return core_->waiters(); }

}  // namespace coprove::runtime
