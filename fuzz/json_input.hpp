// The fuzz input as a JSON document, for the targets of readers that take one parsed (proof.json,
// public.json): inputs that are not JSON are boost::json's to refuse, not the reader's.
#pragma once

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace coprove::fuzz {

inline std::optional<boost::json::value> json_input(const std::uint8_t* data, std::size_t size) {
  boost::system::error_code ec;
  boost::json::value document = boost::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), ec);
  if (ec) return std::nullopt;
  return document;
}

}  // namespace coprove::fuzz
