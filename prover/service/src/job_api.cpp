// The job API (see the header): each endpoint's answer from a request, on the control executor.
// A bad request gets a 4xx with {"error": {"code", "message"}} and changes nothing.
#include "coprove/service/job_api.hpp"
#include "coprove/service/detail/request_metrics.hpp"

#include <coprove/engine/engine.hpp>
#include <coprove/engine/memory_plan.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/r1cs/circom_witness.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/metrics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>

namespace coprove::service {

namespace asio = boost::asio;
namespace json = boost::json;
using engine::job_state;
using engine::prove_request;
using engine::prove_result;

namespace {

constexpr std::string_view channel = "http";

std::chrono::steady_clock::duration seconds_of(double seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

// Stands in for the client watch of a request whose client is not watched: never completes
// unless cancelled.
const job_api::client_watch wait_forever = []() -> asio::awaitable<void> {
  asio::steady_timer forever(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
  (void)co_await forever.async_wait(asio::as_tuple(asio::use_awaitable));
};

}  // namespace

void detail::count_request(std::string_view endpoint, unsigned status) {
  runtime::registry::global()
      .get_counter("coprove_http_requests_total", "HTTP requests answered, by endpoint and status",
                   {{"endpoint", std::string(endpoint)}, {"status", std::to_string(status)}})
      .inc();
}

job_api::job_api(asio::any_io_executor executor, engine::engine& engine, job_api_config cfg, exposure_policy exposure)
    : executor_(std::move(executor)), eng_(engine), cfg_(std::move(cfg)), exposure_(std::move(exposure)) {}

// Who sends a request and where to: the exposure checks, then its route (its endpoint's name in
// `endpoint_label`, for the metrics).
route job_api::admit(const api_request& req, std::string_view& endpoint_label) const {
  exposure_.check(req);
  const route r = parse_route(req.method, req.target, cfg_.limits);
  endpoint_label = endpoint_name(r.target);
  return r;
}

// A refused request's answer, counted and logged.
api_response job_api::refusal(const request_error& e, std::string_view endpoint_label, const api_request& req) const {
  detail::count_request(endpoint_label, e.status());
  COPROVE_LOG(debug, channel) << req.method << " " << req.target << " -> " << e.status() << " " << e.code() << ": "
                              << e.what();
  return api_response::refusal(e);
}

std::optional<api_response> job_api::refuse_header(const api_request& head) {
  std::string_view endpoint_label = "unknown";
  try {
    const route r = admit(head, endpoint_label);
    (void)check_before_body(head, r, head.content_length);
    return std::nullopt;
  } catch (const request_error& e) {
    return refusal(e, endpoint_label, head);
  }
}

asio::awaitable<std::optional<api_response>> job_api::handle(api_request req, client_watch watch) {
  std::string_view endpoint_label = "unknown";
  try {
    const route r = admit(req, endpoint_label);
    std::optional<api_response> res;
    switch (r.target) {
      case endpoint::health:
        res = api_response::json_body(stopping_ ? 503 : 200, json::object{{"status", stopping_ ? "stopping" : "ok"}});
        break;
      case endpoint::metrics:
        res.emplace();
        res->content_type = "text/plain; version=0.0.4";
        res->body = runtime::registry::global().prometheus_text();
        break;
      case endpoint::service_status: res = service_status(); break;
      case endpoint::submit_job: res = co_await submit_job(req, r); break;
      case endpoint::job_status: {
        const auto status = eng_.status(r.job_id);
        if (!status) no_such_job(r.job_id);
        res = api_response::json_body(200, status->to_json());
        break;
      }
      case endpoint::cancel_job: res = cancel_job(r.job_id); break;
      case endpoint::job_result: res = co_await job_result(r, watch); break;
      case endpoint::list_circuits: res = list_circuits(); break;
      case endpoint::prove_circuit: res = prove_circuit(req, r); break;
      case endpoint::verifying_key: res = verifying_key(r); break;
      case endpoint::list_keys: res = list_keys(); break;
      case endpoint::load_key: res = co_await load_key(req); break;
      case endpoint::evict_key: res = co_await evict_key(r); break;
    }
    if (res) detail::count_request(endpoint_label, res->status);
    co_return res;
  } catch (const request_error& e) {
    co_return refusal(e, endpoint_label, req);
  } catch (const std::exception& e) {
    detail::count_request(endpoint_label, 500);
    COPROVE_LOG(error, channel) << req.method << " " << req.target << " failed: " << e.what();
    co_return api_response::refusal(500, "internal_error", e.what());
  }
}

// A job id the engine does not know: 410 when its job ended and the retention policy has forgotten
// it since, 404 otherwise.
void job_api::no_such_job(std::uint64_t id) const {
  if (eng_.expired(id))
    throw request_error(410, "result_expired",
                        "job " + std::to_string(id) +
                            " has ended and is no longer kept (server.result_retention_jobs, _bytes, _seconds)");
  throw request_error(404, "unknown_job", "no job " + std::to_string(id));
}

api_response job_api::service_status() const {
  json::object body = eng_.status_json();
  json::object service{{"listen", exposure_.bound()}, {"accepting", accepting_}, {"stopping", stopping_}};
  if (service_figures_) {
    for (auto& [key, value] : service_figures_()) service[key] = std::move(value);
  }
  body["service"] = std::move(service);
  return api_response::json_body(200, body);
}

api_response job_api::cancel_job(std::uint64_t id) {
  if (eng_.cancel(id)) return api_response::json_body(202, json::object{{"job_id", id}, {"cancelled", true}});
  if (const auto status = eng_.status(id)) {
    throw request_error(409, "job_finished",
                        "job " + std::to_string(id) + " has already ended (" + std::string(to_string(status->state)) +
                            ")");
  }
  no_such_job(id);
}

// What a submission's header must say before its body is looked at: the service still takes
// jobs, the body's media type, and a declared length within the limit; for a circuit's proof, a
// circuit it proves (returned). Called on the header alone (Expect: 100-continue) and on the whole
// request, so that both refuse alike.
const engine::zkey_circuit* job_api::check_before_body(const api_request& head, const route& r,
                                                       std::optional<std::uint64_t> content_length) const {
  if (r.target != endpoint::submit_job && r.target != endpoint::prove_circuit) return nullptr;
  const std::string_view content_type = head.content_type;
  if (r.target == endpoint::submit_job) {
    // A browser may send a text/plain or form POST to any address without asking first; only a
    // JSON body is taken, which a cross-site page cannot send without CORS's consent.
    std::string_view media = content_type.substr(0, content_type.find(';'));
    while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
    if (!boost::beast::iequals(media, "application/json")) {
      throw request_error(415, "unsupported_media_type",
                          "a job body must be sent with Content-Type: application/json, got '" +
                              std::string(content_type.substr(0, 64)) + "'");
    }
  }
  if (stopping_ || !accepting_) {
    throw request_error(503, "shutting_down", "the service is shutting down and accepts no new jobs");
  }
  if (r.target == endpoint::submit_job) {
    if (content_length && *content_length > cfg_.limits.max_body_bytes) {
      throw request_error(413, "body_too_large",
                          "request body of " + std::to_string(*content_length) +
                              " bytes exceeds server.max_body_bytes = " + std::to_string(cfg_.limits.max_body_bytes));
    }
    return nullptr;
  }
  const auto& circuits = eng_.config().zkey_circuits;
  const auto found = std::find_if(circuits.begin(), circuits.end(), [&](const auto& c) { return c.name == r.circuit; });
  if (found == circuits.end()) {
    std::string known;
    for (const auto& c : circuits) known += (known.empty() ? "" : ", ") + c.name;
    throw request_error(404, "unknown_circuit",
                        "no circuit '" + r.circuit + "' (circuits: " + (known.empty() ? "none" : known) + ")");
  }
  if (!boost::beast::iequals(content_type, "application/octet-stream"))
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
request_limits job_api::job_limits() const {
  request_limits limits = cfg_.limits;
  limits.min_log_constraints = std::max(limits.min_log_constraints, r1cs::min_log_constraints);
  limits.max_log_constraints = std::min(limits.max_log_constraints, eng_.config().max_log_constraints);
  return limits;
}

asio::awaitable<api_response> job_api::submit_job(const api_request& req, const route& r) {
  (void)check_before_body(req, r, req.body.size());
  const job_request parsed = parse_job_request(req.body, cfg_.defaults, job_limits());
  if (!r1cs::circuit_known(parsed.circuit)) {
    std::string known;
    for (auto name : r1cs::circuit_families()) known += (known.empty() ? "" : ", ") + std::string(name);
    throw request_error(422, "unknown_circuit", "unknown circuit '" + parsed.circuit + "' (known: " + known + ")");
  }
  // A key the engine knows but does not hold (engine.key_loading) is loaded first.
  if (eng_.config().results == engine::result_kind::proof &&
      !eng_.verifying_key(parsed.circuit, parsed.log_constraints)) {
    if (auto source = eng_.known_key(parsed.circuit + "/" + std::to_string(parsed.log_constraints))) {
      auto [ec, info] = co_await eng_.async_load_key(std::move(*source), asio::as_tuple(asio::use_awaitable));
      if (ec && ec != engine::engine_errc::key_exists) throw key_refusal(ec, info.message);
    }
  }
  if (eng_.config().results == engine::result_kind::proof &&
      !eng_.verifying_key(parsed.circuit, parsed.log_constraints)) {
    std::string have;
    for (const auto& [circuit, log] : eng_.key_ids()) have += (have.empty() ? "" : ", ") + circuit + "/" + std::to_string(log);
    throw request_error(422, "no_key",
                        "no proving key for " + parsed.circuit + "/" + std::to_string(parsed.log_constraints) +
                            " (the service has keys for " + (have.empty() ? std::string("none") : have) +
                            "; load one with POST /v1/keys, or start it with --keys DIR from coprove setup)");
  }
  // The same request_id again is the same job, for as long as the engine keeps it.
  while (!submitted_.empty() && eng_.expired(submitted_.front().second)) {
    const auto it = request_ids_.find(submitted_.front().first);
    if (it != request_ids_.end() && it->second.job_id == submitted_.front().second) request_ids_.erase(it);
    submitted_.pop_front();
  }
  if (!parsed.request_id.empty()) {
    const auto it = request_ids_.find(parsed.request_id);
    if (it != request_ids_.end() && !eng_.expired(it->second.job_id)) {
      if (!(it->second.request == parsed)) {
        throw request_error(409, "request_id_conflict",
                            "request_id '" + parsed.request_id + "' was given to job " +
                                std::to_string(it->second.job_id) + " with another body");
      }
      const std::string base = "/v1/jobs/" + std::to_string(it->second.job_id);
      json::object body{{"job_id", it->second.job_id}, {"status_url", base}, {"result_url", base + "/result"},
                        {"request_id", parsed.request_id}, {"existing", true}};
      api_response res = api_response::json_body(200, body);
      res.fields.emplace_back("Location", base);
      co_return res;
    }
  }
  prove_request request;
  request.circuit = parsed.circuit;
  request.log_constraints = parsed.log_constraints;
  request.partitions = parsed.partitions;
  request.seed = parsed.seed;
  request.priority = engine::parse_job_priority(parsed.priority).value_or(engine::job_priority::normal);
  co_return accept_job(request,
                    request.circuit + " 2^" + std::to_string(request.log_constraints) + " x " +
                        std::to_string(request.partitions) + " partitions, seed " + std::to_string(request.seed) +
                        ", priority " + parsed.priority,
                    &parsed);
}

// Which of the limits on unfinished work a refused job met, by the keys `coprove serve` sets them
// with (the engine's own message names its fields, which no configuration spells).
std::string job_api::queue_full_message(std::size_t partitions) const {
  const auto jobs = eng_.status_snapshot().jobs;
  const auto& limits = eng_.config();
  const std::size_t open_jobs = jobs.queued + jobs.running;
  const std::string retry = "; retry after " + std::to_string(cfg_.retry_after_seconds) + " s (server.retry_after_seconds)";
  if (limits.max_open_jobs != 0 && open_jobs >= limits.max_open_jobs) {
    return "the service holds " + std::to_string(open_jobs) + " unfinished jobs, as many as server.max_queued_jobs = " +
           std::to_string(limits.max_open_jobs) + " allows" + retry;
  }
  return "the service holds " + std::to_string(jobs.open_partitions) + " unfinished partitions; " +
         std::to_string(partitions) + " more exceed server.max_queued_partitions = " +
         std::to_string(limits.max_open_partitions) + retry;
}

// Submits the request: 202 with the job's URLs, 429 when the engine holds as much work as it may,
// or 422 saying why the engine refused it. A JSON job body's request_id is remembered for its job.
api_response job_api::accept_job(const prove_request& request, const std::string& what, const job_request* parsed) {
  std::uint64_t id = 0;
  try {
    id = eng_.submit(request);
  } catch (const engine::queue_full_error&) {
    throw request_error(429, "queue_full", queue_full_message(request.partitions))
        .with_retry_after(cfg_.retry_after_seconds);
  } catch (const engine::memory_plan_error& e) {
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
    request_ids_[parsed->request_id] = submitted_request{id, *parsed};
    submitted_.emplace_back(parsed->request_id, id);
    body["request_id"] = parsed->request_id;
  }
  api_response res = api_response::json_body(202, body);
  res.fields.emplace_back("Location", base);
  return res;
}

// GET /v1/circuits: the zkey circuits with their sizes, and what a witness body must hold.
api_response job_api::list_circuits() const {
  json::array circuits;
  for (const auto& c : eng_.config().zkey_circuits) {
    circuits.push_back(json::object{{"name", c.name},
                                    {"zkey", c.key->name},
                                    {"zkey_bytes", c.key->file_bytes},
                                    {"signals", c.key->num_variables()},
                                    {"public_signals", c.key->num_public},
                                    {"domain_size", c.key->domain_size()},
                                    {"witness_bytes", r1cs::wtns_file_bytes(c.key->num_variables())},
                                    {"proofs_url", "/v1/circuits/" + c.name + "/proofs"}});
  }
  return api_response::json_body(200, json::object{{"circuits", std::move(circuits)}});
}

// POST /v1/circuits/{name}/proofs: a .wtns body, one witness; a job of one partition whose result
// holds the proof and public signals in snarkjs's JSON (proof_snarkjs, public_inputs).
api_response job_api::prove_circuit(const api_request& req, const route& r) {
  const engine::zkey_circuit* found = check_before_body(req, r, req.body.size());
  std::vector<field::fr> witness;
  try {
    witness = r1cs::decode_wtns(std::vector<std::uint8_t>(req.body.begin(), req.body.end()), "the request body",
                                found->key->num_variables());
  } catch (const r1cs::circom_file_error& e) {
    throw request_error(422, "invalid_witness", e.what());
  }
  prove_request request;
  request.circuit = r.circuit;
  request.witnesses = std::make_shared<const std::vector<std::vector<field::fr>>>(1, std::move(witness));
  return accept_job(request, "a witness of circuit " + r.circuit);
}

// GET /v1/keys/{circuit}/{log_constraints}/vk: bellman's bytes, or snarkjs's JSON.
api_response job_api::verifying_key(const route& r) const {
  const auto vk = eng_.verifying_key(r.circuit, r.log_constraints);
  if (!vk) {
    std::string have;
    for (const auto& [circuit, log] : eng_.key_ids()) have += (have.empty() ? "" : ", ") + circuit + "/" + std::to_string(log);
    throw request_error(404, "unknown_key",
                        "no key for " + r.circuit + "/" + std::to_string(r.log_constraints) +
                            " (keys: " + (have.empty() ? "none" : have) + ")");
  }
  if (r.snarkjs_format) return api_response::json_body(200, groth16::verifying_key_to_snarkjs_json(*vk));
  const std::vector<std::uint8_t> bytes = groth16::encode_verifying_key(*vk);
  api_response res;
  res.content_type = "application/octet-stream";
  res.body.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return res;
}

asio::awaitable<std::optional<api_response>> job_api::job_result(const route& r, const client_watch& watch) {
  auto status = eng_.status(r.job_id);
  if (!status) no_such_job(r.job_id);
  const bool ended = status->state == job_state::done || status->state == job_state::failed ||
                     status->state == job_state::cancelled;
  if (!ended && r.wait_seconds <= 0.0) co_return api_response::json_body(202, status->to_json());

  std::error_code ec;
  prove_result result;
  if (ended) {
    std::tie(ec, result) = co_await eng_.async_await(r.job_id, asio::as_tuple(asio::use_awaitable));
  } else {
    // Whichever finishes first: the job, the wait, or the client leaving; the others are cancelled
    // (cancelling an await leaves the job running).
    asio::steady_timer timer(executor_, seconds_of(r.wait_seconds));
    const client_watch& client_left = watch ? watch : wait_forever;
    auto [order, await_ec, awaited, timer_ec, watch_error] =
        co_await asio::experimental::make_parallel_group(eng_.async_await(r.job_id, asio::deferred),
                                                         timer.async_wait(asio::deferred),
                                                         asio::co_spawn(executor_, client_left(), asio::deferred))
            .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
    (void)timer_ec;
    (void)watch_error;
    if (order[0] == 2) co_return std::nullopt;  // the client left: nobody to answer
    if (order[0] == 1) {
      status = eng_.status(r.job_id);
      if (!status) no_such_job(r.job_id);
      co_return api_response::json_body(202, status->to_json());
    }
    ec = await_ec;
    result = std::move(awaited);
  }
  if (!ec) co_return api_response::json_body(200, result.to_json());
  status = eng_.status(r.job_id);
  if (!status) no_such_job(r.job_id);
  if (status->state == job_state::cancelled) {
    throw request_error(409, "job_cancelled", "job " + std::to_string(r.job_id) + " was cancelled");
  }
  const std::string why = !status->error.empty() ? status->error : ec.message();
  throw request_error(409, "job_failed", "job " + std::to_string(r.job_id) + " failed: " + why);
}

}  // namespace coprove::service
