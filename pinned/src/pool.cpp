// The pool's bookkeeping: free buffers by size, the FIFO queue of waiting checkouts, the allocator
// thread that makes and frees every buffer, and the stats and metrics. One mutex guards it all, so
// leases can come back from any thread; handlers are only ever scheduled on their own executors
// (checkout_op::complete), never run here.
#include "coprove/pinned/pool.hpp"

#include "coprove/runtime/error.hpp"
#include "coprove/runtime/log.hpp"
#include "coprove/runtime/metrics.hpp"


#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

namespace coprove::pinned {
namespace detail {

using clock = std::chrono::steady_clock;

struct buffer {
  std::byte* data = nullptr;
  std::size_t capacity = 0;
  bool pinned = false;
  bool fallback = false;       // a pageable fallback buffer: freed on return, never pooled
  std::size_t requested = 0;   // size() of the lease holding it
  clock::time_point idle_since{};
};

namespace {

std::uint64_t elapsed_ns(clock::time_point since, clock::time_point now = clock::now()) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - since).count());
}

std::string describe_bytes(std::size_t bytes) {
  std::ostringstream out;
  out << bytes << " bytes";
  return out.str();
}

// The process-wide metrics of every pool with the same allocator (label allocator=<name>).
struct pool_metrics {
  explicit pool_metrics(std::string_view allocator_name) {
    auto& r = runtime::registry::global();
    const runtime::labels l{{"allocator", std::string(allocator_name)}};
    checkouts = &r.get_counter("coprove_pinned_checkouts_total", "Pinned pool leases handed out", l);
    reuses = &r.get_counter("coprove_pinned_reuses_total", "Pinned pool checkouts served by a free buffer", l);
    allocations = &r.get_counter("coprove_pinned_allocations_total", "Pinned pool buffers allocated", l);
    allocation_ns = &r.get_counter("coprove_pinned_allocation_ns_total", "Time spent allocating pool buffers", l);
    allocation_failures =
        &r.get_counter("coprove_pinned_allocation_failures_total", "Pinned pool allocations that failed", l);
    frees = &r.get_counter("coprove_pinned_frees_total", "Pinned pool buffers freed", l);
    waits = &r.get_counter("coprove_pinned_waits_total", "Checkouts that queued on an exhausted pool", l);
    wait_ns = &r.get_counter("coprove_pinned_wait_ns_total", "Time checkouts spent queued", l);
    fallbacks = &r.get_counter("coprove_pinned_fallbacks_total", "Checkouts served by pageable memory (fallback)", l);
    cancellations = &r.get_counter("coprove_pinned_cancellations_total", "Checkouts cancelled while waiting", l);
    bytes_allocated = &r.get_gauge("coprove_pinned_bytes_allocated", "Bytes of pool buffers held", l);
    bytes_in_use = &r.get_gauge("coprove_pinned_bytes_in_use", "Bytes of pool buffers leased", l);
    peak_bytes_in_use = &r.get_gauge("coprove_pinned_peak_bytes_in_use", "Peak of coprove_pinned_bytes_in_use", l);
    capacity_bytes = &r.get_gauge("coprove_pinned_capacity_bytes", "Capacity of the pools", l);
    wait_us = &r.get_histogram("coprove_pinned_wait_us", "Time a checkout spent queued (microseconds)", l);
    allocation_ms = &r.get_histogram("coprove_pinned_allocation_ms", "Time to allocate one buffer (milliseconds)", l);
  }
  runtime::counter *checkouts, *reuses, *allocations, *allocation_ns, *allocation_failures, *frees, *waits, *wait_ns,
      *fallbacks, *cancellations;
  runtime::gauge *bytes_allocated, *bytes_in_use, *peak_bytes_in_use, *capacity_bytes;
  runtime::histogram *wait_us, *allocation_ms;
};

}  // namespace

class pool_core : public std::enable_shared_from_this<pool_core> {
 public:
  pool_core(std::unique_ptr<host_allocator> alloc, const pool_config& cfg)
      : alloc_(std::move(alloc)),
        fallback_alloc_(make_pageable_allocator()),
        config_(cfg),
        capacity_(cfg.capacity_bytes),
        metrics_(alloc_->name()) {
    stats_.allocator = std::string(alloc_->name());
    metrics_.capacity_bytes->add(static_cast<double>(capacity_));
  }

  ~pool_core() { metrics_.capacity_bytes->add(-static_cast<double>(capacity_)); }

  void start() {
    thread_ = std::thread([this] { allocator_loop(); });
  }

  const host_allocator& allocator() const noexcept { return *alloc_; }

  // --- checkouts -----------------------------------------------------------------------------

  // Validation shared by both checkout paths: an empty error_code when `bytes` is acceptable.
  std::error_code check_request(std::size_t bytes, std::string* why) const {
    if (bytes == 0) {
      if (why) *why = "pinned::pool: a checkout of 0 bytes";
      return runtime::errc::invalid_argument;
    }
    if (bytes > std::numeric_limits<std::size_t>::max() - page_bytes || round_up_to_pages(bytes) > capacity_) {
      if (why)
        *why = "pinned::pool: a checkout of " + describe_bytes(bytes) + " (" +
               describe_bytes(round_up_to_pages(bytes)) + " in pages) exceeds the pool capacity of " +
               describe_bytes(capacity_);
      return runtime::errc::exceeds_capacity;
    }
    return {};
  }

  void start_checkout(checkout_op* op, std::size_t bytes) {
    completions done;
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        done.push_back({op, runtime::operation_aborted(), {}});
      } else if (auto ec = check_request(bytes, nullptr)) {
        done.push_back({op, ec, {}});
      } else {
        waiter w{next_id_++, op, bytes, round_up_to_pages(bytes), clock::now()};
        const auto served = queue_.empty() ? serve_locked(w, done) : serve_result::exhausted;
        if (served == serve_result::exhausted) {
          if (config_.fallback == pool_config::fallback_policy::pageable) {
            done.push_back({op, {}, {}});
            fallback_locked(bytes, "the pool is exhausted", done.back());
          } else {
            ++stats_.waits;
            metrics_.waits->inc();
            queue_.push_back(w);
          }
        }
      }
    }
    run(done);
  }

  lease try_checkout(std::size_t bytes) {
    std::string why;
    completions done;
    std::lock_guard lock(mutex_);
    if (closed_) throw std::logic_error("pinned::pool: try_checkout on a pool being destroyed");
    if (check_request(bytes, &why)) throw std::invalid_argument(why);
    if (!queue_.empty()) return {};
    const std::size_t rounded = round_up_to_pages(bytes);
    if (buffer* b = take_best_fit_locked(rounded)) {
      ++stats_.reuses;
      metrics_.reuses->inc();
      return hand_out_locked(b, bytes);
    }
    if (config_.fallback == pool_config::fallback_policy::pageable && !has_room_locked(rounded)) {
      done.push_back({nullptr, {}, {}});
      fallback_locked(bytes, "the pool is exhausted", done.back());
      if (done.back().ec) return {};
      return std::move(done.back().result);
    }
    return {};
  }

  // A checkout still waiting (queued, or for its allocation) completes with operation_aborted;
  // one already completed, or never waiting, is not found and nothing happens.
  void cancel(const checkout_op* op) {
    checkout_op* cancelled = nullptr;
    completions done;
    {
      std::lock_guard lock(mutex_);
      auto it = std::find_if(queue_.begin(), queue_.end(), [op](const waiter& w) { return w.op == op; });
      if (it != queue_.end()) {
        cancelled = it->op;
        account_wait_locked(*it);
        queue_.erase(it);
        // A cancelled head may have held back checkouts that fit now.
        serve_queue_locked(done);
      } else if (auto a = std::find_if(allocating_.begin(), allocating_.end(),
                                       [op](const auto& entry) { return entry.second.op == op; });
                 a != allocating_.end()) {
        // Its buffer is still being made; it will join the free list.
        cancelled = a->second.op;
        allocating_.erase(a);
      }
      if (cancelled) {
        ++stats_.cancellations;
        metrics_.cancellations->inc();
      }
    }
    if (cancelled) cancelled->complete(runtime::operation_aborted(), {});
    run(done);
  }

  void give_back(buffer* b) noexcept {
    if (b->fallback) {
      fallback_alloc_->deallocate(b->data, b->capacity);
      delete b;
      return;
    }
    completions done;
    bool free_now = false;
    try {
      std::lock_guard lock(mutex_);
      bytes_in_use_locked(-static_cast<std::ptrdiff_t>(b->capacity), -static_cast<std::ptrdiff_t>(b->requested));
      b->requested = 0;
      if (closed_) {
        stats_.bytes_allocated -= b->capacity;
        metrics_.bytes_allocated->add(-static_cast<double>(b->capacity));
        ++stats_.frees;
        metrics_.frees->inc();
        free_now = true;  // the allocator thread is gone: free it here
      } else if (stats_.bytes_allocated > capacity_) {
        free_locked(b);  // the capacity was lowered while it was out
      } else {
        add_free_locked(b);
      }
      if (!closed_) serve_queue_locked(done);
    } catch (...) {
      COPROVE_LOG(error, "pinned") << "returning a buffer failed; it is leaked";
    }
    if (free_now) {
      alloc_->deallocate(b->data, b->capacity);
      delete b;
    }
    run(done);
  }

  // --- capacity, prewarm, shrink ---------------------------------------------------------------

  void prewarm(std::size_t count, std::size_t bytes) {
    if (count == 0) return;
    if (bytes == 0) throw std::invalid_argument("pinned::pool: prewarm of buffers of 0 bytes");
    const std::size_t rounded = round_up_to_pages(bytes);
    std::lock_guard lock(mutex_);
    const std::size_t room = capacity_ - std::min(capacity_, stats_.bytes_allocated);
    if (rounded > room || count > room / rounded)
      throw std::invalid_argument("pinned::pool: prewarm of " + std::to_string(count) + " x " +
                                  describe_bytes(rounded) + " does not fit: " + describe_bytes(room) +
                                  " of the capacity of " + describe_bytes(capacity_) + " are unallocated");
    for (std::size_t i = 0; i < count; ++i) start_allocation_locked(rounded, 0);
  }

  void set_capacity(std::size_t bytes) {
    if (bytes == 0) throw std::invalid_argument("pinned::pool: capacity of 0 bytes");
    completions done;
    {
      std::lock_guard lock(mutex_);
      metrics_.capacity_bytes->add(static_cast<double>(bytes) - static_cast<double>(capacity_));
      capacity_ = bytes;
      stats_.capacity_bytes = bytes;
      while (stats_.bytes_allocated > capacity_ && !free_.empty()) free_locked(take_free_locked(std::prev(free_.end())));
      for (auto it = queue_.begin(); it != queue_.end();) {
        if (it->rounded > capacity_) {
          account_wait_locked(*it);
          done.push_back({it->op, runtime::errc::exceeds_capacity, {}});
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
      serve_queue_locked(done);
    }
    run(done);
  }

  void shrink() {
    std::lock_guard lock(mutex_);
    shrink_locked();
  }

  pool_stats stats() const {
    std::lock_guard lock(mutex_);
    pool_stats s = stats_;
    s.capacity_bytes = capacity_;
    s.free_buffers = free_.size();
    s.waiting = queue_.size() + allocating_.size();
    return s;
  }

  void wait_idle() {
    std::promise<void> idle;
    auto f = idle.get_future();
    push_job([&idle] { idle.set_value(); });
    f.wait();
  }

  // Aborts every waiting checkout, stops the allocator thread and frees the free buffers. Leases
  // still out free their buffer on return.
  void shut_down() {
    completions done;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      for (auto& w : queue_) {
        account_wait_locked(w);
        done.push_back({w.op, runtime::operation_aborted(), {}});
      }
      queue_.clear();
      for (auto& [id, w] : allocating_) done.push_back({w.op, runtime::operation_aborted(), {}});
      allocating_.clear();
    }
    run(done);
    {
      std::lock_guard lock(jobs_mutex_);
      stopping_ = true;
    }
    jobs_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::vector<buffer*> leftovers;
    {
      std::lock_guard lock(mutex_);
      while (!free_.empty()) {
        buffer* b = take_free_locked(std::prev(free_.end()));
        stats_.bytes_allocated -= b->capacity;
        metrics_.bytes_allocated->add(-static_cast<double>(b->capacity));
        ++stats_.frees;
        metrics_.frees->inc();
        leftovers.push_back(b);
      }
    }
    for (buffer* b : leftovers) {
      alloc_->deallocate(b->data, b->capacity);
      delete b;
    }
  }

 private:
  struct waiter {
    std::uint64_t id;
    checkout_op* op;
    std::size_t bytes;
    std::size_t rounded;
    clock::time_point since;
  };
  struct completion {
    checkout_op* op;  // null: the result is taken by the caller (try_checkout)
    std::error_code ec;
    lease result;
  };
  using completions = std::vector<completion>;

  static void run(completions& done) {
    for (auto& c : done)
      if (c.op) c.op->complete(c.ec, std::move(c.result));
    done.clear();
  }

  enum class serve_result { reused, allocating, exhausted };

  // Serves `w` now if it can: a best-fit free buffer, or a new buffer when there is room (after
  // freeing idle buffers if needed).
  serve_result serve_locked(const waiter& w, completions& done) {
    if (buffer* b = take_best_fit_locked(w.rounded)) {
      ++stats_.reuses;
      metrics_.reuses->inc();
      done.push_back({w.op, {}, hand_out_locked(b, w.bytes)});
      return serve_result::reused;
    }
    if (!has_room_locked(w.rounded)) return serve_result::exhausted;
    make_room_locked(w.rounded);
    allocating_.emplace(w.id, w);
    start_allocation_locked(w.rounded, w.id);
    return serve_result::allocating;
  }

  // Serves queued checkouts in order, stopping at the first that cannot be served (strict FIFO:
  // a small request never overtakes a large one at the head).
  void serve_queue_locked(completions& done) {
    while (!queue_.empty()) {
      waiter w = queue_.front();
      if (serve_locked(w, done) == serve_result::exhausted) break;  // already hooked to cancellation
      queue_.pop_front();
      account_wait_locked(w);
    }
  }

  void account_wait_locked(const waiter& w) {
    const auto ns = elapsed_ns(w.since);
    stats_.wait_ns += ns;
    metrics_.wait_ns->inc(ns);
    metrics_.wait_us->record(static_cast<double>(ns) / 1e3);
  }

  // The smallest free buffer of at least `rounded` bytes, if it wastes at most 1/64 of `rounded`.
  buffer* take_best_fit_locked(std::size_t rounded) {
    auto it = free_.lower_bound(rounded);
    if (it == free_.end() || it->first - rounded > rounded / best_fit_slack_divisor) return nullptr;
    return take_free_locked(it);
  }

  bool has_room_locked(std::size_t rounded) const {
    const std::size_t unallocated = capacity_ - std::min(capacity_, stats_.bytes_allocated);
    return rounded <= unallocated + free_bytes_;
  }

  // Frees free buffers until `rounded` more bytes fit the capacity: the smallest single buffer
  // that makes enough room, else the largest and repeat (few frees, each of which is costly).
  void make_room_locked(std::size_t rounded) {
    while (stats_.bytes_allocated + rounded > capacity_ && !free_.empty()) {
      const std::size_t need = stats_.bytes_allocated + rounded - capacity_;
      auto it = free_.lower_bound(need);
      if (it == free_.end()) it = std::prev(free_.end());
      free_locked(take_free_locked(it));
    }
  }

  void shrink_locked() {
    if (stats_.bytes_allocated <= config_.high_watermark_bytes) return;
    const auto now = clock::now();
    for (auto it = free_.end(); it != free_.begin() && stats_.bytes_allocated > config_.high_watermark_bytes;) {
      --it;
      if (now - it->second->idle_since < config_.idle_timeout) continue;
      auto victim = it;
      ++it;  // stays valid: only `victim` is erased
      free_locked(take_free_locked(victim));
    }
  }

  lease hand_out_locked(buffer* b, std::size_t bytes) {
    b->requested = bytes;
    bytes_in_use_locked(static_cast<std::ptrdiff_t>(b->capacity), static_cast<std::ptrdiff_t>(bytes));
    ++stats_.checkouts;
    metrics_.checkouts->inc();
    return lease(shared_from_this(), b, bytes);
  }

  void bytes_in_use_locked(std::ptrdiff_t capacity_delta, std::ptrdiff_t requested_delta) {
    stats_.bytes_in_use += capacity_delta;
    stats_.bytes_requested_in_use += requested_delta;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    metrics_.bytes_in_use->add(static_cast<double>(capacity_delta));
    metrics_.peak_bytes_in_use->set_max(metrics_.bytes_in_use->value());
  }

  // A pageable buffer instead of a pinned one: configuration, logged once and counted.
  void fallback_locked(std::size_t bytes, const char* reason, completion& out) {
    buffer* b = nullptr;
    try {
      const std::size_t rounded = round_up_to_pages(bytes);
      b = new buffer{static_cast<std::byte*>(fallback_alloc_->allocate(rounded)), rounded, false, true, bytes, {}};
    } catch (const std::bad_alloc&) {
      out.ec = std::make_error_code(std::errc::not_enough_memory);
      return;
    }
    ++stats_.fallbacks;
    ++stats_.checkouts;
    metrics_.fallbacks->inc();
    metrics_.checkouts->inc();
    runtime::warn_once(std::string("pinned.fallback.") + reason, "pinned",
                       std::string("pinned pool (") + stats_.allocator + "): " + reason + " (capacity " +
                           describe_bytes(capacity_) + ", " + describe_bytes(stats_.bytes_in_use) +
                           " in use); checkouts fall back to pageable memory because fallback = pageable");
    out.result = lease(shared_from_this(), b, bytes);
  }

  // Among buffers of one size the one returned last is handed out first (lower_bound finds the
  // front of the equal range): the buffers in use stay the few a steady load cycles through, warm
  // in the host's and the device's address translation, and the rest stay idle long enough for
  // shrink() to take them. Handed out oldest first, a pool pre-warmed for a depth that a measured
  // depth later lowered kept cycling through every buffer it held.
  void add_free_locked(buffer* b) {
    b->idle_since = clock::now();
    free_.emplace_hint(free_.lower_bound(b->capacity), b->capacity, b);
    free_bytes_ += b->capacity;
  }

  buffer* take_free_locked(std::multimap<std::size_t, buffer*>::iterator it) {
    buffer* b = it->second;
    free_bytes_ -= b->capacity;
    free_.erase(it);
    return b;
  }

  // Hands `b` to the allocator thread to be freed; its bytes leave the pool at once (the allocator
  // thread runs the free before any allocation queued after it).
  void free_locked(buffer* b) {
    stats_.bytes_allocated -= b->capacity;
    metrics_.bytes_allocated->add(-static_cast<double>(b->capacity));
    ++stats_.frees;
    metrics_.frees->inc();
    push_job([this, b] {
      alloc_->deallocate(b->data, b->capacity);
      delete b;
    });
  }

  void start_allocation_locked(std::size_t rounded, std::uint64_t waiter_id) {
    stats_.bytes_allocated += rounded;
    metrics_.bytes_allocated->add(static_cast<double>(rounded));
    push_job([this, rounded, waiter_id] { allocate(rounded, waiter_id); });
  }

  // On the allocator thread: makes one buffer and gives it to the checkout that asked for it (or
  // to the free list when that checkout is gone, or it was a prewarm).
  void allocate(std::size_t rounded, std::uint64_t waiter_id) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        stats_.bytes_allocated -= rounded;
        metrics_.bytes_allocated->add(-static_cast<double>(rounded));
        return;
      }
    }
    const auto start = clock::now();
    void* p = nullptr;
    std::error_code failure;
    std::string what;
    try {
      p = alloc_->allocate(rounded);
    } catch (const std::system_error& e) {
      failure = e.code();
      what = e.what();
    } catch (const std::bad_alloc&) {
      failure = std::make_error_code(std::errc::not_enough_memory);
      what = "out of memory";
    } catch (const std::exception& e) {
      failure = std::make_error_code(std::errc::io_error);
      what = e.what();
    }
    const auto ns = elapsed_ns(start);
    completions done;
    {
      std::lock_guard lock(mutex_);
      std::optional<waiter> w;
      if (auto it = allocating_.find(waiter_id); it != allocating_.end()) {
        w = it->second;
        allocating_.erase(it);
      }
      if (p == nullptr) {
        ++stats_.allocation_failures;
        metrics_.allocation_failures->inc();
        stats_.bytes_allocated -= rounded;
        metrics_.bytes_allocated->add(-static_cast<double>(rounded));
        COPROVE_LOG(error, "pinned") << "allocating " << describe_bytes(rounded) << " with " << stats_.allocator
                                     << " failed: " << what;
        if (w) {
          done.push_back({w->op, failure, {}});
          if (config_.fallback == pool_config::fallback_policy::pageable) {
            done.back().ec = {};
            fallback_locked(w->bytes, "page-locked allocation failed", done.back());
          }
        }
      } else {
        ++stats_.allocations;
        stats_.allocation_ns += ns;
        metrics_.allocations->inc();
        metrics_.allocation_ns->inc(ns);
        metrics_.allocation_ms->record(static_cast<double>(ns) / 1e6);
        auto* b = new buffer{static_cast<std::byte*>(p), rounded, alloc_->is_pinned(), false, 0, {}};
        if (w) {
          done.push_back({w->op, {}, hand_out_locked(b, w->bytes)});
        } else {
          add_free_locked(b);
        }
      }
      if (!closed_) serve_queue_locked(done);
    }
    run(done);
  }

  void push_job(std::function<void()> job) {
    {
      std::lock_guard lock(jobs_mutex_);
      jobs_.push_back(std::move(job));
    }
    jobs_cv_.notify_one();
  }

  // The allocator thread: runs jobs in order; when idle and a high watermark is set, shrinks.
  void allocator_loop() {
    pthread_setname_np(pthread_self(), "coprove-alloc");
    const bool auto_shrink = config_.high_watermark_bytes != std::numeric_limits<std::size_t>::max();
    const auto period = std::clamp<std::chrono::milliseconds>(config_.idle_timeout / 2, std::chrono::milliseconds(10),
                                                               std::chrono::milliseconds(1000));
    std::unique_lock lock(jobs_mutex_);
    for (;;) {
      if (jobs_.empty()) {
        if (stopping_) return;
        if (auto_shrink) {
          if (!jobs_cv_.wait_for(lock, period, [this] { return stopping_ || !jobs_.empty(); })) {
            lock.unlock();
            shrink();
            lock.lock();
          }
        } else {
          jobs_cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        }
        continue;
      }
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::unique_ptr<host_allocator> alloc_;
  std::unique_ptr<host_allocator> fallback_alloc_;
  const pool_config config_;

  mutable std::mutex mutex_;
  bool closed_ = false;
  std::size_t capacity_;
  std::multimap<std::size_t, buffer*> free_;  // by capacity; equal sizes in return order
  std::size_t free_bytes_ = 0;
  std::list<waiter> queue_;
  std::unordered_map<std::uint64_t, waiter> allocating_;
  std::uint64_t next_id_ = 1;  // 0 marks a prewarm allocation
  pool_stats stats_;
  pool_metrics metrics_;

  std::mutex jobs_mutex_;
  std::condition_variable jobs_cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

void checkout_op::cancel() noexcept {
  if (auto c = core_.lock()) {
    try {
      c->cancel(this);
    } catch (...) {
      COPROVE_LOG(error, "pinned") << "cancelling a checkout failed";
    }
  }
}

}  // namespace detail

// --- lease -------------------------------------------------------------------------------------

lease::lease(lease&& other) noexcept
    : core_(std::move(other.core_)), buffer_(std::exchange(other.buffer_, nullptr)), size_(std::exchange(other.size_, 0)) {}

lease& lease::operator=(lease&& other) noexcept {
  if (this != &other) {
    release();
    core_ = std::move(other.core_);
    buffer_ = std::exchange(other.buffer_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

lease::~lease() { release(); }

std::byte* lease::data() noexcept { return buffer_ ? buffer_->data : nullptr; }
const std::byte* lease::data() const noexcept { return buffer_ ? buffer_->data : nullptr; }
std::size_t lease::capacity() const noexcept { return buffer_ ? buffer_->capacity : 0; }
bool lease::is_pinned() const noexcept { return buffer_ && buffer_->pinned; }

void lease::release() noexcept {
  if (buffer_ == nullptr) return;
  auto core = std::move(core_);
  auto* b = std::exchange(buffer_, nullptr);
  size_ = 0;
  core->give_back(b);
}

// --- pool --------------------------------------------------------------------------------------

pool::pool(executor_type ex, std::unique_ptr<host_allocator> alloc, pool_config cfg)
    : executor_(std::move(ex)), config_(cfg) {
  if (!alloc) throw std::invalid_argument("pinned::pool: no host allocator");
  if (cfg.capacity_bytes == 0) throw std::invalid_argument("pinned::pool: capacity_bytes is 0");
  if ((cfg.prewarm_count == 0) != (cfg.prewarm_bytes == 0))
    throw std::invalid_argument("pinned::pool: prewarm_count and prewarm_bytes must be both set or both 0");
  core_ = std::make_shared<detail::pool_core>(std::move(alloc), cfg);
  core_->start();
  try {
    if (cfg.prewarm_count != 0) core_->prewarm(cfg.prewarm_count, cfg.prewarm_bytes);
  } catch (...) {
    core_->shut_down();
    throw;
  }
}

pool::~pool() { core_->shut_down(); }

void pool::start_checkout(detail::checkout_op* op, std::size_t bytes) { core_->start_checkout(op, bytes); }
lease pool::try_checkout(std::size_t bytes) { return core_->try_checkout(bytes); }
void pool::prewarm(std::size_t count, std::size_t bytes) { core_->prewarm(count, bytes); }
void pool::set_capacity(std::size_t bytes) { core_->set_capacity(bytes); }
void pool::shrink() { core_->shrink(); }
pool_stats pool::stats() const { return core_->stats(); }
const host_allocator& pool::allocator() const noexcept { return core_->allocator(); }
void pool::wait_idle() { core_->wait_idle(); }

}  // namespace coprove::pinned
