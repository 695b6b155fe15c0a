// Admission: when the engine starts the next queued partition. One strategy per dispatch policy
// behind one small interface, each owning what its policy needs (the semaphore strategy the
// GPU-slot semaphore and the slot it holds between grants, the poll strategy its timer). Not
// thread-safe: every call runs on the control executor, and so do the strategies' completions.
#pragma once

#include <coprove/engine/dispatch.hpp>
#include <coprove/runtime/async_semaphore.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <system_error>

namespace coprove::engine::detail {

/// Starts one partition; the permit is the GPU slot it holds until it ends (empty when the
/// policy has none).
using admit_function = std::function<void(partition_key, runtime::permit)>;

/// Owned through a shared_ptr: a grant or a tick that arrives after the strategy is gone finds it
/// expired and does nothing.
class admission : public std::enable_shared_from_this<admission> {
 public:
  virtual ~admission() = default;
  /// Admits from `queue` while the policy allows, calling admit for each key it pops, in queue
  /// order. When it stops with work left it may arm a wake-up (a semaphore grant, a timer) that
  /// calls `wake` on the control executor; wake then pumps again. Call it after every event that
  /// can change its answer (a job queued, a partition ended).
  virtual void pump(dispatch_queue& queue) = 0;
  /// Gives back what the strategy holds and disarms its timer (shutdown); a grant still pending
  /// comes back to it and is released by the next pump on an empty queue.
  virtual void stop() = 0;
  /// True when partitions that wait are held back by a full depth alone (the semaphore has no
  /// unit free). The other policies have no depth and say false.
  virtual bool depth_full() const noexcept { return false; }
  /// The GPU slots: capacity and free units (policies without a depth report all free).
  virtual std::size_t capacity() const noexcept { return capacity_; }
  virtual std::size_t available() const noexcept { return capacity_; }
  /// Changes the GPU slots (> 0) to `capacity` at run time (the measured depth): raising it admits
  /// at most the difference; lowering it admits nobody until the partitions in flight are below it
  /// (none is cancelled). Call pump() afterwards.
  virtual void set_capacity(std::size_t capacity) { capacity_ = capacity; }

 protected:
  explicit admission(std::size_t capacity) : capacity_(capacity) {}

 private:
  std::size_t capacity_;
};

/// semaphore: a counting semaphore of `depth` units; each admission takes one, and a partition's
/// end (its permit released) admits exactly one more.
class semaphore_admission final : public admission {
 public:
  semaphore_admission(boost::asio::any_io_executor executor, std::size_t depth, admit_function admit,
                      std::function<void()> wake);
  void pump(dispatch_queue& queue) override;
  void stop() override { held_.release(); }
  bool depth_full() const noexcept override { return slots_.available() == 0; }
  std::size_t available() const noexcept override { return slots_.available(); }
  std::size_t capacity() const noexcept override { return slots_.capacity(); }
  void set_capacity(std::size_t capacity) override { slots_.set_capacity(capacity); }

 private:
  void on_granted(std::error_code ec, runtime::permit p);

  boost::asio::any_io_executor executor_;
  runtime::async_semaphore slots_;
  admit_function admit_;
  std::function<void()> wake_;
  runtime::permit held_;   // granted while nothing was left to admit, until the next pump
  bool acquiring_ = false;  // one async_acquire outstanding at most
};

/// poll: every `interval`, admits while fewer than `limit` partitions are queued for or running
/// on a device (`gpu_queue`); partitions in synthesis are not counted, so each reopening lets a
/// burst through (the throttle the semaphore replaced, kept for comparison).
class poll_admission final : public admission {
 public:
  poll_admission(boost::asio::any_io_executor executor, std::size_t capacity, std::chrono::milliseconds interval,
                 std::size_t limit, const high_water_counter& gpu_queue, admit_function admit,
                 std::function<void()> wake);
  void pump(dispatch_queue& queue) override;
  void stop() override { timer_.cancel(); }

 private:
  void on_tick(boost::system::error_code ec);

  boost::asio::steady_timer timer_;
  std::chrono::milliseconds interval_;
  std::size_t limit_;
  const high_water_counter& gpu_queue_;
  admit_function admit_;
  std::function<void()> wake_;
  dispatch_queue* queue_ = nullptr;  // the queue the armed tick admits from
  bool armed_ = false;
};

/// unbounded: admits everything at once; only memory and pinned buffers hold partitions back.
class unbounded_admission final : public admission {
 public:
  unbounded_admission(std::size_t capacity, admit_function admit) : admission(capacity), admit_(std::move(admit)) {}
  void pump(dispatch_queue& queue) override;
  void stop() override {}

 private:
  admit_function admit_;
};

struct admission_config {
  dispatch_policy policy = dispatch_policy::semaphore;
  std::size_t depth = 1;  ///< GPU slots in all (depth per device x devices)
  std::chrono::milliseconds poll_interval{5};
  std::size_t poll_queue_limit = 4;
};

/// The strategy of cfg.policy.
std::shared_ptr<admission> make_admission(const admission_config& cfg, boost::asio::any_io_executor executor,
                                          const high_water_counter& gpu_queue, admit_function admit,
                                          std::function<void()> wake);

}  // namespace coprove::engine::detail
