// The JSON field readers shared by the configuration and the request parser (see the header).
#include "coprove/service/json_field.hpp"

#include <cmath>
#include <sstream>

namespace coprove::service {

namespace json = boost::json;

json_field_error::json_field_error(reason why, std::string field, const std::string& message)
    : std::invalid_argument(message), why_(why), field_(std::move(field)) {}

namespace {

[[noreturn]] void wrong_type(std::string_view field, std::string_view expected, const json::value& v) {
  throw json_field_error(json_field_error::reason::wrong_type, std::string(field),
                         "expected " + std::string(expected) + ", got " + std::string(json_kind_name(v.kind())));
}

[[noreturn]] void out_of_range(std::string_view field, const std::string& message) {
  throw json_field_error(json_field_error::reason::out_of_range, std::string(field), message);
}

}  // namespace

std::string_view json_kind_name(json::kind k) noexcept {
  switch (k) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return "a floating-point number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "unknown";
}

std::string json_string(const json::value& v, std::string_view field) {
  if (!v.is_string()) wrong_type(field, "a string", v);
  return std::string(v.get_string());
}

bool json_bool(const json::value& v, std::string_view field) {
  if (!v.is_bool()) wrong_type(field, "a boolean", v);
  return v.get_bool();
}

std::uint64_t json_unsigned(const json::value& v, std::string_view field, std::uint64_t min, std::uint64_t max) {
  std::uint64_t n = 0;
  if (v.is_uint64()) {
    n = v.get_uint64();
  } else if (v.is_int64()) {
    if (v.get_int64() < 0) out_of_range(field, "must not be negative, got " + std::to_string(v.get_int64()));
    n = static_cast<std::uint64_t>(v.get_int64());
  } else {
    wrong_type(field, "a non-negative integer", v);
  }
  if (n < min || n > max) {
    out_of_range(field, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + std::to_string(n));
  }
  return n;
}

double json_number(const json::value& v, std::string_view field, double min, double max) {
  double d = 0;
  if (v.is_double()) {
    d = v.get_double();
  } else if (v.is_int64()) {
    d = static_cast<double>(v.get_int64());
  } else if (v.is_uint64()) {
    d = static_cast<double>(v.get_uint64());
  } else {
    wrong_type(field, "a number", v);
  }
  if (!std::isfinite(d) || d < min || d > max) {
    std::ostringstream message;
    message << "must be in [" << min << ", " << max << "], got " << d;
    out_of_range(field, message.str());
  }
  return d;
}

}  // namespace coprove::service
