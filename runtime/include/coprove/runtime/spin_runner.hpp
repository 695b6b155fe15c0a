// run_spinning: runs an io_context like run(), except that after the last handler it keeps
// polling for a short window before it falls back to a blocking wait.
//
// Why: a thread blocked in io_context::run() sleeps in epoll_wait or on a futex, and waking it
// from another thread (a completion posted by the CUDA completion bridge) costs about 7 us on the
// reference host (bench/PINNED_NOTES.md), as much as an empty kernel's whole round trip. During a
// burst of GPU work the next completion usually arrives within microseconds of the last handler,
// so a thread that is still polling then picks it up with no wake-up at all; after the window it
// blocks, so an idle io_context still costs next to no CPU.
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

}  // namespace coprove::runtime
