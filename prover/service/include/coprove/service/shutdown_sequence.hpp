// How `coprove serve` stops on SIGINT/SIGTERM: the first signal stops accepting and drains the
// running jobs within a deadline (the queued ones cancelled, or drained too, as configured), then
// cancels what is left; a second signal cancels at once; a third exits at once. Runs on the
// control executor, like the service and the engine's handlers.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <memory>

namespace coprove::engine {
class engine;
}  // namespace coprove::engine

namespace coprove::service {

class http_service;

struct shutdown_policy {
  bool drain = true;           ///< finish the running jobs (false: cancel them at the first signal)
  bool drain_queued = false;   ///< a drain also runs the jobs none of whose partitions started
  double drain_seconds = 60.0; ///< then whatever still runs is cancelled
};

class shutdown_sequence {
 public:
  /// `finished` runs once nothing is in flight and the connections are closed; `exit_now` on the
  /// third signal (it is expected not to return).
  shutdown_sequence(boost::asio::any_io_executor executor, engine::engine& engine, http_service& service,
                    shutdown_policy policy, std::function<void()> finished, std::function<void()> exit_now);
  ~shutdown_sequence() { *alive_ = false; }
  shutdown_sequence(const shutdown_sequence&) = delete;
  shutdown_sequence& operator=(const shutdown_sequence&) = delete;

  /// One SIGINT/SIGTERM. Call on the control executor.
  void signal();
  unsigned signals() const noexcept { return signals_; }

 private:
  void cancel_running(const char* why);
  void engine_stopped();

  boost::asio::any_io_executor executor_;
  engine::engine& engine_;
  http_service& service_;
  shutdown_policy policy_;
  std::function<void()> finished_;
  std::function<void()> exit_now_;
  boost::asio::steady_timer deadline_;
  boost::asio::steady_timer grace_;
  unsigned signals_ = 0;
  bool cancelling_ = false;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // handlers check it after ~shutdown_sequence
};

}  // namespace coprove::service
