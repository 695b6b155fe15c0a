// The admission strategies: semaphore, poll and unbounded.
#include <coprove/engine/detail/admission.hpp>

#include <boost/asio/bind_executor.hpp>

#include <system_error>

namespace coprove::engine::detail {

semaphore_admission::semaphore_admission(boost::asio::any_io_executor executor, std::size_t depth,
                                         admit_function admit, std::function<void()> wake)
    : admission(depth), executor_(executor), slots_(executor, depth), admit_(std::move(admit)), wake_(std::move(wake)) {}

void semaphore_admission::pump(dispatch_queue& queue) {
  while (!queue.empty()) {
    if (!held_) {
      held_ = slots_.try_acquire(1);
      if (!held_) {
        if (!acquiring_) {
          acquiring_ = true;
          slots_.async_acquire(1, boost::asio::bind_executor(executor_, [weak = weak_from_this()](std::error_code ec, runtime::permit p) {
                                 auto self = std::static_pointer_cast<semaphore_admission>(weak.lock());
                                 if (!self) return;
                                 self->on_granted(ec, std::move(p));
                               }));
        }
        return;
      }
    }
    admit_(queue.pop(), std::move(held_));
  }
  // Nothing to admit: a granted slot goes back rather than idling here.
  held_.release();
}

void semaphore_admission::on_granted(std::error_code ec, runtime::permit p) {
  acquiring_ = false;
  if (!ec) held_ = std::move(p);
  wake_();
}

poll_admission::poll_admission(boost::asio::any_io_executor executor, std::size_t capacity,
                               std::chrono::milliseconds interval, std::size_t limit,
                               const high_water_counter& gpu_queue, admit_function admit, std::function<void()> wake)
    : admission(capacity),
      timer_(executor),
      interval_(interval),
      limit_(limit),
      gpu_queue_(gpu_queue),
      admit_(std::move(admit)),
      wake_(std::move(wake)) {}

void poll_admission::pump(dispatch_queue& queue) {
  if (queue.empty() || armed_) return;
  armed_ = true;
  queue_ = &queue;
  timer_.expires_after(interval_);
  timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
    auto self = std::static_pointer_cast<poll_admission>(weak.lock());
    if (self) self->on_tick(ec);
  });
}

void poll_admission::on_tick(boost::system::error_code ec) {
  armed_ = false;
  if (ec) return;
  // The throttle as it was: it looks at the GPU queue only.
  while (!queue_->empty() && gpu_queue_.current() < limit_) admit_(queue_->pop(), {});
  wake_();
}

void unbounded_admission::pump(dispatch_queue& queue) {
  while (!queue.empty()) admit_(queue.pop(), {});
}

std::shared_ptr<admission> make_admission(const admission_config& cfg, boost::asio::any_io_executor executor,
                                          const high_water_counter& gpu_queue, admit_function admit,
                                          std::function<void()> wake) {
  switch (cfg.policy) {
    case dispatch_policy::poll:
      return std::make_shared<poll_admission>(executor, cfg.depth, cfg.poll_interval, cfg.poll_queue_limit, gpu_queue,
                                              std::move(admit), std::move(wake));
    case dispatch_policy::unbounded: return std::make_shared<unbounded_admission>(cfg.depth, std::move(admit));
    case dispatch_policy::semaphore: break;
  }
  return std::make_shared<semaphore_admission>(executor, cfg.depth, std::move(admit), std::move(wake));
}

}  // namespace coprove::engine::detail
