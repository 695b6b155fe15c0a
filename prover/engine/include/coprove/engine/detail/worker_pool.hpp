// The device worker slots: (device, slot) pairs of the backend, handed to synthesized partitions
// in partition-key order (the oldest job's lowest partition first), spread across devices.
// Not thread-safe: every call, and every completion, runs on the control executor.
#pragma once

#include <coprove/engine/dispatch.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <system_error>
#include <vector>

namespace coprove::engine::detail {

/// A device worker slot: (device, slot) of the backend.
struct worker_ref {
  std::size_t device = 0;
  std::size_t slot = 0;
  friend bool operator==(const worker_ref&, const worker_ref&) = default;
};

class worker_pool {
 public:
  using acquire_signature = void(std::error_code, worker_ref);

  worker_pool(boost::asio::any_io_executor executor, std::size_t devices, std::size_t slots_per_device);

  /// Completes with a free slot, taken from the device with the most free slots (the lowest such
  /// device and slot). Waiters are served in partition-key order, not arrival order: a released
  /// slot goes to the smallest key waiting. Completes on the pool's executor, never inside this
  /// call. A per-operation cancellation removes the waiter and completes it with
  /// operation_aborted (its place goes to the next key); cancelling a granted acquire does nothing.
  /// One waiter per key.
  template <boost::asio::completion_token_for<acquire_signature> Token>
  auto async_acquire(partition_key key, Token&& token) {
    return boost::asio::async_initiate<Token, acquire_signature>(
        [this](auto handler, partition_key k) { start_acquire(k, acquire_handler(std::move(handler))); }, token, key);
  }

  /// Gives a slot back: it goes to the first waiter, or is left idle. Returns true when it is left
  /// idle (nobody waited for it).
  bool release(worker_ref w);

  std::size_t waiting() const noexcept { return waiters_.size(); }
  std::size_t busy() const noexcept { return busy_count_; }
  std::size_t capacity() const noexcept { return devices_ * slots_; }

 private:
  using acquire_handler = boost::asio::any_completion_handler<acquire_signature>;
  void start_acquire(partition_key key, acquire_handler handler);
  std::optional<worker_ref> take_free();
  void grant(acquire_handler handler, std::error_code ec, worker_ref w);

  boost::asio::any_io_executor executor_;
  std::size_t devices_, slots_;
  std::vector<std::vector<bool>> busy_;
  std::size_t busy_count_ = 0;
  std::map<partition_key, acquire_handler> waiters_;
};

}  // namespace coprove::engine::detail
