// The engine's status and report as JSON, for the service, the binary and the benchmarks.
#include <coprove/engine/engine_report.hpp>

#include <boost/json/array.hpp>

namespace coprove::engine {
namespace {

boost::json::array names_json(const std::vector<std::string>& names) {
  boost::json::array out;
  for (const auto& name : names) out.push_back(boost::json::value(name));
  return out;
}

boost::json::object units_json(const resource_units& u) {
  return {{"capacity", u.capacity}, {"available", u.available}};
}

// The depth's figures into a dispatch object: depth_source, depth_max and what they came from.
void add_depth(boost::json::object& dispatch, const depth_basis& b) {
  dispatch["depth_source"] = b.source;
  dispatch["depth_max"] = b.max;
  dispatch["depth_max_reason"] = b.max_reason;
  dispatch["depth_basis"] = boost::json::object{{"synthesis_ms", b.synthesis_ms}, {"device_ms", b.device_ms},
                                                {"after_device_ms", b.after_device_ms}, {"samples", b.samples},
                                                {"wanted", b.wanted}, {"changes", b.changes}};
}

// pce.cache (circuit id -> loaded, built or off), pce.cache_seconds and pce.cache_dir.
void add_pce_cache(boost::json::object& pce, const std::string& dir, const std::map<std::string, pce_cache_entry>& cache) {
  boost::json::object states, seconds, files;
  for (const auto& [id, e] : cache) {
    states[id] = e.state;
    seconds[id] = e.seconds;
    if (!e.file.empty()) files[id] = e.file;
  }
  pce["cache_dir"] = dir;
  pce["cache"] = std::move(states);
  pce["cache_seconds"] = std::move(seconds);
  pce["cache_files"] = std::move(files);
}

boost::json::object bottleneck_json(const bottleneck_report& b) {
  return {{"kind", b.kind}, {"message", b.message}};
}

}  // namespace

boost::json::object to_json(const engine_status& s) {
  const pinned::pool_stats& ps = s.pinned_pool;
  boost::json::object o;
  o["backend"] = s.backend;
  o["devices"] = names_json(s.devices);
  o["worker_slots_per_device"] = s.worker_slots_per_device;
  o["memory_plan"] = s.plan.to_json();
  o["device_keys"] = s.device_keys.to_json();
  o["pinned_pool"] = boost::json::object{{"allocator", ps.allocator},
                                         {"capacity_bytes", ps.capacity_bytes},
                                         {"bytes_allocated", ps.bytes_allocated},
                                         {"bytes_in_use", ps.bytes_in_use},
                                         {"peak_bytes_in_use", ps.peak_bytes_in_use},
                                         {"checkouts", ps.checkouts},
                                         {"reuses", ps.reuses},
                                         {"allocations", ps.allocations},
                                         {"fallbacks", ps.fallbacks},
                                         {"waiting", ps.waiting}};
  o["pce"] = boost::json::object{{"policy", std::string(to_string(s.pce_policy))},
                                 {"bytes", s.pce_bytes},
                                 {"hits", s.pce.hits},
                                 {"slow_path", s.pce.slow_path},
                                 {"builds", s.pce.builds},
                                 {"waits", s.pce.waits}};
  add_pce_cache(o["pce"].as_object(), s.pce_cache_dir, s.pce_cache);
  o["gpu_slots"] = units_json(s.gpu_slots);
  o["memory_reservation"] = boost::json::object{{"capacity_bytes", s.memory_reservation.capacity},
                                                {"available_bytes", s.memory_reservation.available}};
  o["full_input_slots"] = units_json(s.full_input_slots);
  const auto& d = s.dispatch;
  o["dispatch"] = boost::json::object{{"policy", std::string(to_string(d.policy))},
                                      {"depth", d.depth},
                                      {"queued", d.queued},
                                      {"in_flight", d.in_flight},
                                      {"synthesizing", d.synthesizing},
                                      {"gpu_queue", d.gpu_queue},
                                      {"max_in_flight", d.max_in_flight},
                                      {"max_concurrent_synthesis", d.max_concurrent_synthesis}};
  add_depth(o["dispatch"].as_object(), d.basis);
  o["bottleneck"] = bottleneck_json(s.bottleneck);
  o["jobs"] = boost::json::object{{"queued", s.jobs.queued},
                                  {"running", s.jobs.running},
                                  {"finished", s.jobs.finished},
                                  {"open_partitions", s.jobs.open_partitions},
                                  {"retained_bytes", s.jobs.retained_bytes},
                                  {"expired", s.jobs.expired}};
  o["domains"] = s.domains;
  return o;
}

boost::json::object to_json(const engine_report& r) {
  const pinned::pool_stats& ps = r.pinned_pool;
  boost::json::object stages;
  for (const auto& [name, st] : r.stages)
    stages[name] = boost::json::object{
        {"count", st.count}, {"mean_ms", st.mean_ms}, {"p50_ms", st.p50_ms}, {"p99_ms", st.p99_ms}, {"max_ms", st.max_ms}};
  boost::json::array busy;
  for (double f : r.gpu_busy_fraction_per_device) busy.push_back(f);
  const double reuse_fraction =
      ps.checkouts > 0 ? static_cast<double>(ps.reuses) / static_cast<double>(ps.checkouts) : 0.0;
  const auto& d = r.dispatch;
  boost::json::object out{
      {"backend", r.backend},
      {"devices", names_json(r.devices)},
      {"partitions", r.partitions()},
      {"verified", r.verified},
      {"failed", r.failed},
      {"cancelled", r.cancelled},
      {"pinned_partitions", r.pinned_partitions},
      {"jobs", boost::json::object{{"done", r.jobs_done}, {"failed", r.jobs_failed}, {"cancelled", r.jobs_cancelled}}},
      {"elapsed_s", r.elapsed_s},
      {"throughput_partitions_per_s", r.throughput_partitions_per_s},
      {"dispatch", boost::json::object{{"policy", std::string(to_string(d.policy))},
                                       {"depth", d.depth},
                                       {"devices", d.devices},
                                       {"max_in_flight", d.max_in_flight},
                                       {"max_concurrent_synthesis", d.max_concurrent_synthesis},
                                       {"max_gpu_queue", d.max_gpu_queue},
                                       {"starved_slots", boost::json::object{{"depth", d.starved_by_depth},
                                                                             {"synthesis", d.starved_by_synthesis}}}}},
      {"pinned_pool", boost::json::object{{"allocator", ps.allocator},
                                          {"allocations", ps.allocations},
                                          {"reuses", ps.reuses},
                                          {"checkouts", ps.checkouts},
                                          {"reuse_fraction", reuse_fraction},
                                          {"fallbacks", ps.fallbacks},
                                          {"waits", ps.waits},
                                          {"capacity_bytes", ps.capacity_bytes},
                                          {"peak_bytes_in_use", ps.peak_bytes_in_use}}},
      {"pce", boost::json::object{{"policy", std::string(to_string(r.pce_policy))},
                                  {"hits", r.pce.hits},
                                  {"slow_path", r.pce.slow_path},
                                  {"builds", r.pce.builds},
                                  {"waits", r.pce.waits},
                                  {"bytes", r.pce_bytes}}},
      {"syntheses", boost::json::object{{"pce", r.syntheses.pce},
                                        {"slow", r.syntheses.slow},
                                        {"configured", r.syntheses.configured},
                                        {"spmv_on_backend", r.syntheses.spmv_on_backend},
                                        {"late_abc", r.syntheses.late_abc}}},
      {"gpu_busy_fraction", r.gpu_busy_fraction},
      {"gpu_busy_fraction_per_device", std::move(busy)},
      {"key_residency_s", r.key_residency_s},
      {"h2d_gb_per_s", r.h2d_gb_per_s},
      {"stages", std::move(stages)},
      {"memory_plan", r.plan.to_json()},
      {"device_keys", r.device_keys.to_json()}};
  add_depth(out["dispatch"].as_object(), d.basis);
  add_pce_cache(out["pce"].as_object(), r.pce_cache_dir, r.pce_cache);
  out["bottleneck"] = bottleneck_json(r.bottleneck);
  return out;
}

}  // namespace coprove::engine
