// The HTTP service of `coprove serve`: an accept loop and one coroutine per connection, all on the
// control executor, reading requests with Boost.Beast (bounded header and body), routing them with
// the request parser and answering with JSON. A bad request gets a 4xx with
// {"error": {"code", "message"}} and changes nothing; the connection and the service keep going.
#include "coprove/service/http_service.hpp"
#include "coprove/service/detail/bounded_request_parser.hpp"

#include <coprove/r1cs/circuits.hpp>
#include <coprove/engine/engine.hpp>
#include <coprove/engine/memory_plan.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/r1cs/circom_witness.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/metrics.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <deque>
#include <map>
#include <optional>
#include <system_error>

namespace coprove::service {
using r1cs::circuit_families;
using r1cs::circuit_known;
using r1cs::min_log_constraints;
using engine::job_state;
using engine::memory_plan_error;
using engine::queue_full_error;
using engine::prove_request;
using engine::prove_result;


namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using local_protocol = asio::local::stream_protocol;
using tcp = asio::ip::tcp;
using response = http::response<http::string_body>;
using request = http::request<http::string_body>;

namespace {

constexpr std::string_view channel = "http";
constexpr std::size_t max_header_bytes = 8 * 1024;

bool parse_port(std::string_view text, std::uint16_t& port) {
  if (text.empty() || text.size() > 5) return false;
  unsigned value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value > 65535) return false;
  port = static_cast<std::uint16_t>(value);
  return true;
}

response json_response(unsigned status, const json::value& body, unsigned version, bool keep_alive) {
  response res{static_cast<http::status>(status), version};
  res.set(http::field::server, "coprove");
  res.set(http::field::content_type, "application/json");
  res.body() = json::serialize(body);
  res.body() += '\n';
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

response error_response(unsigned status, std::string_view code, std::string_view message, unsigned version,
                        bool keep_alive) {
  response res{static_cast<http::status>(status), version};
  res.set(http::field::server, "coprove");
  res.set(http::field::content_type, "application/json");
  res.body() = error_body(code, message);
  res.body() += '\n';
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

// The completion of a connection's (or the accept loop's) coroutine: whatever it threw ends that
// coroutine only, logged here, never rethrown into the event loop (which would end the process and
// every job in flight).
void log_connection_end(std::exception_ptr error) noexcept {
  if (!error) return;
  try {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      COPROVE_LOG(error, channel) << "connection ended by an exception: " << e.what();
    }
  } catch (...) {
    // An unknown exception, or logging failed: the coroutine is over either way.
  }
}

void count_request(std::string_view endpoint, unsigned status) {
  runtime::registry::global()
      .get_counter("coprove_http_requests_total", "HTTP requests answered, by endpoint and status",
                   {{"endpoint", std::string(endpoint)}, {"status", std::to_string(status)}})
      .inc();
}

std::chrono::steady_clock::duration seconds_of(double seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

// Reads from the client while its request waits (for a job's result): completes when the client
// closes or resets its connection; whatever else it sends is kept for the next request.
using peer_watch = std::function<asio::awaitable<void>()>;

// Thrown out of a handler whose client closed its connection while it waited: nobody to answer.
struct client_gone {};

// Bounds one phase of reading a request (idle, header, body): when it fires it cancels the
// socket's operations, so the read ends with operation_aborted and the socket stays open for a
// 408. Shared with its timer's handler, which may run after the connection's coroutine is gone.
struct read_deadline {
  explicit read_deadline(asio::any_io_executor ex) : timer(std::move(ex)) {}
  asio::steady_timer timer;
  std::function<void()> cancel_reads;  // reset when the connection ends
  std::uint64_t generation = 0;
  bool fired = false;

  static void arm(const std::shared_ptr<read_deadline>& d, double seconds) {
    d->fired = false;
    const std::uint64_t generation = ++d->generation;
    d->timer.expires_after(seconds_of(seconds));
    d->timer.async_wait([d, generation](boost::system::error_code ec) {
      if (ec || generation != d->generation || !d->cancel_reads) return;
      d->fired = true;
      d->cancel_reads();
    });
  }
  void disarm() {
    ++generation;
    timer.cancel();
  }
};

// A canned refusal written on a socket that will not be served (no slot for it), then closed.
template <class Socket>
void refuse_connection(Socket& socket, unsigned status, std::string_view code, const std::string& message) {
  const std::string body = error_body(code, message) + "\n";
  const std::string reason = status == 429 ? "Too Many Requests" : "Service Unavailable";
  const std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                           "\r\nServer: coprove\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                           "Connection: close\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body;
  boost::system::error_code ignored;
  socket.non_blocking(true, ignored);
  (void)socket.write_some(asio::buffer(text), ignored);  // a fresh socket's send buffer takes it whole
  socket.shutdown(asio::socket_base::shutdown_both, ignored);
  socket.close(ignored);
  count_request("unknown", status);
}

std::string peer_of(local_protocol::socket&) { return {}; }
std::string peer_of(tcp::socket& socket) {
  boost::system::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  return ec ? std::string("unknown") : endpoint.address().to_string();
}

bool iequal(std::string_view a, std::string_view b) { return beast::iequals(a, b); }

// Constant-time comparison of a presented credential with the configured one.
bool same_secret(std::string_view presented, std::string_view expected) {
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < presented.size(); ++i)
    diff |= static_cast<unsigned char>(presented[i] ^ expected[i % std::max<std::size_t>(expected.size(), 1)]);
  return diff == 0 && !expected.empty();
}

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

}  // namespace

std::string default_listen_address() {
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  if (runtime_dir != nullptr && runtime_dir[0] == '/') return "unix:" + std::string(runtime_dir) + "/coprove.sock";
  return "unix:/run/coprove/coprove.sock";
}

bool listen_address::is_loopback() const {
  if (unix_socket) return true;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

std::string listen_address::to_string() const {
  if (unix_socket) return "unix:" + path;
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

listen_address parse_listen_address(std::string_view text) {
  listen_address out;
  constexpr std::string_view unix_prefix = "unix:";
  if (text.substr(0, unix_prefix.size()) == unix_prefix) {
    out.unix_socket = true;
    out.path = std::string(text.substr(unix_prefix.size()));
    if (out.path.empty()) throw std::invalid_argument("listen address 'unix:' needs a socket path");
    // sockaddr_un::sun_path holds 108 bytes including the terminator.
    if (out.path.size() > 107) {
      throw std::invalid_argument("Unix socket path '" + out.path + "' is longer than 107 bytes");
    }
    return out;
  }
  out.unix_socket = false;
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw std::invalid_argument("listen address '" + std::string(text) + "': expected [IPv6]:PORT");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      throw std::invalid_argument("listen address '" + std::string(text) + "': expected unix:PATH or HOST:PORT");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (!parse_port(port, out.port)) {
    throw std::invalid_argument("listen address '" + std::string(text) + "': port must be a number in [0, 65535]");
  }
  if (host == "localhost") host = "127.0.0.1";
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(std::string(host), ec);
  if (ec) {
    throw std::invalid_argument("listen address '" + std::string(text) + "': '" + std::string(host) +
                                "' is not an IP address (use an address literal or localhost)");
  }
  out.host = address.to_string();
  return out;
}

struct http_service::state : std::enable_shared_from_this<state> {
  state(asio::any_io_executor ex, engine::engine& e, http_service_config c)
      : executor(std::move(ex)), eng(e), cfg(std::move(c)) {}

  asio::any_io_executor executor;
  engine::engine& eng;
  http_service_config cfg;
  std::optional<local_protocol::acceptor> unix_acceptor;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::string bound;
  bool accepting = false;
  bool stopping = false;
  std::uint64_t next_connection = 0;
  std::uint64_t served = 0;
  // An open connection: how to close it, its peer (TCP: the remote address; empty on the Unix
  // socket) and whether it is waiting for or reading a request (and may give its slot up).
  struct connection {
    std::function<void()> close;
    std::string peer;
    bool reading = true;
  };
  std::map<std::uint64_t, connection> connections;  // by number: the oldest first
  std::uint64_t evicted = 0;
  // Jobs submitted with a request_id, for as long as the engine keeps the job; `submitted` in
  // submission order, for forgetting the ones the engine has forgotten.
  struct submitted_request {
    std::uint64_t job_id = 0;
    job_request request;
  };
  std::map<std::string, submitted_request> request_ids;
  std::deque<std::pair<std::string, std::uint64_t>> submitted;

  void bind();
  template <class Acceptor>
  asio::awaitable<void> accept_loop(Acceptor& acceptor);
  bool make_room(const std::string& peer, unsigned& status, std::string& why);
  template <class Stream>
  asio::awaitable<void> serve_connection(Stream stream, std::uint64_t number, std::string peer);
  std::optional<response> refusal_for(const boost::system::error_code& read_ec,
                                      const detail::bounded_request_parser& parser);
  template <class Stream>
  asio::awaitable<void> refuse_and_close(Stream& stream, response refusal);
  std::optional<response> refuse_header(const request& head, std::optional<std::uint64_t> content_length);
  response refusal(const request_error& e, std::string_view endpoint_label, const request& req, bool keep_alive);
  asio::awaitable<response> handle(const request& req, const peer_watch& watch);
  void check_exposure(const request& req) const;
  route admit(const request& req, std::string_view& endpoint_label) const;
  const engine::zkey_circuit* check_before_body(const request& head, const route& r,
                                                std::optional<std::uint64_t> content_length) const;
  request_limits job_limits() const;
  std::string queue_full_message(std::size_t partitions) const;
  asio::awaitable<response> job_result(const route& r, unsigned version, bool keep_alive, const peer_watch& watch);
  response submit_job(const request& req, const route& r);
  response accept_job(const request& req, const prove_request& request, const std::string& what,
                      const job_request* parsed = nullptr);
  response list_circuits(unsigned version, bool keep_alive);
  response prove_circuit(const request& req, const route& r);
  /// What a body may hold: the JSON limit, or a witness file of the largest circuit.
  std::size_t read_limit() const noexcept {
    return std::max(cfg.limits.max_body_bytes, cfg.limits.max_witness_body_bytes);
  }
  void close_all();
  [[noreturn]] void no_such_job(std::uint64_t id) const;
};

// A job id the engine does not know: 410 when its job ended and the retention policy has forgotten
// it since, 404 otherwise.
void http_service::state::no_such_job(std::uint64_t id) const {
  if (eng.expired(id))
    throw request_error(410, "result_expired",
                        "job " + std::to_string(id) +
                            " has ended and is no longer kept (server.result_retention_jobs, _bytes, _seconds)");
  throw request_error(404, "unknown_job", "no job " + std::to_string(id));
}

void http_service::state::bind() {
  if (!cfg.listen.is_loopback() && !cfg.allow_remote) {
    throw std::invalid_argument("listen address " + cfg.listen.to_string() +
                                " is not loopback: pass --allow-remote to listen on it (server.allow_remote)");
  }
  if (!cfg.listen.is_loopback() && cfg.auth_token.empty()) {
    throw std::invalid_argument("listen address " + cfg.listen.to_string() +
                                " is not loopback: it needs a bearer token (server.auth_token_file)");
  }
  if (cfg.listen.is_unix()) {
    namespace fs = std::filesystem;
    const fs::path path = cfg.listen.path;
    const std::string where = "cannot listen on " + path.string() + ": ";
    // A path that another user owns, or in a directory another user owns, is theirs to replace or
    // listen on: refuse it rather than talk to (or remove) their socket.
    const uid_t me = ::geteuid();
    const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
    struct stat parent_info {};
    if (::stat(parent.c_str(), &parent_info) != 0) {
      throw std::system_error(std::error_code(errno, std::generic_category()), where + "its directory " + parent.string());
    }
    if (parent_info.st_uid != me && parent_info.st_uid != 0) {
      throw std::system_error(std::make_error_code(std::errc::permission_denied),
                              where + "its directory " + parent.string() + " belongs to uid " +
                                  std::to_string(parent_info.st_uid) + ", not this user (uid " + std::to_string(me) + ")");
    }
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0) {
      if (info.st_uid != me) {
        throw std::system_error(std::make_error_code(std::errc::permission_denied),
                                where + "it exists and belongs to uid " + std::to_string(info.st_uid) +
                                    ", not this user (uid " + std::to_string(me) + ")");
      }
      if (!S_ISSOCK(info.st_mode)) {
        throw std::system_error(std::make_error_code(std::errc::file_exists), where + "it exists and is not a socket");
      }
      local_protocol::socket probe(executor);
      boost::system::error_code probe_ec;
      probe.connect(local_protocol::endpoint(path.string()), probe_ec);
      if (!probe_ec) {
        throw std::system_error(std::make_error_code(std::errc::address_in_use),
                                "another server is listening on " + path.string());
      }
      std::error_code fs_ec;
      fs::remove(path, fs_ec);  // a stale socket left by a process that did not exit cleanly
    }
    unix_acceptor.emplace(executor);
    const local_protocol::endpoint endpoint(path.string());
    boost::system::error_code ec;
    unix_acceptor->open(endpoint.protocol(), ec);
    if (!ec) unix_acceptor->bind(endpoint, ec);
    // The mode is set before listen(): until then a connect is refused, so no client reaches the
    // socket while it still has the mode the umask gave it.
    if (!ec && ::chmod(path.c_str(), static_cast<mode_t>(cfg.socket_mode)) != 0)
      ec = boost::system::error_code(errno, boost::system::generic_category());
    if (!ec) unix_acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::system_error(std::error_code(ec), "cannot listen on " + cfg.listen.to_string());
    bound = cfg.listen.to_string();
  } else {
    // Every failure here (the port in use, no permission, an address this host does not have) is
    // a std::system_error naming the address, which the caller reports as a configuration error.
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(cfg.listen.host, ec);
    if (ec) throw std::system_error(std::error_code(ec), "cannot listen on " + cfg.listen.to_string());
    const tcp::endpoint endpoint(address, cfg.listen.port);
    tcp_acceptor.emplace(executor);
    tcp_acceptor->open(endpoint.protocol(), ec);
    if (!ec) tcp_acceptor->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) tcp_acceptor->bind(endpoint, ec);
    if (!ec) tcp_acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::system_error(std::error_code(ec), "cannot listen on " + cfg.listen.to_string());
    listen_address actual = cfg.listen;
    actual.port = tcp_acceptor->local_endpoint().port();
    bound = actual.to_string();
  }
}

template <class Acceptor>
asio::awaitable<void> http_service::state::accept_loop(Acceptor& acceptor) {
  auto self = shared_from_this();
  while (accepting) {
    auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec) {
      if (ec == asio::error::operation_aborted || !accepting) break;
      COPROVE_LOG(warning, channel) << "accept failed: " << ec.message();
      continue;
    }
    std::string peer = peer_of(socket);
    unsigned status = 0;
    std::string why;
    if (!make_room(peer, status, why)) {
      COPROVE_LOG(debug, channel) << "connection from " << (peer.empty() ? "the Unix socket" : peer) << " refused: " << why;
      refuse_connection(socket, status, "too_many_connections", why);
      continue;
    }
    using stream_type = beast::basic_stream<typename Acceptor::protocol_type, asio::any_io_executor>;
    const std::uint64_t number = next_connection++;
    asio::co_spawn(executor, serve_connection(stream_type(std::move(socket)), number, std::move(peer)),
                   log_connection_end);
  }
}

// A slot for a new connection from `peer`: under the per-peer limit (TCP) and the total limit,
// each reached limit taking the slot of the oldest connection that has not sent a whole request
// (idle keep-alive or slow: slow-loris cannot hold slots against clients that send requests).
// False, with the status and reason to answer, when every connection that counts is busy.
bool http_service::state::make_room(const std::string& peer, unsigned& status, std::string& why) {
  const auto evict_oldest_reading = [&](const std::string* of_peer) {
    for (auto it = connections.begin(); it != connections.end(); ++it) {
      if (!it->second.reading || (of_peer && it->second.peer != *of_peer)) continue;
      auto close = std::move(it->second.close);
      connections.erase(it);  // the slot is free now; the coroutine ends when its read fails
      ++evicted;
      runtime::registry::global()
          .get_counter("coprove_http_connections_evicted_total",
                       "Connections closed before a whole request to make room for a new one")
          .inc();
      close();
      return true;
    }
    return false;
  };
  if (!peer.empty()) {
    std::size_t mine = 0;
    for (const auto& [number, c] : connections) mine += c.peer == peer ? 1 : 0;
    if (mine >= cfg.max_connections_per_peer && !evict_oldest_reading(&peer)) {
      status = 429;
      why = "this address holds " + std::to_string(mine) + " connections, each answering a request (server.max_connections_per_peer)";
      return false;
    }
  }
  if (connections.size() >= cfg.max_connections && !evict_oldest_reading(nullptr)) {
    status = 503;
    why = "all " + std::to_string(connections.size()) + " connections are answering requests (server.max_connections)";
    return false;
  }
  return true;
}

template <class Stream>
asio::awaitable<void> http_service::state::serve_connection(Stream stream, std::uint64_t number, std::string peer) {
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
  const peer_watch watch = [&]() -> asio::awaitable<void> {
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
    detail::bounded_request_parser parser(max_header_bytes, read_limit());
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
    if (deadline->fired) timed_out = "the request header was not received within the header timeout";
    deadline->disarm();
    if (!read_ec && !parser.is_done()) {
      // A client that sent `Expect: 100-continue` waits for this before it sends the body; a
      // request its header alone refuses gets the refusal instead, and the body is not read.
      const auto expect = parser.get()[http::field::expect];
      if (parser.get().version() >= 11 && beast::iequals(expect, "100-continue")) {
        const auto declared = parser.content_length();
        const std::optional<std::uint64_t> length = declared ? std::optional<std::uint64_t>(*declared) : std::nullopt;
        if (auto refused = refuse_header(parser.get(), length)) {
          set_reading(false);
          co_await refuse_and_close(stream, std::move(*refused));
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
      if (deadline->fired) timed_out = "the request body was not received within the body timeout";
      deadline->disarm();
      read_ec = body_ec;
    }
    if (read_ec) {
      std::optional<response> refusal;
      if (!timed_out.empty()) {
        refusal = error_response(408, "request_timeout",
                                 timed_out + " (" +
                                     (timed_out.find("header") != std::string::npos ? "server.header_timeout_seconds"
                                                                                     : "server.body_timeout_seconds") +
                                     ")",
                                 11, false);
        count_request("unknown", 408);
      } else {
        refusal = refusal_for(read_ec, parser);
      }
      if (refusal) {
        set_reading(false);
        co_await refuse_and_close(stream, std::move(*refusal));
      }
      break;
    }
    set_reading(false);
    request req = parser.release();
    std::optional<response> answered;
    try {
      answered = co_await handle(req, watch);
    } catch (const client_gone&) {
      // Its client left while the request waited: the wait is cancelled and the slot given back.
    }
    if (!answered) break;
    response& res = *answered;
    const bool keep_alive = req.keep_alive() && res.keep_alive() && !stopping;
    res.keep_alive(keep_alive);
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

// Answers a request that is not read any further, then closes its connection: what the client is
// still sending is read first (bounded), so that the close does not reset the connection and lose
// the response on the client's side.
template <class Stream>
asio::awaitable<void> http_service::state::refuse_and_close(Stream& stream, response refusal) {
  refusal.keep_alive(false);
  stream.expires_after(std::chrono::seconds(5));
  (void)co_await http::async_write(stream, refusal, asio::as_tuple(asio::use_awaitable));
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

std::optional<response> http_service::state::refusal_for(const boost::system::error_code& read_ec,
                                                        const detail::bounded_request_parser& parser) {
  using detail::request_refusal;
  const request_refusal why = parser.refusal();
  const std::string body_limit = std::to_string(read_limit()) + " bytes (server.max_body_bytes" +
                                 (cfg.limits.max_witness_body_bytes > cfg.limits.max_body_bytes
                                      ? "; a witness body: the largest circuit's .wtns file)"
                                      : ")");
  const std::string header_limit = std::to_string(max_header_bytes);
  std::optional<response> refusal;
  if (why == request_refusal::duplicate_header || read_ec == http::error::multiple_content_length) {
    const std::string name =
        why == request_refusal::duplicate_header ? std::string(parser.duplicate()) : std::string("Content-Length");
    refusal = error_response(400, "duplicate_header",
                             "header '" + name + "' is given more than once; a request carries it once", 11, false);
  } else if (why == request_refusal::unsupported_transfer_coding) {
    refusal = error_response(501, "unsupported_transfer_coding",
                             "Transfer-Encoding other than chunked is not supported", 11, false);
  } else if (why == request_refusal::trailer_too_large) {
    refusal = error_response(431, "header_too_large", "request trailer exceeds " + header_limit + " bytes", 11, false);
  } else if (why == request_refusal::chunk_extensions_too_large) {
    refusal = error_response(413, "body_too_large",
                             "chunk extensions and data exceed the body limit of " + body_limit, 11, false);
  } else if (read_ec == http::error::body_limit) {
    refusal = error_response(413, "body_too_large", "request body exceeds the limit of " + body_limit, 11, false);
  } else if (read_ec == http::error::buffer_overflow) {
    refusal = error_response(413, "body_too_large",
                             "a chunk line or the trailer is larger than a request may make the server hold", 11, false);
  } else if (read_ec == http::error::header_limit) {
    refusal = error_response(431, "header_too_large", "request header exceeds " + header_limit + " bytes", 11, false);
  } else if (read_ec.category() == http::make_error_code(http::error::bad_target).category() &&
             read_ec != http::error::end_of_stream && read_ec != http::error::partial_message) {
    refusal = error_response(400, "bad_request", "malformed HTTP request: " + read_ec.message(), 11, false);
  }
  if (refusal) count_request("unknown", refusal->result_int());
  return refusal;
}

asio::awaitable<response> http_service::state::handle(const request& req, const peer_watch& watch) {
  const unsigned version = req.version();
  const bool keep_alive = req.keep_alive();
  std::string_view endpoint_label = "unknown";
  try {
    const route r = admit(req, endpoint_label);
    response res;
    switch (r.target) {
      case endpoint::health: {
        json::object body{{"status", stopping ? "stopping" : "ok"}};
        res = json_response(stopping ? 503 : 200, body, version, keep_alive);
        break;
      }
      case endpoint::metrics: {
        res = response{http::status::ok, version};
        res.set(http::field::server, "coprove");
        res.set(http::field::content_type, "text/plain; version=0.0.4");
        res.body() = runtime::registry::global().prometheus_text();
        res.keep_alive(keep_alive);
        res.prepare_payload();
        break;
      }
      case endpoint::service_status: {
        json::object body = eng.status_json();
        json::object service{{"listen", bound},
                             {"accepting", accepting},
                             {"stopping", stopping},
                             {"open_connections", connections.size()},
                             {"connections_evicted", evicted},
                             {"requests_served", served}};
        body["service"] = std::move(service);
        res = json_response(200, body, version, keep_alive);
        break;
      }
      case endpoint::submit_job: res = submit_job(req, r); break;
      case endpoint::job_status: {
        const auto status = eng.status(r.job_id);
        if (!status) no_such_job(r.job_id);
        res = json_response(200, status->to_json(), version, keep_alive);
        break;
      }
      case endpoint::cancel_job: {
        if (eng.cancel(r.job_id)) {
          json::object body{{"job_id", r.job_id}, {"cancelled", true}};
          res = json_response(202, body, version, keep_alive);
        } else if (const auto status = eng.status(r.job_id)) {
          throw request_error(409, "job_finished",
                              "job " + std::to_string(r.job_id) + " has already ended (" +
                                  std::string(to_string(status->state)) + ")");
        } else {
          no_such_job(r.job_id);
        }
        break;
      }
      case endpoint::job_result: res = co_await job_result(r, version, keep_alive, watch); break;
      case endpoint::list_circuits: res = list_circuits(version, keep_alive); break;
      case endpoint::prove_circuit: res = prove_circuit(req, r); break;
      case endpoint::verifying_key: {
        const groth16::verifying_key* vk = eng.verifying_key(r.circuit, r.log_constraints);
        if (!vk) {
          std::string have;
          for (const auto& [circuit, log] : eng.key_ids())
            have += (have.empty() ? "" : ", ") + circuit + "/" + std::to_string(log);
          throw request_error(404, "unknown_key",
                              "no key for " + r.circuit + "/" + std::to_string(r.log_constraints) +
                                  " (keys: " + (have.empty() ? "none" : have) + ")");
        }
        if (r.snarkjs_format) {
          res = json_response(200, groth16::verifying_key_to_snarkjs_json(*vk), version, keep_alive);
        } else {
          const std::vector<std::uint8_t> bytes = groth16::encode_verifying_key(*vk);
          res = response{http::status::ok, version};
          res.set(http::field::server, "coprove");
          res.set(http::field::content_type, "application/octet-stream");
          res.body().assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
          res.keep_alive(keep_alive);
          res.prepare_payload();
        }
        break;
      }
    }
    count_request(endpoint_label, res.result_int());
    co_return res;
  } catch (const request_error& e) {
    co_return refusal(e, endpoint_label, req, keep_alive);
  } catch (const std::exception& e) {
    count_request(endpoint_label, 500);
    COPROVE_LOG(error, channel) << req.method_string() << " " << req.target() << " failed: " << e.what();
    co_return error_response(500, "internal_error", e.what(), version, keep_alive);
  }
}

// Who sends a request and where to: the exposure checks, then its route (its endpoint's name in
// `endpoint_label`, for the metrics).
route http_service::state::admit(const request& req, std::string_view& endpoint_label) const {
  check_exposure(req);
  const route r = parse_route(std::string_view(req.method_string().data(), req.method_string().size()),
                              std::string_view(req.target().data(), req.target().size()), cfg.limits);
  endpoint_label = endpoint_name(r.target);
  return r;
}

// A refused request's answer, counted and logged.
response http_service::state::refusal(const request_error& e, std::string_view endpoint_label, const request& req,
                                      bool keep_alive) {
  count_request(endpoint_label, e.status());
  COPROVE_LOG(debug, channel) << req.method_string() << " " << req.target() << " -> " << e.status() << " " << e.code()
                              << ": " << e.what();
  response res = error_response(e.status(), e.code(), e.what(), req.version(), keep_alive);
  if (!e.allow().empty()) res.set(http::field::allow, e.allow());
  if (e.retry_after() != 0) res.set(http::field::retry_after, std::to_string(e.retry_after()));
  if (e.status() == 401) res.set(http::field::www_authenticate, "Bearer");
  return res;
}

// The refusal of a request whose header alone decides it (who sends it, where to, the body's type
// and declared size), or nothing when its body is worth reading.
std::optional<response> http_service::state::refuse_header(const request& head,
                                                          std::optional<std::uint64_t> content_length) {
  std::string_view endpoint_label = "unknown";
  try {
    const route r = admit(head, endpoint_label);
    (void)check_before_body(head, r, content_length);
    return std::nullopt;
  } catch (const request_error& e) {
    return refusal(e, endpoint_label, head, false);
  }
}

// What a submission's header must say before its body is looked at: the service still takes
// jobs, the body's media type, and a declared length within the limit; for a circuit's proof, a
// circuit it proves (returned). Called on the header alone (Expect: 100-continue) and on the whole
// request, so that both refuse alike.
const engine::zkey_circuit* http_service::state::check_before_body(const request& head, const route& r,
                                                                   std::optional<std::uint64_t> content_length) const {
  if (r.target != endpoint::submit_job && r.target != endpoint::prove_circuit) return nullptr;
  const auto content_type = head[http::field::content_type];
  if (r.target == endpoint::submit_job) {
    // A browser may send a text/plain or form POST to any address without asking first; only a
    // JSON body is taken, which a cross-site page cannot send without CORS's consent.
    std::string_view media(content_type.data(), content_type.size());
    media = media.substr(0, media.find(';'));
    while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
    if (!iequal(media, "application/json")) {
      throw request_error(415, "unsupported_media_type",
                          "a job body must be sent with Content-Type: application/json, got '" +
                              std::string(content_type.substr(0, 64)) + "'");
    }
  }
  if (stopping || !accepting) {
    throw request_error(503, "shutting_down", "the service is shutting down and accepts no new jobs");
  }
  if (r.target == endpoint::submit_job) {
    if (content_length && *content_length > cfg.limits.max_body_bytes) {
      throw request_error(413, "body_too_large",
                          "request body of " + std::to_string(*content_length) +
                              " bytes exceeds server.max_body_bytes = " + std::to_string(cfg.limits.max_body_bytes));
    }
    return nullptr;
  }
  const auto& circuits = eng.config().zkey_circuits;
  const auto found = std::find_if(circuits.begin(), circuits.end(), [&](const auto& c) { return c.name == r.circuit; });
  if (found == circuits.end()) {
    std::string known;
    for (const auto& c : circuits) known += (known.empty() ? "" : ", ") + c.name;
    throw request_error(404, "unknown_circuit",
                        "no circuit '" + r.circuit + "' (circuits: " + (known.empty() ? "none" : known) + ")");
  }
  if (!beast::iequals(content_type, "application/octet-stream"))
    throw request_error(415, "unsupported_media_type",
                        "a witness is sent as application/octet-stream (a .wtns file), not '" +
                            std::string(content_type.substr(0, 64)) + "'");
  const std::size_t expected = r1cs::wtns_file_bytes(found->key->num_variables());
  if (content_length && *content_length > expected)
    throw request_error(413, "body_too_large", "a witness of " + r.circuit + " is " + std::to_string(expected) +
                                                   " bytes, the body has " + std::to_string(*content_length));
  return &*found;
}

// The request limits a job body is held to: the configured ones within what the engine takes (the
// smallest circuit, and engine.max_log_constraints, which its memory plan is sized for).
request_limits http_service::state::job_limits() const {
  request_limits limits = cfg.limits;
  limits.min_log_constraints = std::max(limits.min_log_constraints, min_log_constraints);
  limits.max_log_constraints = std::min(limits.max_log_constraints, eng.config().max_log_constraints);
  return limits;
}

// Who may drive the API: on TCP the Host must name the listen address (DNS rebinding cannot reach
// it under another name); an Origin, where a browser sends one, must be allowed; with a token,
// every request but the health check carries it.
void http_service::state::check_exposure(const request& req) const {
  if (!cfg.listen.is_unix()) {
    const std::string_view host(req[http::field::host].data(), req[http::field::host].size());
    std::string_view name = host;
    std::string_view port;
    if (!name.empty() && name.front() == '[') {
      const auto close = name.find(']');
      if (close != std::string_view::npos) {
        port = name.substr(close + 1);
        name = name.substr(1, close - 1);
      }
    } else if (const auto colon = name.rfind(':'); colon != std::string_view::npos) {
      port = name.substr(colon);
      name = name.substr(0, colon);
    }
    bool allowed = iequal(name, cfg.listen.host) || (cfg.listen.is_loopback() && iequal(name, "localhost"));
    for (const auto& h : cfg.allowed_hosts) allowed = allowed || iequal(name, h);
    const std::string bound_port = ":" + bound.substr(bound.rfind(':') + 1);
    if (host.empty() || !allowed || (!port.empty() && port != bound_port)) {
      throw request_error(403, "host_not_allowed",
                          "Host '" + std::string(host.substr(0, 64)) + "' is not the address this service listens on (" +
                              bound + ") nor a name in server.allowed_hosts");
    }
  }
  const auto origin_field = req[http::field::origin];
  if (!origin_field.empty()) {
    const std::string_view origin(origin_field.data(), origin_field.size());
    bool allowed = false;
    for (const auto& o : cfg.allowed_origins) allowed = allowed || origin == o;
    if (!allowed) {
      throw request_error(403, "origin_not_allowed",
                          "Origin '" + std::string(origin.substr(0, 64)) + "' is not in server.allowed_origins");
    }
  }
  if (!cfg.auth_token.empty()) {
    const std::string_view target(req.target().data(), req.target().size());
    if (target.substr(0, target.find('?')) == "/healthz") return;
    const auto authorization = req[http::field::authorization];
    const std::string_view presented(authorization.data(), authorization.size());
    constexpr std::string_view scheme = "Bearer ";
    if (presented.size() <= scheme.size() || !iequal(presented.substr(0, scheme.size()), scheme) ||
        !same_secret(presented.substr(scheme.size()), cfg.auth_token)) {
      throw request_error(401, "unauthorized",
                          "this service needs 'Authorization: Bearer <token>' with the token of server.auth_token_file");
    }
  }
}

response http_service::state::submit_job(const request& req, const route& r) {
  (void)check_before_body(req, r, req.body().size());
  const job_request parsed = parse_job_request(req.body(), cfg.defaults, job_limits());
  if (!circuit_known(parsed.circuit)) {
    std::string known;
    for (auto name : circuit_families()) known += (known.empty() ? "" : ", ") + std::string(name);
    throw request_error(422, "unknown_circuit", "unknown circuit '" + parsed.circuit + "' (known: " + known + ")");
  }
  if (eng.config().results == engine::result_kind::proof &&
      !eng.verifying_key(parsed.circuit, parsed.log_constraints)) {
    std::string have;
    for (const auto& [circuit, log] : eng.key_ids()) have += (have.empty() ? "" : ", ") + circuit + "/" + std::to_string(log);
    throw request_error(422, "no_key",
                        "no proving key for " + parsed.circuit + "/" + std::to_string(parsed.log_constraints) +
                            " (the service has keys for " + have + "; start it with --keys DIR from coprove setup)");
  }
  // The same request_id again is the same job, for as long as the engine keeps it.
  while (!submitted.empty() && eng.expired(submitted.front().second)) {
    const auto it = request_ids.find(submitted.front().first);
    if (it != request_ids.end() && it->second.job_id == submitted.front().second) request_ids.erase(it);
    submitted.pop_front();
  }
  if (!parsed.request_id.empty()) {
    const auto it = request_ids.find(parsed.request_id);
    if (it != request_ids.end() && !eng.expired(it->second.job_id)) {
      if (!(it->second.request == parsed)) {
        throw request_error(409, "request_id_conflict",
                            "request_id '" + parsed.request_id + "' was given to job " +
                                std::to_string(it->second.job_id) + " with another body");
      }
      const std::string base = "/v1/jobs/" + std::to_string(it->second.job_id);
      json::object body{{"job_id", it->second.job_id}, {"status_url", base}, {"result_url", base + "/result"},
                        {"request_id", parsed.request_id}, {"existing", true}};
      response res = json_response(200, body, req.version(), req.keep_alive());
      res.set(http::field::location, base);
      return res;
    }
  }
  prove_request request;
  request.circuit = parsed.circuit;
  request.log_constraints = parsed.log_constraints;
  request.partitions = parsed.partitions;
  request.seed = parsed.seed;
  request.priority = engine::parse_job_priority(parsed.priority).value_or(engine::job_priority::normal);
  return accept_job(req, request,
                    request.circuit + " 2^" + std::to_string(request.log_constraints) + " x " +
                        std::to_string(request.partitions) + " partitions, seed " + std::to_string(request.seed) +
                        ", priority " + parsed.priority,
                    &parsed);
}

// Which of the limits on unfinished work a refused job met, by the keys `coprove serve` sets them
// with (the engine's own message names its fields, which no configuration spells).
std::string http_service::state::queue_full_message(std::size_t partitions) const {
  const auto jobs = eng.status_snapshot().jobs;
  const auto& limits = eng.config();
  const std::size_t open_jobs = jobs.queued + jobs.running;
  if (limits.max_open_jobs != 0 && open_jobs >= limits.max_open_jobs) {
    return "the service holds " + std::to_string(open_jobs) + " unfinished jobs, as many as server.max_queued_jobs = " +
           std::to_string(limits.max_open_jobs) + " allows; retry after " + std::to_string(cfg.retry_after_seconds) +
           " s (server.retry_after_seconds)";
  }
  return "the service holds " + std::to_string(jobs.open_partitions) + " unfinished partitions; " +
         std::to_string(partitions) + " more exceed server.max_queued_partitions = " +
         std::to_string(limits.max_open_partitions) + "; retry after " + std::to_string(cfg.retry_after_seconds) +
         " s (server.retry_after_seconds)";
}

// Submits the request: 202 with the job's URLs, 429 when the engine holds as much work as it may,
// or 422 saying why the engine refused it. A JSON job body's request_id is remembered for its job.
response http_service::state::accept_job(const request& req, const prove_request& request, const std::string& what,
                                         const job_request* parsed) {
  std::uint64_t id = 0;
  try {
    id = eng.submit(request);
  } catch (const queue_full_error&) {
    throw request_error(429, "queue_full", queue_full_message(request.partitions))
        .with_retry_after(cfg.retry_after_seconds);
  } catch (const memory_plan_error& e) {
    throw request_error(422, "exceeds_memory_plan", e.what());
  } catch (const std::invalid_argument& e) {
    throw request_error(422, "invalid_request", e.what());
  }
  runtime::log_fields fields;
  fields.job = id;
  COPROVE_LOG_F(info, channel, fields) << "job " << id << " submitted: " << what;
  const std::string base = "/v1/jobs/" + std::to_string(id);
  json::object body{{"job_id", id}, {"status_url", base}, {"result_url", base + "/result"}};
  if (parsed != nullptr && !parsed->request_id.empty()) {
    request_ids[parsed->request_id] = submitted_request{id, *parsed};
    submitted.emplace_back(parsed->request_id, id);
    body["request_id"] = parsed->request_id;
  }
  response res = json_response(202, body, req.version(), req.keep_alive());
  res.set(http::field::location, base);
  return res;
}

// GET /v1/circuits: the zkey circuits with their sizes, and what a witness body must hold.
response http_service::state::list_circuits(unsigned version, bool keep_alive) {
  json::array circuits;
  for (const auto& c : eng.config().zkey_circuits) {
    circuits.push_back(json::object{{"name", c.name},
                                    {"zkey", c.key->name},
                                    {"zkey_bytes", c.key->file_bytes},
                                    {"signals", c.key->num_variables()},
                                    {"public_signals", c.key->num_public},
                                    {"domain_size", c.key->domain_size()},
                                    {"witness_bytes", r1cs::wtns_file_bytes(c.key->num_variables())},
                                    {"proofs_url", "/v1/circuits/" + c.name + "/proofs"}});
  }
  return json_response(200, json::object{{"circuits", std::move(circuits)}}, version, keep_alive);
}

// POST /v1/circuits/{name}/proofs: a .wtns body, one witness; a job of one partition whose result
// holds the proof and public signals in snarkjs's JSON (proof_snarkjs, public_inputs).
response http_service::state::prove_circuit(const request& req, const route& r) {
  const engine::zkey_circuit* found = check_before_body(req, r, req.body().size());
  const std::string& name = r.circuit;
  std::vector<field::fr> witness;
  try {
    witness = r1cs::decode_wtns(std::vector<std::uint8_t>(req.body().begin(), req.body().end()), "the request body",
                                found->key->num_variables());
  } catch (const r1cs::circom_file_error& e) {
    throw request_error(422, "invalid_witness", e.what());
  }
  prove_request request;
  request.circuit = name;
  request.witnesses = std::make_shared<const std::vector<std::vector<field::fr>>>(1, std::move(witness));
  return accept_job(req, request, "a witness of circuit " + name);
}

asio::awaitable<response> http_service::state::job_result(const route& r, unsigned version, bool keep_alive,
                                                          const peer_watch& watch) {
  auto status = eng.status(r.job_id);
  if (!status) no_such_job(r.job_id);
  const bool ended = status->state == job_state::done || status->state == job_state::failed ||
                     status->state == job_state::cancelled;
  if (!ended && r.wait_seconds <= 0.0) co_return json_response(202, status->to_json(), version, keep_alive);

  std::error_code ec;
  prove_result result;
  if (ended) {
    std::tie(ec, result) = co_await eng.async_await(r.job_id, asio::as_tuple(asio::use_awaitable));
  } else {
    // Whichever finishes first: the job, the wait, or the client leaving; the others are cancelled
    // (cancelling an await leaves the job running).
    asio::steady_timer timer(executor, seconds_of(r.wait_seconds));
    auto [order, await_ec, awaited, timer_ec, watch_error] =
        co_await asio::experimental::make_parallel_group(eng.async_await(r.job_id, asio::deferred),
                                                         timer.async_wait(asio::deferred),
                                                         asio::co_spawn(executor, watch(), asio::deferred))
            .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
    (void)timer_ec;
    (void)watch_error;
    if (order[0] == 2) throw client_gone{};
    if (order[0] == 1) {
      status = eng.status(r.job_id);
      if (!status) no_such_job(r.job_id);
      co_return json_response(202, status->to_json(), version, keep_alive);
    }
    ec = await_ec;
    result = std::move(awaited);
  }
  if (!ec) co_return json_response(200, result.to_json(), version, keep_alive);
  status = eng.status(r.job_id);
  if (!status) no_such_job(r.job_id);
  if (status->state == job_state::cancelled) {
    throw request_error(409, "job_cancelled", "job " + std::to_string(r.job_id) + " was cancelled");
  }
  const std::string why = !status->error.empty() ? status->error : ec.message();
  throw request_error(409, "job_failed", "job " + std::to_string(r.job_id) + " failed: " + why);
}

void http_service::state::close_all() {
  std::vector<std::function<void()>> pending;  // closing runs no handler inline; copied anyway
  for (auto& [number, c] : connections) pending.push_back(c.close);
  for (auto& close : pending) close();
}

http_service::http_service(asio::any_io_executor control, engine::engine& engine, http_service_config cfg)
    : state_(std::make_shared<state>(std::move(control), engine, std::move(cfg))) {
  state_->bind();
}

http_service::~http_service() {
  stop_accepting();
  state_->close_all();
  if (state_->cfg.listen.is_unix()) {
    std::error_code ignored;
    std::filesystem::remove(state_->cfg.listen.path, ignored);
  }
}

void http_service::start() {
  if (state_->accepting) return;
  state_->accepting = true;
  if (state_->unix_acceptor) {
    asio::co_spawn(state_->executor, state_->accept_loop(*state_->unix_acceptor), log_connection_end);
  } else {
    asio::co_spawn(state_->executor, state_->accept_loop(*state_->tcp_acceptor), log_connection_end);
  }
  COPROVE_LOG(info, channel) << "listening on " << state_->bound;
}

void http_service::stop_accepting() {
  state_->accepting = false;
  state_->stopping = true;
  boost::system::error_code ignored;
  if (state_->unix_acceptor) state_->unix_acceptor->close(ignored);
  if (state_->tcp_acceptor) state_->tcp_acceptor->close(ignored);
}

void http_service::close_connections() { state_->close_all(); }

std::string http_service::local_address() const { return state_->bound; }
std::size_t http_service::open_connections() const noexcept { return state_->connections.size(); }
std::uint64_t http_service::requests_served() const noexcept { return state_->served; }

}  // namespace coprove::service
