// Dispatch vocabulary shared by the engine, the binary and the benchmarks: the admission policies
// compared side by side, the order in which partitions are admitted, and the counters that show
// how much work a policy let loose at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
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

/// How urgent a job is. Admission takes the waiting partitions of the most urgent jobs first
/// (critical: e.g. a proof with a deadline), and within one priority the oldest job's lowest
/// partition first. Partitions already admitted are not preempted.
enum class job_priority : std::uint8_t { low, normal, high, critical };

/// "low", "normal", "high" or "critical".
std::string_view to_string(job_priority priority) noexcept;
/// Parses the names above; nullopt for any other.
std::optional<job_priority> parse_job_priority(std::string_view name) noexcept;

/// A partition of a job; within one priority, admission order is the oldest job's lowest partition first.
struct partition_key {
  std::uint64_t job_id = 0;
  std::size_t partition = 0;
  friend auto operator<=>(const partition_key&, const partition_key&) = default;
};

/// Partitions waiting for admission, kept in (priority, job sequence, partition) order: the most
/// urgent first, then the oldest. Not thread-safe: owned by the control executor.
class dispatch_queue {
 public:
  /// Every partition of one job is pushed with the same priority.
  void push(partition_key key, job_priority priority = job_priority::normal);
  /// The next partition to admit; the queue must not be empty.
  partition_key pop();
  /// Removes every waiting partition of one job; returns how many were removed.
  std::size_t erase_job(std::uint64_t job_id);
  bool empty() const noexcept { return keys_.empty(); }
  std::size_t size() const noexcept { return keys_.size(); }

 private:
  // The rank sorts the most urgent first: critical is 0.
  using entry = std::pair<std::uint8_t, partition_key>;
  static std::uint8_t rank_of(job_priority priority) noexcept {
    return static_cast<std::uint8_t>(static_cast<std::uint8_t>(job_priority::critical) - static_cast<std::uint8_t>(priority));
  }
  std::set<entry> keys_;
  std::map<std::uint64_t, std::uint8_t> ranks_;  // the rank of each job with partitions waiting
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
