// run_spinning: runs an io_context like run(), except that after the last handler it keeps
// polling for a short window before it falls back to a blocking wait.
//
// Why: a thread blocked in io_context::run() sleeps in epoll_wait or on a futex, and waking it
// from another thread (a completion posted by the CUDA completion bridge) costs about 7 us on the
// reference host (docs/history/pinned-and-bridge.md), as much as an empty kernel's whole round trip. During a
// burst of GPU work the next completion usually arrives within microseconds of the last handler,
// so a thread that is still polling then picks it up with no wake-up at all; after the window it
// blocks, so an idle io_context still costs next to no CPU.
//
// A spin_source (the CUDA completion bridge) can be polled by the same loop while it has work in
// flight: a completion it finds is then set on this thread, and the waiter it posts to this
// io_context runs at the next poll, with no cross-thread post and no wake-up at all.
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>

namespace coprove::runtime {

/// The spin window run_spinning uses unless told otherwise.
inline constexpr std::chrono::microseconds default_spin_window{100};

/// What one run_spinning call did, updated as it runs by the thread that runs it: read it from a
/// handler of that io_context or after run_spinning returned.
struct spin_stats {
  std::uint64_t handlers = 0;           ///< handlers run in all
  std::uint64_t handlers_spinning = 0;  ///< of those, found by a poll within a spin window
  std::uint64_t blocking_waits = 0;     ///< calls of the blocking run_one(), the first included
  std::uint64_t source_completions = 0; ///< completions the spin_source reported while polled
};

/// Work in flight elsewhere (GPU completions) that a spinning thread may finish itself. The
/// source must outlive every run_spinning call given it.
class spin_source {
 public:
  virtual ~spin_source() = default;
  /// True while something is in flight; only then is poll_ready() called. Cheap, any thread.
  virtual bool busy() const noexcept = 0;
  /// Finishes what is ready without blocking (it may set completion signals, which post their
  /// waiters; it never runs a handler inline) and returns how many it finished.
  virtual std::size_t poll_ready() noexcept = 0;
};

/// Runs `io` until it is stopped or runs out of work, like io.run(), and returns the number of
/// handlers run. After each handler it keeps calling io.poll() (with a CPU pause between calls)
/// until nothing has run for `spin`, then blocks in io.run_one(). io.stop() from any thread ends
/// it during either phase. Exceptions from handlers propagate, as from run(); calling it again
/// continues. Throws std::invalid_argument for a negative `spin`; a zero window polls once after
/// each handler and otherwise behaves like run().
std::size_t run_spinning(boost::asio::io_context& io, std::chrono::microseconds spin = default_spin_window);

/// As above, and counts what it did into `stats` (added to what `stats` already holds).
std::size_t run_spinning(boost::asio::io_context& io, std::chrono::microseconds spin, spin_stats& stats);

/// As above, and within each spin window also polls `source` while it is busy() (a null source:
/// none). The window is not extended by work in flight: after it the thread blocks as before, and
/// the source must then finish its work by other means (the bridge's own poller thread).
std::size_t run_spinning(boost::asio::io_context& io, std::chrono::microseconds spin, spin_stats& stats,
                         spin_source* source);

}  // namespace coprove::runtime
