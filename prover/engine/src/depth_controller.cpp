// The admission depth from measured stage times (see the header for the formula).
#include <coprove/engine/detail/depth_controller.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace coprove::engine::detail {
namespace {

double ms_of(std::uint64_t ns) { return static_cast<double>(ns) / 1e6; }

// A smoothed mean that takes its first sample as it is.
void smooth(double& mean, double sample, bool first) {
  mean = first ? sample : mean + depth_controller::smoothing * (sample - mean);
}

}  // namespace

depth_controller::depth_controller(depth_limits limits) : limits_(limits) {
  if (limits_.devices == 0 || limits_.slots_per_device == 0 || limits_.synthesis_threads == 0 ||
      limits_.plan_limit == 0)
    throw std::invalid_argument("depth_controller: devices, worker slots, synthesis threads and the plan's limit "
                                "must be positive");
  upper_ = std::max<std::size_t>(1, std::min(cpu_limit(limits_), limits_.plan_limit));
  // The top of the range: what it costs is reserved already (see the header).
  depth_ = upper_;
}

std::size_t depth_controller::cpu_limit(const depth_limits& limits) noexcept {
  const std::size_t devices = std::max<std::size_t>(limits.devices, 1);
  return 3 * ((limits.synthesis_threads + devices - 1) / devices) + 2 * limits.slots_per_device;
}

std::size_t depth_controller::wanted(std::size_t slots, double synthesis_ms, double device_ms,
                                     double after_device_ms) noexcept {
  const double device = std::max(device_ms, 1e-6);
  const double in_flight =
      static_cast<double>(slots) *
      ((1.0 + (std::max(synthesis_ms, 0.0) + std::max(after_device_ms, 0.0)) / device) * margin + 1.0);
  // Far beyond any limit when the device takes no time at all; the limits cut it down.
  const double bounded = std::min(in_flight, 1e9);
  return std::max<std::size_t>(slots, static_cast<std::size_t>(std::ceil(bounded)));
}

std::size_t depth_controller::clamp(std::size_t w) const noexcept { return std::clamp<std::size_t>(w, 1, upper_); }

std::optional<std::size_t> depth_controller::record(const depth_sample& sample) {
  const bool first = samples_ == 0;
  ++samples_;
  smooth(device_ms_, ms_of(sample.device_ns), first);
  smooth(after_device_ms_, ms_of(sample.after_device_ns), first);
  if (!sample.synthesis_one_off && !steady_synthesis_) {
    // The first steady synthesis replaces whatever the one-offs said.
    steady_synthesis_ = true;
    synthesis_ms_ = ms_of(sample.synthesis_ns);
  } else if (!sample.synthesis_one_off || !steady_synthesis_) {
    smooth(synthesis_ms_, ms_of(sample.synthesis_ns), first);
  }
  wanted_ = wanted(limits_.slots_per_device, synthesis_ms_, device_ms_, after_device_ms_);
  if (samples_ < limits_.devices * limits_.slots_per_device) return std::nullopt;
  measured_ = true;
  const std::size_t target = clamp(wanted_);
  if (target > depth_ || target + least_fall(depth_) <= depth_) {
    depth_ = target;
    return depth_;
  }
  return std::nullopt;
}

depth_figures depth_controller::figures() const noexcept {
  depth_figures f;
  f.synthesis_ms = synthesis_ms_;
  f.device_ms = device_ms_;
  f.after_device_ms = after_device_ms_;
  f.samples = samples_;
  f.wanted = wanted_;
  f.cpu_limit = cpu_limit(limits_);
  f.plan_limit = limits_.plan_limit;
  f.depth = depth_;
  f.measured = measured_;
  return f;
}

}  // namespace coprove::engine::detail
