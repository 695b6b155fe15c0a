// The key endpoints over the service's own socket: a key directory under server.key_roots loaded,
// listed, proved with and evicted, its bytes back to the baseline in /v1/keys and /metrics; 403
// for a path outside the roots, 409 for a key whose job is running unless ?cancel=true.
#include "http_service_support.hpp"
#include "key_root_support.hpp"

#include <sstream>

namespace {

namespace test = coprove::test;
using namespace coprove;
using test::http_request;

// The value of an unlabelled gauge in the Prometheus text.
double metric(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  FAIL("no metric " << name);
  return -1;
}

std::string key_post(const std::string& body, const std::string& host) {
  return http_request("POST", "/v1/keys", "Content-Type: application/json\r\n", body, host);
}

}  // namespace

TEST_CASE("service: a key is loaded from a root, proved with and evicted, its bytes back to the baseline",
          "[service][keys][cpu]") {
  const test::key_root keys;
  test::service_under_test s(
      [&](engine::engine_config& e, service::http_service_config& c) { test::keys_at_run_time(keys, e, c); });
  const std::string host = s.host_header();
  const auto metrics = [&] { return s.request(http_request("GET", "/metrics", {}, std::nullopt, host)).body(); };
  auto listed = s.request(http_request("GET", "/v1/keys", {}, std::nullopt, host));
  REQUIRE(listed.status == 200);
  CHECK(listed.json().at("keys").as_array().empty());
  const auto baseline_host = listed.json().at("host_bytes").to_number<std::size_t>();
  CHECK(baseline_host == 0);

  auto r = s.request(key_post(R"({"path": "../elsewhere/mimc10"})", host));
  CHECK(r.status == 403);
  CHECK(r.json().at("error").at("code") == "key_path_forbidden");
  CHECK(s.request(key_post(R"({"path": "escape"})", host)).status == 403);
  CHECK(s.request(key_post(R"({"path": "nothing-here"})", host)).status == 404);

  r = s.request(key_post(R"({"path": "mimc10"})", host));
  INFO(r.body());
  REQUIRE(r.status == 201);
  CHECK(r.json().at("id") == "mimc/10");
  const auto host_bytes = r.json().at("host_bytes").to_number<std::size_t>();
  CHECK(metric(metrics(), "coprove_engine_key_host_bytes") == static_cast<double>(host_bytes));

  // Proved with: the result verifies.
  r = s.request(test::json_post(R"({"seed": 5})", {}, host));
  REQUIRE(r.status == 202);
  const auto id = r.json().at("job_id").to_number<std::uint64_t>();
  r = s.request(http_request("GET", "/v1/jobs/" + std::to_string(id) + "/result?wait=60", {}, std::nullopt, host));
  REQUIRE(r.status == 200);
  CHECK(r.json().at("partitions").at(0).at("verified") == true);
  listed = s.request(http_request("GET", "/v1/keys", {}, std::nullopt, host));
  CHECK(listed.json().at("keys").at(0).at("last_use").is_string());

  // A running job holds it: 409, then ?cancel=true.
  s.gate.close();
  r = s.request(test::json_post(R"({"seed": 6})", {}, host));
  REQUIRE(r.status == 202);
  const auto running = r.json().at("job_id").to_number<std::uint64_t>();
  s.gate.wait_for_entered(2);
  r = s.request(http_request("DELETE", "/v1/keys/mimc/10", {}, std::nullopt, host));
  CHECK(r.status == 409);
  CHECK(r.json().at("error").at("code") == "key_in_use");
  r = s.request(http_request("DELETE", "/v1/keys/mimc/10?cancel=true", {}, std::nullopt, host));
  REQUIRE(r.status == 200);
  CHECK(r.json().at("state") == "evicted");
  s.gate.release();
  (void)s.request(
      http_request("GET", "/v1/jobs/" + std::to_string(running) + "/result?wait=60", {}, std::nullopt, host));

  listed = s.request(http_request("GET", "/v1/keys", {}, std::nullopt, host));
  CHECK(listed.json().at("keys").as_array().empty());
  CHECK(listed.json().at("host_bytes").to_number<std::size_t>() == baseline_host);
  CHECK(listed.json().at("device_bytes").to_number<std::size_t>() == 0);  // the host backend
  CHECK(metric(metrics(), "coprove_engine_key_host_bytes") == 0);
  r = s.request(test::json_post(R"({"seed": 7})", {}, host));
  CHECK(r.status >= 400);  // its key is gone
  // And loaded again.
  CHECK(s.request(key_post(R"({"path": "mimc10"})", host)).status == 201);
}
