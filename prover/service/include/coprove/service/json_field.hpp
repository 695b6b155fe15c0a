// Typed fields read out of JSON values the same way for a configuration file (app/config.cpp) and
// a job body (request_parser.cpp): a wrong type or a value out of range is an error naming the
// field, never coerced (no string "2" for 2, no 2.5 for an integer, no negative count). Each
// caller turns a json_field_error into its own refusal: a configuration error naming the key, or
// a 400 / 422 naming the field. Header-only, so that the request parser stays a parser of its own
// sources (its fuzzer builds it alone).
#pragma once

#include <boost/json/kind.hpp>
#include <boost/json/value.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace coprove::service {

/// A field that is not what it must be. what() says what is wrong without the field's name
/// ("expected a string, got an integer"; "must be in [1, 64], got 65").
class json_field_error : public std::invalid_argument {
 public:
  enum class reason { wrong_type, out_of_range };
  json_field_error(reason why, std::string field, const std::string& message);
  reason why() const noexcept { return why_; }
  const std::string& field() const noexcept { return field_; }

 private:
  reason why_;
  std::string field_;
};

/// "null", "a boolean", "an integer", "a floating-point number", "a string", "an array", "an object".
std::string_view json_kind_name(boost::json::kind k) noexcept;

/// A string.
std::string json_string(const boost::json::value& v, std::string_view field);
/// A boolean.
bool json_bool(const boost::json::value& v, std::string_view field);
/// An integer in [min, max]; a negative one is out of range ("must not be negative"), a number
/// with a fraction or exponent the wrong type.
std::uint64_t json_unsigned(const boost::json::value& v, std::string_view field, std::uint64_t min = 0,
                            std::uint64_t max = std::numeric_limits<std::uint64_t>::max());
/// A finite number (integer or not) in [min, max].
double json_number(const boost::json::value& v, std::string_view field, double min, double max);

// Definitions.

inline json_field_error::json_field_error(reason why, std::string field, const std::string& message)
    : std::invalid_argument(message), why_(why), field_(std::move(field)) {}

namespace detail {

[[noreturn]] inline void json_wrong_type(std::string_view field, std::string_view expected,
                                         const boost::json::value& v) {
  throw json_field_error(json_field_error::reason::wrong_type, std::string(field),
                         "expected " + std::string(expected) + ", got " + std::string(json_kind_name(v.kind())));
}

[[noreturn]] inline void json_out_of_range(std::string_view field, const std::string& message) {
  throw json_field_error(json_field_error::reason::out_of_range, std::string(field), message);
}

}  // namespace detail

inline std::string_view json_kind_name(boost::json::kind k) noexcept {
  switch (k) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "a boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64: return "an integer";
    case boost::json::kind::double_: return "a floating-point number";
    case boost::json::kind::string: return "a string";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::object: return "an object";
  }
  return "unknown";
}

inline std::string json_string(const boost::json::value& v, std::string_view field) {
  if (!v.is_string()) detail::json_wrong_type(field, "a string", v);
  return std::string(v.get_string());
}

inline bool json_bool(const boost::json::value& v, std::string_view field) {
  if (!v.is_bool()) detail::json_wrong_type(field, "a boolean", v);
  return v.get_bool();
}

inline std::uint64_t json_unsigned(const boost::json::value& v, std::string_view field, std::uint64_t min,
                                   std::uint64_t max) {
  std::uint64_t n = 0;
  if (v.is_uint64()) {
    n = v.get_uint64();
  } else if (v.is_int64()) {
    if (v.get_int64() < 0)
      detail::json_out_of_range(field, "must not be negative, got " + std::to_string(v.get_int64()));
    n = static_cast<std::uint64_t>(v.get_int64());
  } else {
    detail::json_wrong_type(field, "a non-negative integer", v);
  }
  if (n < min || n > max) {
    detail::json_out_of_range(field, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                                         std::to_string(n));
  }
  return n;
}

inline double json_number(const boost::json::value& v, std::string_view field, double min, double max) {
  double d = 0;
  if (v.is_double()) {
    d = v.get_double();
  } else if (v.is_int64()) {
    d = static_cast<double>(v.get_int64());
  } else if (v.is_uint64()) {
    d = static_cast<double>(v.get_uint64());
  } else {
    detail::json_wrong_type(field, "a number", v);
  }
  if (!std::isfinite(d) || d < min || d > max) {
    std::ostringstream message;
    message << "must be in [" << min << ", " << max << "], got " << d;
    detail::json_out_of_range(field, message.str());
  }
  return d;
}

}  // namespace coprove::service
