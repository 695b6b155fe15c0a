// Formatting of the run report. Reads the report JSON defensively: a key that is missing prints
// as "-" rather than failing the run after the work is done.
#include "report.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <sstream>
#include <string_view>

namespace coprove::app {

namespace json = boost::json;

namespace {

const json::value* at(const json::object& o, std::string_view path) {
  const json::object* current = &o;
  while (true) {
    const auto dot = path.find('.');
    const auto* v = current->if_contains(path.substr(0, dot));
    if (!v || dot == std::string_view::npos) return v;
    if (!v->is_object()) return nullptr;
    current = &v->get_object();
    path = path.substr(dot + 1);
  }
}

double number(const json::object& o, std::string_view path, double fallback = 0.0) {
  const auto* v = at(o, path);
  if (!v) return fallback;
  if (v->is_double()) return v->get_double();
  if (v->is_int64()) return static_cast<double>(v->get_int64());
  if (v->is_uint64()) return static_cast<double>(v->get_uint64());
  if (v->is_bool()) return v->get_bool() ? 1.0 : 0.0;
  return fallback;
}

std::string text(const json::object& o, std::string_view path) {
  const auto* v = at(o, path);
  if (!v) return "-";
  if (v->is_string()) return std::string(v->get_string());
  return json::serialize(*v);
}

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

std::string count(double v) { return fixed(v, 0); }

}  // namespace

std::string format_bytes(double bytes) {
  if (bytes >= 1024.0 * 1024.0 * 1024.0) return fixed(bytes / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
  if (bytes >= 1024.0 * 1024.0) return fixed(bytes / (1024.0 * 1024.0), 1) + " MiB";
  if (bytes >= 1024.0) return fixed(bytes / 1024.0, 1) + " KiB";
  return count(bytes) + " B";
}

std::string format_report(const json::object& r, const std::string& memory_plan_text) {
  std::ostringstream out;
  const double partitions = number(r, "partitions");
  const double verified = number(r, "verified");
  const double failed = number(r, "failed");
  out << "\ncoprove run report\n";
  out << "  workload       " << text(r, "workload.jobs") << " job(s) x " << text(r, "workload.partitions")
      << " partitions of " << text(r, "workload.circuit") << " 2^" << text(r, "workload.log_constraints")
      << " constraints\n";
  out << "  backend        " << text(r, "backend") << " (" << text(r, "devices") << ")\n";
  out << "  result         " << count(verified) << "/" << count(partitions) << " partitions verified, "
      << count(failed) << " failed, " << count(number(r, "cancelled")) << " cancelled" << (failed == 0 && verified == partitions ? "  [OK]" : "  [FAILED]") << "\n";
  out << "  throughput     " << fixed(number(r, "throughput_partitions_per_s"), 2) << " partitions/s over "
      << fixed(number(r, "elapsed_s"), 2) << " s (wall " << fixed(number(r, "wall_s"), 2) << " s)\n";
  if (at(r, "warmup")) {
    out << "  warm-up        " << fixed(1e3 * number(r, "warmup.pinned_pool_s"), 1)
        << " ms waiting for the pinned pool's prewarm (" << text(r, "warmup.pinned_buffers") << " buffers, "
        << format_bytes(number(r, "warmup.pinned_bytes")) << ") before the first partition\n";
  }
  out << "  GPU busy       " << fixed(100.0 * number(r, "gpu_busy_fraction"), 1) << " % of the window";
  if (const auto* per = at(r, "gpu_busy_fraction_per_device"); per && per->is_array() && per->get_array().size() > 1) {
    out << " (per device:";
    for (const auto& d : per->get_array()) out << " " << fixed(100.0 * (d.is_double() ? d.get_double() : 0.0), 1) << "%";
    out << ")";
  }
  out << "\n";
  if (const double key_s = number(r, "key_residency_s"); key_s > 0) {
    out << "  proving key    " << fixed(key_s, 2) << " s of the window making it resident on the devices (upload";
    if (const double copies = number(r, "device_keys.copies"); copies > 1)
      out << " and " << count(copies) << " copies of its points, msm_copies " << text(r, "device_keys.source");
    out << "); the slots that waited for it were idle\n";
  }
  if (const auto* h2d = at(r, "h2d_gb_per_s"); h2d && number(r, "h2d_gb_per_s") > 0) {
    out << "  H2D            " << fixed(number(r, "h2d_gb_per_s"), 1) << " GB/s\n";
  }

  out << "  stages (ms)    " << "           p50        p99        max      count\n";
  if (const auto* stages = at(r, "stages"); stages && stages->is_object()) {
    for (const char* name : {"queue_wait", "synthesis", "gpu_queue", "h2d", "spmv", "gpu_compute", "d2h", "evaluation",
                             "msm", "prove", "proof_verify", "total"}) {
      const auto* s = stages->get_object().if_contains(name);
      if (!s || !s->is_object()) continue;
      const auto& so = s->get_object();
      char line[160];
      std::snprintf(line, sizeof line, "    %-14s %12.3f %10.3f %10.3f %10.0f\n", name, number(so, "p50_ms"),
                    number(so, "p99_ms"), number(so, "max_ms"), number(so, "count"));
      out << line;
    }
  }
  out << "  dispatch       " << text(r, "dispatch.policy") << ", depth " << text(r, "dispatch.depth")
      << " per device (" << text(r, "dispatch.depth_source");
  if (text(r, "dispatch.depth_source") == "measured")
    out << " over " << text(r, "dispatch.depth_basis.samples") << " partitions: synthesis "
        << fixed(number(r, "dispatch.depth_basis.synthesis_ms"), 1) << " ms, device "
        << fixed(number(r, "dispatch.depth_basis.device_ms"), 1) << " ms, after the device "
        << fixed(number(r, "dispatch.depth_basis.after_device_ms"), 1) << " ms a partition; at most "
        << text(r, "dispatch.depth_max") << ", the " << text(r, "dispatch.depth_max_reason") << " limit";
  out << "); max in flight " << text(r, "dispatch.max_in_flight") << ", max concurrent synthesis "
      << text(r, "dispatch.max_concurrent_synthesis") << ", max GPU queue " << text(r, "dispatch.max_gpu_queue")
      << "; worker slots idle behind the depth " << text(r, "dispatch.starved_slots.depth") << ", behind synthesis "
      << text(r, "dispatch.starved_slots.synthesis") << "\n";
  out << "  pinned pool    " << text(r, "pinned_pool.allocator") << ": " << text(r, "pinned_pool.allocations")
      << " allocations, " << text(r, "pinned_pool.reuses") << " reuses of " << text(r, "pinned_pool.checkouts")
      << " checkouts (" << fixed(100.0 * number(r, "pinned_pool.reuse_fraction"), 1) << " %), "
      << text(r, "pinned_pool.fallbacks") << " fallbacks, " << text(r, "pinned_pool.waits") << " waits; peak "
      << format_bytes(number(r, "pinned_pool.peak_bytes_in_use")) << " of "
      << format_bytes(number(r, "pinned_pool.capacity_bytes")) << "\n";
  out << "  pinned inputs  " << text(r, "pinned_partitions") << " of " << count(partitions)
      << " partitions synthesized into page-locked buffers\n";
  out << "  PCE            " << text(r, "pce.policy") << ": " << text(r, "pce.hits") << " hits, "
      << text(r, "pce.slow_path") << " slow path, " << text(r, "pce.builds") << " builds, " << text(r, "pce.waits")
      << " waits, " << format_bytes(number(r, "pce.bytes")) << "; SpMV of " << text(r, "syntheses.spmv_on_backend")
      << " on the backend (only the assignment copied)\n";
  if (const auto* cache = at(r, "pce.cache"); cache && cache->is_object()) {
    out << "  PCE cache      " << (text(r, "pce.cache_dir").empty() ? std::string("off") : text(r, "pce.cache_dir"));
    for (const auto& [id, state] : cache->get_object()) {
      const auto* seconds = at(r, "pce.cache_seconds");
      const json::value* v = seconds && seconds->is_object() ? seconds->get_object().if_contains(id) : nullptr;
      const double s = v && v->is_number() ? v->to_number<double>() : 0.0;
      out << "; " << std::string_view(id) << " " << (state.is_string() ? std::string(state.get_string()) : "-")
          << " in " << fixed(1e3 * s, 1) << " ms";
    }
    out << "\n";
  }
  out << "  bottleneck     " << text(r, "bottleneck.message") << "\n";
  out << "  memory plan\n";
  std::istringstream plan(memory_plan_text);
  for (std::string line; std::getline(plan, line);) out << "    " << line << "\n";
  return out.str();
}

}  // namespace coprove::app
