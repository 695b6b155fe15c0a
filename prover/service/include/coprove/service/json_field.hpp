// Typed fields read out of JSON values the same way for a configuration file (app/config.cpp) and
// a job body (request_parser.cpp): a wrong type or a value out of range is an error naming the
// field, never coerced (no string "2" for 2, no 2.5 for an integer, no negative count). Each
// caller turns a json_field_error into its own refusal: a configuration error naming the key, or
// a 400 / 422 naming the field.
#pragma once

#include <boost/json/kind.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <limits>
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

}  // namespace coprove::service
