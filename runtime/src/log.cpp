// Boost.Log set-up behind log.hpp: a console sink (time, severity, channel, job/partition/device)
// and an optional JSON-lines file sink. Kept out of the header so that only this file pays for
// Boost.Log's compile time.
#include "coprove/runtime/log.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/log/attributes/clock.hpp>
#include <boost/log/attributes/constant.hpp>
#include <boost/log/core.hpp>
#include <boost/log/sources/record_ostream.hpp>
#include <boost/log/sinks/sync_frontend.hpp>
#include <boost/log/sinks/text_ostream_backend.hpp>
#include <boost/log/utility/formatting_ostream.hpp>
#include <boost/log/attributes/value_extraction.hpp>
#include <boost/core/null_deleter.hpp>
#include <boost/date_time/posix_time/posix_time_types.hpp>
#include <boost/date_time/posix_time/time_formatters.hpp>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace coprove::runtime {
namespace {

namespace logging = boost::log;
namespace sinks = boost::log::sinks;
using text_sink = sinks::synchronous_sink<sinks::text_ostream_backend>;

std::atomic<int> g_level{static_cast<int>(severity::info)};
std::once_flag g_default_once;
std::mutex g_setup_mutex;
boost::shared_ptr<text_sink> g_console;
boost::shared_ptr<text_sink> g_json;

std::string timestamp_text(const logging::record_view& rec) {
  if (auto ts = logging::extract<boost::posix_time::ptime>("TimeStamp", rec)) {
    std::string s = boost::posix_time::to_iso_extended_string(*ts);  // 2026-11-30T13:07:27.123456
    return s;
  }
  return {};
}

template <class T>
std::optional<T> field(const logging::record_view& rec, const char* name) {
  if (auto v = logging::extract<T>(name, rec)) return *v;
  return std::nullopt;
}

void format_console(const logging::record_view& rec, logging::formatting_ostream& out) {
  out << timestamp_text(rec) << " [";
  if (auto s = field<severity>(rec, "Severity")) out << to_string(*s);
  out << "] ";
  if (auto c = field<std::string>(rec, "Channel")) out << *c << ": ";
  if (auto m = logging::extract<std::string>("Message", rec)) out << *m;
  if (auto v = field<std::uint64_t>(rec, "Job")) out << " job=" << *v;
  if (auto v = field<std::uint64_t>(rec, "Partition")) out << " partition=" << *v;
  if (auto v = field<int>(rec, "Device")) out << " device=" << *v;
}

void format_json(const logging::record_view& rec, logging::formatting_ostream& out) {
  boost::json::object obj;
  obj["time"] = timestamp_text(rec);
  if (auto s = field<severity>(rec, "Severity")) obj["severity"] = to_string(*s);
  if (auto c = field<std::string>(rec, "Channel")) obj["channel"] = *c;
  if (auto m = logging::extract<std::string>("Message", rec)) obj["message"] = *m;
  if (auto v = field<std::uint64_t>(rec, "Job")) obj["job"] = *v;
  if (auto v = field<std::uint64_t>(rec, "Partition")) obj["partition"] = *v;
  if (auto v = field<int>(rec, "Device")) obj["device"] = *v;
  out << boost::json::serialize(obj);
}

// Must be called with g_setup_mutex held. Throws std::invalid_argument (changing nothing) when the
// JSON file cannot be opened.
void install_sinks(const log_config& cfg) {
  boost::shared_ptr<std::ofstream> file;
  if (!cfg.json_file.empty()) {
    file = boost::make_shared<std::ofstream>(cfg.json_file, std::ios::app);
    if (!*file) throw std::invalid_argument("init_logging: cannot open the JSON log file '" + cfg.json_file + "'");
  }
  auto core = logging::core::get();
  if (g_console) core->remove_sink(g_console);
  if (g_json) core->remove_sink(g_json);
  g_console.reset();
  g_json.reset();
  core->add_global_attribute("TimeStamp", logging::attributes::local_clock());
  if (cfg.console) {
    auto backend = boost::make_shared<sinks::text_ostream_backend>();
    backend->add_stream(boost::shared_ptr<std::ostream>(&std::clog, boost::null_deleter()));
    backend->auto_flush(true);
    g_console = boost::make_shared<text_sink>(backend);
    g_console->set_formatter(&format_console);
    core->add_sink(g_console);
  }
  if (file) {
    auto backend = boost::make_shared<sinks::text_ostream_backend>();
    backend->add_stream(file);
    backend->auto_flush(true);
    g_json = boost::make_shared<text_sink>(backend);
    g_json->set_formatter(&format_json);
    core->add_sink(g_json);
  }
}

void ensure_default_setup() {
  std::call_once(g_default_once, [] {
    std::lock_guard lock(g_setup_mutex);
    if (g_console || g_json) return;
    log_config cfg;
    if (const char* env = std::getenv("COPROVE_LOG_LEVEL")) {
      if (auto s = parse_severity(env)) cfg.level = *s;
    }
    g_level.store(static_cast<int>(cfg.level), std::memory_order_relaxed);
    install_sinks(cfg);
  });
}

}  // namespace

std::string_view to_string(severity s) noexcept {
  switch (s) {
    case severity::trace: return "trace";
    case severity::debug: return "debug";
    case severity::info: return "info";
    case severity::warning: return "warning";
    case severity::error: return "error";
    case severity::fatal: return "fatal";
  }
  return "unknown";
}

std::optional<severity> parse_severity(std::string_view name) noexcept {
  std::string lower;
  for (const char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "trace") return severity::trace;
  if (lower == "debug") return severity::debug;
  if (lower == "info") return severity::info;
  if (lower == "warning" || lower == "warn") return severity::warning;
  if (lower == "error") return severity::error;
  if (lower == "fatal") return severity::fatal;
  return std::nullopt;
}

void init_logging(const log_config& cfg) {
  std::call_once(g_default_once, [] {});  // an explicit set-up replaces the defaults
  severity level = cfg.level;
  std::string bad_env;
  if (const char* env = std::getenv("COPROVE_LOG_LEVEL"); env && *env) {
    if (auto s = parse_severity(env)) level = *s; else bad_env = env;
  }
  {
    std::lock_guard lock(g_setup_mutex);
    install_sinks(cfg);
    g_level.store(static_cast<int>(level), std::memory_order_relaxed);
  }
  if (!bad_env.empty()) {
    log(severity::warning, "runtime",
        "COPROVE_LOG_LEVEL='" + bad_env + "' is not one of trace, debug, info, warning, error, fatal; using " +
            std::string(to_string(level)));
  }
}

void set_log_level(severity level) noexcept {
  log_enabled(severity::fatal);  // so that a later first record does not reapply the defaults
  g_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

severity log_level() noexcept {
  log_enabled(severity::fatal);  // applies the defaults (and COPROVE_LOG_LEVEL) if not done yet
  return static_cast<severity>(g_level.load(std::memory_order_relaxed));
}

bool log_enabled(severity s) noexcept {
  try {
    ensure_default_setup();  // reads COPROVE_LOG_LEVEL before the first record is filtered
  } catch (...) {
    // Without sinks nothing is written; the level alone decides.
  }
  return static_cast<int>(s) >= g_level.load(std::memory_order_relaxed);
}

void log(severity s, std::string_view channel, std::string_view message, const log_fields& fields) {
  if (!log_enabled(s)) return;
  auto core = logging::core::get();
  logging::attribute_set attrs;
  attrs.insert("Severity", logging::attributes::constant<severity>(s));
  attrs.insert("Channel", logging::attributes::constant<std::string>(std::string(channel)));
  if (fields.job) attrs.insert("Job", logging::attributes::constant<std::uint64_t>(*fields.job));
  if (fields.partition) attrs.insert("Partition", logging::attributes::constant<std::uint64_t>(*fields.partition));
  if (fields.device) attrs.insert("Device", logging::attributes::constant<int>(*fields.device));
  logging::record rec = core->open_record(attrs);
  if (!rec) return;
  {
    logging::record_ostream strm(rec);
    strm << message;
    strm.flush();
  }
  core->push_record(std::move(rec));
}

bool warn_once(std::string_view key, std::string_view channel, std::string_view message) {
  static std::mutex mutex;
  static std::unordered_set<std::string> seen;
  {
    std::lock_guard lock(mutex);
    if (!seen.emplace(key).second) return false;
  }
  log(severity::warning, channel, message);
  return true;
}

void flush_logs() {
  ensure_default_setup();
  logging::core::get()->flush();
}

}  // namespace coprove::runtime
