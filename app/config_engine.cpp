// The engine.* section of the configuration: admission, synthesis, memory and tracing, in the order docs/CONFIG.md lists them.
#include "config_readers.hpp"

#include <coprove/r1cs/circuits.hpp>

namespace coprove::app::config_detail {
using r1cs::pce_policy;
using engine::dispatch_policy;

const std::vector<binding>& engine_bindings() {
  using k = config_kind;
  static const std::vector<binding> table = {
      {{"engine.dispatch", "dispatch", k::string, "\"semaphore\"",
        "Admission policy: semaphore (each GPU completion admits exactly one partition), poll (admit while "
        "fewer than engine.poll_queue_limit are queued for the GPU, checked every engine.poll_interval_ms) or "
        "unbounded (admit everything; only memory holds partitions back)."},
       [](app_config& c, const json::value& v) {
         c.engine.policy = as_parsed(v, "engine.dispatch", engine::parse_dispatch_policy, "semaphore, poll, unbounded");
       },
       [](const app_config& c) { return json::value(to_string(c.engine.policy)); }},
      {{"engine.depth_per_device", "depth", k::unsigned_integer, "0 (measured)",
        "Partitions the semaphore policy admits per device. 0: measured from the stage times (worker slots x ((1 + "
        "CPU time / device time a partition) x 2 + 1)), at most what the synthesis threads can use and the memory "
        "plan allows; the report says the depth chosen and what it came from."},
       [](app_config& c, const json::value& v) {
         c.engine.depth_per_device = as_unsigned(v, "engine.depth_per_device", 0, 4096);
       },
       [](const app_config& c) { return json::value(c.engine.depth_per_device); }},
      {{"engine.poll_interval_ms", "poll-interval-ms", k::unsigned_integer, "5", "How often the poll policy looks."},
       [](app_config& c, const json::value& v) {
         c.engine.poll_interval = std::chrono::milliseconds(as_unsigned(v, "engine.poll_interval_ms", 1, 60000));
       },
       [](const app_config& c) { return json::value(c.engine.poll_interval.count()); }},
      {{"engine.poll_queue_limit", "poll-queue-limit", k::unsigned_integer, "4",
        "The poll policy admits while fewer partitions than this are queued for or running on the GPU."},
       [](app_config& c, const json::value& v) {
         c.engine.poll_queue_limit = as_unsigned(v, "engine.poll_queue_limit", 1, 4096);
       },
       [](const app_config& c) { return json::value(c.engine.poll_queue_limit); }},
      {{"engine.pce", "pce", k::string, "\"wait\"",
        "Constraint cache policy: wait (partitions of a circuit whose cache is being built wait for it) or "
        "eager (they take the slow synthesis path meanwhile)."},
       [](app_config& c, const json::value& v) {
         c.engine.pce = as_parsed(v, "engine.pce", r1cs::parse_pce_policy, "wait, eager");
       },
       [](const app_config& c) { return json::value(to_string(c.engine.pce)); }},
      {{"engine.pce_cache_dir", "pce-cache", k::string, "($XDG_CACHE_HOME/coprove or ~/.cache/coprove)",
        "Folder where each circuit's constraint cache (PCE) is saved once built and loaded from by later runs "
        "(<circuit>_<log>.pce; a corrupt or stale file is rebuilt, said at warning). Empty turns it off (each "
        "run builds the cache again; said at start)."},
       [](app_config& c, const json::value& v) { c.pce_cache_dir = as_string(v, "engine.pce_cache_dir"); },
       [](const app_config& c) { return json::value(resolved_pce_cache_dir(c)); }},
      {{"engine.spmv", "spmv", k::string, "\"backend\"",
        "Where a cached-constraint (PCE) synthesis evaluates A w, B w, C w: backend (only the assignment is "
        "written and copied; a GPU evaluates the matrices, a third or less of the host bytes) or host (the "
        "synthesis thread writes a, b and c)."},
       [](app_config& c, const json::value& v) {
         c.engine.backend_spmv = as_enum<bool>(v, "engine.spmv", {{"backend", true}, {"host", false}});
       },
       [](const app_config& c) { return json::value(c.engine.backend_spmv ? "backend" : "host"); }},
      {{"engine.synthesis_threads", "synthesis-threads", k::unsigned_integer, "0 (hardware threads)",
        "CPU threads for synthesis and evaluation."},
       [](app_config& c, const json::value& v) {
         c.engine.synthesis_threads = as_unsigned(v, "engine.synthesis_threads", 0, 1024);
       },
       [](const app_config& c) { return json::value(c.engine.synthesis_threads); }},
      {{"engine.memory_budget", "memory-budget", k::bytes, "0 (auto from free memory)",
        "Total the memory plan splits into pinned pool, constraint cache and synthesis working set: bytes, "
        "or a string with a unit such as \"2GiB\". The engine refuses to start when the plan does not fit."},
       [](app_config& c, const json::value& v) { c.engine.memory_budget_bytes = as_bytes(v, "engine.memory_budget"); },
       [](const app_config& c) { return json::value(c.engine.memory_budget_bytes); }},
      {{"engine.max_log_constraints", "max-log-constraints", k::unsigned_integer, "0 (workload.log_constraints)",
        "The largest partition (log2 constraints) the memory plan sizes buffers for; larger jobs are rejected. "
        "For `coprove serve`, the largest job it accepts."},
       [](app_config& c, const json::value& v) {
         c.plan_log_constraints = static_cast<unsigned>(as_unsigned(v, "engine.max_log_constraints", 0, 32));
       },
       [](const app_config& c) { return json::value(c.plan_log_constraints); }},
      {{"engine.key_memory", "key-memory", k::bytes, "0 (the keys `serve` knows at start)",
        "Host bytes the memory plan reserves for proving keys, which keys loaded while `coprove serve` runs "
        "(POST /v1/keys, engine.key_loading) must fit: bytes, or a string with a unit such as \"8GiB\". A load "
        "past it is refused with 507 key_does_not_fit, or makes room under engine.key_eviction = lru."},
       [](app_config& c, const json::value& v) { c.engine.key_memory_bytes = as_bytes(v, "engine.key_memory"); },
       [](const app_config& c) { return json::value(c.engine.key_memory_bytes); }},
      {{"engine.key_loading", "key-loading", k::string, "\"preload\"",
        "When `coprove serve` reads the keys it knows at start (--keys directories, or the development key): "
        "preload (all of them at start, on the engine's CPU threads, while it already listens) or on_demand "
        "(each when its first job comes, which waits for it). A job for a known key that is not loaded, evicted "
        "say, loads it either way."},
       [](app_config& c, const json::value& v) {
         c.engine.key_loading = as_enum<engine::key_loading>(
             v, "engine.key_loading", {{"preload", engine::key_loading::preload}, {"on_demand", engine::key_loading::on_demand}});
       },
       [](const app_config& c) {
         return json::value(c.engine.key_loading == engine::key_loading::preload ? "preload" : "on_demand");
       }},
      {{"engine.key_eviction", "key-eviction", k::string, "\"never\"",
        "What a key load that does not fit engine.key_memory does: never (refused, 507 key_does_not_fit) or lru "
        "(the least recently used keys that no queued or running job holds are evicted first, each said at info "
        "and counted in coprove_engine_key_evictions_total{reason=\"lru\"})."},
       [](app_config& c, const json::value& v) {
         c.engine.key_eviction = as_enum<engine::key_eviction>(
             v, "engine.key_eviction", {{"never", engine::key_eviction::never}, {"lru", engine::key_eviction::lru}});
       },
       [](const app_config& c) {
         return json::value(c.engine.key_eviction == engine::key_eviction::lru ? "lru" : "never");
       }},
      {{"engine.max_partitions_per_job", "max-partitions", k::unsigned_integer, "4096",
        "The most partitions one job may have; `coprove serve` rejects larger jobs with 422."},
       [](app_config& c, const json::value& v) {
         c.engine.max_partitions_per_job = as_unsigned(v, "engine.max_partitions_per_job", 1, 1u << 20);
       },
       [](const app_config& c) { return json::value(c.engine.max_partitions_per_job); }},
      {{"engine.pageable_fallback", "pageable-fallback", k::boolean, "false",
        "Let the pinned pool hand out pageable buffers when it is exhausted (logged once and counted) instead "
        "of waiting."},
       [](app_config& c, const json::value& v) { c.engine.pageable_fallback = as_bool(v, "engine.pageable_fallback"); },
       [](const app_config& c) { return json::value(c.engine.pageable_fallback); }},
      {{"engine.prewarm_partitions", "prewarm", k::unsigned_integer, "0 (the most the depth may reach)",
        "Pinned buffer sets allocated at start-up, off the hot path: `run` and `serve` wait for them before the "
        "first partition. The default warms the most the depth may reach (what the memory plan charges), so a "
        "rising measured depth never page-locks on a partition's path; fewer leave the rest to be allocated "
        "when partitions lease them."},
       [](app_config& c, const json::value& v) {
         c.engine.prewarm_partitions = as_unsigned(v, "engine.prewarm_partitions", 0, 4096);
       },
       [](const app_config& c) { return json::value(c.engine.prewarm_partitions); }},
      {{"engine.trace_max_events", "trace-max-events", k::unsigned_integer, "1048576",
        "Events the Chrome trace keeps (more are dropped and counted). Tracing is on when --trace is given."},
       [](app_config& c, const json::value& v) {
         c.engine.trace_max_events = as_unsigned(v, "engine.trace_max_events", 1, std::uint64_t{1} << 26);
       },
       [](const app_config& c) { return json::value(c.engine.trace_max_events); }},
  };
  return table;
}

}  // namespace coprove::app::config_detail
