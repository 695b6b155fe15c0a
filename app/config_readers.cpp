// The configuration's readers (see config_readers.hpp): the scalar ones are the HTTP request
// parser's (json_field.hpp) with their refusal turned into a config_error naming the key.
#include "config_readers.hpp"

#include <coprove/service/json_field.hpp>

#include <algorithm>
#include <cctype>

namespace coprove::app::config_detail {

namespace {

// A shared reader's refusal as the configuration's.
template <class Read>
auto config_field(Read read) {
  try {
    return read();
  } catch (const service::json_field_error& e) {
    throw config_error(e.field(), e.what());
  }
}

}  // namespace

void wrong_type(std::string_view key, std::string_view expected, const json::value& v) {
  throw config_error(std::string(key),
                     "expected " + std::string(expected) + ", got " + std::string(service::json_kind_name(v.kind())));
}

std::string as_string(const json::value& v, std::string_view key) {
  return config_field([&] { return service::json_string(v, key); });
}

std::uint64_t as_unsigned(const json::value& v, std::string_view key, std::uint64_t min, std::uint64_t max) {
  return config_field([&] { return service::json_unsigned(v, key, min, max); });
}

double as_number(const json::value& v, std::string_view key, double min, double max) {
  return config_field([&] { return service::json_number(v, key, min, max); });
}

bool as_bool(const json::value& v, std::string_view key) {
  return config_field([&] { return service::json_bool(v, key); });
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

}  // namespace coprove::app::config_detail
