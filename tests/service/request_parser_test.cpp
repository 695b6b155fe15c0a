// The HTTP request parser: routes, job bodies and the errors each bad input gets.
#include <coprove/service/request_parser.hpp>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

using namespace coprove::service;

namespace {

// The status and code a bad input is refused with.
std::pair<unsigned, std::string> refusal_of_body(std::string_view body, const request_limits& limits = {}) {
  try {
    (void)parse_job_request(body, job_request{}, limits);
  } catch (const request_error& e) {
    return {e.status(), e.code()};
  }
  return {0, "accepted"};
}

std::pair<unsigned, std::string> refusal_of_route(std::string_view method, std::string_view target) {
  try {
    (void)parse_route(method, target, request_limits{});
  } catch (const request_error& e) {
    return {e.status(), e.code()};
  }
  return {0, "accepted"};
}

}  // namespace

TEST_CASE("a job body sets the fields it names and keeps the defaults of the others", "[app][request_parser][cpu]") {
  job_request defaults;
  defaults.circuit = "merkle";
  defaults.log_constraints = 12;
  defaults.partitions = 3;
  defaults.seed = 9;
  const auto r = parse_job_request(R"({"log_constraints": 11, "seed": 18446744073709551615})", defaults, {});
  CHECK(r.circuit == "merkle");
  CHECK(r.log_constraints == 11);
  CHECK(r.partitions == 3);
  CHECK(r.seed == 18446744073709551615ull);

  const auto all = parse_job_request(R"({"circuit":"mimc","log_constraints":10,"partitions":7,"seed":0})", defaults, {});
  CHECK(all.circuit == "mimc");
  CHECK(all.log_constraints == 10);
  CHECK(all.partitions == 7);
  CHECK(all.seed == 0);
  CHECK(parse_job_request("{}", defaults, {}).partitions == 3);
}

TEST_CASE("bad job bodies are refused with a status and code naming the problem", "[app][request_parser][cpu]") {
  using result = std::pair<unsigned, std::string>;
  CHECK(refusal_of_body("") == result{400, "malformed_json"});
  CHECK(refusal_of_body("{\"partitions\": 3") == result{400, "malformed_json"});
  CHECK(refusal_of_body("{} {}") == result{400, "malformed_json"});
  CHECK(refusal_of_body("[1, 2]") == result{400, "invalid_type"});
  CHECK(refusal_of_body("\"mimc\"") == result{400, "invalid_type"});
  CHECK(refusal_of_body(R"({"partitions": "3"})") == result{400, "invalid_type"});
  CHECK(refusal_of_body(R"({"partitions": 3.5})") == result{400, "invalid_type"});
  CHECK(refusal_of_body(R"({"partitions": true})") == result{400, "invalid_type"});
  CHECK(refusal_of_body(R"({"circuit": 7})") == result{400, "invalid_type"});
  CHECK(refusal_of_body(R"({"seed": null})") == result{400, "invalid_type"});
  CHECK(refusal_of_body(R"({"partition": 3})") == result{400, "unknown_field"});
  CHECK(refusal_of_body(R"({"circuit": "MiMC"})") == result{422, "unknown_circuit"});
  CHECK(refusal_of_body(R"({"circuit": ""})") == result{422, "unknown_circuit"});
  CHECK(refusal_of_body(R"({"partitions": 0})") == result{422, "out_of_range"});
  CHECK(refusal_of_body(R"({"partitions": -1})") == result{422, "out_of_range"});
  CHECK(refusal_of_body(R"({"partitions": 4097})") == result{422, "out_of_range"});
  CHECK(refusal_of_body(R"({"log_constraints": 33})") == result{422, "exceeds_memory_plan"});
  CHECK(refusal_of_body(R"({"log_constraints": 0})") == result{422, "out_of_range"});
  CHECK(refusal_of_body(R"({"seed": -5})") == result{422, "out_of_range"});
  CHECK(refusal_of_body(R"({"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":1}}}}}}}}})") == result{400, "malformed_json"});

  request_limits small;
  small.max_body_bytes = 16;
  CHECK(refusal_of_body(R"({"partitions": 3, "seed": 1})", small) == result{413, "body_too_large"});
}

TEST_CASE("the error message names the field and quotes client text safely", "[app][request_parser][cpu]") {
  try {
    (void)parse_job_request(R"({"partitions": "many"})", job_request{}, {});
    FAIL("accepted");
  } catch (const request_error& e) {
    CHECK(std::string(e.what()).find("'partitions'") != std::string::npos);
  }
  try {
    (void)parse_job_request("{\"\\u0001" + std::string(200, 'x') + "\": 1}", job_request{}, {});
    FAIL("accepted");
  } catch (const request_error& e) {
    const std::string message = e.what();
    CHECK(message.size() < 200);
    CHECK(message.find('\x01') == std::string::npos);
  }
  const auto body = boost::json::parse(error_body("unknown_job", "no job 7"));
  CHECK(body.at("error").at("code") == "unknown_job");
  CHECK(body.at("error").at("message") == "no job 7");
}

TEST_CASE("request targets route to endpoints with their job id and wait", "[app][request_parser][cpu]") {
  const request_limits limits;
  CHECK(parse_route("GET", "/healthz", limits).target == endpoint::health);
  CHECK(parse_route("GET", "/metrics", limits).target == endpoint::metrics);
  CHECK(parse_route("GET", "/v1/status", limits).target == endpoint::service_status);
  CHECK(parse_route("POST", "/v1/jobs", limits).target == endpoint::submit_job);
  const auto status = parse_route("GET", "/v1/jobs/42", limits);
  CHECK(status.target == endpoint::job_status);
  CHECK(status.job_id == 42);
  const auto cancel = parse_route("DELETE", "/v1/jobs/7", limits);
  CHECK(cancel.target == endpoint::cancel_job);
  CHECK(cancel.job_id == 7);
  const auto result = parse_route("GET", "/v1/jobs/3/result?wait=2.5", limits);
  CHECK(result.target == endpoint::job_result);
  CHECK(result.job_id == 3);
  CHECK(result.wait_seconds == 2.5);
  CHECK(parse_route("GET", "/v1/jobs/3/result", limits).wait_seconds == 0.0);
}

TEST_CASE("bad request targets get 404, 405 or 400", "[app][request_parser][cpu]") {
  using result = std::pair<unsigned, std::string>;
  CHECK(refusal_of_route("GET", "/") == result{404, "not_found"});
  CHECK(refusal_of_route("GET", "/v1/jobs/") == result{404, "unknown_job"});
  CHECK(refusal_of_route("GET", "/v1/jobs/abc") == result{404, "unknown_job"});
  CHECK(refusal_of_route("GET", "/v1/jobs/-1") == result{404, "unknown_job"});
  CHECK(refusal_of_route("GET", "/v1/jobs/99999999999999999999999") == result{404, "unknown_job"});
  CHECK(refusal_of_route("GET", "/v1/jobs/1/results") == result{404, "not_found"});
  CHECK(refusal_of_route("GET", "/v1/jobs") == result{405, "method_not_allowed"});
  CHECK(refusal_of_route("PUT", "/v1/jobs/1") == result{405, "method_not_allowed"});
  CHECK(refusal_of_route("POST", "/healthz") == result{405, "method_not_allowed"});
  CHECK(refusal_of_route("DELETE", "/v1/jobs/1/result") == result{405, "method_not_allowed"});
  CHECK(refusal_of_route("GET", "/v1/jobs/1/result?wait=-1") == result{400, "invalid_parameter"});
  CHECK(refusal_of_route("GET", "/v1/jobs/1/result?wait=nan") == result{400, "invalid_parameter"});
  CHECK(refusal_of_route("GET", "/v1/jobs/1/result?wait=1e9") == result{400, "invalid_parameter"});
  CHECK(refusal_of_route("GET", "/v1/jobs/1/result?wait=99999") == result{400, "invalid_parameter"});
  CHECK(refusal_of_route("GET", "/v1/jobs/1/result?wait") == result{400, "invalid_parameter"});
  CHECK(refusal_of_route("GET", "/v1/jobs/1/result?wait=1&wait=2") == result{400, "invalid_parameter"});
  CHECK(refusal_of_route("GET", "/v1/jobs/1/result?timeout=1") == result{400, "unknown_parameter"});
  CHECK(refusal_of_route("GET", "/healthz?x=1") == result{400, "unknown_parameter"});
}

TEST_CASE("a key given twice in a job body is refused with duplicate_field", "[app][request_parser][cpu]") {
  using result = std::pair<unsigned, std::string>;
  CHECK(refusal_of_body(R"({"log_constraints": 10, "log_constraints": 11})") == result{400, "duplicate_field"});
  CHECK(refusal_of_body(R"({"seed": 1, "circuit": "mimc", "seed": 1})") == result{400, "duplicate_field"});
  // The same key in two different objects is no duplicate (the nested object is refused for its type).
  CHECK(refusal_of_body(R"({"seed": {"seed": 1}})") == result{400, "invalid_type"});
  CHECK(refusal_of_body(R"({"seed": 1, "partitions": 2})") == result{0, "accepted"});
}

TEST_CASE("HEAD routes wherever GET does, and a 405 says which methods are allowed", "[app][request_parser][cpu]") {
  CHECK(parse_route("HEAD", "/healthz", request_limits{}).target == endpoint::health);
  CHECK(parse_route("HEAD", "/v1/jobs/4", request_limits{}).target == endpoint::job_status);
  CHECK(parse_route("HEAD", "/v1/jobs/4/result", request_limits{}).target == endpoint::job_result);
  try {
    (void)parse_route("HEAD", "/v1/jobs", request_limits{});
    FAIL("HEAD /v1/jobs was routed");
  } catch (const request_error& e) {
    CHECK(e.status() == 405);
    CHECK(e.allow() == "POST");
  }
  try {
    (void)parse_route("POST", "/v1/status", request_limits{});
    FAIL("POST /v1/status was routed");
  } catch (const request_error& e) {
    CHECK(e.allow() == "GET, HEAD");
  }
}

TEST_CASE("circuit targets route to the circuit list and a circuit's proofs", "[app][request_parser][cpu]") {
  const request_limits limits;
  CHECK(parse_route("GET", "/v1/circuits", limits).target == endpoint::list_circuits);
  const auto prove = parse_route("POST", "/v1/circuits/poseidon-4/proofs", limits);
  CHECK(prove.target == endpoint::prove_circuit);
  CHECK(prove.circuit == "poseidon-4");
  using result = std::pair<unsigned, std::string>;
  CHECK(refusal_of_route("POST", "/v1/circuits") == result{405, "method_not_allowed"});
  CHECK(refusal_of_route("GET", "/v1/circuits/poseidon/proofs") == result{405, "method_not_allowed"});
  CHECK(refusal_of_route("POST", "/v1/circuits//proofs") == result{404, "not_found"});
  CHECK(refusal_of_route("POST", "/v1/circuits/a/b/proofs") == result{404, "not_found"});
  CHECK(refusal_of_route("POST", "/v1/circuits/poseidon/proofs?x=1") == result{400, "unknown_parameter"});
}

TEST_CASE("a job id or key size spelt other than in canonical decimal is not found", "[app][request_parser][cpu]") {
  using result = std::pair<unsigned, std::string>;
  for (const char* target : {"/v1/jobs/042", "/v1/jobs/00", "/v1/jobs/+42", "/v1/jobs/ 42", "/v1/jobs/42 ", "/v1/jobs/0x2a",
                             "/v1/jobs/4_2"}) {
    INFO(target);
    CHECK(refusal_of_route("GET", target) == result{404, "unknown_job"});
  }
  CHECK(refusal_of_route("GET", "/v1/jobs/042/result") == result{404, "unknown_job"});
  CHECK(refusal_of_route("DELETE", "/v1/jobs/042") == result{404, "unknown_job"});
  CHECK(refusal_of_route("GET", "/v1/keys/mimc/010/vk") == result{404, "unknown_key"});
  try {
    (void)parse_route("GET", "/v1/jobs/042", request_limits{});
  } catch (const request_error& e) {
    CHECK(std::string(e.what()).find("without leading zeros") != std::string::npos);
  }
  // The canonical spellings, zero included, still route.
  CHECK(parse_route("GET", "/v1/jobs/42", request_limits{}).job_id == 42);
  CHECK(parse_route("GET", "/v1/jobs/0", request_limits{}).job_id == 0);
  CHECK(parse_route("GET", "/v1/jobs/18446744073709551615", request_limits{}).job_id == 18446744073709551615ull);
  CHECK(parse_route("GET", "/v1/keys/mimc/10/vk", request_limits{}).log_constraints == 10);
}

TEST_CASE("range refusals name the configured limits by their configuration keys", "[app][request_parser][cpu]") {
  request_limits limits;
  limits.min_log_constraints = 10;
  limits.max_log_constraints = 16;
  limits.max_partitions = 64;
  limits.max_wait_seconds = 300;
  limits.max_body_bytes = 16;
  const auto message_of = [&](auto parse) {
    try {
      parse();
    } catch (const request_error& e) {
      return std::to_string(e.status()) + " " + e.code() + ": " + e.what();
    }
    return std::string("accepted");
  };
  const auto body = [&](std::string_view text, const request_limits& l) {
    return message_of([&] { (void)parse_job_request(text, job_request{}, l); });
  };
  request_limits roomy = limits;
  roomy.max_body_bytes = 1024;
  CHECK(body(R"({"log_constraints": 17})", roomy) ==
        "422 exceeds_memory_plan: field 'log_constraints' must be in [10, 16], got 17: engine.max_log_constraints = 16 "
        "is the largest job the memory plan is sized for");
  CHECK(body(R"({"log_constraints": 9})", roomy) ==
        "422 out_of_range: field 'log_constraints' must be in [10, 16], got 9: 10 is the smallest circuit size");
  CHECK(body(R"({"partitions": 65})", roomy) ==
        "422 out_of_range: field 'partitions' must be in [1, 64], got 65 (engine.max_partitions_per_job = 64)");
  CHECK(body(R"({"seed": 1, "partitions": 2})", limits) ==
        "413 body_too_large: request body of 28 bytes exceeds server.max_body_bytes = 16");
  CHECK(message_of([&] { (void)parse_route("GET", "/v1/jobs/1/result?wait=301", limits); }) ==
        "400 invalid_parameter: query parameter 'wait' must be at most server.max_wait_seconds = 300, got '301'");
  CHECK(body(R"({"log_constraints": 16})", roomy) == "accepted");
  CHECK(body(R"({"log_constraints": 10})", roomy) == "accepted");
}
