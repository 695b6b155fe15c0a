// The service's bounded request parser, fed bytes directly: trailers count against the header
// limit, chunk extensions against the body limit, other transfer codings are refused, and nothing
// it is fed throws.
#include <coprove/service/detail/bounded_request_parser.hpp>

#include <catch2/catch.hpp>

#include <boost/beast/http/error.hpp>

#include <cstdio>
#include <string>
#include <vector>

using coprove::service::detail::bounded_request_parser;
using coprove::service::detail::request_refusal;
namespace http = boost::beast::http;

namespace {

struct outcome {
  boost::beast::error_code ec;
  request_refusal refusal;
  bool done;
};

// Feeds the whole request at once, as a read that brought all of it would.
outcome feed(const std::string& bytes, std::size_t header_limit = 8192, std::size_t body_limit = 65536) {
  bounded_request_parser parser(header_limit, body_limit);
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t used = 0;
  while (!ec && !parser.is_done() && used < bytes.size()) {
    used += parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), ec);
  }
  return {ec, parser.refusal(), parser.is_done()};
}

std::string chunked(const std::string& extensions, const std::string& data, const std::string& trailer) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx", data.size());
  return "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(size) + extensions +
         "\r\n" + data + "\r\n0\r\n" + trailer + "\r\n";
}

}  // namespace

TEST_CASE("a chunked request with a short trailer is read whole", "[service][http][cpu]") {
  const auto r = feed(chunked(";a=b", "{}", "X-Check: 1\r\n"));
  CHECK(!r.ec);
  CHECK(r.done);
}

TEST_CASE("trailer fields count against the header limit, and a huge one does not throw", "[service][http][cpu]") {
  const auto over = feed(chunked("", "{}", "X-Pad: " + std::string(9000, 'a') + "\r\n"));
  CHECK(over.ec == http::error::header_limit);
  CHECK(over.refusal == request_refusal::trailer_too_large);
  const auto huge = feed(chunked("", "{}", "X-Pad: " + std::string(70000, 'a') + "\r\n"));
  CHECK(huge.ec == http::error::header_limit);
  CHECK(huge.refusal == request_refusal::trailer_too_large);
}

TEST_CASE("chunk extensions count against the body limit", "[service][http][cpu]") {
  const auto huge = feed(chunked(";x=" + std::string(70000, 'e'), "{}", ""));
  CHECK(huge.ec == http::error::body_limit);
  CHECK(huge.refusal == request_refusal::chunk_extensions_too_large);
  // Under the limit alone, over it with the data.
  const auto with_data = feed(chunked(";x=" + std::string(600, 'e'), std::string(500, ' '), ""), 8192, 1000);
  CHECK(with_data.ec == http::error::body_limit);
}

TEST_CASE("a transfer coding other than chunked is refused", "[service][http][cpu]") {
  for (const std::string coding : {"gzip", "gzip, chunked", "chunked, gzip", "identity"}) {
    INFO(coding);
    const auto r = feed("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + coding + "\r\n\r\n0\r\n\r\n");
    CHECK(r.ec);
    CHECK(r.refusal == request_refusal::unsupported_transfer_coding);
  }
}

TEST_CASE("a header the service acts on given twice is refused, naming it", "[service][http][cpu]") {
  const std::string line = "POST /v1/jobs HTTP/1.1\r\n";
  const std::string once = "Host: x\r\nContent-Type: application/json\r\nAuthorization: Bearer t\r\n";
  struct twice {
    std::string fields;
    std::string name;
  };
  for (const auto& c : std::vector<twice>{{"Host: evil.example\r\n", "Host"},
                                          {"host: x\r\n", "Host"},
                                          {"Content-Type: text/plain\r\n", "Content-Type"},
                                          {"Authorization: Bearer u\r\n", "Authorization"},
                                          {"Content-Length: 2\r\nContent-Length: 2\r\n", "Content-Length"},
                                          {"Content-Length: 2, 2\r\n", "Content-Length"}}) {
    INFO(c.fields);
    bounded_request_parser parser(8192, 65536);
    boost::beast::error_code ec;
    const std::string bytes = line + once + c.fields + "\r\n{}";
    (void)parser.put(boost::asio::buffer(bytes), ec);
    CHECK(ec);
    CHECK(parser.refusal() == request_refusal::duplicate_header);
    CHECK(std::string(parser.duplicate()) == c.name);
  }
  // Two different lengths are Beast's own refusal; fields the service does not act on may repeat.
  CHECK(feed(line + "Host: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}").ec ==
        http::error::multiple_content_length);
  const auto repeated = feed(line + once + "Accept: a\r\nAccept: b\r\nContent-Length: 2\r\n\r\n{}");
  CHECK(!repeated.ec);
  CHECK(repeated.done);
  CHECK(repeated.refusal == request_refusal::none);
}
