// What the configuration's key tables are made of (private to app/): a binding of a key to its
// flag, kind, default, help, setter and getter; the readers that turn a JSON value into a setting
// (the scalar ones shared with the HTTP request parser, coprove/service/json_field.hpp), each
// refusal a config_error naming the key; and one table per section, each in its own file
// (config_general.cpp, config_workload.cpp, config_engine.cpp, config_server.cpp).
#pragma once

#include "config.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coprove::app::config_detail {

namespace json = boost::json;

/// A configuration key: its documentation, how a JSON value sets it, and its value as JSON.
struct binding {
  config_key meta;
  std::function<void(app_config&, const json::value&)> set;
  std::function<json::value(const app_config&)> get;
};

/// The keys of each section, in the order docs/CONFIG.md lists them: the top level with log.* and
/// keys.*, then workload.*, engine.* and server.*.
const std::vector<binding>& general_bindings();
const std::vector<binding>& workload_bindings();
const std::vector<binding>& engine_bindings();
const std::vector<binding>& server_bindings();

inline constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

[[noreturn]] void wrong_type(std::string_view key, std::string_view expected, const json::value& v);
std::string as_string(const json::value& v, std::string_view key);
std::uint64_t as_unsigned(const json::value& v, std::string_view key, std::uint64_t min, std::uint64_t max);
double as_number(const json::value& v, std::string_view key, double min, double max);
bool as_bool(const json::value& v, std::string_view key);
/// A byte count: an integer, or a string with a unit ("512 MiB").
std::size_t as_bytes(const json::value& v, std::string_view key);
/// {"name": "path", ...}: names of letters, digits, '-', '_' and '.', each once, paths not empty.
std::vector<std::pair<std::string, std::string>> as_name_map(const json::value& v, std::string_view key);
/// The items of a flag's comma-separated value ("" gives none; "a,,b" gives an empty item).
std::vector<std::string_view> comma_separated(std::string_view text);
/// Device ids, each at most once.
std::vector<int> as_devices(const json::value& v, std::string_view key);
/// Strings, none empty.
std::vector<std::string> as_strings(const json::value& v, std::string_view key);
json::value strings_json(const std::vector<std::string>& items);
/// A file mode as four octal digits ("0600").
std::string octal_text(unsigned mode);

/// One of `names`.
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

/// The enums with a parser of their own (parse_X returns nullopt for an unknown name).
template <class Parse>
auto as_parsed(const json::value& v, std::string_view key, Parse parse, std::string_view expected) {
  const std::string text = as_string(v, key);
  if (auto value = parse(text)) return *value;
  throw config_error(std::string(key), "unknown value '" + text + "' (expected one of: " + std::string(expected) + ")");
}

}  // namespace coprove::app::config_detail
