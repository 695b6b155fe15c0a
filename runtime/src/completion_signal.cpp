// completion_signal's shared state: one result, set once, and the waiters it completes.
#include "coprove/runtime/completion_signal.hpp"

#include "coprove/runtime/log.hpp"
#include "coprove/runtime/metrics.hpp"

namespace coprove::runtime {
namespace {

// Registered with the first signal, so that the series exists (at 0) before anything goes wrong.
counter& double_set_counter() {
  static counter& c = registry::global().get_counter(
      "coprove_completion_signal_double_set_total", "completion_signal::set called on a signal that was already set");
  return c;
}

}  // namespace

namespace detail {

signal_state::~signal_state() {
  signal_waiter* ready = nullptr;
  {
    std::lock_guard lock(mutex_);
    for (signal_waiter* w = queue_.front(); w; w = w->next) w->result = make_error_code(errc::shut_down);
    ready = queue_.take_all();
  }
  schedule_all(ready);
}

void signal_state::schedule_all(signal_waiter* ready) noexcept {
  while (ready) {
    signal_waiter* next = ready->next;
    ready->next = nullptr;
    ready->schedule();
    ready = next;
  }
}

void signal_state::start(signal_waiter* w) {
  {
    std::lock_guard lock(mutex_);
    if (!set_) {
      queue_.push_back(w);
      return;
    }
    w->result = result_;
  }
  w->schedule();
}

void signal_state::cancel(signal_waiter* w) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (!w->queued) return;  // its completion is already on the way
    queue_.erase(w);
    w->result = operation_aborted();
  }
  w->schedule();
}

std::error_code signal_state::set(std::error_code result) noexcept {
  signal_waiter* ready = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (set_) return make_error_code(errc::already_set);
    set_ = true;
    result_ = result;
    for (signal_waiter* w = queue_.front(); w; w = w->next) w->result = result;
    ready = queue_.take_all();
  }
  schedule_all(ready);
  return {};
}

bool signal_state::is_set() const noexcept {
  std::lock_guard lock(mutex_);
  return set_;
}

std::error_code signal_state::result() const {
  std::lock_guard lock(mutex_);
  return result_;
}

std::size_t signal_state::waiters() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace detail

completion_signal::completion_signal() : state_(std::make_shared<detail::signal_state>()) {
  double_set_counter();
}

std::error_code completion_signal::set(std::error_code result) noexcept {
  const std::error_code ec = state_->set(result);
  if (ec) {
    try {
      double_set_counter().inc();
      COPROVE_LOG(error, "runtime") << "completion_signal set twice (first result: "
                                    << state_->result().message() << ", second: "
                                    << result.message() << ")";
    } catch (...) {
      // Reporting must not turn a reported error into a crash.
    }
  }
  return ec;
}

bool completion_signal::is_set() const noexcept { return state_->is_set(); }
std::error_code completion_signal::result() const { return state_->result(); }
std::size_t completion_signal::waiters() const { return state_->waiters(); }

}  // namespace coprove::runtime
