// The JSON field readers shared by the configuration and the request parser: a wrong type and a
// value out of range are told apart and name the field; nothing is coerced.
#include <coprove/service/json_field.hpp>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <string>

using namespace coprove::service;
namespace json = boost::json;

namespace {

// "wrong_type: MESSAGE" or "out_of_range: MESSAGE", or "accepted".
template <class Read>
std::string refusal(Read read) {
  try {
    (void)read();
  } catch (const json_field_error& e) {
    CHECK(e.field() == "f");
    return std::string(e.why() == json_field_error::reason::wrong_type ? "wrong_type: " : "out_of_range: ") + e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("a JSON field of the wrong type or out of range is refused naming what it expected",
          "[service][json_field][cpu]") {
  const auto unsigned_of = [](const char* text, std::uint64_t min = 0, std::uint64_t max = 10) {
    return refusal([&] { return json_unsigned(json::parse(text), "f", min, max); });
  };
  CHECK(unsigned_of("7") == "accepted");
  CHECK(unsigned_of("\"7\"") == "wrong_type: expected a non-negative integer, got a string");
  CHECK(unsigned_of("7.0") == "wrong_type: expected a non-negative integer, got a floating-point number");
  CHECK(unsigned_of("true") == "wrong_type: expected a non-negative integer, got a boolean");
  CHECK(unsigned_of("-1") == "out_of_range: must not be negative, got -1");
  CHECK(unsigned_of("11") == "out_of_range: must be in [0, 10], got 11");
  CHECK(unsigned_of("2", 3) == "out_of_range: must be in [3, 10], got 2");
  CHECK(json_unsigned(json::parse("18446744073709551615"), "f") == 18446744073709551615ull);

  const auto number_of = [](const char* text) {
    return refusal([&] { return json_number(json::parse(text), "f", 0.0, 5.0); });
  };
  CHECK(number_of("2.5") == "accepted");
  CHECK(number_of("3") == "accepted");
  CHECK(number_of("5.5") == "out_of_range: must be in [0, 5], got 5.5");
  CHECK(number_of("null") == "wrong_type: expected a number, got null");

  CHECK(refusal([] { return json_string(json::parse("[]"), "f"); }) == "wrong_type: expected a string, got an array");
  CHECK(refusal([] { return json_bool(json::parse("1"), "f"); }) == "wrong_type: expected a boolean, got an integer");
  CHECK(json_string(json::parse("\"x\""), "f") == "x");
  CHECK(json_bool(json::parse("false"), "f") == false);
  CHECK(json_kind_name(json::kind::object) == "an object");
}
