// One connection of the HTTP service, as a template on its stream (a Unix socket or TCP): reads
// requests with Boost.Beast (the header, then the body, each bounded in size and time), hands each
// to the job API and writes its answer, keep-alive until the client or a limit ends it. A request
// its header alone refuses is answered without its body being read (no `100 Continue`); a
// malformed, oversized or late one gets a 4xx and the connection is closed. All on the control
// executor. Private to the service's sources: http_connection_unix.cpp and http_connection_tcp.cpp
// each instantiate it for one stream (two files, so that the two slowest instantiations build in
// parallel), http_connection.cpp holds what does not depend on the stream.
#pragma once

#include "http_service_state.hpp"

#include "coprove/service/detail/bounded_request_parser.hpp"
#include "coprove/service/detail/request_metrics.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <optional>

namespace coprove::service::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using response = http::response<http::string_body>;
using request = http::request<http::string_body>;

constexpr std::size_t max_header_bytes = 8 * 1024;

// Bounds one phase of reading a request (idle, header, body): when it fires it cancels the
// socket's operations, so the read ends with operation_aborted and the socket stays open for a
// 408. Shared with its timer's handler, which may run after the connection's coroutine is gone.
struct read_deadline {
  explicit read_deadline(asio::any_io_executor ex) : timer(std::move(ex)) {}
  asio::steady_timer timer;
  std::function<void()> cancel_reads;  // reset when the connection ends
  std::uint64_t generation = 0;
  bool fired = false;

  /// Fires after `seconds` unless disarmed or armed again first.
  static void arm(const std::shared_ptr<read_deadline>& d, double seconds);
  void disarm() {
    ++generation;
    timer.cancel();
  }
};

// Reads the rest of a request whose header is in, as http::async_read does (eager, the buffer's
// bound reported as buffer_overflow, the end of the stream handed to the parser), except that the
// parser is handed bytes only once it can take them (bounded_request_parser::least_put).
template <class Stream>
asio::awaitable<boost::system::error_code> read_body(Stream& stream, beast::flat_buffer& buffer,
                                                     detail::bounded_request_parser& parser) {
  parser.eager(true);
  for (;;) {
    boost::system::error_code ec;
    if (buffer.size() >= parser.least_put()) {
      const std::size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (parser.is_done()) co_return ec;
      if (ec && ec != http::error::need_more) co_return ec;
      if (!ec && used > 0) continue;
    }
    if (buffer.size() >= buffer.max_size()) co_return http::error::buffer_overflow;
    const std::size_t room = std::min<std::size_t>(65536, buffer.max_size() - buffer.size());
    auto [read_ec, n] = co_await stream.async_read_some(buffer.prepare(room), asio::as_tuple(asio::use_awaitable));
    buffer.commit(n);
    if (read_ec == asio::error::eof) {
      ec = {};
      parser.put_eof(ec);
      co_return ec;
    }
    if (read_ec) co_return read_ec;
  }
}

/// A number of seconds as a configuration writes it (0.3, 10).
std::string seconds_text(double seconds);
/// What Content-Length declares, where it does.
std::optional<std::uint64_t> declared_length(const bounded_request_parser& parser);
/// What the job API reads of a request's line and header (the body is the caller's to move).
api_request to_api_request(const request& req, std::optional<std::uint64_t> content_length);
/// The response to write, with the Server field and the body's length.
response to_beast(api_response&& res, unsigned version, bool keep_alive);
/// The answer to a request the parser stopped on, or nothing when the client just went away.
std::optional<api_response> refusal_for(const boost::system::error_code& read_ec, const bounded_request_parser& parser,
                                        std::size_t read_limit, const request_limits& limits);

// Answers a request that is not read any further, then closes its connection: what the client is
// still sending is read first (bounded), so that the close does not reset the connection and lose
// the response on the client's side.
template <class Stream>
asio::awaitable<void> refuse_and_close(Stream& stream, api_response refusal, unsigned version) {
  response res = to_beast(std::move(refusal), version, false);
  stream.expires_after(std::chrono::seconds(5));
  (void)co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
  boost::system::error_code ignored;
  stream.socket().shutdown(asio::socket_base::shutdown_send, ignored);
  std::array<char, 16384> sink;
  std::size_t drained = 0;
  stream.expires_after(std::chrono::seconds(2));
  while (drained < (std::size_t{8} << 20)) {
    auto [drain_ec, n] = co_await stream.async_read_some(asio::buffer(sink), asio::as_tuple(asio::use_awaitable));
    if (drain_ec) break;
    drained += n;
  }
}

}  // namespace coprove::service::detail

namespace coprove::service {

template <class Stream>
boost::asio::awaitable<void> http_service::state::serve_connection(Stream stream, std::uint64_t number,
                                                                   std::string peer) {
  using namespace detail;  // the connection's helpers above
  auto self = shared_from_this();
  auto& socket = stream.socket();
  connections[number] = connection{[&socket] {
                                     boost::system::error_code ignored;
                                     socket.close(ignored);
                                   },
                                   std::move(peer), true};
  auto deadline = std::make_shared<read_deadline>(executor);
  deadline->cancel_reads = [&socket] {
    boost::system::error_code ignored;
    socket.cancel(ignored);
  };
  // However the coroutine ends (even destroyed unfinished with its io_context, or by an exception),
  // the entry and the deadline's reference to this frame's socket go with it.
  struct forget_on_exit {
    state& s;
    std::uint64_t number;
    read_deadline& deadline;
    ~forget_on_exit() {
      s.connections.erase(number);
      deadline.cancel_reads = nullptr;
      deadline.disarm();
    }
  } forget{*this, number, *deadline};
  const auto set_reading = [&](bool reading) {
    auto it = connections.find(number);
    if (it != connections.end()) it->second.reading = reading;
  };
  // What a request may make the server buffer at once: a header, or a chunk line or trailer that
  // has to be whole before the parser can judge it. Past this the read fails (413) instead.
  beast::flat_buffer buffer(max_header_bytes + read_limit() + 65536);
  // Reads from the client while its request waits (for a job's result): completes when the client
  // closes or resets its connection; whatever else it sends is kept for the next request.
  const job_api::client_watch watch = [&]() -> asio::awaitable<void> {
    for (;;) {
      const std::size_t room = std::min<std::size_t>(4096, buffer.max_size() - buffer.size());
      if (room == 0) {
        // As much of the next request as a request may be is here: stop reading, wait to be cancelled.
        asio::steady_timer forever(executor, asio::steady_timer::time_point::max());
        (void)co_await forever.async_wait(asio::as_tuple(asio::use_awaitable));
        co_return;
      }
      auto [ec, n] = co_await socket.async_read_some(buffer.prepare(room), asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      buffer.commit(n);
    }
  };
  stream.expires_never();
  for (;;) {
    set_reading(true);
    bounded_request_parser parser(max_header_bytes, read_limit());
    if (buffer.size() == 0) {
      // Idle between requests: closed quietly when the limit passes.
      read_deadline::arm(deadline, cfg.idle_timeout_seconds);
      auto [idle_ec, n] = co_await socket.async_read_some(buffer.prepare(4096), asio::as_tuple(asio::use_awaitable));
      deadline->disarm();
      if (idle_ec) break;
      buffer.commit(n);
    }
    std::string timed_out;
    read_deadline::arm(deadline, cfg.header_timeout_seconds);
    auto [read_ec, header_bytes] =
        co_await http::async_read_header(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
    (void)header_bytes;
    if (deadline->fired) {
      timed_out = "the request header was not received within server.header_timeout_seconds = " +
                  seconds_text(cfg.header_timeout_seconds) + " s";
    }
    deadline->disarm();
    if (!read_ec && !parser.is_done()) {
      // A client that sent `Expect: 100-continue` waits for this before it sends the body; a
      // request its header alone refuses gets the refusal instead, and the body is not read.
      const auto expect = parser.get()[http::field::expect];
      if (parser.get().version() >= 11 && beast::iequals(expect, "100-continue")) {
        if (auto refused = api->refuse_header(to_api_request(parser.get(), declared_length(parser)))) {
          set_reading(false);
          co_await refuse_and_close(stream, std::move(*refused), parser.get().version());
          break;
        }
        http::response<http::empty_body> go_on{http::status::continue_, 11};
        stream.expires_after(std::chrono::seconds(5));
        auto [continue_ec, continue_bytes] =
            co_await http::async_write(stream, go_on, asio::as_tuple(asio::use_awaitable));
        (void)continue_bytes;
        stream.expires_never();
        if (continue_ec) break;
      }
      read_deadline::arm(deadline, cfg.body_timeout_seconds);
      const auto body_ec = co_await read_body(stream, buffer, parser);
      if (deadline->fired) {
        timed_out = "the request body was not received within server.body_timeout_seconds = " +
                    seconds_text(cfg.body_timeout_seconds) + " s";
      }
      deadline->disarm();
      read_ec = body_ec;
    }
    if (read_ec) {
      std::optional<api_response> refusal;
      if (!timed_out.empty()) {
        refusal = api_response::refusal(408, "request_timeout", timed_out);
        count_request("unknown", 408);
      } else {
        refusal = refusal_for(read_ec, parser, read_limit(), cfg.limits);
      }
      if (refusal) {
        set_reading(false);
        co_await refuse_and_close(stream, std::move(*refusal), 11);
      }
      break;
    }
    set_reading(false);
    const std::optional<std::uint64_t> declared = declared_length(parser);
    request req = parser.release();
    api_request whole = to_api_request(req, declared);
    whole.body = std::move(req.body());
    std::optional<api_response> answered = co_await api->handle(std::move(whole), watch);
    // Nothing: its client left while the request waited; the wait is cancelled and the slot given back.
    if (!answered) break;
    const bool keep_alive = req.keep_alive() && !stopping();
    response res = to_beast(std::move(*answered), req.version(), keep_alive);
    // HEAD is answered as GET with the same Content-Length and no body.
    if (req.method() == http::verb::head) res.body().clear();
    ++served;
    stream.expires_after(std::chrono::seconds(30));
    auto [write_ec, written] = co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
    (void)written;
    stream.expires_never();
    if (write_ec || !keep_alive) break;
  }
  boost::system::error_code ignored;
  socket.shutdown(asio::socket_base::shutdown_both, ignored);
  socket.close(ignored);
}

}  // namespace coprove::service
