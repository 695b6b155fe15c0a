// Progress lines (see progress.hpp).
#include "progress.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>

namespace coprove::app {

namespace asio = boost::asio;

asio::awaitable<void> show_progress(engine::engine& engine, const std::vector<std::uint64_t>& ids,
                                    std::size_t total, bool interactive, const bool& finished) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto start = std::chrono::steady_clock::now();
  std::size_t last = static_cast<std::size_t>(-1);
  for (bool done = false; !done;) {
    done = finished;  // one last drawing once every job has ended
    std::size_t completed = 0;
    for (auto id : ids) {
      if (const auto s = engine.status(id)) completed += s->completed;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (interactive) {
      constexpr int width = 30;
      const int filled = total == 0 ? 0 : static_cast<int>(width * completed / total);
      std::fprintf(stderr, "\r  [%.*s%*s] %zu/%zu partitions  %.1f/s  %.1f s ", filled,
                   "##############################", width - filled, "", completed, total,
                   elapsed > 0 ? static_cast<double>(completed) / elapsed : 0.0, elapsed);
      std::fflush(stderr);
    } else if (completed != last) {
      std::fprintf(stderr, "progress: %zu/%zu partitions done after %.2f s\n", completed, total, elapsed);
    }
    last = completed;
    if (done) break;
    timer.expires_after(std::chrono::milliseconds(interactive ? 100 : 50));
    (void)co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  if (interactive) std::fprintf(stderr, "\n");
}

}  // namespace coprove::app
