// pool: page-locked host buffers handed out as leases. Buffers are reused by size class at page
// granularity with a bounded best fit (never rounded to powers of two); all allocation happens on
// one allocator thread, off the checkout path; an exhausted pool makes checkouts wait (FIFO,
// cancellable) unless the owner configured the `pageable` fallback, which is logged and counted.
#pragma once

#include "coprove/pinned/detail/checkout_op.hpp"
#include "coprove/pinned/host_allocator.hpp"
#include "coprove/pinned/lease.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <system_error>

namespace coprove::pinned {

/// Buffers are sized in whole pages of this many bytes.
inline constexpr std::size_t page_bytes = 4096;

/// A free buffer serves a request only if it is at most this fraction larger than the request
/// rounded to pages (1/64, about 1.6%): bounds the bytes a best fit can waste.
inline constexpr std::size_t best_fit_slack_divisor = 64;

/// `bytes` rounded up to whole pages (0 stays 0).
constexpr std::size_t round_up_to_pages(std::size_t bytes) noexcept {
  return (bytes + page_bytes - 1) / page_bytes * page_bytes;
}

struct pool_config {
  enum class fallback_policy { none, pageable };

  /// The most bytes of buffers the pool holds (free, in use and being allocated). Set by the
  /// owner (the memory plan); the pool never charges a budget of its own.
  std::size_t capacity_bytes = 0;
  /// Allocated in the background at construction (same as calling prewarm(count, bytes)).
  std::size_t prewarm_count = 0, prewarm_bytes = 0;
  /// shrink() frees idle buffers, largest first, while more than this many bytes are allocated.
  std::size_t high_watermark_bytes = std::numeric_limits<std::size_t>::max();
  /// A free buffer counts as idle once it has been free this long.
  std::chrono::milliseconds idle_timeout{30000};
  /// none: an exhausted pool makes checkouts wait. pageable: they get a pageable buffer instead
  /// (logged once at warning, counted in stats().fallbacks and coprove_pinned_fallbacks_total).
  fallback_policy fallback = fallback_policy::none;
};

struct pool_stats {
  std::string allocator;                 ///< the allocator's name
  std::uint64_t checkouts = 0;           ///< leases handed out (fallbacks included)
  std::uint64_t reuses = 0;              ///< served by a free buffer
  std::uint64_t allocations = 0;         ///< buffers allocated (prewarm included)
  std::uint64_t allocation_ns = 0;       ///< time spent in the allocator's allocate()
  std::uint64_t waits = 0;               ///< checkouts that queued because the pool was exhausted
  std::uint64_t wait_ns = 0;             ///< time those spent queued
  std::uint64_t fallbacks = 0;           ///< pageable fallback leases
  std::uint64_t frees = 0;               ///< buffers freed (shrink, eviction, capacity change)
  std::size_t bytes_allocated = 0;       ///< bytes of buffers held (free + in use + being allocated)
  std::size_t bytes_in_use = 0;          ///< capacity of the leased pool buffers
  std::size_t peak_bytes_in_use = 0;
  std::size_t capacity_bytes = 0;
  std::size_t bytes_requested_in_use = 0;  ///< size() of the leased pool buffers (waste = in_use - this)
  std::size_t free_buffers = 0;          ///< buffers ready for reuse
  std::size_t waiting = 0;               ///< checkouts queued or waiting for their allocation
  std::uint64_t cancellations = 0;       ///< checkouts cancelled while waiting
  std::uint64_t allocation_failures = 0;
};

/// A pool of page-locked host buffers.
///
/// Thread model: every member may be called from any thread (the state is behind a mutex);
/// leases may be released from any thread (for example a GPU completion). Completion handlers
/// always resume on their associated executor (the pool's executor when they have none), posted,
/// never inline in the call that completes them.
class pool {
 public:
  using executor_type = boost::asio::any_io_executor;

  /// Starts the allocator thread and the prewarm of `cfg`. Throws std::invalid_argument when
  /// `alloc` is null, capacity_bytes is 0 or the prewarm does not fit the capacity.
  pool(executor_type ex, std::unique_ptr<host_allocator> alloc, pool_config cfg);
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;
  /// Waiting checkouts complete with operation_aborted; free buffers are freed; leases still out
  /// stay valid and free their buffer when they are released.
  ~pool();

  /// Checks out a buffer of at least `bytes`: a best-fit free buffer, a new one made by the
  /// allocator thread, or, when the pool is exhausted, a place in the FIFO queue (or a pageable
  /// buffer under fallback = pageable). Completion: void(std::error_code, lease).
  /// Fairness: strict FIFO service (a checkout never overtakes an earlier waiter, even if it would
  /// fit); two checkouts served at the same moment may still see their handlers run in either
  /// order when one of them waited for a new buffer from the allocator thread.
  /// Errors: 0 bytes -> runtime::errc::invalid_argument; more than capacity ->
  /// runtime::errc::exceeds_capacity; allocation failure -> the allocator's error (std::errc::
  /// not_enough_memory for bad_alloc); pool destroyed -> operation_aborted.
  /// Cancellation (per-operation, terminal/partial/total): a queued checkout leaves the queue and
  /// completes with operation_aborted; one whose buffer is being allocated completes the same way
  /// and the new buffer joins the free list. Nothing is lost either way.
  template <boost::asio::completion_token_for<void(std::error_code, lease)> Token =
                boost::asio::default_completion_token_t<executor_type>>
  auto async_checkout(std::size_t bytes, Token&& token) {
    return boost::asio::async_initiate<Token, void(std::error_code, lease)>(
        [this](auto handler, std::size_t n) {
          using handler_type = std::decay_t<decltype(handler)>;
          start_checkout(detail::checkout_op_impl<handler_type>::create(std::move(handler), executor_, core_), n);
        },
        token, bytes);
  }

  /// A lease from a free buffer if one fits and nobody is queued; otherwise an empty lease, or a
  /// pageable lease when the pool is exhausted and fallback = pageable. Never allocates pinned
  /// memory. Throws std::invalid_argument for 0 bytes or more than the capacity.
  lease try_checkout(std::size_t bytes);

  /// Allocates `count` buffers of `bytes` in the background (on the allocator thread), into the
  /// free list. Throws std::invalid_argument for 0 bytes or when they do not fit the capacity.
  void prewarm(std::size_t count, std::size_t bytes);

  /// Changes the capacity. Lowering it frees idle buffers (largest first) until the pool fits;
  /// buffers in use stay until returned. Queued checkouts larger than the new capacity complete
  /// with exceeds_capacity. Throws std::invalid_argument for 0.
  void set_capacity(std::size_t bytes);

  /// Frees buffers idle for at least idle_timeout, largest first, while more than
  /// high_watermark_bytes are allocated. The allocator thread also does this periodically.
  void shrink();

  pool_stats stats() const;
  const host_allocator& allocator() const noexcept;
  const pool_config& config() const noexcept { return config_; }
  executor_type get_executor() const noexcept { return executor_; }

  /// Blocks until the allocator thread has finished the work queued so far (prewarm, frees).
  /// For start-up and tests; never call it on an executor thread that leases depend on.
  void wait_idle();

 private:
  void start_checkout(detail::checkout_op* op, std::size_t bytes);

  executor_type executor_;
  pool_config config_;
  std::shared_ptr<detail::pool_core> core_;
};

}  // namespace coprove::pinned
