// `coprove serve` with a real client: curl over the Unix socket. Submit, await (proofs that
// `coprove verify` and snarkjs accept with the verifying key the service serves), cancel, status,
// metrics, health; every bad input gets a 4xx JSON error and leaves the service serving with
// nothing lost; SIGTERM with a job in flight drains (or cancels) it and exits 0.
#include "app_test_support.hpp"
#include "proof_report_support.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include <thread>

using namespace coprove::test;
namespace json = boost::json;

namespace {

// A running `coprove serve` on a socket in its own scratch directory.
class served {
 public:
  explicit served(std::vector<std::string> extra = {}) : socket_(dir_.file("s.sock")) {
    std::vector<std::string> argv = {COPROVE_BINARY, "serve", "--listen", "unix:" + socket_, "--backend", "host",
                                     "--log-constraints", "10", "--partitions", "2", "--log-level", "warning"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<child_process>(argv, dir_.file("serve.out"), dir_.file("serve.err"));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (process_->out().find("listening on") == std::string::npos) {
      if (!process_->running() || std::chrono::steady_clock::now() > deadline) {
        FAIL("coprove serve did not start: " << process_->err());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  http_reply request(const std::string& method, const std::string& target,
                     const std::optional<std::string>& body = std::nullopt) {
    return curl(dir_, socket_, method, target, body);
  }
  // Submits a job and returns its id.
  std::uint64_t submit(const std::string& body) {
    const auto reply = request("POST", "/v1/jobs", body);
    INFO(reply.body);
    REQUIRE(reply.status == 202);
    return reply.json().at("job_id").to_number<std::uint64_t>();
  }
  // Waits until `others` connections besides the one asking are open (a client that is waiting on
  // a result), so that a signal sent next finds it connected.
  void wait_for_other_connections(std::size_t others) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (true) {
      const auto status = request("GET", "/v1/status");
      REQUIRE(status.status == 200);
      if (status.json().at("service").at("open_connections").to_number<std::size_t>() >= others + 1) return;
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // Waits until a job has a partition started (a drain cancels the jobs still queued).
  void wait_until_running(std::uint64_t id) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (request("GET", "/v1/jobs/" + std::to_string(id)).json().at("state") != "running") {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  child_process& process() { return *process_; }
  const scratch_dir& dir() const { return dir_; }
  const std::string& socket() const { return socket_; }

 private:
  scratch_dir dir_;
  std::string socket_;
  std::unique_ptr<child_process> process_;
};

// Every partition of a result is there with a proof that `coprove verify` accepts with the
// verifying key the service serves for the job's circuit and size.
void check_result_verifies(served& s, const json::value& result, std::size_t partitions) {
  const auto& parts = result.at("partitions").as_array();
  REQUIRE(parts.size() == partitions);
  for (const auto& p : parts) CHECK(p.at("proof").as_string().size() == 384);
  const auto& request = result.at("request");
  const auto vk = s.request("GET", "/v1/keys/" + std::string(request.at("circuit").as_string()) + "/" +
                                       std::to_string(request.at("log_constraints").to_number<int>()) + "/vk");
  REQUIRE(vk.status == 200);
  static int count = 0;
  const std::string tag = std::to_string(count++);
  write_file(s.dir().file("vk" + tag), vk.body);
  write_file(s.dir().file("result" + tag + ".json"), json::serialize(result));
  const auto verified =
      run_coprove({"verify", s.dir().file("result" + tag + ".json"), "--vk", s.dir().file("vk" + tag)}, s.dir());
  INFO(verified.out << verified.err);
  CHECK(verified.exit_code == 0);
}

// The engine holds nothing once idle: every GPU slot, reserved byte and pinned buffer is back.
void check_idle_and_whole(served& s) {
  const auto status = s.request("GET", "/v1/status");
  REQUIRE(status.status == 200);
  const auto v = status.json();
  INFO(status.body);
  CHECK(v.at("gpu_slots").at("available") == v.at("gpu_slots").at("capacity"));
  CHECK(v.at("memory_reservation").at("available_bytes") == v.at("memory_reservation").at("capacity_bytes"));
  CHECK(v.at("pinned_pool").at("bytes_in_use").to_number<std::uint64_t>() == 0);
  CHECK(v.at("dispatch").at("in_flight").to_number<std::uint64_t>() == 0);
}

}  // namespace

TEST_CASE("serve: submit, await the result, status, health and metrics", "[app][serve][cpu]") {
  served s;
  const auto health = s.request("GET", "/healthz");
  CHECK(health.status == 200);
  CHECK(health.json().at("status") == "ok");

  const auto id = s.submit(R"({"circuit": "mimc", "log_constraints": 10, "partitions": 3, "seed": 5})");
  const auto result = s.request("GET", "/v1/jobs/" + std::to_string(id) + "/result?wait=60");
  INFO(result.body);
  REQUIRE(result.status == 200);
  check_result_verifies(s, result.json(), 3);
  CHECK(result.json().at("request").at("seed").to_number<int>() == 5);

  // snarkjs accepts a partition's proof with the verifying key served in its JSON form, and
  // noble's pairing accepts all of them from the bellman bytes.
  const auto vk_json = s.request("GET", "/v1/keys/mimc/10/vk?format=snarkjs");
  REQUIRE(vk_json.status == 200);
  CHECK(vk_json.json().at("curve") == "bls12381");
  write_file(s.dir().file("vk.json"), vk_json.body);
  const json::value result_json = result.json();
  const auto& part = result_json.at("partitions").as_array().at(1);
  write_file(s.dir().file("proof.json"), json::serialize(part.at("proof_snarkjs")));
  write_file(s.dir().file("public.json"), json::serialize(part.at("public_inputs")));
  const auto snarkjs = run_process({require_node(s.dir()), snarkjs_cli, "groth16", "verify", s.dir().file("vk.json"),
                                    s.dir().file("public.json"), s.dir().file("proof.json")},
                                   s.dir());
  INFO(snarkjs.out << snarkjs.err);
  CHECK(snarkjs.exit_code == 0);
  write_file(s.dir().file("bellman_vk"), s.request("GET", "/v1/keys/mimc/10/vk").body);
  write_file(s.dir().file("result.json"), result.body);
  const auto noble = noble_verify_report(s.dir(), s.dir().file("result.json"), s.dir().file("bellman_vk"));
  INFO(noble.out << noble.err);
  CHECK(noble.exit_code == 0);
  CHECK(s.request("GET", "/v1/keys/mimc/11/vk").status == 404);
  CHECK(s.request("GET", "/v1/keys/mimc/10/vk?format=pem").status == 400);

  const auto status = s.request("GET", "/v1/jobs/" + std::to_string(id));
  CHECK(status.status == 200);
  CHECK(status.json().at("state") == "done");
  CHECK(status.json().at("completed").to_number<int>() == 3);

  // A job with the defaults the server was started with (2 partitions of 2^10), awaited without
  // waiting first (202 while it runs), then saved and checked with `coprove verify`.
  const auto defaults_id = s.submit("{}");
  http_reply saved;
  for (int attempt = 0; attempt < 600; ++attempt) {
    saved = s.request("GET", "/v1/jobs/" + std::to_string(defaults_id) + "/result");
    if (saved.status != 202) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(saved.status == 200);
  check_result_verifies(s, saved.json(), 2);

  const auto service = s.request("GET", "/v1/status");
  REQUIRE(service.status == 200);
  for (const char* key : {"backend", "devices", "memory_plan", "pinned_pool", "dispatch", "pce"}) {
    INFO(key);
    CHECK(service.json().as_object().contains(key));
  }
  const auto metrics = s.request("GET", "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("# TYPE") != std::string::npos);
  CHECK(metrics.body.find("coprove_http_requests_total{endpoint=\"submit_job\",status=\"202\"}") != std::string::npos);
  check_idle_and_whole(s);

  s.process().signal(SIGTERM);
  CHECK(s.process().wait(std::chrono::seconds(30)) == 0);
  CHECK_FALSE(std::filesystem::exists(s.socket()));
}

TEST_CASE("serve: every bad input gets a 4xx JSON error and the service keeps serving", "[app][serve][cpu]") {
  served s;
  struct bad_case {
    std::string method, target;
    std::optional<std::string> body;
    int status;
    std::string code;
  };
  const std::vector<bad_case> cases = {
      {"POST", "/v1/jobs", std::string("{\"partitions\": 2"), 400, "malformed_json"},
      {"POST", "/v1/jobs", std::string("not json at all"), 400, "malformed_json"},
      {"POST", "/v1/jobs", std::string(""), 400, "malformed_json"},
      {"POST", "/v1/jobs", std::string("[1]"), 400, "invalid_type"},
      {"POST", "/v1/jobs", std::string(R"({"partitions": "2"})"), 400, "invalid_type"},
      {"POST", "/v1/jobs", std::string(R"({"log_constraints": 10.5})"), 400, "invalid_type"},
      {"POST", "/v1/jobs", std::string(R"({"priority": 1})"), 400, "invalid_type"},
      {"POST", "/v1/jobs", std::string(R"({"priorty": "high"})"), 400, "unknown_field"},
      {"POST", "/v1/jobs", std::string(R"({"priority": "urgent"})"), 422, "out_of_range"},
      {"POST", "/v1/jobs", std::string(R"({"request_id": ""})"), 422, "out_of_range"},
      {"POST", "/v1/jobs", std::string(R"({"circuit": "sha256"})"), 422, "unknown_circuit"},
      {"POST", "/v1/jobs", std::string(R"({"log_constraints": 16})"), 422, "exceeds_memory_plan"},
      {"POST", "/v1/jobs", std::string(R"({"circuit": "merkle"})"), 422, "no_key"},
      {"GET", "/v1/keys/mimc/10", std::nullopt, 405, "method_not_allowed"},  // a key id takes DELETE
      {"DELETE", "/v1/keys/mimc/99", std::nullopt, 404, "unknown_key"},
      {"GET", "/v1/keys/mimc/ten/vk", std::nullopt, 404, "unknown_key"},
      {"POST", "/v1/keys/mimc/10/vk", std::nullopt, 405, "method_not_allowed"},
      {"POST", "/v1/jobs", std::string(R"({"log_constraints": 4})"), 422, "out_of_range"},
      {"POST", "/v1/jobs", std::string(R"({"partitions": 0})"), 422, "out_of_range"},
      {"POST", "/v1/jobs", std::string(R"({"partitions": 1000000})"), 422, "out_of_range"},
      {"POST", "/v1/jobs", std::string(70 * 1024, ' '), 413, "body_too_large"},
      {"GET", "/v1/jobs/987654", std::nullopt, 404, "unknown_job"},
      {"GET", "/v1/jobs/987654/result?wait=1", std::nullopt, 404, "unknown_job"},
      {"DELETE", "/v1/jobs/987654", std::nullopt, 404, "unknown_job"},
      {"GET", "/v1/jobs/xyz", std::nullopt, 404, "unknown_job"},
      {"GET", "/v1/jobs/1/result?wait=-2", std::nullopt, 400, "invalid_parameter"},
      {"GET", "/v1/jobs/1/result?tail=1", std::nullopt, 400, "unknown_parameter"},
      {"GET", "/v2/status", std::nullopt, 404, "not_found"},
      {"PUT", "/v1/jobs", std::nullopt, 405, "method_not_allowed"},
      {"GET", "/v1/jobs", std::nullopt, 405, "method_not_allowed"},
  };
  for (const auto& c : cases) {
    const auto reply = s.request(c.method, c.target, c.body);
    INFO(c.method << " " << c.target << " " << (c.body ? c.body->substr(0, 60) : "") << " -> " << reply.status << " "
                  << reply.body);
    CHECK(reply.status == c.status);
    CHECK(reply.error_code() == c.code);
  }
  REQUIRE(s.process().running());

  // Nothing was admitted by the refusals, and the service still proves.
  const auto service = s.request("GET", "/v1/status").json();
  const auto& jobs = service.at("jobs");
  CHECK(jobs.at("queued").to_number<int>() + jobs.at("running").to_number<int>() + jobs.at("finished").to_number<int>() == 0);
  const auto id = s.submit(R"({"partitions": 2})");
  const auto result = s.request("GET", "/v1/jobs/" + std::to_string(id) + "/result?wait=60");
  REQUIRE(result.status == 200);
  check_result_verifies(s, result.json(), 2);
  check_idle_and_whole(s);
  CHECK(s.request("GET", "/healthz").status == 200);
}

TEST_CASE("serve: a cancelled job returns everything it held", "[app][serve][cpu]") {
  served s;
  const auto id = s.submit(R"({"partitions": 400})");
  const auto cancel = s.request("DELETE", "/v1/jobs/" + std::to_string(id));
  INFO(cancel.body);
  REQUIRE(cancel.status == 202);
  const auto result = s.request("GET", "/v1/jobs/" + std::to_string(id) + "/result?wait=60");
  CHECK(result.status == 409);
  CHECK(result.error_code() == "job_cancelled");
  CHECK(s.request("GET", "/v1/jobs/" + std::to_string(id)).json().at("state") == "cancelled");
  // Cancelling again: the job has ended.
  const auto again = s.request("DELETE", "/v1/jobs/" + std::to_string(id));
  CHECK(again.status == 409);
  CHECK(again.error_code() == "job_finished");
  check_idle_and_whole(s);

  // A result request that waits less than the job takes answers 202 with the job's status.
  const auto slow = s.submit(R"({"partitions": 400})");
  const auto early = s.request("GET", "/v1/jobs/" + std::to_string(slow) + "/result?wait=0.05");
  CHECK(early.status == 202);
  CHECK(early.json().at("job_id").to_number<std::uint64_t>() == slow);
  CHECK(s.request("DELETE", "/v1/jobs/" + std::to_string(slow)).status == 202);
}

TEST_CASE("serve: SIGTERM with a job in flight drains it and exits 0", "[app][serve][cpu]") {
  served s;
  // Long enough to be in flight when the signal comes (a 2^10 partition's proof takes tens of
  // milliseconds on the CPU).
  const auto id = s.submit(R"({"partitions": 60})");
  // A client waiting for the result while the service shuts down.
  child_process waiter({"curl", "-s", "--max-time", "120", "--unix-socket", s.socket(), "-o", s.dir().file("drained.json"),
                        "-w", "%{http_code}", "http://localhost/v1/jobs/" + std::to_string(id) + "/result?wait=120"},
                       s.dir().file("waiter.out"), s.dir().file("waiter.err"));
  s.wait_for_other_connections(1);
  // Running, not queued: a drain cancels the jobs none of whose partitions has started.
  s.wait_until_running(id);
  s.process().signal(SIGTERM);
  CHECK(s.process().wait(std::chrono::seconds(120)) == 0);
  CHECK(waiter.wait(std::chrono::seconds(30)) == 0);
  CHECK(waiter.out() == "200");
  // The service is gone: the key is the one it cached in the scratch directory.
  const json::value drained = json::parse(read_file(s.dir().file("drained.json")));
  REQUIRE(drained.at("partitions").as_array().size() == 60);
  write_file(s.dir().file("drained_check.json"), json::serialize(drained));
  const auto verified = run_coprove(
      {"verify", s.dir().file("drained_check.json"), "--vk", s.dir().file("cache/coprove/keys/mimc-10/vk")}, s.dir());
  INFO(verified.out << verified.err);
  CHECK(verified.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(s.socket()));
}

TEST_CASE("serve: SIGTERM with --on-shutdown cancel cancels the job in flight and exits 0", "[app][serve][cpu]") {
  served s({"--on-shutdown", "cancel"});
  const auto id = s.submit(R"({"partitions": 4000})");
  child_process waiter({"curl", "-s", "--max-time", "120", "--unix-socket", s.socket(), "-o", s.dir().file("cancelled.json"),
                        "-w", "%{http_code}", "http://localhost/v1/jobs/" + std::to_string(id) + "/result?wait=120"},
                       s.dir().file("waiter.out"), s.dir().file("waiter.err"));
  s.wait_for_other_connections(1);
  s.process().signal(SIGTERM);
  CHECK(s.process().wait(std::chrono::seconds(60)) == 0);
  CHECK(waiter.wait(std::chrono::seconds(30)) == 0);
  CHECK(waiter.out() == "409");
  CHECK(read_file(s.dir().file("cancelled.json")).find("job_cancelled") != std::string::npos);
}

TEST_CASE("serve: a second server on a live socket is refused, a stale socket is replaced", "[app][serve][cpu]") {
  served s;
  const auto second = run_coprove({"serve", "--listen", "unix:" + s.socket(), "--backend", "host", "--log-constraints", "10",
                               "--log-level", "error"},
                              s.dir(), std::chrono::seconds(30));
  CHECK(second.exit_code == 2);
  CHECK(second.err.find("another server") != std::string::npos);
  CHECK(s.request("GET", "/healthz").status == 200);

  // A server killed outright leaves its socket file behind; the next one replaces it.
  s.process().signal(SIGKILL);
  CHECK(s.process().wait(std::chrono::seconds(30)) == 128 + SIGKILL);
  REQUIRE(std::filesystem::exists(s.socket()));
  child_process third({COPROVE_BINARY, "serve", "--listen", "unix:" + s.socket(), "--backend", "host",
                       "--log-constraints", "10", "--log-level", "warning"},
                      s.dir().file("third.out"), s.dir().file("third.err"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (third.out().find("listening on") == std::string::npos) {
    INFO(third.err());
    REQUIRE(third.running());
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(s.request("GET", "/healthz").status == 200);
  third.signal(SIGTERM);
  CHECK(third.wait(std::chrono::seconds(30)) == 0);
}

namespace {

// Sends raw bytes on a fresh connection and returns everything the service answers until it
// closes the connection.
std::string raw_exchange(const std::string& socket, const std::string& bytes) {
  boost::asio::io_context io;
  boost::asio::local::stream_protocol::socket s(io);
  s.connect(boost::asio::local::stream_protocol::endpoint(socket));
  boost::system::error_code ec;
  // The service may refuse and close before it has read everything; what it answered still counts.
  boost::asio::write(s, boost::asio::buffer(bytes), ec);
  std::string answer;
  boost::asio::read(s, boost::asio::dynamic_buffer(answer), ec);
  return answer;
}

// A chunked POST /v1/jobs with `chunks` (each a size line with its extensions, then the data) and
// `trailer` after the last chunk.
std::string chunked_post(const std::vector<std::pair<std::string, std::string>>& chunks, const std::string& trailer) {
  std::string text =
      "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const auto& [extensions, data] : chunks) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx", data.size());
    text += std::string(size) + extensions + "\r\n" + data + "\r\n";
  }
  return text + "0\r\n" + trailer + "\r\n";
}

// The status line's code of an answer, or 0 when the service closed without one.
int status_of(const std::string& answer) {
  if (answer.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::atoi(answer.c_str() + 9);
}

// A small job submitted and awaited: the service still proves.
void check_a_job_still_works(served& s) {
  const auto id = s.submit(R"({"log_constraints": 10, "partitions": 1, "seed": 5})");
  const auto result = s.request("GET", "/v1/jobs/" + std::to_string(id) + "/result?wait=120");
  INFO(result.body);
  REQUIRE(result.status == 200);
  check_result_verifies(s, result.json(), 1);
}

}  // namespace

TEST_CASE("serve: malformed HTTP and oversized headers or chunked bodies are refused, and keep-alive works",
          "[app][serve][cpu]") {
  served s;
  const auto garbage = raw_exchange(s.socket(), "garbage\r\n\r\n");
  CHECK(garbage.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(garbage.find("bad_request") != std::string::npos);

  const auto big_header =
      raw_exchange(s.socket(), "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(10000, 'a') + "\r\n\r\n");
  CHECK(big_header.rfind("HTTP/1.1 431", 0) == 0);

  const std::string body(100000, 'x');
  char size[32];
  std::snprintf(size, sizeof size, "%zx", body.size());
  const auto chunked = raw_exchange(s.socket(), "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                                    std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n");
  CHECK(chunked.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(chunked.find("body_too_large") != std::string::npos);

  // Two requests on one connection, the second closing it.
  const auto both = raw_exchange(s.socket(),
                                 "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                 "GET /v1/jobs/77 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(both.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(both.find("HTTP/1.1 404") != std::string::npos);

  CHECK(s.request("GET", "/healthz").status == 200);
}

TEST_CASE("serve: listens on loopback TCP and reports the port it got", "[app][serve][cpu]") {
  scratch_dir dir;
  child_process server({COPROVE_BINARY, "serve", "--listen", "127.0.0.1:0", "--backend", "host", "--log-constraints", "10",
                        "--log-level", "warning"},
                       dir.file("out"), dir.file("err"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string out;
  while ((out = server.out()).find("listening on 127.0.0.1:") == std::string::npos) {
    REQUIRE(server.running());
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto at = out.find("listening on 127.0.0.1:") + std::string("listening on 127.0.0.1:").size();
  const int port = std::atoi(out.c_str() + at);
  REQUIRE(port > 0);
  const auto r = run_process({"curl", "-s", "http://127.0.0.1:" + std::to_string(port) + "/healthz"}, dir);
  CHECK(r.out.find("\"ok\"") != std::string::npos);
  server.signal(SIGINT);
  CHECK(server.wait(std::chrono::seconds(30)) == 0);
}

TEST_CASE("serve: a huge trailer field or huge chunk extensions are refused and the service keeps proving",
          "[app][serve][cpu]") {
  served s;
  const std::string body = R"({"log_constraints": 10, "partitions": 1})";
  // A trailer field longer than Beast's fields hold used to end the process from inside the read.
  const auto trailer = raw_exchange(s.socket(), chunked_post({{"", body}}, "X-Pad: " + std::string(70000, 'a') + "\r\n"));
  INFO(trailer.substr(0, 200));
  CHECK((status_of(trailer) == 431 || status_of(trailer) == 0));
  REQUIRE(s.process().running());
  // A trailer within Beast's field size but over the header limit is refused too.
  const auto long_trailer =
      raw_exchange(s.socket(), chunked_post({{"", body}}, "X-Pad: " + std::string(9000, 'a') + "\r\n"));
  CHECK(status_of(long_trailer) == 431);

  // Chunk extensions count against the body limit: one huge one, then many small ones, on two
  // connections at once.
  std::string one_huge = chunked_post({{";x=" + std::string(70000, 'e'), body}}, "");
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 100; ++i) many.emplace_back(";pad=" + std::string(1000, 'e'), " ");
  many.emplace_back("", body);
  std::string many_small = chunked_post(many, "");
  std::string first_answer;
  std::thread first([&] { first_answer = raw_exchange(s.socket(), one_huge); });
  const auto second_answer = raw_exchange(s.socket(), many_small);
  first.join();
  INFO(first_answer.substr(0, 200));
  INFO(second_answer.substr(0, 200));
  CHECK((status_of(first_answer) == 413 || status_of(first_answer) == 0));
  CHECK(status_of(second_answer) == 413);
  CHECK(second_answer.find("body_too_large") != std::string::npos);

  // A line or trailer larger than a request may make the server hold at all: refused, not buffered.
  const auto enormous =
      raw_exchange(s.socket(), chunked_post({{"", body}}, "X-Pad: " + std::string(300000, 'a') + "\r\n"));
  CHECK((status_of(enormous) == 413 || status_of(enormous) == 0));

  REQUIRE(s.process().running());
  CHECK(s.request("GET", "/healthz").status == 200);
  check_a_job_still_works(s);
}

TEST_CASE("serve: HEAD is answered as GET without a body, other methods get 405 with Allow", "[app][serve][cpu]") {
  served s;
  const auto get = raw_exchange(s.socket(), "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const auto head = raw_exchange(s.socket(), "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  INFO(head);
  REQUIRE(status_of(head) == 200);
  const auto get_end = get.find("\r\n\r\n");
  REQUIRE(get_end != std::string::npos);
  const std::string get_length = "Content-Length: " + std::to_string(get.size() - get_end - 4) + "\r\n";
  CHECK(head.find(get_length) != std::string::npos);
  CHECK(head.size() == head.find("\r\n\r\n") + 4);  // nothing after the header

  // Two HEADs on one connection: the first answer has no body that could be read as the second.
  const auto two = raw_exchange(s.socket(),
                                "HEAD /v1/status HTTP/1.1\r\nHost: x\r\n\r\n"
                                "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(two.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(two.find("HTTP/1.1 200", 1) != std::string::npos);

  const auto post_only = raw_exchange(s.socket(), "HEAD /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  INFO(post_only);
  CHECK(status_of(post_only) == 405);
  CHECK(post_only.find("Allow: POST\r\n") != std::string::npos);
  CHECK(post_only.size() == post_only.find("\r\n\r\n") + 4);
  const auto put = raw_exchange(s.socket(), "PUT /v1/jobs/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(status_of(put) == 405);
  CHECK(put.find("Allow: GET, HEAD, DELETE\r\n") != std::string::npos);
  CHECK(s.request("GET", "/healthz").status == 200);
}

TEST_CASE("serve: Expect: 100-continue gets 100 Continue before the body", "[app][serve][cpu]") {
  served s;
  const std::string body = R"({"log_constraints": 10, "partitions": 1})";
  boost::asio::io_context io;
  boost::asio::local::stream_protocol::socket socket(io);
  socket.connect(boost::asio::local::stream_protocol::endpoint(s.socket()));
  boost::asio::write(socket, boost::asio::buffer("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                                                 "Content-Type: application/json\r\nConnection: close\r\n"
                                                 "Content-Length: " +
                                                 std::to_string(body.size()) + "\r\n\r\n"));
  // The body goes only after the 100; a service that waits for it instead stalls until the limit.
  std::string interim;
  bool got_interim = false;
  boost::asio::async_read_until(socket, boost::asio::dynamic_buffer(interim), "\r\n\r\n",
                                [&](const boost::system::error_code& ec, std::size_t) { got_interim = !ec; });
  io.run_for(std::chrono::seconds(10));
  INFO(interim);
  REQUIRE(got_interim);
  CHECK(interim.rfind("HTTP/1.1 100 Continue\r\n", 0) == 0);
  interim.erase(0, interim.find("\r\n\r\n") + 4);
  boost::asio::write(socket, boost::asio::buffer(body));
  boost::system::error_code ec;
  std::string answer = interim;
  boost::asio::read(socket, boost::asio::dynamic_buffer(answer), ec);
  INFO(answer);
  CHECK(status_of(answer) == 202);
}

TEST_CASE("serve: a transfer coding other than chunked is refused and its body is not read as a request",
          "[app][serve][cpu]") {
  served s;
  const auto gzip = raw_exchange(s.socket(),
                                 "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"
                                 "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  INFO(gzip);
  CHECK(status_of(gzip) == 501);
  CHECK(gzip.find("unsupported_transfer_coding") != std::string::npos);
  CHECK(gzip.find("HTTP/1.1 200") == std::string::npos);  // the smuggled request got no answer
  const auto gzip_chunked = raw_exchange(s.socket(),
                                         "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                                         "0\r\n\r\n");
  CHECK(status_of(gzip_chunked) == 501);
  CHECK(s.request("GET", "/healthz").status == 200);
}

TEST_CASE("serve: a job body with a key given twice is refused with duplicate_field", "[app][serve][cpu]") {
  served s;
  const auto twice = s.request("POST", "/v1/jobs", R"({"log_constraints": 10, "log_constraints": 11})");
  CHECK(twice.status == 400);
  CHECK(twice.error_code() == "duplicate_field");
  const auto once = s.request("POST", "/v1/jobs", R"({"log_constraints": 10, "partitions": 1})");
  CHECK(once.status == 202);
}

TEST_CASE("serve: a TCP port already taken, or an address this host lacks, exits 2 naming server.listen",
          "[app][serve][cpu]") {
  scratch_dir dir;
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor taken(io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  const auto port = taken.local_endpoint().port();
  const auto in_use = run_coprove({"serve", "--listen", "127.0.0.1:" + std::to_string(port), "--backend", "host",
                                   "--log-constraints", "10", "--log-level", "error"},
                                  dir, std::chrono::seconds(60));
  INFO(in_use.err);
  CHECK(in_use.exit_code == 2);
  CHECK(in_use.err.find("server.listen") != std::string::npos);
  CHECK(in_use.err.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);

  // 192.0.2.1 is TEST-NET-1, assigned to no host (a non-loopback address: it needs a token too).
  write_file(dir.file("token"), "0123456789abcdef0123");
  ::chmod(dir.file("token").c_str(), 0600);
  const auto absent = run_coprove({"serve", "--listen", "192.0.2.1:0", "--allow-remote", "--backend", "host",
                                   "--auth-token-file", dir.file("token"), "--log-constraints", "10", "--log-level", "error"},
                                  dir, std::chrono::seconds(60));
  INFO(absent.err);
  CHECK(absent.exit_code == 2);
  CHECK(absent.err.find("server.listen") != std::string::npos);
}

TEST_CASE("serve: a drain past --drain-seconds cancels the running job, a queued one is cancelled at once",
          "[app][serve][cpu]") {
  served s({"--drain-seconds", "1"});
  const auto running = s.submit(R"({"partitions": 4000})");
  const auto queued = s.submit(R"({"partitions": 2})");
  child_process waiter({"curl", "-s", "--max-time", "120", "--unix-socket", s.socket(), "-o", s.dir().file("w.json"),
                        "-w", "%{http_code}", "http://localhost/v1/jobs/" + std::to_string(running) + "/result?wait=120"},
                       s.dir().file("waiter.out"), s.dir().file("waiter.err"));
  s.wait_for_other_connections(1);
  CHECK(s.request("GET", "/v1/jobs/" + std::to_string(queued)).json().at("state") == "queued");
  const auto signalled = std::chrono::steady_clock::now();
  s.process().signal(SIGTERM);
  // 4000 partitions take minutes on the CPU; the drain gives up after a second.
  CHECK(s.process().wait(std::chrono::seconds(60)) == 0);
  CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(60));
  CHECK(waiter.wait(std::chrono::seconds(30)) == 0);
  CHECK(waiter.out() == "409");
  CHECK(read_file(s.dir().file("w.json")).find("job_cancelled") != std::string::npos);
}

TEST_CASE("serve: a second SIGTERM cancels a drain at once", "[app][serve][cpu]") {
  served s({"--drain-seconds", "3600"});
  const auto id = s.submit(R"({"partitions": 4000})");
  s.wait_until_running(id);
  s.process().signal(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(s.process().running());  // draining, for up to an hour
  s.process().signal(SIGTERM);
  CHECK(s.process().wait(std::chrono::seconds(60)) == 0);
}

TEST_CASE("serve: without --listen it makes its socket under XDG_RUNTIME_DIR, mode 0600 whatever the umask",
          "[app][serve][cpu]") {
  scratch_dir dir;
  const std::string runtime_dir = dir.file("run");
  std::filesystem::create_directory(runtime_dir);
  const char* old_runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old_runtime ? old_runtime : "";
  ::setenv("XDG_RUNTIME_DIR", runtime_dir.c_str(), 1);
  const mode_t old_mask = ::umask(0);
  child_process server({COPROVE_BINARY, "serve", "--backend", "host", "--log-constraints", "10", "--log-level", "warning"},
                       dir.file("out"), dir.file("err"));
  ::umask(old_mask);
  if (old_runtime) ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1); else ::unsetenv("XDG_RUNTIME_DIR");
  const std::string socket = runtime_dir + "/coprove.sock";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (server.out().find("listening on") == std::string::npos) {
    INFO(server.err());
    REQUIRE(server.running());
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(server.out().find("listening on unix:" + socket) != std::string::npos);
  struct stat info {};
  REQUIRE(::stat(socket.c_str(), &info) == 0);
  CHECK((info.st_mode & 07777) == 0600);
  CHECK(curl(dir, socket, "GET", "/healthz").status == 200);
  server.signal(SIGTERM);
  CHECK(server.wait(std::chrono::seconds(30)) == 0);
}

TEST_CASE("serve: job ids are not given again after a restart", "[app][serve][cpu]") {
  std::uint64_t first = 0;
  {
    served s;
    first = s.submit(R"({"partitions": 1})");
    s.process().signal(SIGTERM);
    CHECK(s.process().wait(std::chrono::seconds(60)) == 0);
  }
  served again;
  const auto second = again.submit(R"({"partitions": 1})");
  CHECK(second > first);
  // Readable as the start time: milliseconds since 1970 x 1000 (after 2020, below 2^53).
  CHECK(second / 1000 > 1'577'836'800'000ull);
  CHECK(second < (1ull << 53));
}

TEST_CASE("serve: a bearer token is required where configured, and a bad token file is refused with exit 2",
          "[app][serve][cpu]") {
  scratch_dir dir;
  const std::string token = "tok-0123456789abcdef";
  write_file(dir.file("token"), token + "\n");
  ::chmod(dir.file("token").c_str(), 0600);
  {
    served s({"--auth-token-file", dir.file("token")});
    CHECK(s.request("GET", "/healthz").status == 200);
    CHECK(s.request("GET", "/v1/status").status == 401);
    const auto r = run_process({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket", s.socket(), "-H",
                                "Authorization: Bearer " + token, "http://localhost/v1/status"},
                               dir);
    CHECK(r.out == "200");
  }
  write_file(dir.file("open_token"), token);
  ::chmod(dir.file("open_token").c_str(), 0644);
  write_file(dir.file("short_token"), "abc");
  ::chmod(dir.file("short_token").c_str(), 0600);
  for (const auto& bad : {dir.file("open_token"), dir.file("short_token"), dir.file("missing")}) {
    const auto refused = run_coprove({"serve", "--listen", "unix:" + dir.file("s.sock"), "--backend", "host",
                                      "--log-constraints", "10", "--auth-token-file", bad},
                                     dir, std::chrono::seconds(60));
    INFO(refused.err);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("server.auth_token_file") != std::string::npos);
  }
  // A file larger than a token file can be is refused before it is read, naming the limit.
  write_file(dir.file("large_token"), token + std::string(20 * 1024, ' '));
  ::chmod(dir.file("large_token").c_str(), 0600);
  const auto large = run_coprove({"serve", "--listen", "unix:" + dir.file("s.sock"), "--backend", "host",
                                  "--log-constraints", "10", "--auth-token-file", dir.file("large_token")},
                                 dir, std::chrono::seconds(60));
  INFO(large.err);
  CHECK(large.exit_code == 2);
  CHECK(large.err.find("server.auth_token_file") != std::string::npos);
  CHECK(large.err.find("larger than the limit of 16 KiB") != std::string::npos);
  // A non-loopback address needs one.
  const auto remote = run_coprove({"serve", "--listen", "0.0.0.0:0", "--allow-remote", "--backend", "host",
                                   "--log-constraints", "10"},
                                  dir, std::chrono::seconds(60));
  CHECK(remote.exit_code == 2);
  CHECK(remote.err.find("server.auth_token_file") != std::string::npos);
}
