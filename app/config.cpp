// The configuration of the coprove binary: one table binds every key to its flag, kind, default,
// help text, setter and getter, so that the file format, the flags, the effective-config dump and
// docs/CONFIG.md cannot drift apart.
#include "config.hpp"

#include "keys.hpp"

#include <coprove/r1cs/circuits.hpp>
#include <coprove/service/http_service.hpp>
#include <coprove/runtime/input_file.hpp>
#include <coprove/runtime/log.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

namespace coprove::app {
using r1cs::circuit_families;
using r1cs::circuit_known;
using r1cs::max_log_constraints;
using r1cs::min_log_constraints;
using r1cs::pce_policy;
using engine::dispatch_policy;
using engine::engine_config;
using service::parse_listen_address;


namespace json = boost::json;

config_error::config_error(std::string key, const std::string& message)
    : std::invalid_argument(key + ": " + message), key_(std::move(key)) {}

std::string_view to_string(backend_choice choice) noexcept {
  switch (choice) {
    case backend_choice::automatic: return "auto";
    case backend_choice::cuda: return "cuda";
    case backend_choice::host: return "host";
  }
  return "unknown";
}

std::optional<backend_choice> parse_backend_choice(std::string_view name) noexcept {
  for (backend_choice choice : {backend_choice::automatic, backend_choice::cuda, backend_choice::host})
    if (name == to_string(choice)) return choice;
  return std::nullopt;
}

namespace {

std::string_view kind_name(json::kind k) {
  switch (k) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "unknown";
}

[[noreturn]] void wrong_type(std::string_view key, std::string_view expected, const json::value& v) {
  throw config_error(std::string(key), "expected " + std::string(expected) + ", got " + std::string(kind_name(v.kind())));
}

std::string as_string(const json::value& v, std::string_view key) {
  if (!v.is_string()) wrong_type(key, "a string", v);
  return std::string(v.get_string());
}

std::uint64_t as_unsigned(const json::value& v, std::string_view key, std::uint64_t min, std::uint64_t max) {
  std::uint64_t n = 0;
  if (v.is_uint64()) {
    n = v.get_uint64();
  } else if (v.is_int64()) {
    if (v.get_int64() < 0) {
      throw config_error(std::string(key), "must not be negative, got " + std::to_string(v.get_int64()));
    }
    n = static_cast<std::uint64_t>(v.get_int64());
  } else {
    wrong_type(key, "a non-negative integer", v);
  }
  if (n < min || n > max) {
    throw config_error(std::string(key), "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                                             std::to_string(n));
  }
  return n;
}

double as_number(const json::value& v, std::string_view key, double min, double max) {
  double d = 0;
  if (v.is_double()) {
    d = v.get_double();
  } else if (v.is_int64()) {
    d = static_cast<double>(v.get_int64());
  } else if (v.is_uint64()) {
    d = static_cast<double>(v.get_uint64());
  } else {
    wrong_type(key, "a number", v);
  }
  if (!std::isfinite(d) || d < min || d > max) {
    std::ostringstream msg;
    msg << "must be in [" << min << ", " << max << "], got " << d;
    throw config_error(std::string(key), msg.str());
  }
  return d;
}

bool as_bool(const json::value& v, std::string_view key) {
  if (!v.is_bool()) wrong_type(key, "a boolean", v);
  return v.get_bool();
}

std::size_t as_bytes(const json::value& v, std::string_view key) {
  if (v.is_string()) {
    try {
      return parse_byte_size(v.get_string());
    } catch (const std::invalid_argument& e) {
      throw config_error(std::string(key), e.what());
    }
  }
  return static_cast<std::size_t>(as_unsigned(v, key, 0, std::numeric_limits<std::uint64_t>::max()));
}

/// {"name": "path", ...}: names of letters, digits, '-', '_' and '.', each once, paths not empty.
std::vector<std::pair<std::string, std::string>> as_name_map(const json::value& v, std::string_view key) {
  if (!v.is_object()) wrong_type(key, "an object of names and paths", v);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, path] : v.get_object()) {
    const std::string n(name);
    if (n.empty() || n.size() > 64 ||
        !std::all_of(n.begin(), n.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.'; }))
      throw config_error(std::string(key), "the name '" + n + "' is not 1 to 64 letters, digits, '-', '_' or '.'");
    const std::string p = as_string(path, key);
    if (p.empty()) throw config_error(std::string(key), "the path of '" + n + "' is empty");
    out.emplace_back(n, p);
  }
  return out;
}

/// The items of a flag's comma-separated value ("" gives none; "a,,b" gives an empty item).
std::vector<std::string_view> comma_separated(std::string_view text) {
  std::vector<std::string_view> items;
  while (!text.empty()) {
    const auto comma = text.find(',');
    items.push_back(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return items;
}

std::vector<int> as_devices(const json::value& v, std::string_view key) {
  if (!v.is_array()) wrong_type(key, "an array of device ids", v);
  std::vector<int> out;
  for (const auto& item : v.get_array()) {
    const auto id = static_cast<int>(as_unsigned(item, key, 0, 1023));
    for (int seen : out) {
      if (seen == id) throw config_error(std::string(key), "device " + std::to_string(id) + " is listed twice");
    }
    out.push_back(id);
  }
  return out;
}

std::vector<std::string> as_strings(const json::value& v, std::string_view key) {
  if (!v.is_array()) wrong_type(key, "an array of strings", v);
  std::vector<std::string> out;
  for (const auto& item : v.get_array()) {
    std::string text = as_string(item, key);
    if (text.empty()) throw config_error(std::string(key), "an entry is empty");
    out.push_back(std::move(text));
  }
  return out;
}

json::value strings_json(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& item : items) out.emplace_back(item);
  return out;
}

std::string octal_text(unsigned mode) {
  std::string out;
  for (int shift = 9; shift >= 0; shift -= 3) out += static_cast<char>('0' + ((mode >> shift) & 7));
  return out;
}

template <class Enum>
Enum as_enum(const json::value& v, std::string_view key, std::initializer_list<std::pair<std::string_view, Enum>> names) {
  const std::string text = as_string(v, key);
  std::string expected;
  for (const auto& [name, value] : names) {
    if (text == name) return value;
    expected += (expected.empty() ? "" : ", ") + std::string(name);
  }
  throw config_error(std::string(key), "unknown value '" + text + "' (expected one of: " + expected + ")");
}

// The enums with a parser of their own (parse_X returns nullopt for an unknown name).
template <class Parse>
auto as_parsed(const json::value& v, std::string_view key, Parse parse, std::string_view expected) {
  const std::string text = as_string(v, key);
  if (auto value = parse(text)) return *value;
  throw config_error(std::string(key), "unknown value '" + text + "' (expected one of: " + std::string(expected) + ")");
}

struct binding {
  config_key meta;
  std::function<void(app_config&, const json::value&)> set;
  std::function<json::value(const app_config&)> get;
};

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

const std::vector<binding>& bindings() {
  using k = config_kind;
  static const std::vector<binding> table = {
      {{"backend", "backend", k::string, "\"auto\"",
        "Compute backend: auto (CUDA when compiled in and a GPU is visible, otherwise the CPU backend, "
        "with a warning), cuda (the CUDA backend or an error, never a silent switch) or host (the CPU backend)."},
       [](app_config& c, const json::value& v) {
         c.backend = as_parsed(v, "backend", parse_backend_choice, "auto, cuda, host");
       },
       [](const app_config& c) { return json::value(to_string(c.backend)); }},
      {{"devices", "devices", k::device_list, "[] (every visible GPU)",
        "CUDA device ids to use, e.g. [0, 1]; on the command line a comma-separated list. Only for the CUDA backend."},
       [](app_config& c, const json::value& v) { c.devices = as_devices(v, "devices"); },
       [](const app_config& c) {
         json::array a;
         for (int d : c.devices) a.push_back(d);
         return json::value(std::move(a));
       }},
      {{"host_devices", "host-devices", k::unsigned_integer, "1",
        "Devices the CPU backend presents (each with slots_per_device worker slots)."},
       [](app_config& c, const json::value& v) { c.host_devices = as_unsigned(v, "host_devices", 1, 64); },
       [](const app_config& c) { return json::value(c.host_devices); }},
      {{"slots_per_device", "slots-per-device", k::unsigned_integer, "3",
        "Worker slots per device: each has its own stream and buffers, so one slot's copies overlap another's "
        "compute. The CUDA backend needs at least 2; with the SpMV on the GPU, 3 ran one H200 1.36x faster "
        "than 2 (4 no faster)."},
       [](app_config& c, const json::value& v) { c.slots_per_device = as_unsigned(v, "slots_per_device", 1, 64); },
       [](const app_config& c) { return json::value(c.slots_per_device); }},
      {{"bridge", "bridge", k::string, "\"\" (stream_write)",
        "How the CUDA backend learns that a stream's work is done: stream_write (the stream writes a "
        "sequence number into mapped memory; the default, lowest latency), event_poller, mapped_flag or "
        "host_func. A strategy the device cannot run is an error, never a switch to another."},
       [](app_config& c, const json::value& v) {
         const std::string name = as_string(v, "bridge");
         if (!name.empty() && name != "stream_write" && name != "event_poller" && name != "mapped_flag" &&
             name != "host_func")
           throw config_error("bridge", "unknown completion bridge strategy '" + name +
                                            "' (expected stream_write, event_poller, mapped_flag or host_func)");
         c.bridge = name;
       },
       [](const app_config& c) { return json::value(c.bridge); }},
      {{"msm_copies", "msm-copies", k::unsigned_integer, "0 (auto)",
        "Shifted copies of each proving key's points the CUDA backend keeps on the device for the proof's MSMs "
        "(copy j is [2^(j c m)]P, made on the device when the key is uploaded): a scalar's digits of windows "
        "beyond the first m add into the first m windows' buckets, so fewer windows are weighted and the windows "
        "can be wider (fewer additions). Costs that many times the key's device memory, which the device memory "
        "plan charges (it refuses to start when the keys do not fit). Copies pay when they cover every window "
        "(13 for the 20-bit windows chosen at 2^22..2^24 points); fewer measured slower than none. 0 (auto): 13 "
        "where every device's memory plan holds them beside its worker slots, else 12 (22-bit windows), else 1, said at start (at warning when 13 do not fit) and shown in the report's device_keys; 1..16 fixes the count. The CPU backend has "
        "no use for copies and says so at warning when a count is set."},
       [](app_config& c, const json::value& v) { c.msm_copies = as_unsigned(v, "msm_copies", 0, 16); },
       [](const app_config& c) { return json::value(c.msm_copies); }},
      {{"msm_window_bits", "msm-window-bits", k::unsigned_integer, "0 (the plan's)",
        "The window width the copies of msm_copies are made for: 0 lets the MSM plan choose per query size "
        "(up to 22 bits with copies). Only with a fixed msm_copies above 1."},
       [](app_config& c, const json::value& v) { c.msm_window_bits = as_unsigned(v, "msm_window_bits", 0, 24); },
       [](const app_config& c) { return json::value(c.msm_window_bits); }},
      {{"host_threads", "host-threads", k::unsigned_integer, "0 (one per slot)",
        "Worker threads of the CPU backend."},
       [](app_config& c, const json::value& v) { c.host_threads = as_unsigned(v, "host_threads", 0, 1024); },
       [](const app_config& c) { return json::value(c.host_threads); }},
      {{"log.level", "log-level", k::string, "\"info\"",
        "Minimum log severity: trace, debug, info, warning, error or fatal. The environment variable "
        "COPROVE_LOG_LEVEL overrides it."},
       [](app_config& c, const json::value& v) {
         const std::string level = as_string(v, "log.level");
         if (!runtime::parse_severity(level)) {
           throw config_error("log.level", "unknown severity '" + level +
                                               "' (expected one of: trace, debug, info, warning, error, fatal)");
         }
         c.log_level = level;
       },
       [](const app_config& c) { return json::value(c.log_level); }},
      {{"keys.cache_dir", "key-cache", k::string, "\"\" ($XDG_CACHE_HOME/coprove/keys or ~/.cache/coprove/keys)",
        "Where `run` and `serve` keep the development keys they make when no --keys directory is given (a "
        "single-party setup by this machine, said at warning: for trying coprove out, not for production)."},
       [](app_config& c, const json::value& v) { c.key_cache_dir = as_string(v, "keys.cache_dir"); },
       [](const app_config& c) { return json::value(c.key_cache_dir); }},
      {{"log.json_file", "log-json", k::string, "\"\" (off)", "Also append every log record as a JSON line to this file."},
       [](app_config& c, const json::value& v) { c.log_json_file = as_string(v, "log.json_file"); },
       [](const app_config& c) { return json::value(c.log_json_file); }},
      {{"workload.circuit", "circuit", k::string, "\"mimc\"", "Circuit `coprove run` proves: mimc, merkle or bits (a witness of bits, as hash circuits have)."},
       [](app_config& c, const json::value& v) {
         const std::string name = as_string(v, "workload.circuit");
         if (!circuit_known(name)) {
           std::string known;
           for (auto family : circuit_families()) known += (known.empty() ? "" : ", ") + std::string(family);
           throw config_error("workload.circuit", "unknown circuit '" + name + "' (known: " + known + ")");
         }
         c.workload.circuit = name;
       },
       [](const app_config& c) { return json::value(c.workload.circuit); }},
      {{"workload.log_constraints", "log-constraints", k::unsigned_integer, "16",
        "Constraints per partition as a power of two (16 = 65536 constraints)."},
       [](app_config& c, const json::value& v) {
         c.workload.log_constraints = static_cast<unsigned>(as_unsigned(v, "workload.log_constraints", min_log_constraints, max_log_constraints));
       },
       [](const app_config& c) { return json::value(c.workload.log_constraints); }},
      {{"workload.partitions", "partitions", k::unsigned_integer, "8", "Partitions per job."},
       [](app_config& c, const json::value& v) { c.workload.partitions = as_unsigned(v, "workload.partitions", 1, 1u << 20); },
       [](const app_config& c) { return json::value(c.workload.partitions); }},
      {{"workload.jobs", "jobs", k::unsigned_integer, "2",
        "Jobs submitted at once; job i uses seed + i."},
       [](app_config& c, const json::value& v) { c.workload.jobs = as_unsigned(v, "workload.jobs", 1, 1024); },
       [](const app_config& c) { return json::value(c.workload.jobs); }},
      {{"workload.seed", "seed", k::unsigned_integer, "1", "Seed of the first job's witness."},
       [](app_config& c, const json::value& v) { c.workload.seed = as_unsigned(v, "workload.seed", 0, u64_max); },
       [](const app_config& c) { return json::value(c.workload.seed); }},
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
      {{"server.listen", "listen", k::string, "\"\" (unix:$XDG_RUNTIME_DIR/coprove.sock, else unix:/run/coprove/coprove.sock)",
        "Where `coprove serve` listens: unix:PATH or HOST:PORT (TCP). A TCP address other than loopback "
        "needs server.allow_remote and server.auth_token_file."},
       [](app_config& c, const json::value& v) {
         const std::string text = as_string(v, "server.listen");
         try {
           if (!text.empty()) (void)parse_listen_address(text);
         } catch (const std::invalid_argument& e) {
           throw config_error("server.listen", e.what());
         }
         c.server.listen = text;
       },
       [](const app_config& c) { return json::value(c.server.listen); }},
      {{"server.allow_remote", "allow-remote", k::boolean, "false",
        "Allow listening on a non-loopback TCP address (which also needs server.auth_token_file). The API "
        "is plain HTTP: put TLS in front of it beyond a trusted network."},
       [](app_config& c, const json::value& v) { c.server.allow_remote = as_bool(v, "server.allow_remote"); },
       [](const app_config& c) { return json::value(c.server.allow_remote); }},
      {{"server.on_shutdown", "on-shutdown", k::string, "\"drain\"",
        "On SIGINT/SIGTERM, after it stops accepting: drain (finish the running jobs) or cancel them."},
       [](app_config& c, const json::value& v) {
         c.server.drain_on_shutdown = as_enum<bool>(v, "server.on_shutdown", {{"drain", true}, {"cancel", false}});
       },
       [](const app_config& c) { return json::value(c.server.drain_on_shutdown ? "drain" : "cancel"); }},
      {{"server.drain_seconds", "drain-seconds", k::number, "60",
        "The longest a drain may take: then the jobs still running are cancelled. A second SIGINT/SIGTERM "
        "cancels at once; a third exits at once (status 130)."},
       [](app_config& c, const json::value& v) {
         c.server.drain_seconds = as_number(v, "server.drain_seconds", 0.0, 86400.0);
       },
       [](const app_config& c) { return json::value(c.server.drain_seconds); }},
      {{"server.on_shutdown_queued", "on-shutdown-queued", k::string, "\"cancel\"",
        "What a drain does with the jobs still queued (none of their partitions started): cancel them, or "
        "drain (run) them too, within server.drain_seconds."},
       [](app_config& c, const json::value& v) {
         c.server.drain_queued = as_enum<bool>(v, "server.on_shutdown_queued", {{"cancel", false}, {"drain", true}});
       },
       [](const app_config& c) { return json::value(c.server.drain_queued ? "drain" : "cancel"); }},
      {{"server.auth_token_file", "auth-token-file", k::string, "\"\" (none)",
        "A file holding the bearer token (16 to 4096 printable characters, surrounding white space ignored; "
        "the file readable by its owner alone): every request but GET /healthz must carry `Authorization: "
        "Bearer TOKEN` (401 otherwise). Required to listen on a non-loopback address; optional on loopback "
        "and the Unix socket."},
       [](app_config& c, const json::value& v) { c.server.auth_token_file = as_string(v, "server.auth_token_file"); },
       [](const app_config& c) { return json::value(c.server.auth_token_file); }},
      {{"server.allowed_hosts", "allowed-hosts", k::string_list, "[]",
        "On TCP, Host names accepted besides the listen address (and localhost on loopback); any other Host "
        "gets 403 host_not_allowed (DNS rebinding). On the command line a comma-separated list."},
       [](app_config& c, const json::value& v) { c.server.allowed_hosts = as_strings(v, "server.allowed_hosts"); },
       [](const app_config& c) { return strings_json(c.server.allowed_hosts); }},
      {{"server.allowed_origins", "allowed-origins", k::string_list, "[]",
        "Origin values accepted (e.g. \"https://dashboard.example\"); a request with any other Origin gets "
        "403 origin_not_allowed. Requests without Origin (every non-browser client) are not affected."},
       [](app_config& c, const json::value& v) { c.server.allowed_origins = as_strings(v, "server.allowed_origins"); },
       [](const app_config& c) { return strings_json(c.server.allowed_origins); }},
      {{"server.socket_mode", "socket-mode", k::string, "\"0600\"",
        "The Unix socket file's mode (octal), set before it accepts a connection, whatever the umask."},
       [](app_config& c, const json::value& v) {
         const std::string text = as_string(v, "server.socket_mode");
         unsigned mode = 0;
         const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
         if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || mode > 0777) {
           throw config_error("server.socket_mode", "expected an octal mode such as \"0600\", got '" + text + "'");
         }
         if ((mode & 0600) != 0600) {
           throw config_error("server.socket_mode", "'" + text + "' does not let the owner read and write the socket");
         }
         c.server.socket_mode = mode;
       },
       [](const app_config& c) { return json::value(octal_text(c.server.socket_mode)); }},
      {{"server.max_body_bytes", "max-body-bytes", k::bytes, "65536",
        "Largest request body; larger ones get 413."},
       [](app_config& c, const json::value& v) {
         c.server.max_body_bytes = as_bytes(v, "server.max_body_bytes");
         if (c.server.max_body_bytes < 64 || c.server.max_body_bytes > (std::size_t{16} << 20)) {
           throw config_error("server.max_body_bytes", "must be in [64, 16MiB], got " + std::to_string(c.server.max_body_bytes));
         }
       },
       [](const app_config& c) { return json::value(c.server.max_body_bytes); }},
      {{"server.max_wait_seconds", "max-wait-seconds", k::number, "300",
        "The longest ?wait= a result request may ask for."},
       [](app_config& c, const json::value& v) {
         c.server.max_wait_seconds = as_number(v, "server.max_wait_seconds", 0.0, 86400.0);
       },
       [](const app_config& c) { return json::value(c.server.max_wait_seconds); }},
      {{"server.circuits", "circuits", k::name_map, "{}",
        "circom circuits `serve` proves, each a name and the path of its snarkjs Groth16 zkey (BLS12-381), e.g. "
        "{\"poseidon\": \"keys/poseidon.zkey\"}; on the command line NAME=PATH[,NAME=PATH]. Loaded with every check "
        "at start (a bad key stops the service, naming the file, the section and the problem), charged in the memory "
        "plan; POST /v1/circuits/NAME/proofs proves a .wtns body."},
       [](app_config& c, const json::value& v) { c.server.circuits = as_name_map(v, "server.circuits"); },
       [](const app_config& c) {
         json::object o;
         for (const auto& [name, path] : c.server.circuits) o[name] = path;
         return json::value(std::move(o));
       }},
      {{"server.max_connections", "max-connections", k::unsigned_integer, "64",
        "Connections served at once; more wait in the listen backlog."},
       [](app_config& c, const json::value& v) {
         c.server.max_connections = as_unsigned(v, "server.max_connections", 1, 65536);
       },
       [](const app_config& c) { return json::value(c.server.max_connections); }},
      {{"server.max_connections_per_peer", "max-connections-per-peer", k::unsigned_integer, "16",
        "TCP connections one remote address may hold. Past it (or past server.max_connections) a new "
        "connection takes the slot of the oldest one that has not sent a whole request; when all are "
        "answering requests it gets 429 (503 for the total)."},
       [](app_config& c, const json::value& v) {
         c.server.max_connections_per_peer = as_unsigned(v, "server.max_connections_per_peer", 1, 65536);
       },
       [](const app_config& c) { return json::value(c.server.max_connections_per_peer); }},
      {{"server.header_timeout_seconds", "header-timeout-seconds", k::number, "10",
        "From a request's first byte to its whole header; past it the request gets 408 request_timeout."},
       [](app_config& c, const json::value& v) {
         c.server.header_timeout_seconds = as_number(v, "server.header_timeout_seconds", 0.01, 3600.0);
       },
       [](const app_config& c) { return json::value(c.server.header_timeout_seconds); }},
      {{"server.body_timeout_seconds", "body-timeout-seconds", k::number, "30",
        "From a request's header to its whole body; past it the request gets 408 request_timeout."},
       [](app_config& c, const json::value& v) {
         c.server.body_timeout_seconds = as_number(v, "server.body_timeout_seconds", 0.01, 3600.0);
       },
       [](const app_config& c) { return json::value(c.server.body_timeout_seconds); }},
      {{"server.idle_timeout_seconds", "idle-timeout-seconds", k::number, "60",
        "A keep-alive connection that sends nothing this long is closed (without an answer)."},
       [](app_config& c, const json::value& v) {
         c.server.idle_timeout_seconds = as_number(v, "server.idle_timeout_seconds", 0.01, 86400.0);
       },
       [](const app_config& c) { return json::value(c.server.idle_timeout_seconds); }},
      {{"server.result_retention_jobs", "result-retention-jobs", k::unsigned_integer, "4096",
        "Finished jobs whose results are kept for GET; beyond it the oldest is forgotten and its id answers "
        "410 result_expired."},
       [](app_config& c, const json::value& v) {
         c.server.result_retention_jobs = as_unsigned(v, "server.result_retention_jobs", 0, 1u << 24);
       },
       [](const app_config& c) { return json::value(c.server.result_retention_jobs); }},
      {{"server.result_retention_bytes", "result-retention-bytes", k::bytes, "268435456 (256 MiB)",
        "Memory the kept results may hold together (estimated per job); beyond it the oldest are forgotten "
        "(410 result_expired)."},
       [](app_config& c, const json::value& v) {
         c.server.result_retention_bytes = as_bytes(v, "server.result_retention_bytes");
       },
       [](const app_config& c) { return json::value(c.server.result_retention_bytes); }},
      {{"server.result_retention_seconds", "result-retention-seconds", k::number, "3600",
        "How long after it ended a job's result is kept (then 410 result_expired)."},
       [](app_config& c, const json::value& v) {
         c.server.result_retention_seconds = as_number(v, "server.result_retention_seconds", 0.0, 30.0 * 86400.0);
       },
       [](const app_config& c) { return json::value(c.server.result_retention_seconds); }},
      {{"server.max_queued_jobs", "max-queued-jobs", k::unsigned_integer, "256",
        "Unfinished jobs (queued or running) accepted at once; more are refused with 429 queue_full and "
        "Retry-After."},
       [](app_config& c, const json::value& v) {
         c.server.max_queued_jobs = as_unsigned(v, "server.max_queued_jobs", 1, 1u << 20);
       },
       [](const app_config& c) { return json::value(c.server.max_queued_jobs); }},
      {{"server.max_queued_partitions", "max-queued-partitions", k::unsigned_integer, "16384",
        "Partitions of the unfinished jobs accepted at once; a job that would exceed it is refused with 429 "
        "queue_full. At least engine.max_partitions_per_job."},
       [](app_config& c, const json::value& v) {
         c.server.max_queued_partitions = as_unsigned(v, "server.max_queued_partitions", 1, 1u << 26);
       },
       [](const app_config& c) { return json::value(c.server.max_queued_partitions); }},
      {{"server.retry_after_seconds", "retry-after-seconds", k::unsigned_integer, "5",
        "The Retry-After a 429 queue_full answers with."},
       [](app_config& c, const json::value& v) {
         c.server.retry_after_seconds = static_cast<unsigned>(as_unsigned(v, "server.retry_after_seconds", 1, 3600));
       },
       [](const app_config& c) { return json::value(c.server.retry_after_seconds); }},
  };
  return table;
}

const binding* find_binding(std::string_view key) {
  for (const auto& b : bindings()) {
    if (b.meta.key == key) return &b;
  }
  return nullptr;
}

bool is_section(std::string_view prefix) {
  for (const auto& b : bindings()) {
    if (b.meta.key.size() > prefix.size() && b.meta.key.substr(0, prefix.size()) == prefix &&
        b.meta.key[prefix.size()] == '.') {
      return true;
    }
  }
  return false;
}

void apply_object(app_config& cfg, const json::object& object, const std::string& prefix) {
  for (const auto& [name, value] : object) {
    const std::string key = prefix.empty() ? std::string(name) : prefix + "." + std::string(name);
    if (const binding* b = find_binding(key)) {
      b->set(cfg, value);
    } else if (is_section(key)) {
      if (!value.is_object()) wrong_type(key, "an object (a section)", value);
      apply_object(cfg, value.get_object(), key);
    } else {
      throw config_error(key, "unknown configuration key (see docs/CONFIG.md)");
    }
  }
}

}  // namespace

const std::vector<config_key>& config_keys() {
  static const std::vector<config_key> keys = [] {
    std::vector<config_key> out;
    for (const auto& b : bindings()) out.push_back(b.meta);
    return out;
  }();
  return keys;
}

void apply_config_json(app_config& cfg, const json::value& document) {
  if (!document.is_object()) {
    throw config_error("(document)", "a configuration must be a JSON object, got " + std::string(kind_name(document.kind())));
  }
  app_config updated = cfg;  // all or nothing: a bad key changes nothing
  apply_object(updated, document.get_object(), "");
  cfg = std::move(updated);
}

void apply_config_file(app_config& cfg, const std::string& path) {
  std::string text;
  try {
    text = runtime::read_input_text(path, runtime::input_limits::small_json_bytes, "configuration file");
  } catch (const runtime::input_file_error& e) {
    throw config_error("--config", e.what());
  }
  boost::system::error_code ec;
  json::parse_options options;
  options.allow_comments = true;
  options.allow_trailing_commas = true;
  const json::value document = json::parse(text, ec, {}, options);
  if (ec) throw config_error("--config", "'" + path + "' is not valid JSON: " + ec.message());
  try {
    apply_config_json(cfg, document);
  } catch (const config_error& e) {
    throw config_error(e.key(), std::string(e.what()).substr(e.key().size() + 2) + " (in " + path + ")");
  }
}

void apply_config_text(app_config& cfg, std::string_view key, std::string_view text) {
  const binding* b = find_binding(key);
  if (!b) throw config_error(std::string(key), "unknown configuration key");
  const std::string flag = "--" + std::string(b->meta.flag);
  json::value value;
  switch (b->meta.kind) {
    case config_kind::string:
    case config_kind::bytes: value = json::string(text); break;
    case config_kind::unsigned_integer: {
      std::uint64_t n = 0;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
        throw config_error(flag, "expected a non-negative integer, got '" + std::string(text) + "'");
      }
      value = n;
      break;
    }
    case config_kind::number: {
      double d = 0;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
        throw config_error(flag, "expected a number, got '" + std::string(text) + "'");
      }
      value = d;
      break;
    }
    case config_kind::boolean: {
      if (text == "true" || text == "1" || text == "yes" || text == "on") {
        value = true;
      } else if (text == "false" || text == "0" || text == "no" || text == "off") {
        value = false;
      } else {
        throw config_error(flag, "expected true or false, got '" + std::string(text) + "'");
      }
      break;
    }
    case config_kind::name_map: {
      json::object map;
      for (const std::string_view item : comma_separated(text)) {
        const auto equals = item.find('=');
        if (equals == std::string_view::npos || equals == 0)
          throw config_error(flag, "expected NAME=PATH[,NAME=PATH], got '" + std::string(text) + "'");
        map[item.substr(0, equals)] = std::string(item.substr(equals + 1));
      }
      value = std::move(map);
      break;
    }
    case config_kind::string_list: {
      json::array items;
      std::string_view rest = text;
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        items.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
      value = std::move(items);
      break;
    }
    case config_kind::device_list: {
      json::array ids;
      for (const std::string_view item : comma_separated(text)) {
        std::uint64_t id = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
        if (item.empty() || ec != std::errc{} || ptr != item.data() + item.size()) {
          throw config_error(flag, "expected a comma-separated list of device ids, got '" + std::string(text) + "'");
        }
        ids.push_back(id);
      }
      value = std::move(ids);
      break;
    }
  }
  try {
    app_config updated = cfg;
    b->set(updated, value);
    cfg = std::move(updated);
  } catch (const config_error& e) {
    throw config_error(flag, e.what());
  }
}

void validate_config(const app_config& cfg) {
  if (cfg.backend == backend_choice::host && !cfg.devices.empty()) {
    throw config_error("devices", "CUDA device ids were given but backend is \"host\"");
  }
  if (cfg.plan_log_constraints != 0 && cfg.workload.log_constraints > cfg.plan_log_constraints) {
    throw config_error("workload.log_constraints",
                       std::to_string(cfg.workload.log_constraints) + " exceeds engine.max_log_constraints = " +
                           std::to_string(cfg.plan_log_constraints));
  }
  if (cfg.server.max_queued_partitions < cfg.engine.max_partitions_per_job) {
    throw config_error("server.max_queued_partitions",
                       std::to_string(cfg.server.max_queued_partitions) + " is less than engine.max_partitions_per_job = " +
                           std::to_string(cfg.engine.max_partitions_per_job) + ": a job of that size could never run");
  }
  if (cfg.server.listen.empty()) return;  // the default, a Unix socket
  const auto address = parse_listen_address(cfg.server.listen);
  if (!address.is_unix() && !address.is_loopback() && !cfg.server.allow_remote) {
    throw config_error("server.listen", "'" + cfg.server.listen +
                                            "' is not a loopback address: pass --allow-remote (server.allow_remote) "
                                            "to listen on it, with a token (server.auth_token_file)");
  }
  if (!address.is_unix() && !address.is_loopback() && cfg.server.auth_token_file.empty()) {
    throw config_error("server.auth_token_file",
                       "listening on the non-loopback address '" + cfg.server.listen +
                           "' needs a bearer token: set server.auth_token_file (--auth-token-file)");
  }
}

json::object to_json(const app_config& cfg) {
  json::object root;
  for (const auto& b : bindings()) {
    json::object* section = &root;
    std::string_view key = b.meta.key;
    for (auto dot = key.find('.'); dot != std::string_view::npos; dot = key.find('.')) {
      json::value& child = (*section)[key.substr(0, dot)];
      if (!child.is_object()) child = json::object();
      section = &child.get_object();
      key = key.substr(dot + 1);
    }
    (*section)[key] = b.get(cfg);
  }
  return root;
}

std::size_t parse_byte_size(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("bad byte size '" + std::string(text) + "': " + why);
  };
  std::size_t pos = 0;
  while (pos < text.size() && ((text[pos] >= '0' && text[pos] <= '9') || text[pos] == '.')) ++pos;
  if (pos == 0) throw bad("expected a number, optionally with a unit such as MiB or GiB");
  double number = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + pos, number);
  if (ec != std::errc{} || ptr != text.data() + pos) throw bad("expected a number");
  std::string_view unit = text.substr(pos);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  struct suffix {
    std::string_view name;
    double factor;
  };
  static constexpr suffix units[] = {{"", 1.0},           {"B", 1.0},           {"KiB", 1024.0},
                                     {"MiB", 1048576.0},  {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
                                     {"KB", 1e3},         {"MB", 1e6},           {"GB", 1e9},
                                     {"TB", 1e12}};
  for (const auto& u : units) {
    if (unit == u.name) {
      const double bytes = std::floor(number * u.factor);
      if (!std::isfinite(bytes) || bytes >= 1.8e19) throw bad("too large");
      return static_cast<std::size_t>(bytes);
    }
  }
  throw bad("unknown unit '" + std::string(unit) + "' (expected B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
}

std::string resolved_pce_cache_dir(const app_config& cfg) {
  if (cfg.pce_cache_dir) return *cfg.pce_cache_dir;
  const auto root = default_cache_dir();
  return root ? root->string() : std::string();
}

engine_config effective_engine_config(const app_config& cfg) {
  engine_config out = cfg.engine;
  out.pce_cache_dir = resolved_pce_cache_dir(cfg);
  out.plan_circuit = cfg.workload.circuit;
  out.max_log_constraints = cfg.plan_log_constraints != 0 ? cfg.plan_log_constraints : cfg.workload.log_constraints;
  return out;
}

}  // namespace coprove::app
