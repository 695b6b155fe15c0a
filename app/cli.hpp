// Command-line handling shared by the coprove commands: flags built from the configuration key
// table (so every key has a flag), --config FILE applied first and flags on top, and the errors
// that end the process with exit status 2.
#pragma once

#include "config.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace coprove::app {

/// Exit statuses of the binary.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;  ///< a job failed or a record did not verify
inline constexpr int exit_usage = 2;   ///< bad flags, bad configuration, unavailable backend
inline constexpr int exit_interrupted = 130;  ///< run: interrupted; serve: a third signal

/// Bad flags, a bad configuration or an impossible request: printed and exit status 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An extra flag a command takes besides the configuration keys.
struct extra_flag {
  std::string name;  ///< without the leading "--"
  std::string value_name;  ///< empty for a switch
  std::string help;
};

/// What a command line says: the configuration (defaults, then --config FILE, then flags), the
/// values of the command's extra flags, and positional arguments.
struct command_line {
  app::app_config config;
  std::vector<std::pair<std::string, std::string>> extras;  ///< (name, value); "true" for switches
  std::vector<std::string> positional;
  bool help = false;

  /// The value of an extra flag, or `fallback` when it was not given.
  std::string extra(const std::string& name, const std::string& fallback = {}) const;
  bool has(const std::string& name) const;
  /// Every value of a repeatable extra flag, in command-line order.
  std::vector<std::string> values(const std::string& name) const;
};

/// Parses argv (after the command word). Throws usage_error naming the flag or key at fault.
/// `accepts_config` is false for commands that take no configuration (verify).
command_line parse_command_line(const std::string& command, const std::vector<std::string>& args,
                                const std::vector<extra_flag>& extras, bool accepts_config,
                                std::size_t max_positional);

/// The help text of a command: its synopsis, its extra flags and (when it takes them) every
/// configuration flag with its default.
std::string command_help(const std::string& command, const std::string& synopsis,
                         const std::vector<extra_flag>& extras, bool accepts_config);

/// Sets up logging from the configuration (log.level, log.json_file).
void init_logging(const app::app_config& config);

}  // namespace coprove::app
