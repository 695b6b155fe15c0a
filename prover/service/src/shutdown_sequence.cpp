// The shutdown of `coprove serve`: drain with a deadline, then cancel; a second signal cancels, a
// third exits.
#include "coprove/service/shutdown_sequence.hpp"

#include "coprove/service/http_service.hpp"

#include <coprove/engine/engine.hpp>
#include <coprove/runtime/log.hpp>

#include <chrono>

namespace coprove::service {

namespace asio = boost::asio;

shutdown_sequence::shutdown_sequence(asio::any_io_executor executor, engine::engine& engine, http_service& service,
                                     shutdown_policy policy, std::function<void()> finished,
                                     std::function<void()> exit_now)
    : executor_(executor),
      engine_(engine),
      service_(service),
      policy_(policy),
      finished_(std::move(finished)),
      exit_now_(std::move(exit_now)),
      deadline_(executor),
      grace_(executor) {}

void shutdown_sequence::signal() {
  ++signals_;
  if (signals_ >= 3) {
    COPROVE_LOG(warning, "app") << "third signal: exiting at once";
    exit_now_();
    return;
  }
  if (signals_ == 2) {
    cancel_running("second signal");
    return;
  }
  service_.stop_accepting();
  auto alive = alive_;
  const auto on_stopped = [this, alive](std::error_code ec) {
    if (!*alive) return;
    if (ec) {
      COPROVE_LOG(warning, "app") << "engine shutdown: " << ec.message();
    }
    engine_stopped();
  };
  if (!policy_.drain) {
    COPROVE_LOG(info, "app") << "no longer accepting; cancelling the jobs in flight";
    cancelling_ = true;
    engine_.async_shutdown(false, on_stopped);
    return;
  }
  const std::size_t cancelled = policy_.drain_queued ? 0 : engine_.cancel_queued();
  COPROVE_LOG(info, "app") << "no longer accepting; draining the jobs "
                           << (policy_.drain_queued ? "in flight and queued" : "running") << " for at most "
                           << policy_.drain_seconds << " s" << (cancelled ? "; cancelled " : "")
                           << (cancelled ? std::to_string(cancelled) + " queued job(s)" : "");
  engine_.async_shutdown(true, on_stopped);
  deadline_.expires_after(std::chrono::duration_cast<asio::steady_timer::duration>(
      std::chrono::duration<double>(policy_.drain_seconds)));
  deadline_.async_wait([this, alive](boost::system::error_code ec) {
    if (ec || !*alive) return;
    cancel_running("the drain took longer than server.drain_seconds");
  });
}

void shutdown_sequence::cancel_running(const char* why) {
  if (cancelling_ || stopped_) return;
  cancelling_ = true;
  deadline_.cancel();
  COPROVE_LOG(warning, "app") << why << ": cancelling the jobs still in flight";
  // The first shutdown's handler completes once they have given everything back.
  engine_.async_shutdown(false, [](std::error_code) {});
}

void shutdown_sequence::engine_stopped() {
  if (stopped_) return;
  stopped_ = true;
  deadline_.cancel();
  // Responses to requests that were waiting on the jobs are written now; give them a moment
  // before closing every connection.
  grace_.expires_after(std::chrono::milliseconds(200));
  auto alive = alive_;
  grace_.async_wait([this, alive](const boost::system::error_code&) {
    if (!*alive) return;
    service_.close_connections();
    finished_();
  });
}

}  // namespace coprove::service
