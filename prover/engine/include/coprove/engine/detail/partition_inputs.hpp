// What one partition holds from admission to its end: the GPU slot (admission permit), the memory
// reservation, the full-input permit with its per-circuit count, and the a, b, c, h leases.
// Members are declared in acquisition order, so they are released in reverse (leases, count,
// full-input permit, reservation, GPU slot) when the struct goes, on success, failure and
// cancellation alike. Not thread-safe: the control executor acquires and releases it.
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/pinned/lease.hpp>
#include <coprove/pinned/pool.hpp>
#include <coprove/runtime/async_semaphore.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <functional>
#include <span>
#include <map>
#include <string>

namespace coprove::engine::detail {

/// Partitions of each circuit that hold a, b and c at once (the one building its PCE under
/// `wait`, or a late lease); while a circuit has one, its later partitions lease lean.
using full_input_counts = std::map<std::string, std::size_t, std::less<>>;

/// One partition counted in full_input_counts for as long as it lives. Movable, not copyable.
class [[nodiscard]] circuit_count {
 public:
  circuit_count() noexcept = default;
  circuit_count(full_input_counts& counts, const std::string& circuit_id);
  circuit_count(circuit_count&& other) noexcept;
  circuit_count& operator=(circuit_count&& other) noexcept;
  circuit_count(const circuit_count&) = delete;
  circuit_count& operator=(const circuit_count&) = delete;
  ~circuit_count() { release(); }

  explicit operator bool() const noexcept { return counts_ != nullptr; }
  void release() noexcept;

 private:
  full_input_counts* counts_ = nullptr;
  full_input_counts::iterator entry_{};
};

struct partition_inputs {
  runtime::permit gpu_slot;  ///< from admission (empty under poll and unbounded)
  runtime::permit memory;    ///< the synthesis working set
  circuit_count full_count;  ///< counted while it holds (or waits for) a, b and c
  runtime::permit full_input;
  pinned::lease a, b, c, h;  ///< b and c empty while the partition is lean

  /// True when every leased buffer is page-locked.
  bool is_pinned() const noexcept {
    return a.is_pinned() && (!b || b.is_pinned()) && (!c || c.is_pinned()) && h.is_pinned();
  }
  std::span<field::fr> a_span() noexcept { return a.as<field::fr>(); }
  std::span<field::fr> b_span() noexcept { return b.as<field::fr>(); }
  std::span<field::fr> c_span() noexcept { return c.as<field::fr>(); }
  std::span<field::fr> h_span() noexcept { return h.as<field::fr>(); }
};

/// Where a partition's inputs come from: the engine's semaphores, pool and per-circuit counts.
struct input_sources {
  runtime::async_semaphore& memory;
  runtime::async_semaphore* full_inputs;  ///< null when every partition holds a, b and c
  pinned::pool& pool;
  full_input_counts& full_counts;
};

/// Reserves `bytes` of synthesis working set into inputs.memory. Throws std::system_error with
/// the error of a wait that failed (cancellation: operation_aborted).
boost::asio::awaitable<void> reserve_memory(partition_inputs& inputs, input_sources& from, std::size_t bytes);

/// Leases a and h (lean) or a, b, c and h, the latter under the full-input permit when there is
/// one, counted for `circuit_id`. Throws as reserve_memory; what was acquired stays in `inputs`
/// (its destructor gives it back).
boost::asio::awaitable<void> lease_buffers(partition_inputs& inputs, input_sources& from, std::size_t vector_bytes,
                                           bool lean, const std::string& circuit_id);

/// A lean partition whose synthesis needs b and c after all: the full-input permit, the count,
/// then b and c. Throws as acquire_inputs.
boost::asio::awaitable<void> acquire_late_abc(partition_inputs& inputs, input_sources& from, std::size_t vector_bytes,
                                              const std::string& circuit_id);

}  // namespace coprove::engine::detail
