// Dispatch vocabulary shared by the engine, the binary and the benchmarks: the admission policies
// compared side by side, the order in which partitions are admitted, and the counters that show
// how much work a policy let loose at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>

namespace coprove::engine {

/// How the engine decides to start the next partition.
/// - semaphore: a counting semaphore of depth D per device; each completion admits exactly one.
/// - poll: every poll_interval, admit while fewer than poll_queue_limit partitions are queued
///   for (or running on) the GPU; partitions in synthesis are not counted, so a reopening
///   admits a burst (the throttle the semaphore replaced, kept for comparison).
/// - unbounded: admit everything at once; only memory and pinned buffers hold partitions back.
enum class dispatch_policy { semaphore, poll, unbounded };

/// "semaphore", "poll" or "unbounded".
std::string_view to_string(dispatch_policy policy) noexcept;
/// Parses the names above; nullopt for any other (callers say which value was wrong, and where).
std::optional<dispatch_policy> parse_dispatch_policy(std::string_view name) noexcept;

/// Admission order: the oldest job's lowest partition first.
struct partition_key {
  std::uint64_t job_id = 0;
  std::size_t partition = 0;
  friend auto operator<=>(const partition_key&, const partition_key&) = default;
};

/// Partitions waiting for admission, kept in (job sequence, partition) order. Not thread-safe:
/// owned by the control executor.
class dispatch_queue {
 public:
  void push(partition_key key);
  /// The next partition to admit; the queue must not be empty.
  partition_key pop();
  /// Removes every waiting partition of one job; returns how many were removed.
  std::size_t erase_job(std::uint64_t job_id);
  bool empty() const noexcept { return keys_.empty(); }
  std::size_t size() const noexcept { return keys_.size(); }

 private:
  std::set<partition_key> keys_;
};

/// A current count and the highest it has been. One writer (the control executor) changes it;
/// any thread may read it (each figure on its own; the two are not read as one snapshot).
class high_water_counter {
 public:
  void increment() noexcept;
  void decrement() noexcept;
  std::size_t current() const noexcept { return current_.load(std::memory_order_relaxed); }
  std::size_t maximum() const noexcept { return maximum_.load(std::memory_order_relaxed); }
  void reset_maximum() noexcept { maximum_.store(current(), std::memory_order_relaxed); }

 private:
  std::atomic<std::size_t> current_{0};
  std::atomic<std::size_t> maximum_{0};
};

}  // namespace coprove::engine
