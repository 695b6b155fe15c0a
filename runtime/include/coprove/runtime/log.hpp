// Structured logging for every coprove module: severities, a channel per module and optional
// job / partition / device fields. The Boost.Log set-up lives in log.cpp only, so that including
// this header stays cheap.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace coprove::runtime {

enum class severity { trace, debug, info, warning, error, fatal };

/// "trace", "debug", "info", "warning", "error" or "fatal".
std::string_view to_string(severity s) noexcept;

/// Parses a severity name (case-insensitive; "warn" is accepted for warning); nullopt if unknown.
std::optional<severity> parse_severity(std::string_view name) noexcept;

struct log_config {
  severity level = severity::info;
  bool console = true;      ///< human-readable lines on stderr
  std::string json_file;    ///< when not empty, also append JSON lines to this file
};

/// Sets up the sinks. The environment variable COPROVE_LOG_LEVEL, when set to a valid name,
/// overrides cfg.level (an invalid value is reported at warning and ignored). Calling it again
/// replaces the sinks. Logging before any call uses the defaults (console, info). Throws
/// std::invalid_argument when the JSON file cannot be opened.
void init_logging(const log_config& cfg);

/// Changes the minimum severity at run time.
void set_log_level(severity level) noexcept;

/// The current minimum severity.
severity log_level() noexcept;

/// True when a record of this severity would be written.
bool log_enabled(severity s) noexcept;

/// Optional structured fields attached to a record.
struct log_fields {
  std::optional<std::uint64_t> job;
  std::optional<std::uint64_t> partition;
  std::optional<int> device;
};

/// Writes one record (thread-safe).
void log(severity s, std::string_view channel, std::string_view message, const log_fields& fields = {});

/// Logs at warning only the first time `key` is seen in this process; returns true that time.
bool warn_once(std::string_view key, std::string_view channel, std::string_view message);

/// Flushes the sinks (the JSON file in particular).
void flush_logs();

namespace detail {

// Collects a streamed message and writes it when the statement ends.
class log_record {
 public:
  log_record(severity s, std::string_view channel, const log_fields& fields = {})
      : severity_(s), channel_(channel), fields_(fields) {}
  log_record(const log_record&) = delete;
  log_record& operator=(const log_record&) = delete;
  ~log_record() { log(severity_, channel_, stream_.str(), fields_); }
  std::ostringstream& stream() noexcept { return stream_; }

 private:
  severity severity_;
  std::string_view channel_;
  log_fields fields_;
  std::ostringstream stream_;
};

}  // namespace detail
}  // namespace coprove::runtime

/// COPROVE_LOG(warning, "pinned") << "x=" << x;  (the stream is not evaluated when disabled)
#define COPROVE_LOG(sev, channel)                                                   \
  if (!::coprove::runtime::log_enabled(::coprove::runtime::severity::sev)) {       \
  } else                                                                            \
    ::coprove::runtime::detail::log_record(::coprove::runtime::severity::sev, (channel)).stream()

/// COPROVE_LOG_F(info, "engine", (log_fields{.job = id})) << "done";
#define COPROVE_LOG_F(sev, channel, fields)                                         \
  if (!::coprove::runtime::log_enabled(::coprove::runtime::severity::sev)) {       \
  } else                                                                            \
    ::coprove::runtime::detail::log_record(::coprove::runtime::severity::sev, (channel), (fields)).stream()
