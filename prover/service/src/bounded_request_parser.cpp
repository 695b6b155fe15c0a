// The service's bounded HTTP/1 request parser (see the header): a string body, limits on every
// part of a request, and errors reported through the error code, never thrown.
#include "coprove/service/detail/bounded_request_parser.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/rfc7230.hpp>

#include <exception>
#include <iterator>

namespace coprove::service::detail {

namespace http = boost::beast::http;

bounded_request_parser::bounded_request_parser(std::size_t header_limit, std::size_t body_limit)
    : header_limit_(header_limit), body_limit_(body_limit) {
  this->header_limit(static_cast<std::uint32_t>(header_limit));
  this->body_limit(body_limit);
}

void bounded_request_parser::on_request_impl(verb method, string_view method_string, string_view target,
                                             int version, error_code& ec) {
  try {
    if (method == verb::unknown) {
      message_.method_string(method_string);
    } else {
      message_.method(method);
    }
    message_.target(target);
    message_.version(version);
  } catch (const std::exception&) {
    ec = http::error::bad_method;
  }
}

void bounded_request_parser::on_response_impl(int, string_view, int, error_code& ec) {
  ec = http::error::bad_version;  // a request parser never sees a status line
}

// Fields the service decides on: two of one, even equal, are refused (RFC 9112 3.2 for Host),
// since a proxy in front may have believed the other one. Beast itself refuses two different
// Content-Lengths before this sees the second (multiple_content_length) and takes equal ones.
bool bounded_request_parser::refuse_duplicate(field name) {
  static constexpr field once[] = {field::host, field::content_length, field::content_type, field::authorization};
  for (unsigned i = 0; i < std::size(once); ++i) {
    if (name != once[i]) continue;
    const unsigned bit = 1u << i;
    if ((unique_fields_seen_ & bit) == 0) {
      unique_fields_seen_ |= bit;
      return false;
    }
    refusal_ = request_refusal::duplicate_header;
    duplicate_ = http::to_string(name);
    return true;
  }
  return false;
}

void bounded_request_parser::on_field_impl(field name, string_view name_string, string_view value,
                                           error_code& ec) {
  if (is_header_done()) {
    // A trailer field: counted against the header limit and dropped (the service acts on none).
    trailer_bytes_ += name_string.size() + value.size() + 4;  // ": " and CRLF
    if (trailer_bytes_ > header_limit_) {
      refusal_ = request_refusal::trailer_too_large;
      ec = http::error::header_limit;
    }
    return;
  }
  // A list of lengths ("5, 5") is the same field given twice in one line.
  if (refuse_duplicate(name) ||
      (name == field::content_length && value.find(',') != string_view::npos && refuse_duplicate(name))) {
    ec = http::error::bad_field;
    return;
  }
  if (name == field::transfer_encoding) {
    // Only chunked is decoded; a body in any other coding would be misread, so it is refused.
    bool chunked = false;
    for (const auto coding : http::token_list{value}) {
      chunked = boost::beast::iequals(coding, "chunked");
      if (!chunked) break;
    }
    if (!chunked) {
      refusal_ = request_refusal::unsupported_transfer_coding;
      ec = http::error::bad_transfer_encoding;
      return;
    }
  }
  try {
    message_.insert(name, name_string, value);
  } catch (const std::exception&) {
    ec = http::error::header_limit;  // a field too long for the fields container
  }
}

void bounded_request_parser::on_header_impl(error_code& ec) { ec = {}; }

void bounded_request_parser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                                               error_code& ec) {
  // Beast has already refused a Content-Length above the body limit.
  try {
    if (content_length) message_.body().reserve(static_cast<std::size_t>(*content_length));
  } catch (const std::exception&) {
    ec = http::error::body_limit;
  }
}

std::size_t bounded_request_parser::append(string_view body, error_code& ec) {
  if (message_.body().size() + body.size() > body_limit_) {
    ec = http::error::body_limit;
    return 0;
  }
  try {
    message_.body().append(body.data(), body.size());
  } catch (const std::exception&) {
    ec = http::error::body_limit;
    return 0;
  }
  return body.size();
}

std::size_t bounded_request_parser::on_body_impl(string_view body, error_code& ec) { return append(body, ec); }

void bounded_request_parser::on_chunk_header_impl(std::uint64_t size, string_view extensions, error_code& ec) {
  // Chunk extensions are bytes of the body a client makes the server hold, so they share its limit.
  const std::uint64_t total = std::uint64_t{chunked_bytes_} + size + extensions.size();
  if (total > body_limit_) {
    if (!extensions.empty()) refusal_ = request_refusal::chunk_extensions_too_large;
    ec = http::error::body_limit;
    return;
  }
  chunked_bytes_ = static_cast<std::size_t>(total);
}

std::size_t bounded_request_parser::on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) {
  return append(body, ec);
}

void bounded_request_parser::on_finish_impl(error_code& ec) { ec = {}; }

}  // namespace coprove::service::detail
