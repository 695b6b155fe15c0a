// The HTTP request parser of `coprove serve`: turns a request line target into a route and a job
// body into a job request, and rejects everything else with a request_error that carries the HTTP
// status and a machine-readable code. It depends on nothing but Boost.JSON so that it can be
// tested and fuzzed without a server, an engine or a socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace coprove::service {

/// A request the service refuses: the HTTP status (4xx), a stable code and a message naming the
/// problem. Rendered as {"error": {"code": ..., "message": ...}}.
class request_error : public std::runtime_error {
public:
  /// `allow` lists the methods a 405's target accepts (its Allow header); empty otherwise.
  request_error(unsigned status, std::string code, const std::string& message, std::string allow = {});
  unsigned status() const noexcept { return status_; }
  const std::string& code() const noexcept { return code_; }
  const std::string& allow() const noexcept { return allow_; }
  /// Seconds a refused client should wait before it tries again (a 429's or 503's Retry-After);
  /// 0 = no Retry-After.
  unsigned retry_after() const noexcept { return retry_after_; }
  request_error& with_retry_after(unsigned seconds) noexcept {
    retry_after_ = seconds;
    return *this;
  }

private:
  unsigned status_;
  std::string code_;
  std::string allow_;
  unsigned retry_after_ = 0;
};

/// What a client may ask for in POST /v1/jobs. Fields left out of the body keep the defaults the
/// server was configured with.
struct job_request {
  std::string circuit = "mimc";
  unsigned log_constraints = 16;
  std::size_t partitions = 16;
  std::uint64_t seed = 1;
  std::string priority = "normal";  ///< low, normal, high or critical: orders admission
  /// Optional: the same id again is the same job (the body must be the same too); empty = none.
  std::string request_id;
  friend bool operator==(const job_request&, const job_request&) = default;
};

/// Bounds the parser enforces before anything reaches the engine. Semantic checks that need the
/// engine (is the circuit known, does the job fit the memory plan) happen after parsing.
struct request_limits {
  std::size_t max_body_bytes = 64 * 1024;  ///< server.max_body_bytes
  unsigned max_json_depth = 8;
  std::size_t max_circuit_name = 64;
  std::size_t max_request_id = 128;
  /// The smallest circuit size (r1cs::min_log_constraints in `coprove serve`); below it 422
  /// out_of_range.
  unsigned min_log_constraints = 1;
  /// engine.max_log_constraints, the largest job the memory plan is sized for; above it 422
  /// exceeds_memory_plan.
  unsigned max_log_constraints = 32;
  std::size_t max_partitions = 4096;  ///< engine.max_partitions_per_job
  double max_wait_seconds = 3600.0;   ///< server.max_wait_seconds
  /// The largest .wtns body POST /v1/circuits/{name}/proofs takes: the largest circuit's witness
  /// file (0 without circuits). Bodies up to the larger of this and max_body_bytes are read; a JSON
  /// body is still held to max_body_bytes.
  std::size_t max_witness_body_bytes = 0;
};

/// The endpoints of the HTTP API.
enum class endpoint {
  submit_job, job_status, job_result, cancel_job, service_status, metrics, health, verifying_key,
  list_circuits,  ///< GET /v1/circuits
  prove_circuit,  ///< POST /v1/circuits/{name}/proofs (route::circuit holds the name)
  list_keys,      ///< GET /v1/keys
  load_key,       ///< POST /v1/keys (a JSON body naming a key directory or zkey under server.key_roots)
  evict_key,      ///< DELETE /v1/keys/{id}[?cancel=true] (route::key_id holds the id)
};

/// A parsed request line: which endpoint, and the job id and wait time where the endpoint has them.
struct route {
  endpoint target = endpoint::health;
  std::uint64_t job_id = 0;
  double wait_seconds = 0.0;  // GET /v1/jobs/{id}/result?wait=SECONDS; 0 = answer at once
  // GET /v1/keys/{circuit}/{log_constraints}/vk[?format=bellman|snarkjs]; POST /v1/circuits/{circuit}/proofs
  std::string circuit;
  unsigned log_constraints = 0;
  bool snarkjs_format = false;
  std::string key_id;        // DELETE /v1/keys/{id}: "circuit/log_constraints" or a zkey circuit's name
  bool cancel_jobs = false;  // DELETE /v1/keys/{id}?cancel=true
};

/// Parses a POST /v1/jobs body: a JSON object with optional fields circuit (string),
/// log_constraints, partitions, seed (non-negative integers), priority (low, normal, high,
/// critical) and request_id (1 to max_request_id printable characters). Throws request_error: 413 for a body
/// over limits.max_body_bytes, 400 for malformed JSON, a wrong type or an unknown field, 422 for a
/// value out of range (exceeds_memory_plan for a log_constraints over limits.max_log_constraints).
/// Messages name the limits by their configuration keys (docs/CONFIG.md).
job_request parse_job_request(std::string_view body, const job_request& defaults, const request_limits& limits);

/// Parses a method and request target ("/v1/jobs/12/result?wait=5"). Throws request_error: 404 for
/// an unknown path or a job id that is not a canonical decimal number (no sign, no leading zero),
/// 405 for a method the path does not take, 400 for a bad query string.
route parse_route(std::string_view method, std::string_view target, const request_limits& limits);

/// The JSON error body {"error": {"code": code, "message": message}}.
std::string error_body(std::string_view code, std::string_view message);

/// A human name for an endpoint ("submit_job"), used in logs and metric labels.
std::string_view endpoint_name(endpoint e) noexcept;

}  // namespace coprove::service
