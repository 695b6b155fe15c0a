// The HTTP API's requests and responses as plain values: what the job API and the exposure checks
// read from a request, and what they answer, without Beast or a socket. The connection turns
// Beast's messages into these and back.
#pragma once

#include <coprove/service/request_parser.hpp>

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coprove::service {

/// A request: its line, the header fields the service acts on (empty when absent), and its body.
struct api_request {
  std::string method = "GET";  ///< as sent ("GET", "POST", ...)
  std::string target = "/";    ///< path and query ("/v1/jobs/12/result?wait=5")
  std::string host;
  std::string origin;
  std::string authorization;
  std::string content_type;
  /// What Content-Length declares, where it does (a chunked body declares nothing). The checks on
  /// a header alone (Expect: 100-continue) judge the body's size by it.
  std::optional<std::uint64_t> content_length;
  std::string body;
};

/// A response: status, media type, body and the header fields some answers add (Location, Allow,
/// Retry-After, WWW-Authenticate).
struct api_response {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> fields;

  /// A field's value; empty when the response has none.
  std::string field(std::string_view name) const;
  /// The JSON body of this response, parsed (tests and clients).
  boost::json::value json() const;

  /// `value` serialized, with a newline.
  static api_response json_body(unsigned status, const boost::json::value& value);
  /// {"error": {"code", "message"}} with the fields the refusal carries (Allow, Retry-After, and
  /// WWW-Authenticate on a 401).
  static api_response refusal(const request_error& e);
  /// A refusal of the HTTP layer itself (a malformed request, a timeout): no request_error behind it.
  static api_response refusal(unsigned status, std::string_view code, std::string_view message);
};

}  // namespace coprove::service
