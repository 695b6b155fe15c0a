// libFuzzer target for the HTTP layer of `coprove serve` (built with clang
// -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh). The first byte picks what the rest is
// fed to: a job body (0 mod 3), a method and request target split at the first newline (1 mod 3),
// or raw bytes from a socket (2 mod 3): the bounded request parser on Beast's basic_parser, fed in
// pieces whose sizes the second byte picks (chunked framing, chunk extensions and trailers
// included), then the route and body parsers on each whole request, requests pipelined one after
// another as on a keep-alive connection. Any outcome but requests within the limits, a refusal
// reported through an error code, or a request_error with a 4xx status is a crash.
#include <coprove/service/detail/bounded_request_parser.hpp>
#include <coprove/service/request_parser.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <string>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace coprove::service;

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

void check_refusal(const request_error& e) {
  check(e.status() >= 400 && e.status() <= 499);
  check(!e.code().empty());
  check(std::string_view(e.what()).size() <= 400);
  boost::system::error_code ec;
  (void)boost::json::parse(error_body(e.code(), e.what()), ec);
  check(!ec);
}

// The limits `coprove serve` reads requests with, scaled down so that the fuzzer reaches them.
constexpr std::size_t header_limit = 1024;
constexpr std::size_t body_limit = 4096;
constexpr std::size_t buffer_limit = header_limit + body_limit + 1024;

void check_request(const coprove::service::detail::bounded_request_parser::message_type& req,
                   const request_limits& limits) {
  check(req.body().size() <= body_limit);
  const auto method = req.method_string();
  const auto target = req.target();
  try {
    (void)parse_route(std::string_view(method.data(), method.size()), std::string_view(target.data(), target.size()),
                      limits);
  } catch (const request_error& e) {
    check_refusal(e);
  }
  try {
    (void)parse_job_request(req.body(), job_request{}, limits);
  } catch (const request_error& e) {
    check_refusal(e);
  }
}

// Feeds socket bytes to one parser after another (keep-alive), in pieces of `piece` bytes, keeping
// what a parser has not consumed as the connection's buffer does, bounded as it is, and handing the
// parser bytes only once it can take them, as the service's read does.
void feed_connection(std::string_view bytes, std::size_t piece, const request_limits& limits) {
  namespace http = boost::beast::http;
  std::string pending;
  std::size_t offset = 0;
  for (int requests = 0; requests < 16; ++requests) {
    coprove::service::detail::bounded_request_parser parser(header_limit, body_limit);
    parser.eager(true);
    boost::beast::error_code ec;
    while (!parser.is_done()) {
      if (!pending.empty() && pending.size() >= parser.least_put()) {
        const std::size_t used = parser.put(boost::asio::buffer(pending), ec);
        check(used <= pending.size());
        pending.erase(0, used);
        if (ec == http::error::need_more) {
          ec = {};
        } else if (ec) {
          return;  // refused: the service answers 4xx/501 and closes
        } else if (used > 0) {
          continue;
        }
      }
      if (parser.is_done()) break;
      if (offset >= bytes.size()) {
        if (!parser.got_some()) return;  // the connection closed between requests (the read's end_of_stream)
        parser.put_eof(ec);
        if (ec || !parser.is_done()) return;
        break;
      }
      if (pending.size() >= buffer_limit) return;  // the read fails with buffer_overflow (413)
      const std::size_t n = std::min({piece, bytes.size() - offset, buffer_limit - pending.size()});
      pending.append(bytes.substr(offset, n));
      offset += n;
    }
    check_request(parser.get(), limits);
    if (pending.empty() && offset >= bytes.size()) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  request_limits limits;
  limits.max_body_bytes = body_limit;
  if (data[0] % 3 == 2) {
    if (input.empty()) return 0;
    const std::size_t piece = 1 + static_cast<std::uint8_t>(input[0]) % 64;
    feed_connection(input.substr(1), piece, limits);
    return 0;
  }
  if (data[0] % 3 == 0) {
    try {
      const job_request r = parse_job_request(input, job_request{}, limits);
      check(!r.circuit.empty() && r.circuit.size() <= limits.max_circuit_name);
      check(r.log_constraints >= limits.min_log_constraints && r.log_constraints <= limits.max_log_constraints);
      check(r.partitions >= 1 && r.partitions <= limits.max_partitions);
    } catch (const request_error& e) {
      check_refusal(e);
    }
  } else {
    const auto newline = input.find('\n');
    const std::string_view method = input.substr(0, newline);
    const std::string_view target = newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);
    try {
      const route r = parse_route(method, target, limits);
      check(r.wait_seconds >= 0.0 && r.wait_seconds <= limits.max_wait_seconds);
    } catch (const request_error& e) {
      check_refusal(e);
    }
  }
  return 0;
}
