// Dispatch vocabulary: policy names, the admission-ordered queue and high-water counters.
#include <coprove/engine/dispatch.hpp>

#include <stdexcept>
#include <string>

namespace coprove::engine {

std::string_view to_string(dispatch_policy policy) noexcept {
  switch (policy) {
    case dispatch_policy::semaphore: return "semaphore";
    case dispatch_policy::poll: return "poll";
    case dispatch_policy::unbounded: return "unbounded";
  }
  return "unknown";
}

std::optional<dispatch_policy> parse_dispatch_policy(std::string_view name) noexcept {
  if (name == "semaphore") return dispatch_policy::semaphore;
  if (name == "poll") return dispatch_policy::poll;
  if (name == "unbounded") return dispatch_policy::unbounded;
  return std::nullopt;
}

std::string_view to_string(job_priority priority) noexcept {
  switch (priority) {
    case job_priority::low: return "low";
    case job_priority::normal: return "normal";
    case job_priority::high: return "high";
    case job_priority::critical: return "critical";
  }
  return "unknown";
}

std::optional<job_priority> parse_job_priority(std::string_view name) noexcept {
  for (auto p : {job_priority::low, job_priority::normal, job_priority::high, job_priority::critical})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

void dispatch_queue::push(partition_key key, job_priority priority) {
  const std::uint8_t rank = rank_of(priority);
  ranks_.emplace(key.job_id, rank);
  keys_.insert({rank, key});
}

partition_key dispatch_queue::pop() {
  if (keys_.empty()) throw std::logic_error("dispatch_queue::pop on an empty queue");
  const auto [rank, key] = *keys_.begin();
  keys_.erase(keys_.begin());
  if (keys_.empty() || keys_.begin()->first != rank || keys_.begin()->second.job_id != key.job_id) {
    // Its job's last waiting partition: keys of one job are adjacent, so none is left.
    ranks_.erase(key.job_id);
  }
  return key;
}

std::size_t dispatch_queue::erase_job(std::uint64_t job_id) {
  const auto rank = ranks_.find(job_id);
  if (rank == ranks_.end()) return 0;
  auto first = keys_.lower_bound({rank->second, partition_key{job_id, 0}});
  auto last = first;
  std::size_t removed = 0;
  while (last != keys_.end() && last->first == rank->second && last->second.job_id == job_id) {
    ++last;
    ++removed;
  }
  keys_.erase(first, last);
  ranks_.erase(rank);
  return removed;
}

void high_water_counter::increment() noexcept {
  const std::size_t now = current_.load(std::memory_order_relaxed) + 1;
  current_.store(now, std::memory_order_relaxed);
  if (now > maximum_.load(std::memory_order_relaxed)) maximum_.store(now, std::memory_order_relaxed);
}

void high_water_counter::decrement() noexcept {
  const std::size_t now = current_.load(std::memory_order_relaxed);
  if (now > 0) current_.store(now - 1, std::memory_order_relaxed);
}

}  // namespace coprove::engine
