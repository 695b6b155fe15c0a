// What a connection of the HTTP service does that does not depend on its stream (see
// http_connection.hpp): read deadlines, the request and response as the job API and Beast see
// them, and the answers to requests the parser stopped on.
#include "http_connection.hpp"

#include <charconv>

namespace coprove::service::detail {

namespace {

std::chrono::steady_clock::duration seconds_of(double seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

std::string field_of(const request& req, http::field f) {
  const auto value = req[f];
  return std::string(value.data(), value.size());
}

}  // namespace

std::string seconds_text(double seconds) {
  std::array<char, 32> text{};
  const auto [end, ec] = std::to_chars(text.data(), text.data() + text.size(), seconds);
  return ec == std::errc{} ? std::string(text.data(), end) : std::to_string(seconds);
}

void read_deadline::arm(const std::shared_ptr<read_deadline>& d, double seconds) {
  d->fired = false;
  const std::uint64_t generation = ++d->generation;
  d->timer.expires_after(seconds_of(seconds));
  d->timer.async_wait([d, generation](boost::system::error_code ec) {
    if (ec || generation != d->generation || !d->cancel_reads) return;
    d->fired = true;
    d->cancel_reads();
  });
}

// What Content-Length declares, where it does.
std::optional<std::uint64_t> declared_length(const bounded_request_parser& parser) {
  const auto declared = parser.content_length();
  return declared ? std::optional<std::uint64_t>(*declared) : std::nullopt;
}

// What the job API reads of a request's line and header (the body is the caller's to move).
api_request to_api_request(const request& req, std::optional<std::uint64_t> content_length) {
  api_request out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  out.host = field_of(req, http::field::host);
  out.origin = field_of(req, http::field::origin);
  out.authorization = field_of(req, http::field::authorization);
  out.content_type = field_of(req, http::field::content_type);
  out.content_length = content_length;
  return out;
}

response to_beast(api_response&& res, unsigned version, bool keep_alive) {
  response out{static_cast<http::status>(res.status), version};
  out.set(http::field::server, "coprove");
  out.set(http::field::content_type, res.content_type);
  for (const auto& [name, value] : res.fields) out.set(name, value);
  out.body() = std::move(res.body);
  out.keep_alive(keep_alive);
  out.prepare_payload();
  return out;
}

// The answer to a request the parser stopped on, or nothing when the client just went away.
std::optional<api_response> refusal_for(const boost::system::error_code& read_ec,
                                        const bounded_request_parser& parser, std::size_t read_limit,
                                        const request_limits& limits) {
    const request_refusal why = parser.refusal();
  const std::string body_limit = std::to_string(read_limit) + " bytes (server.max_body_bytes" +
                                 (limits.max_witness_body_bytes > limits.max_body_bytes
                                      ? "; a witness body: the largest circuit's .wtns file)"
                                      : ")");
  const std::string header_limit = std::to_string(max_header_bytes);
  std::optional<api_response> refusal;
  if (why == request_refusal::duplicate_header || read_ec == http::error::multiple_content_length) {
    const std::string name =
        why == request_refusal::duplicate_header ? std::string(parser.duplicate()) : std::string("Content-Length");
    refusal = api_response::refusal(400, "duplicate_header",
                                    "header '" + name + "' is given more than once; a request carries it once");
  } else if (why == request_refusal::unsupported_transfer_coding) {
    refusal = api_response::refusal(501, "unsupported_transfer_coding",
                                    "Transfer-Encoding other than chunked is not supported");
  } else if (why == request_refusal::trailer_too_large) {
    refusal = api_response::refusal(431, "header_too_large", "request trailer exceeds " + header_limit + " bytes");
  } else if (why == request_refusal::chunk_extensions_too_large) {
    refusal = api_response::refusal(413, "body_too_large",
                                    "chunk extensions and data exceed the body limit of " + body_limit);
  } else if (read_ec == http::error::body_limit) {
    refusal = api_response::refusal(413, "body_too_large", "request body exceeds the limit of " + body_limit);
  } else if (read_ec == http::error::buffer_overflow) {
    refusal = api_response::refusal(413, "body_too_large",
                                    "a chunk line or the trailer is larger than a request may make the server hold");
  } else if (read_ec == http::error::header_limit) {
    refusal = api_response::refusal(431, "header_too_large", "request header exceeds " + header_limit + " bytes");
  } else if (read_ec.category() == http::make_error_code(http::error::bad_target).category() &&
             read_ec != http::error::end_of_stream && read_ec != http::error::partial_message) {
    refusal = api_response::refusal(400, "bad_request", "malformed HTTP request: " + read_ec.message());
  }
  if (refusal) count_request("unknown", refusal->status);
  return refusal;
}

}  // namespace coprove::service::detail
