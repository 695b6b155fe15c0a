// The HTTP service in process, over its own sockets: results kept by the retention policy then
// 410; a full queue 429 with Retry-After; who may drive it (Host, Origin, Content-Type, bearer
// token, the Unix socket's mode and owner); read timeouts answered 408; slow or idle connections
// giving their slots to clients that send requests; a waiter whose client left freeing its slot.
#include "http_service_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
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

std::uint64_t submit(test::service_under_test& s, const std::string& body = R"({"seed": 3})",
                     const std::string& headers = {}) {
  const auto r = s.request(json_post(body, headers, s.host_header()));
  INFO(r.body());
  REQUIRE(r.status == 202);
  return r.json().at("job_id").to_number<std::uint64_t>();
}

std::string result_target(std::uint64_t id, const std::string& wait = "60") {
  return "/v1/jobs/" + std::to_string(id) + "/result?wait=" + wait;
}

}  // namespace

TEST_CASE("service: a result forgotten by the retention policy answers 410 result_expired", "[service][cpu]") {
  test::service_under_test s([](engine::engine_config& e, service::http_service_config&) { e.retention.max_jobs = 1; });
  const auto first = submit(s);
  REQUIRE(s.request(http_request("GET", result_target(first))).status == 200);
  const auto second = submit(s, R"({"seed": 4})");
  REQUIRE(s.request(http_request("GET", result_target(second))).status == 200);
  for (const std::string& target : std::vector<std::string>{"/v1/jobs/" + std::to_string(first), result_target(first, "0")}) {
    const auto r = s.request(http_request("GET", target));
    CHECK(r.status == 410);
    CHECK(r.json().at("error").at("code") == "result_expired");
  }
  CHECK(s.request(http_request("DELETE", "/v1/jobs/" + std::to_string(first))).status == 410);
  CHECK(s.request(http_request("GET", "/v1/jobs/" + std::to_string(second))).status == 200);
  CHECK(s.request(http_request("GET", "/v1/jobs/" + std::to_string(second + 1000))).status == 404);
}

TEST_CASE("service: a full queue answers 429 queue_full with Retry-After, and a cancel makes room at once",
          "[service][cpu]") {
  test::service_under_test s([](engine::engine_config& e, service::http_service_config& c) {
    e.max_open_jobs = 2;
    e.depth_per_device = 1;
    c.retry_after_seconds = 7;
  });
  s.gate.close();
  const auto running = submit(s);
  const auto queued = submit(s);
  const auto refused = s.request(json_post(R"({"seed": 9})"));
  CHECK(refused.status == 429);
  CHECK(refused.json().at("error").at("code") == "queue_full");
  CHECK(refused.header(http::field::retry_after) == "7");
  REQUIRE(s.request(http_request("DELETE", "/v1/jobs/" + std::to_string(queued))).status == 202);
  // The cancelled job held no slot of the engine: it ends at once, and its place is free.
  CHECK(s.request(http_request("GET", result_target(queued, "10"))).status == 409);
  const auto next = submit(s, R"({"seed": 9})");
  s.gate.release();
  CHECK(s.request(http_request("GET", result_target(running))).status == 200);
  CHECK(s.request(http_request("GET", result_target(next))).status == 200);
  const auto status = s.status();
  CHECK(status.at("jobs").at("open_partitions").to_number<int>() == 0);
  CHECK(status.at("gpu_slots").at("available") == status.at("gpu_slots").at("capacity"));
}

TEST_CASE("service: a job body must be sent as application/json", "[service][cpu]") {
  test::service_under_test s(no_change);
  for (const std::string& type : std::vector<std::string>{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"}) {
    const auto r = s.request(http_request("POST", "/v1/jobs", "Content-Type: " + type + "\r\n", R"({"seed": 1})"));
    CHECK(r.status == 415);
    CHECK(r.json().at("error").at("code") == "unsupported_media_type");
  }
  CHECK(s.request(http_request("POST", "/v1/jobs", {}, R"({"seed": 1})")).status == 415);
  CHECK(s.request(http_request("POST", "/v1/jobs", "Content-Type: Application/JSON; charset=utf-8\r\n", "{}")).status == 202);
  // One snapshot: between separate ones the job may move from queued to running and count twice.
  const auto jobs = s.engine().status_json().at("jobs");
  CHECK(jobs.at("queued").to_number<int>() + jobs.at("running").to_number<int>() + jobs.at("finished").to_number<int>() ==
        1);
}

TEST_CASE("service: on TCP a Host other than the listen address, or a foreign Origin, is refused with 403",
          "[service][cpu]") {
  test::service_under_test s(
      [](engine::engine_config&, service::http_service_config& c) {
        c.allowed_hosts = {"prover.internal"};
        c.allowed_origins = {"https://dashboard.internal"};
      },
      true);
  const std::string port = std::to_string(s.port());
  for (const std::string& host :
       std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "prover.internal:" + port}) {
    INFO(host);
    CHECK(s.request(http_request("GET", "/v1/status", {}, std::nullopt, host)).status == 200);
  }
  for (const std::string& host :
       std::vector<std::string>{"evil.example:" + port, "evil.example", "127.0.0.1:1", "", "127.0.0.2:" + port}) {
    INFO(host);
    const auto r = s.request(http_request("GET", "/v1/status", {}, std::nullopt, host));
    CHECK(r.status == 403);
    CHECK(r.json().at("error").at("code") == "host_not_allowed");
  }
  const std::string here = "127.0.0.1:" + port;
  const auto cross_site = s.request(json_post("{}", "Origin: https://evil.example\r\n", here));
  CHECK(cross_site.status == 403);
  CHECK(cross_site.json().at("error").at("code") == "origin_not_allowed");
  CHECK(s.request(http_request("GET", "/v1/status", "Origin: https://dashboard.internal\r\n", std::nullopt, here)).status ==
        200);
  CHECK(s.engine().status_json().at("jobs").at("queued").to_number<int>() == 0);
}

TEST_CASE("service: with a token every request but /healthz needs it", "[service][cpu]") {
  test::service_under_test s([](engine::engine_config&, service::http_service_config& c) {
    c.auth_token = "0123456789abcdef0123456789abcdef";
  });
  CHECK(s.request(http_request("GET", "/healthz")).status == 200);
  for (const std::string& header : std::vector<std::string>{"", "Authorization: Bearer wrong\r\n", "Authorization: Basic dXNlcjpwYXNz\r\n",
                                   "Authorization: Bearer 0123456789abcdef0123456789abcdeF\r\n"}) {
    const auto r = s.request(http_request("GET", "/v1/status", header));
    CHECK(r.status == 401);
    CHECK(r.header(http::field::www_authenticate) == "Bearer");
    CHECK(s.request(json_post("{}", header)).status == 401);
  }
  s.auth_header = "Authorization: Bearer 0123456789abcdef0123456789abcdef\r\n";
  CHECK(s.status().at("jobs").at("queued").to_number<int>() == 0);
  CHECK(s.request(json_post("{}", "authorization: bearer 0123456789abcdef0123456789abcdef\r\n")).status == 202);
}

TEST_CASE("service: the Unix socket has the configured mode whatever the umask", "[service][cpu]") {
  const mode_t old_mask = ::umask(0);
  {
    test::service_under_test s(no_change);
    struct stat info {};
    REQUIRE(::stat(s.socket_path().c_str(), &info) == 0);
    CHECK((info.st_mode & 07777) == 0600);
  }
  {
    test::service_under_test s([](engine::engine_config&, service::http_service_config& c) { c.socket_mode = 0660; });
    struct stat info {};
    REQUIRE(::stat(s.socket_path().c_str(), &info) == 0);
    CHECK((info.st_mode & 07777) == 0660);
  }
  ::umask(old_mask);
}

TEST_CASE("service: a socket path another user owns is refused", "[service][cpu]") {
  // A file of root's where this test is not root; as root, one of our own given to nobody.
  std::string path = "/etc/hostname";
  std::string made;
  if (::geteuid() == 0) {
    made = "/tmp/coprove-foreign-" + std::to_string(::getpid());
    { std::ofstream(made) << "x"; }
    REQUIRE(::chown(made.c_str(), 65534, 65534) == 0);
    path = made;
  }
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  REQUIRE(info.st_uid != ::geteuid());
  test::running_io rt;
  engine::engine e(rt.io.get_executor(), test::record_engine_config(10), std::make_unique<engine::host_backend>(1, 1));
  service::http_service_config scfg;
  scfg.listen = service::parse_listen_address("unix:" + path);
  try {
    service::http_service refused(rt.io.get_executor(), e, scfg);
    FAIL("listened on a path another user owns");
  } catch (const std::system_error& error) {
    CHECK(std::string(error.what()).find("belongs to uid") != std::string::npos);
  }
  CHECK(::stat(path.c_str(), &info) == 0);  // left where it was
  if (!made.empty()) std::filesystem::remove(made);
}

TEST_CASE("service: a header or body that does not arrive in time is answered 408", "[service][cpu]") {
  test::service_under_test s([](engine::engine_config&, service::http_service_config& c) {
    c.header_timeout_seconds = 0.3;
    c.body_timeout_seconds = 0.3;
  });
  auto slow_header = s.unix_client();
  slow_header.send("GET /v1/status HTTP/1.1\r\nHost: x\r\n");
  const auto header_reply = slow_header.read();
  CHECK(header_reply.status == 408);
  CHECK(header_reply.json().at("error").at("code") == "request_timeout");
  CHECK(header_reply.json().at("error").at("message") ==
        "the request header was not received within server.header_timeout_seconds = 0.3 s");

  auto slow_body = s.unix_client();
  slow_body.send("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"seed\"");
  const auto body_reply = slow_body.read();
  CHECK(body_reply.status == 408);
  CHECK(body_reply.json().at("error").at("message") ==
        "the request body was not received within server.body_timeout_seconds = 0.3 s");
  // An idle connection is not a slow request: it is closed without an answer.
  CHECK(s.request(http_request("GET", "/healthz")).status == 200);
  CHECK(s.engine().status_json().at("jobs").at("queued").to_number<int>() == 0);
}

TEST_CASE("service: a chunked body that arrives a byte at a time is read whole", "[service][cpu]") {
  test::service_under_test s(no_change);
  auto slow = s.unix_client();
  slow.send("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
  // Every byte its own write, far enough apart that the service reads each alone: the last chunk's
  // "0\r\n" and then the trailer's end one byte after another as well.
  const std::string body = "5;ext=1\r\n{\"see\r\n7\r\nd\": 42}\r\n0\r\nX-Trailer: yes\r\n\r\n";
  for (const char c : body) {
    slow.send(std::string(1, c));
    std::this_thread::sleep_for(2ms);
  }
  const auto r = slow.read();
  REQUIRE(r.status == 202);
  const auto id = r.json().at("job_id").to_number<std::uint64_t>();
  // The same connection goes on with a request whose last chunk comes alone, a byte at a time.
  slow.send("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            "c\r\n{\"seed\": 43}\r\n");
  for (const char c : std::string("0\r\n\r\n")) {
    std::this_thread::sleep_for(2ms);
    slow.send(std::string(1, c));
  }
  const auto second = slow.read();
  CHECK(second.status == 202);
  CHECK(second.json().at("job_id").to_number<std::uint64_t>() == id + 1);
}

TEST_CASE("service: /healthz is answered while slow connections fill every slot", "[service][cpu]") {
  test::service_under_test s([](engine::engine_config&, service::http_service_config& c) {
    c.max_connections = 8;
    c.header_timeout_seconds = 120;  // the slow ones would hold their slots for two minutes
  });
  std::vector<test::client<boost::asio::local::stream_protocol>> slow;
  for (int i = 0; i < 24; ++i) {
    slow.push_back(s.unix_client());
    slow.back().send("GET /v1/status HTTP/1.1\r\nHo");
  }
  for (int round = 0; round < 3; ++round) {
    for (auto& c : slow) {
      boost::system::error_code ignored;
      boost::asio::write(c.socket(), boost::asio::buffer(std::string("s")), ignored);
    }
    // A client with a whole request takes the slot of the oldest slow one.
    auto healthy = s.unix_client(5s);
    const auto r = healthy.exchange(http_request("GET", "/healthz"));
    CHECK(r.status == 200);
  }
  const auto status = s.status();
  CHECK(status.at("service").at("connections_evicted").to_number<int>() >= 16);
  CHECK(status.at("service").at("open_connections").to_number<int>() <= 8);
}

TEST_CASE("service: a TCP peer beyond its connection limit gives up an idle slot, or gets 429 when all answer",
          "[service][cpu]") {
  test::service_under_test s(
      [](engine::engine_config&, service::http_service_config& c) { c.max_connections_per_peer = 2; }, true);
  const std::string host = s.host_header();
  s.gate.close();
  const auto id = submit(s);
  // Two connections of this address wait on the result: both answer a request.
  auto first = s.tcp_client();
  auto second = s.tcp_client();
  first.send(http_request("GET", result_target(id), {}, std::nullopt, host));
  second.send(http_request("GET", result_target(id), {}, std::nullopt, host));
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (s.engine().status_json().at("jobs").at("running").to_number<int>() == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(200ms);  // both requests read and waiting
  auto third = s.tcp_client();
  const auto refused = third.exchange(http_request("GET", "/healthz", {}, std::nullopt, host));
  CHECK(refused.status == 429);
  CHECK(refused.json().at("error").at("code") == "too_many_connections");
  CHECK(refused.json().at("error").at("message") ==
        "this address holds 2 connections, each answering a request, as many as server.max_connections_per_peer = 2 "
        "allows");
  s.gate.release();
  CHECK(first.read().status == 200);
  CHECK(second.read().status == 200);
  // Now both are idle keep-alive connections: a new one takes the oldest's slot.
  CHECK(s.request(http_request("GET", "/healthz", {}, std::nullopt, host)).status == 200);
}

TEST_CASE("service: a waiter whose client disconnects gives its slot back at once", "[service][cpu]") {
  test::service_under_test s(no_change);
  s.gate.close();
  const auto id = submit(s);
  {
    auto waiter = s.unix_client();
    waiter.send(http_request("GET", result_target(id, "300")));
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (s.open_connections() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
    REQUIRE(s.open_connections() == 2);
    waiter.close();
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (s.open_connections() > 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  CHECK(s.open_connections() == 1);  // long before the 300 s wait
  s.gate.release();
  CHECK(s.request(http_request("GET", result_target(id))).status == 200);
}

TEST_CASE("service: the same request_id again is the same job; with another body it is 409", "[service][cpu]") {
  test::service_under_test s(no_change);
  const auto first = s.request(json_post(R"({"seed": 5, "request_id": "batch-7/partition-3"})"));
  REQUIRE(first.status == 202);
  const auto id = first.json().at("job_id").to_number<std::uint64_t>();
  const auto again = s.request(json_post(R"({"request_id": "batch-7/partition-3", "seed": 5})"));
  CHECK(again.status == 200);
  CHECK(again.json().at("job_id").to_number<std::uint64_t>() == id);
  CHECK(again.json().at("existing") == true);
  const auto other = s.request(json_post(R"({"seed": 6, "request_id": "batch-7/partition-3"})"));
  CHECK(other.status == 409);
  CHECK(other.json().at("error").at("code") == "request_id_conflict");
  const auto bad = s.request(json_post(R"({"request_id": "has space"})"));
  CHECK(bad.status == 422);
  // One job was made.
  CHECK(submit(s, R"({"seed": 5})") == id + 1);
}

TEST_CASE("service: a job's priority is taken from its body and shown in its result", "[service][cpu]") {
  test::service_under_test s(no_change);
  const auto id = submit(s, R"({"priority": "critical"})");
  const auto r = s.request(http_request("GET", result_target(id)));
  REQUIRE(r.status == 200);
  CHECK(r.json().at("request").at("priority") == "critical");
  const auto bad = s.request(json_post(R"({"priority": "urgent"})"));
  CHECK(bad.status == 422);
  CHECK(bad.body().find("priority") != std::string::npos);
}

TEST_CASE("service: a connection that waited on a result goes on serving requests", "[service][cpu]") {
  test::service_under_test s(no_change);
  s.gate.close();
  auto c = s.unix_client();
  const auto submitted = c.exchange(json_post(R"({"seed": 11})"));
  REQUIRE(submitted.status == 202);
  const auto id = submitted.json().at("job_id").to_number<std::uint64_t>();
  c.send(http_request("GET", result_target(id)));
  std::this_thread::sleep_for(100ms);  // waiting, with the client's side watched
  s.gate.release();
  CHECK(c.read().status == 200);
  // The watch on the client ended with the wait: the next requests on this connection are read whole.
  CHECK(c.exchange(http_request("GET", "/healthz")).status == 200);
  CHECK(c.exchange(json_post(R"({"seed": 12})")).status == 202);
  // A request sent while the previous one still waits is kept and answered after it.
  s.gate.close();
  const auto next = submit(s, R"({"seed": 13})");
  c.send(http_request("GET", result_target(next)) + http_request("GET", "/healthz"));
  std::this_thread::sleep_for(100ms);
  s.gate.release();
  CHECK(c.read().status == 200);
  CHECK(c.read().status == 200);
}
