// The HTTP API of `coprove serve` as a function from a request to a response: routes, job
// submission (JSON bodies and circom witnesses), status, results (awaited up to ?wait=), cancels,
// keys, metrics and health, over an engine. No socket and no Beast: the connection hands it
// api_requests and writes the api_responses it returns, and tests drive it directly on an
// io_context. It runs on the control executor, where the engine's handlers complete.
#pragma once

#include <coprove/service/api_message.hpp>
#include <coprove/service/exposure.hpp>
#include <coprove/service/request_parser.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace coprove::engine {
class engine;
struct prove_request;
struct zkey_circuit;
struct key_source;
}  // namespace coprove::engine

namespace coprove::service {

struct job_api_config {
  request_limits limits;             ///< body size, wait limit and request ranges
  job_request defaults;              ///< fields a POST /v1/jobs body leaves out
  unsigned retry_after_seconds = 5;  ///< the Retry-After of a 429 queue_full
  /// server.key_roots: the folders under which POST /v1/keys may name a key directory or a zkey
  /// (after symlinks and `..` are resolved); empty: no key is loaded over the network (403).
  std::vector<std::filesystem::path> key_roots;
  /// How a key named by POST /v1/keys is read (the composition root's: a key directory with every
  /// check, or a zkey); it returns the source the engine runs on its CPU executor, reading nothing
  /// itself. Empty: POST /v1/keys is 403.
  std::function<engine::key_source(const std::filesystem::path&)> key_loader;
};

/// The path `requested` names under one of `roots` (relative: under each root in turn, the first
/// that has it), with symlinks and `..` resolved: request_error 403 key_path_forbidden when it is
/// outside every root (or no root is configured), 404 key_not_found when it is inside but absent.
/// The engine's refusal of a key to load or evict (an engine_errc) as the API answers it: 409
/// key_exists or key_in_use, 404 unknown_key, 507 key_does_not_fit, 422 key_refused, 503.
request_error key_refusal(std::error_code ec, const std::string& message);

std::filesystem::path resolve_key_path(std::string_view requested, const std::vector<std::filesystem::path>& roots);

/// The API over an engine. Not thread-safe: use it on the control executor's thread.
class job_api {
 public:
  /// Completes when the client of a request that waits (for a job's result) leaves; empty: the
  /// client is not watched.
  using client_watch = std::function<boost::asio::awaitable<void>()>;

  job_api(boost::asio::any_io_executor executor, engine::engine& engine, job_api_config cfg, exposure_policy exposure);

  /// Takes jobs from now on (until stop()).
  void start() noexcept { accepting_ = true; }
  /// Takes no new jobs (503 shutting_down); /healthz answers 503 "stopping".
  void stop() noexcept {
    accepting_ = false;
    stopping_ = true;
  }
  bool accepting() const noexcept { return accepting_; }
  bool stopping() const noexcept { return stopping_; }
  /// Figures of the listener that GET /v1/status shows under "service" (connections, requests).
  void set_service_figures(std::function<boost::json::object()> figures) { service_figures_ = std::move(figures); }

  /// The refusal of a request whose header alone decides it (who sends it, where to, the body's
  /// media type and declared size), or nothing when its body is worth reading. For a client that
  /// sent `Expect: 100-continue`; the body in `head` is not looked at.
  std::optional<api_response> refuse_header(const api_request& head);

  /// Answers a whole request. Every refusal is a response (4xx, or 500 for an unexpected error),
  /// never an exception. Completes with nothing when `watch` completed first: the client left
  /// while the request waited, and nobody is there to answer.
  boost::asio::awaitable<std::optional<api_response>> handle(api_request req, client_watch watch = {});

 private:
  struct submitted_request {
    std::uint64_t job_id = 0;
    job_request request;
  };

  route admit(const api_request& req, std::string_view& endpoint_label) const;
  api_response refusal(const request_error& e, std::string_view endpoint_label, const api_request& req) const;
  const engine::zkey_circuit* check_before_body(const api_request& head, const route& r,
                                                std::optional<std::uint64_t> content_length) const;
  request_limits job_limits() const;
  api_response service_status() const;
  boost::asio::awaitable<api_response> submit_job(const api_request& req, const route& r);
  api_response prove_circuit(const api_request& req, const route& r);
  api_response accept_job(const engine::prove_request& request, const std::string& what,
                          const job_request* parsed = nullptr);
  std::string queue_full_message(std::size_t partitions) const;
  api_response cancel_job(std::uint64_t id);
  api_response list_circuits() const;
  api_response list_keys() const;
  boost::asio::awaitable<api_response> load_key(const api_request& req);
  boost::asio::awaitable<api_response> evict_key(const route& r);
  api_response verifying_key(const route& r) const;
  boost::asio::awaitable<std::optional<api_response>> job_result(const route& r, const client_watch& watch);
  [[noreturn]] void no_such_job(std::uint64_t id) const;

  boost::asio::any_io_executor executor_;
  engine::engine& eng_;
  job_api_config cfg_;
  exposure_policy exposure_;
  std::function<boost::json::object()> service_figures_;
  bool accepting_ = false;
  bool stopping_ = false;
  // Jobs submitted with a request_id, for as long as the engine keeps the job; `submitted_` in
  // submission order, for forgetting the ones the engine has forgotten.
  std::map<std::string, submitted_request> request_ids_;
  std::deque<std::pair<std::string, std::uint64_t>> submitted_;
};

}  // namespace coprove::service
