// The top-level keys of the configuration (backend, devices, slots, the MSM copies) and the
// log.* and keys.* sections, in the order docs/CONFIG.md lists them.
#include "config_readers.hpp"

#include <coprove/runtime/log.hpp>

namespace coprove::app::config_detail {

const std::vector<binding>& general_bindings() {
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
  };
  return table;
}

}  // namespace coprove::app::config_detail
