// run_spinning: poll for a short window after activity, then block (see spin_runner.hpp).
#include "coprove/runtime/spin_runner.hpp"

#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace coprove::runtime {

namespace {

using clock_type = std::chrono::steady_clock;

// Tells the core this is a spin loop: frees the sibling hyper-thread and avoids the memory-order
// flush when the loop exits.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// A few pauses between polls: each poll takes the scheduler's mutex (and, with a reactor, makes
// a non-blocking epoll_wait), which a poster from another thread then contends with.
constexpr int pauses_per_poll = 16;
// Fewer while a spin_source is busy: its poll is a memory read or two, and a completion found
// sooner is the whole point.
constexpr int pauses_per_source_poll = 4;

}  // namespace

std::size_t run_spinning(boost::asio::io_context& io, std::chrono::microseconds spin, spin_stats& stats,
                         spin_source* source) {
  if (spin.count() < 0) throw std::invalid_argument("run_spinning: the spin window must not be negative");
  std::size_t total = 0;
  for (;;) {
    ++stats.blocking_waits;
    const std::size_t woken = io.run_one();
    if (woken == 0) return total;  // stopped, or out of work
    total += woken;
    stats.handlers += woken;

    auto deadline = clock_type::now() + spin;
    for (;;) {
      if (const std::size_t n = io.poll(); n != 0) {
        total += n;
        stats.handlers += n;
        stats.handlers_spinning += n;
        deadline = clock_type::now() + spin;
        continue;
      }
      // poll() found nothing: the context was stopped (by stop(), or because its work ran out),
      // or nothing is ready yet.
      if (io.stopped()) return total;
      if (source != nullptr && source->busy()) {
        if (const std::size_t done = source->poll_ready(); done != 0) {
          stats.source_completions += done;
          continue;  // their waiters are queued on `io`: run them now
        }
        if (clock_type::now() >= deadline) break;
        for (int i = 0; i < pauses_per_source_poll; ++i) cpu_relax();
        continue;
      }
      if (clock_type::now() >= deadline) break;
      for (int i = 0; i < pauses_per_poll; ++i) cpu_relax();
    }
  }
}

std::size_t run_spinning(boost::asio::io_context& io, std::chrono::microseconds spin, spin_stats& stats) {
  return run_spinning(io, spin, stats, nullptr);
}

std::size_t run_spinning(boost::asio::io_context& io, std::chrono::microseconds spin) {
  spin_stats ignored;
  return run_spinning(io, spin, ignored);
}

}  // namespace coprove::runtime
