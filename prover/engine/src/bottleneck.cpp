// The bottleneck from the report's figures (see the header for the kinds and their order).
#include <coprove/engine/bottleneck.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

namespace coprove::engine {
namespace {

double mean_ms(const engine_report& r, const char* stage) {
  const auto it = r.stages.find(stage);
  return it == r.stages.end() ? 0.0 : it->second.mean_ms;
}

std::string fixed(double v, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return buffer;
}

}  // namespace

bottleneck_report name_bottleneck(const engine_report& r) {
  bottleneck_report b;
  if (r.verified == 0) {
    b.message = "nothing measured yet: no partition has been verified in the report window";
    return b;
  }
  const double busy = r.gpu_busy_fraction;
  const std::string busy_text = fixed(100.0 * busy, 1) + " %";
  const double copy_ms = mean_ms(r, "h2d") + mean_ms(r, "d2h");
  const double device_ms = copy_ms + mean_ms(r, "spmv") + mean_ms(r, "gpu_compute") + mean_ms(r, "evaluation") +
                           mean_ms(r, "msm");
  const double cpu_ms = mean_ms(r, "synthesis") + mean_ms(r, "prove") + mean_ms(r, "proof_verify");
  const std::size_t device_slots = std::max<std::size_t>(r.devices.size(), 1) * std::max<std::size_t>(r.worker_slots_per_device, 1);
  // Partitions a second: what the synthesis threads can make (synthesis and proof both run on
  // them) and what the devices could take busy all the time: the partitions the window verified
  // per second of device busy time, which counts the slots' work once where it overlaps (a slot's
  // stage times do not: three slots sharing one device each see the device's time three times
  // over); before any device time is measured, every slot busy with its stage times.
  const double cpu_rate = cpu_ms > 0 ? static_cast<double>(std::max<std::size_t>(r.synthesis_threads, 1)) * 1e3 / cpu_ms : 0;
  const double device_rate = busy > 0 && r.throughput_partitions_per_s > 0 ? r.throughput_partitions_per_s / busy
                             : device_ms > 0 ? static_cast<double>(device_slots) * 1e3 / device_ms
                                             : 0;
  const auto& d = r.dispatch;

  if (busy >= device_bound_busy_fraction) {
    if (device_ms > 0 && copy_ms >= 0.5 * device_ms) {
      b.kind = "copies";
      b.message = "copy-bound: the devices were busy " + busy_text + " of the window and copies are " +
                  fixed(100.0 * copy_ms / device_ms, 0) + " % of a partition's device time (" + fixed(copy_ms, 2) +
                  " of " + fixed(device_ms, 2) + " ms); send only the assignment (engine.spmv backend) or use "
                  "page-locked buffers";
    } else {
      b.kind = "device";
      b.message = "device-bound: the devices were busy " + busy_text + " of the window at " +
                  fixed(r.throughput_partitions_per_s, 1) + " partitions/s; more devices or worker slots would go "
                  "faster";
    }
    return b;
  }
  // Making a key resident (its upload and the copies of its points) idles the slots that wait
  // for it: named when it explains at least half of the window the devices were not busy.
  const double key_share = r.elapsed_s > 0 ? std::min(r.key_residency_s / r.elapsed_s, 1.0) : 0.0;
  if (key_share >= 0.05 && key_share >= 0.5 * (1.0 - busy)) {
    const double rest_s = r.elapsed_s - r.key_residency_s;
    const double busy_rest = rest_s > 0 ? std::min(busy * r.elapsed_s / rest_s, 1.0) : 0.0;
    const std::size_t copies = r.device_keys.copies;
    b.kind = "key";
    b.message = "start-up: making the proving key resident on the devices took " + fixed(r.key_residency_s, 2) +
                " s of the " + fixed(r.elapsed_s, 2) + " s window (" + fixed(100.0 * key_share, 0) + " %; its upload" +
                (copies > 1 ? " and " + std::to_string(copies) + " copies of its points, msm_copies " +
                                  r.device_keys.source
                            : std::string()) +
                "); the devices were busy " + busy_text + " of the window, " + fixed(100.0 * busy_rest, 1) +
                " % of the rest; a longer run spreads it (more partitions a process, or coprove serve)" +
                (copies > 1 ? ", msm_copies 1 makes no copies (a shorter start, slower partitions)" : std::string());
    return b;
  }
  if (cpu_rate > 0 && device_rate > 0 && cpu_rate < device_rate) {
    b.kind = "synthesis";
    b.message = "CPU-bound: " + std::to_string(r.synthesis_threads) + " synthesis threads give " +
                fixed(cpu_rate, 1) + " partitions/s (synthesis " + fixed(mean_ms(r, "synthesis"), 1) +
                " ms and proof " + fixed(mean_ms(r, "prove") + mean_ms(r, "proof_verify"), 1) +
                " ms a partition); the devices could take " + fixed(device_rate, 1) + " (busy " + busy_text + ")";
    return b;
  }
  if (d.starved_by_depth > 0) {
    const bool at_plan = d.basis.max_reason == "memory" && d.depth >= d.basis.max;
    b.kind = at_plan ? "memory" : "depth";
    b.message = at_plan ? "memory-bound: worker slots went idle " + std::to_string(d.starved_by_depth) +
                              " times behind the depth of " + std::to_string(d.depth) +
                              " a device, the most the memory plan allows; raise engine.memory_budget"
                        : "depth-bound: worker slots went idle " + std::to_string(d.starved_by_depth) +
                              " times behind the depth of " + std::to_string(d.depth) + " a device (" +
                              d.basis.source + "); " +
                              (d.basis.source == "configured"
                                   ? "raise engine.depth_per_device or leave it unset to measure it"
                                   : "the stage times asked for " + std::to_string(d.basis.wanted) + " (at most " +
                                         std::to_string(d.basis.max) + "), and it changed " +
                                         std::to_string(d.basis.changes) +
                                         " times as they settled; a fixed engine.depth_per_device above it keeps "
                                         "the slots fed at the cost of memory and latency");
    return b;
  }
  b.message = "nothing saturated: the devices were busy " + busy_text + ", the synthesis threads could give " +
              fixed(cpu_rate, 1) + " partitions/s of the " + fixed(device_rate, 1) +
              " the devices could take, and no worker slot waited behind the depth: the work ran out or start-up "
              "took the window (more partitions, or more jobs at once)";
  return b;
}

}  // namespace coprove::engine
