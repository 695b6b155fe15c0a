// The HTTP/1 request parser of the service: Beast's basic_parser with every part of a request
// bounded and nothing thrown. Beast's own request_parser bounds the header and the body, but not
// chunk extensions or trailer fields, and throws from inside the read (past any handler) when a
// trailer field is longer than its fields container holds. Here chunk extensions count against
// the body limit, trailer fields against the header limit, every callback reports through the
// error code, a transfer coding other than chunked is refused rather than the body being read as
// the next request, and a field the service acts on (Host, Content-Length, Content-Type,
// Authorization) given twice is refused rather than one of the two being believed.
#pragma once

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <cstdint>

namespace coprove::service::detail {

/// Why a request was refused after the parser stopped with an error, beyond Beast's own codes.
enum class request_refusal {
  none,
  unsupported_transfer_coding,  ///< a Transfer-Encoding other than chunked (501)
  trailer_too_large,            ///< the trailer fields exceed the header limit (431)
  chunk_extensions_too_large,   ///< chunk extensions and data exceed the body limit (413)
  duplicate_header,             ///< Host, Content-Length, Content-Type or Authorization twice (400)
};

class bounded_request_parser final : public boost::beast::http::basic_parser<true> {
 public:
  using string_view = boost::beast::string_view;
  using message_type = boost::beast::http::request<boost::beast::http::string_body>;

  bounded_request_parser(std::size_t header_limit, std::size_t body_limit);

  /// The request read so far (complete once the parser is done).
  message_type& get() noexcept { return message_; }
  [[nodiscard]] message_type release() { return std::move(message_); }
  /// What made the parser stop, where Beast's error code alone does not say.
  request_refusal refusal() const noexcept { return refusal_; }
  /// With refusal() == duplicate_header: the header given more than once ("Host").
  string_view duplicate() const noexcept { return duplicate_; }
  /// The fewest unconsumed bytes to hand `put` (callers read more until that many are buffered,
  /// or the stream ends). In a chunked body it is 5, the shortest rest such a body can have from
  /// wherever the parser stopped ("0\r\n\r\n"): Boost 1.81's basic_parser asserts that many when
  /// it resumes a last chunk whose trailer had not all arrived (boostorg/beast#2861 relaxed it
  /// upstream), and a shorter rest cannot complete the request, so holding it back loses nothing.
  std::size_t least_put() const noexcept { return is_header_done() && chunked() ? 5 : 1; }

 private:
  using error_code = boost::beast::error_code;
  using field = boost::beast::http::field;
  using verb = boost::beast::http::verb;

  void on_request_impl(verb method, string_view method_string, string_view target, int version,
                       error_code& ec) override;
  void on_response_impl(int, string_view, int, error_code& ec) override;
  void on_field_impl(field name, string_view name_string, string_view value, error_code& ec) override;
  void on_header_impl(error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length, error_code& ec) override;
  std::size_t on_body_impl(string_view body, error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t size, string_view extensions, error_code& ec) override;
  std::size_t on_chunk_body_impl(std::uint64_t remain, string_view body, error_code& ec) override;
  void on_finish_impl(error_code& ec) override;

  std::size_t append(string_view body, error_code& ec);
  bool refuse_duplicate(field name);

  message_type message_;
  std::size_t header_limit_;
  std::size_t body_limit_;
  std::size_t chunked_bytes_ = 0;  // chunk data announced plus chunk extensions
  std::size_t trailer_bytes_ = 0;
  request_refusal refusal_ = request_refusal::none;
  string_view duplicate_;          // a field name of Beast's table (static storage)
  unsigned unique_fields_seen_ = 0;  // a bit per field that may be given once
};

}  // namespace coprove::service::detail
