// The shared CPU pool behind parallel_for. Each call is a job with an atomic chunk cursor; the
// pool's threads and the caller pull chunks from it, so a job always completes even when every
// pool thread is busy elsewhere, and concurrent callers share the threads fairly (first come first
// served by job).
#include <coprove/field/parallel.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace coprove::field {

namespace {

thread_local bool inside_parallel_body = false;

struct job {
  const std::function<void(std::size_t, std::size_t)>* body;
  std::size_t begin, end, chunk;
  std::size_t chunk_count;
  std::atomic<std::size_t> next{0};      // next chunk to claim
  std::atomic<std::size_t> finished{0};  // chunks done (run or skipped)
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // first exception, written under error_mutex
  std::mutex error_mutex;
  std::mutex done_mutex;
  std::condition_variable done_cv;

  /// Claims and runs one chunk; false when none is left.
  bool run_one() {
    const std::size_t index = next.fetch_add(1, std::memory_order_relaxed);
    if (index >= chunk_count) return false;
    if (!failed.load(std::memory_order_relaxed)) {
      const std::size_t lo = begin + index * chunk;
      const std::size_t hi = std::min(end, lo + chunk);
      const bool was_inside = inside_parallel_body;
      inside_parallel_body = true;
      try {
        (*body)(lo, hi);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
      inside_parallel_body = was_inside;
    }
    if (finished.fetch_add(1, std::memory_order_acq_rel) + 1 == chunk_count) {
      std::lock_guard lock(done_mutex);
      done_cv.notify_all();
    }
    return true;
  }
  bool exhausted() const { return next.load(std::memory_order_relaxed) >= chunk_count; }
};

class thread_pool {
 public:
  thread_pool() { resize(0); }
  ~thread_pool() { stop_all(); }

  std::size_t threads() const noexcept { return threads_.load(std::memory_order_relaxed); }

  void resize(std::size_t n) {
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    std::lock_guard resize_lock(resize_mutex_);
    stop_all();
    {
      std::lock_guard lock(mutex_);
      stopping_ = false;
    }
    for (std::size_t i = 1; i < n; ++i) workers_.emplace_back([this] { work(); });
    threads_.store(n, std::memory_order_relaxed);
  }

  void run(const std::shared_ptr<job>& j) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(j);
    }
    cv_.notify_all();
    while (j->run_one()) {
    }
    {
      std::unique_lock lock(j->done_mutex);
      j->done_cv.wait(lock, [&] {
        return j->finished.load(std::memory_order_acquire) == j->chunk_count;
      });
    }
    {
      std::lock_guard lock(mutex_);
      std::erase(queue_, j);
    }
    if (j->error) std::rethrow_exception(j->error);
  }

 private:
  void stop_all() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  void work() {
    for (;;) {
      std::shared_ptr<job> j;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] {
          while (!queue_.empty() && queue_.front()->exhausted()) queue_.pop_front();
          return stopping_ || !queue_.empty();
        });
        if (stopping_) return;
        j = queue_.front();
      }
      while (j->run_one()) {
      }
    }
  }

  std::mutex resize_mutex_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<job>> queue_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
  std::atomic<std::size_t> threads_{1};
};

thread_pool& pool() {
  static thread_pool instance;
  return instance;
}

}  // namespace

void parallel_for(std::size_t begin, std::size_t end,
                  const std::function<void(std::size_t, std::size_t)>& body,
                  std::size_t min_chunk) {
  if (end <= begin) return;
  const std::size_t count = end - begin;
  min_chunk = std::max<std::size_t>(min_chunk, 1);
  auto& p = pool();
  const std::size_t threads = p.threads();
  // A few chunks per thread balance uneven progress without much claiming overhead.
  const std::size_t max_chunks = std::max<std::size_t>(1, count / min_chunk);
  const std::size_t chunks = std::min(max_chunks, threads * 4);
  if (inside_parallel_body || threads == 1 || chunks == 1) {
    body(begin, end);
    return;
  }
  auto j = std::make_shared<job>();
  j->body = &body;
  j->begin = begin;
  j->end = end;
  j->chunk = (count + chunks - 1) / chunks;
  j->chunk_count = (count + j->chunk - 1) / j->chunk;
  p.run(j);
}

void set_parallelism(std::size_t threads) { pool().resize(threads); }

std::size_t parallelism() noexcept { return pool().threads(); }

}  // namespace coprove::field
