// The device worker slots: free-slot choice, key-ordered waiters and their cancellation.
#include <coprove/engine/detail/worker_pool.hpp>

#include <coprove/runtime/error.hpp>

#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/post.hpp>

#include <stdexcept>

namespace coprove::engine::detail {

worker_pool::worker_pool(boost::asio::any_io_executor executor, std::size_t devices, std::size_t slots_per_device)
    : executor_(std::move(executor)),
      devices_(devices),
      slots_(slots_per_device),
      busy_(devices, std::vector<bool>(slots_per_device, false)) {}

std::optional<worker_ref> worker_pool::take_free() {
  // The device with the most free slots, so that work spreads across devices.
  std::optional<worker_ref> best;
  std::size_t best_free = 0;
  for (std::size_t d = 0; d < devices_; ++d) {
    std::size_t free_slots = 0, first = slots_;
    for (std::size_t s = 0; s < slots_; ++s)
      if (!busy_[d][s]) {
        ++free_slots;
        if (first == slots_) first = s;
      }
    if (free_slots > best_free) {
      best_free = free_slots;
      best = worker_ref{d, first};
    }
  }
  if (best) {
    busy_[best->device][best->slot] = true;
    ++busy_count_;
  }
  return best;
}

void worker_pool::grant(acquire_handler handler, std::error_code ec, worker_ref w) {
  boost::asio::post(executor_, [handler = std::move(handler), ec, w]() mutable { std::move(handler)(ec, w); });
}

void worker_pool::start_acquire(partition_key key, acquire_handler handler) {
  if (auto w = take_free()) {
    grant(std::move(handler), {}, *w);
    return;
  }
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) {
    slot.assign([this, key](boost::asio::cancellation_type type) {
      if (type == boost::asio::cancellation_type::none) return;
      // Emitted on the control executor, so the waiter map is ours to change. The slot is left
      // as it is: clearing it here would destroy this handler while it runs, and a later
      // emission finds no waiter and does nothing.
      auto it = waiters_.find(key);
      if (it == waiters_.end()) return;
      auto h = std::move(it->second);
      waiters_.erase(it);
      grant(std::move(h), runtime::operation_aborted(), worker_ref{});
    });
  }
  waiters_.emplace(key, std::move(handler));
}

bool worker_pool::release(worker_ref w) {
  if (w.device >= devices_ || w.slot >= slots_ || !busy_[w.device][w.slot])
    throw std::logic_error("worker_pool::release: the slot is not held");
  if (waiters_.empty()) {
    busy_[w.device][w.slot] = false;
    --busy_count_;
    return true;
  }
  auto it = waiters_.begin();  // the oldest job's lowest partition
  auto handler = std::move(it->second);
  waiters_.erase(it);
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) slot.clear();
  grant(std::move(handler), {}, w);  // the slot stays busy, now for this waiter
  return false;
}

}  // namespace coprove::engine::detail
