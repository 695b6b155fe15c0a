// The HTTP service over its own sockets, on what a request's header says: a request that its
// header alone refuses gets the refusal instead of `100 Continue`; a header the service acts on
// given twice is refused naming it; a job id has one spelling; and refusals for a limit name the
// configuration key the limit is set with (docs/CONFIG.md).
#include "http_service_support.hpp"

#include <string>
#include <thread>
#include <vector>

namespace {

namespace test = coprove::test;
namespace http = boost::beast::http;
using namespace coprove;
using namespace std::chrono_literals;
using test::http_request;
using test::json_post;

const auto no_change = [](engine::engine_config&, service::http_service_config&) {};

// A request line and header that asks for `100 Continue` before its body is sent.
std::string expecting(const std::string& target, const std::string& headers, std::size_t length,
                      const std::string& host = "localhost") {
  return "POST " + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + headers + "Expect: 100-continue\r\nContent-Length: " +
         std::to_string(length) + "\r\n\r\n";
}

}  // namespace

TEST_CASE("service: a request its header refuses gets the refusal, not 100 Continue", "[service][cpu]") {
  test::service_under_test s([](engine::engine_config&, service::http_service_config& c) {
    c.auth_token = "0123456789abcdef0123456789abcdef";
    c.limits.max_body_bytes = 1024;
  });
  const std::string token = "Authorization: Bearer 0123456789abcdef0123456789abcdef\r\n";
  const std::string json = "Content-Type: application/json\r\n";
  struct refused_case {
    std::string header;
    unsigned status;
    std::string code;
  };
  const std::vector<refused_case> cases = {
      {expecting("/v1/jobs", json, 2), 401, "unauthorized"},
      {expecting("/v1/jobs", token + "Content-Type: text/plain\r\n", 2), 415, "unsupported_media_type"},
      {expecting("/v1/jobs", token + json, 4096), 413, "body_too_large"},
      {expecting("/v1/nothing", token + json, 2), 404, "not_found"},
      {expecting("/v1/status", token + json, 2), 405, "method_not_allowed"},
      {expecting("/v1/circuits/none/proofs", token + "Content-Type: application/octet-stream\r\n", 8), 404,
       "unknown_circuit"},
  };
  for (const auto& c : cases) {
    INFO(c.header);
    auto client = s.unix_client(5s);
    client.send(c.header);
    const auto r = client.read();
    CHECK(r.status == c.status);  // not 100
    CHECK(r.json().at("error").at("code").as_string() == c.code);
    CHECK(r.header(http::field::connection) == "close");
    // The body is not read: the connection is closed after the refusal.
    CHECK(client.read().status == 0);
  }
  // A request its header does not refuse is told to go on, and is answered once its body is in.
  auto client = s.unix_client(5s);
  client.send(expecting("/v1/jobs", token + json, 2));
  CHECK(client.read().status == 100);
  client.send("{}");
  CHECK(client.read().status == 202);
  s.auth_header = token;
  CHECK(s.status().at("jobs").at("queued").to_number<int>() + s.status().at("jobs").at("running").to_number<int>() +
            s.status().at("jobs").at("finished").to_number<int>() ==
        1);
}

TEST_CASE("service: Host, Content-Length, Content-Type or Authorization given twice is refused with 400",
          "[service][cpu]") {
  test::service_under_test s(no_change, true);
  const std::string host = s.host_header();
  struct twice {
    std::string request;
    std::string name;
  };
  const std::vector<twice> cases = {
      // The second Host is one the service would refuse alone: it must not be ignored.
      {"GET /v1/status HTTP/1.1\r\nHost: " + host + "\r\nHost: evil.example\r\n\r\n", "Host"},
      {"GET /v1/status HTTP/1.1\r\nHost: " + host + "\r\nHost: " + host + "\r\n\r\n", "Host"},
      {"POST /v1/jobs HTTP/1.1\r\nHost: " + host +
           "\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
       "Content-Type"},
      {"POST /v1/jobs HTTP/1.1\r\nHost: " + host +
           "\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
       "Content-Length"},
      {"POST /v1/jobs HTTP/1.1\r\nHost: " + host +
           "\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 12\r\n\r\n{}",
       "Content-Length"},
      {"GET /v1/status HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n",
       "Authorization"},
  };
  for (const auto& c : cases) {
    INFO(c.request);
    const auto r = s.request(c.request);
    CHECK(r.status == 400);
    CHECK(r.json().at("error").at("code") == "duplicate_header");
    CHECK(r.json().at("error").at("message").as_string().find("'" + c.name + "'") != boost::json::string::npos);
  }
  // Nothing was submitted, and a request with each header once is served.
  CHECK(s.request(json_post("{}", {}, host)).status == 202);
  const auto jobs = s.engine().status_json().at("jobs");
  CHECK(jobs.at("queued").to_number<int>() + jobs.at("running").to_number<int>() + jobs.at("finished").to_number<int>() ==
        1);
}

TEST_CASE("service: a job id with a leading zero names no job", "[service][cpu]") {
  test::service_under_test s(no_change);
  const auto submitted = s.request(json_post(R"({"seed": 3})"));
  REQUIRE(submitted.status == 202);
  const std::string id = std::to_string(submitted.json().at("job_id").to_number<std::uint64_t>());
  CHECK(s.request(http_request("GET", "/v1/jobs/" + id)).status == 200);
  for (const std::string& target : {"/v1/jobs/0" + id, "/v1/jobs/00" + id + "/result", "/v1/jobs/+" + id}) {
    INFO(target);
    const auto r = s.request(http_request("GET", target));
    CHECK(r.status == 404);
    CHECK(r.json().at("error").at("code") == "unknown_job");
  }
  const auto cancel = s.request(http_request("DELETE", "/v1/jobs/0" + id));
  CHECK(cancel.status == 404);
}

TEST_CASE("service: a log_constraints out of range names the smallest size and engine.max_log_constraints",
          "[service][cpu]") {
  // The engine's memory plan is sized for 2^10 (record_engine_config(10)); the configured limits
  // are wider, and the refusal names the one that holds.
  test::service_under_test s(no_change);
  const auto above = s.request(json_post(R"({"log_constraints": 12})"));
  CHECK(above.status == 422);
  CHECK(above.json().at("error").at("code") == "exceeds_memory_plan");
  CHECK(above.json().at("error").at("message") ==
        "field 'log_constraints' must be in [10, 10], got 12: engine.max_log_constraints = 10 is the largest job the "
        "memory plan is sized for");
  const auto below = s.request(json_post(R"({"log_constraints": 2})"));
  CHECK(below.status == 422);
  CHECK(below.json().at("error").at("code") == "out_of_range");
  CHECK(below.json().at("error").at("message") ==
        "field 'log_constraints' must be in [10, 10], got 2: 10 is the smallest circuit size");
  CHECK(s.request(json_post(R"({"log_constraints": 10})")).status == 202);
}

TEST_CASE("service: a full queue's 429 names server.max_queued_jobs or server.max_queued_partitions",
          "[service][cpu]") {
  test::service_under_test s([](engine::engine_config& e, service::http_service_config& c) {
    e.max_open_jobs = 2;
    e.max_open_partitions = 5;
    e.depth_per_device = 1;
    c.retry_after_seconds = 7;
  });
  s.gate.close();
  REQUIRE(s.request(json_post(R"({"seed": 1, "partitions": 2})")).status == 202);
  const auto partitions = s.request(json_post(R"({"seed": 2, "partitions": 4})"));
  CHECK(partitions.status == 429);
  CHECK(partitions.json().at("error").at("message") ==
        "the service holds 2 unfinished partitions; 4 more exceed server.max_queued_partitions = 5; retry after 7 s "
        "(server.retry_after_seconds)");
  REQUIRE(s.request(json_post(R"({"seed": 3, "partitions": 1})")).status == 202);
  const auto jobs = s.request(json_post(R"({"seed": 4, "partitions": 1})"));
  CHECK(jobs.status == 429);
  CHECK(jobs.json().at("error").at("message") ==
        "the service holds 2 unfinished jobs, as many as server.max_queued_jobs = 2 allows; retry after 7 s "
        "(server.retry_after_seconds)");
  s.gate.release();
}
