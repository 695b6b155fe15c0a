// The admission depth from measurement. With engine.depth_per_device unset, the engine keeps each
// device fed with about as many partitions in flight as the time a partition holds its admission
// permit covers: a worker slot's partition takes `device` on the device, and meanwhile the ones
// behind it are synthesized (and the ones before it proved) on the CPU, so by Little's law
//   in flight per device ~ slots x ((1 + (synthesis + after device) / device) x margin + 1),
// the last term one partition ready behind each slot, so that a slot whose task ends starts the
// next at once (measured on an H200: a depth that covers the formula without it runs 2-3% below
// the best fixed depth, with the device busy all the time). It is bounded by what the CPU can use
// (three times the synthesis threads, since a partition also waits for its buffers, its copies and
// its proof while holding its permit, plus two partitions a slot: at the threads alone a
// synthesis-bound run measured 0.75x of a deeper one, and at twice them, 38 on a 16-core H200
// host, 0.937x of depth 40 at 2^22) and by the memory plan. It starts at the top
// of that range, since the memory plan and the warm pinned pool are sized for it already: the
// devices are fed from the first admission, where a low start measured on an H200 left the first
// seconds of a run below the best fixed depth while it climbed (0.63x over a 1.4 s window). Once a
// device's worth of partitions has ended it follows the measured stage times, smoothed. Pure
// arithmetic, no clock and no thread: the engine feeds it on its control executor and applies what
// it answers (async_semaphore::set_capacity).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace coprove::engine::detail {

/// What bounds the depth, fixed at construction.
struct depth_limits {
  std::size_t devices = 1;
  std::size_t slots_per_device = 1;
  std::size_t synthesis_threads = 1;
  /// Per device: the most partitions in flight the memory plan allows (the plan is sized for it).
  std::size_t plan_limit = 1;
};

/// One partition's stage times as the controller reads them.
struct depth_sample {
  std::uint64_t synthesis_ns = 0;     ///< on a synthesis thread
  std::uint64_t device_ns = 0;        ///< on a worker slot (copies, kernels, evaluation)
  std::uint64_t after_device_ns = 0;  ///< the proof and its check, on the CPU, permit still held
  /// The synthesis recorded its circuit's constraint cache: a one-off, not what later partitions
  /// take; used only until a steady synthesis has been seen.
  bool synthesis_one_off = false;
};

/// The figures a depth came from.
struct depth_figures {
  double synthesis_ms = 0, device_ms = 0, after_device_ms = 0;  ///< smoothed means; 0 before any sample
  std::uint64_t samples = 0;
  std::size_t wanted = 0;     ///< per device, what the formula asks before the limits
  std::size_t cpu_limit = 0;  ///< per device: 3 x synthesis threads / devices + 2 x slots
  std::size_t plan_limit = 0;
  std::size_t depth = 0;  ///< per device, now
  bool measured = false;  ///< false while the depth is still the one it started at
};

class depth_controller {
 public:
  /// Headroom over the formula: stage times vary, and a slot that waits costs more than a
  /// partition that waits. 1.25 asked for too few on an H200 (3 slots): at 2^22 with replayed
  /// synthesis 12-13 made 0.977x and 0.978x of a fixed 16 in two calls (busy 100 % at both), and a
  /// proof run at depth 9 left slots idle behind the depth; 2 asks for 16 and 12 there (at 2^24,
  /// where 10-12 was best by 1.5 %, for 14).
  static constexpr double margin = 2.0;
  /// Weight of a new sample in the smoothed means.
  static constexpr double smoothing = 0.2;

  /// Throws std::invalid_argument when devices, slots, threads or the plan's limit is 0.
  explicit depth_controller(depth_limits limits);

  /// The most partitions in flight per device the CPU can keep busy: three times the synthesis threads
  /// (threads / devices, rounded up), plus, per worker slot, one on the device and one ready.
  static std::size_t cpu_limit(const depth_limits& limits) noexcept;
  /// ceil(slots x ((1 + (synthesis + after) / device) x margin + 1)), at least slots.
  static std::size_t wanted(std::size_t slots, double synthesis_ms, double device_ms,
                            double after_device_ms) noexcept;

  /// The depth per device now.
  std::size_t depth() const noexcept { return depth_; }
  /// The least fall the depth takes from `depth`: two, or a quarter of it. A fall stops admissions
  /// until the partitions in flight drop below the new depth, so it waits for a clear one: on an
  /// H200 at 2^22, held at 38 by the CPU's limit, a fall of two at a time moved the depth 24 to 120
  /// times in a 3 s run as the smoothed device time wavered; with an eighth, a CPU-bound run whose
  /// formula wavered between 44 and 52 under a limit of 54 fell and rose again and made 0.925x of a
  /// fixed 56 (fixed 48 and 56 within 1 % of each other: past what the CPU needs, a deeper depth
  /// costs nothing there, a fall does).
  static std::size_t least_fall(std::size_t depth) noexcept { return depth / 4 > 2 ? depth / 4 : 2; }
  /// Takes one partition's stage times; returns the new depth when it changed. It changes only
  /// once slots x devices partitions have been measured; it rises as soon as the formula asks for
  /// more and falls only when it asks for least_fall(depth) or more fewer.
  std::optional<std::size_t> record(const depth_sample& sample);
  depth_figures figures() const noexcept;

 private:
  std::size_t clamp(std::size_t wanted) const noexcept;

  depth_limits limits_;
  std::size_t upper_ = 1;  // min(cpu limit, plan limit)
  std::size_t depth_ = 1;
  std::size_t wanted_ = 0;
  std::uint64_t samples_ = 0;
  bool measured_ = false;
  bool steady_synthesis_ = false;  // a synthesis that was not a one-off has been seen
  double synthesis_ms_ = 0, device_ms_ = 0, after_device_ms_ = 0;
};

}  // namespace coprove::engine::detail
