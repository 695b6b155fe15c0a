// What limits throughput, named in one line a person can act on: the device (busy >= 95 % of the
// window), the copies (when they are most of a busy device's time), the key (making a proving key
// resident on the devices took at least half of the window they were idle), synthesis (the CPU: the
// synthesis threads give fewer partitions a second than the devices could take), the depth
// (worker slots idled behind it with synthesis threads to spare), memory (the same, with the depth
// at the memory plan's limit), or none (nothing was saturated: the work ran out, or start-up
// dominated the window). Read from the report's figures alone.
#pragma once

#include <coprove/engine/engine_report.hpp>

namespace coprove::engine {

/// A device busy at least this fraction of the window is the bottleneck.
inline constexpr double device_bound_busy_fraction = 0.95;

/// The bottleneck of the report's window (its bottleneck field is not read).
bottleneck_report name_bottleneck(const engine_report& report);

}  // namespace coprove::engine
