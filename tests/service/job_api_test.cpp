// The job API without a socket: requests handed to job_api as values and its responses checked
// directly, on an engine on the host backend (evaluation records, 2^10 circuits). Submission,
// results awaited (the job, the wait or the client's leaving first), refusals as responses with
// their fields, the checks of a header alone, and the service's state in /healthz and /v1/status.
#include <coprove/service/job_api.hpp>

#include <coprove/engine/engine.hpp>
#include <coprove/engine/host_backend.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"
#include "key_root_support.hpp"

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>

namespace {

namespace asio = boost::asio;
using namespace coprove;
using namespace std::chrono_literals;
using service::api_request;
using service::api_response;

// An engine and the API over it, both used on one io_context thread; torn down in order.
class api_under_test {
 public:
  template <class Adjust>
  explicit api_under_test(Adjust adjust, service::exposure_policy exposure = unix_exposure()) {
    engine::engine_config ecfg = test::record_engine_config(10);
    ecfg.synthesis_hook = [this](std::uint64_t, std::size_t) { gate.pass(); };
    service::job_api_config acfg;
    acfg.defaults.log_constraints = 10;
    acfg.defaults.partitions = 1;
    adjust(ecfg, acfg);
    engine_ = std::make_unique<engine::engine>(rt_.io.get_executor(), ecfg, std::make_unique<engine::host_backend>(1, 2));
    api_ = std::make_unique<service::job_api>(rt_.io.get_executor(), *engine_, acfg, std::move(exposure));
    api_->start();
  }
  ~api_under_test() {
    gate.release();
    on_io([&] { api_.reset(); });
    engine_->async_shutdown(false, asio::use_future).get();
    engine_.reset();
  }

  static service::exposure_policy unix_exposure(std::string token = {}) {
    return {service::parse_listen_address("unix:/nowhere.sock"), "unix:/nowhere.sock", {}, {}, std::move(token)};
  }

  /// Answers a whole request on the io thread; nothing when the client "left" first.
  std::optional<api_response> call(api_request req, service::job_api::client_watch watch = {}) {
    return asio::co_spawn(rt_.io, api_->handle(std::move(req), std::move(watch)), asio::use_future).get();
  }
  std::optional<api_response> refuse_header(const api_request& head) {
    std::optional<api_response> out;
    on_io([&] { out = api_->refuse_header(head); });
    return out;
  }
  template <class F>
  void on_io(F f) {
    std::promise<void> done;
    asio::post(rt_.io, [&] {
      f();
      done.set_value();
    });
    done.get_future().get();
  }

  service::job_api& api() { return *api_; }
  engine::engine& engine() { return *engine_; }
  test::synthesis_gate gate;

 private:
  test::running_io rt_;
  std::unique_ptr<engine::engine> engine_;
  std::unique_ptr<service::job_api> api_;
};

const auto no_change = [](engine::engine_config&, service::job_api_config&) {};

api_request get(std::string target) {
  api_request r;
  r.method = "GET";
  r.target = std::move(target);
  return r;
}

api_request post_job(std::string body, std::string content_type = "application/json") {
  api_request r;
  r.method = "POST";
  r.target = "/v1/jobs";
  r.content_type = std::move(content_type);
  r.content_length = body.size();
  r.body = std::move(body);
  return r;
}

api_request keys_request(std::string method, std::string target, std::string body = {}) {
  api_request r;
  r.method = std::move(method);
  r.target = std::move(target);
  if (!body.empty()) {
    r.content_type = "application/json";
    r.content_length = body.size();
    r.body = std::move(body);
  }
  return r;
}

auto keys_from(const test::key_root& root) {
  return [&root](engine::engine_config& e, service::job_api_config& c) { test::keys_at_run_time(root, e, c); };
}

std::string code_of(const api_response& r) { return std::string(r.json().at("error").at("code").as_string()); }

std::uint64_t submitted_id(const std::optional<api_response>& r) {
  REQUIRE(r);
  INFO(r->body);
  REQUIRE(r->status == 202);
  return r->json().at("job_id").to_number<std::uint64_t>();
}

}  // namespace

TEST_CASE("job API: a submitted job is answered 202 with its URLs, then its status and result",
          "[service][job_api][cpu]") {
  api_under_test t(no_change);
  const auto submitted = t.call(post_job(R"({"seed": 3, "partitions": 2})"));
  const auto id = submitted_id(submitted);
  const std::string base = "/v1/jobs/" + std::to_string(id);
  CHECK(submitted->field("Location") == base);
  CHECK(submitted->json().at("result_url").as_string() == base + "/result");

  const auto result = t.call(get(base + "/result?wait=60"));
  REQUIRE(result);
  CHECK(result->status == 200);
  CHECK(result->content_type == "application/json");
  CHECK(result->json().at("partitions").as_array().size() == 2);
  const auto status = t.call(get(base));
  REQUIRE(status);
  CHECK(status->status == 200);
  CHECK(status->json().at("state") == "done");
  // Finished: a cancel is 409, and an id never given 404.
  api_request cancel = get(base);
  cancel.method = "DELETE";
  CHECK(code_of(*t.call(cancel)) == "job_finished");
  CHECK(t.call(get("/v1/jobs/" + std::to_string(id + 1000)))->status == 404);
}

TEST_CASE("job API: refusals are responses with their status, code and fields", "[service][job_api][cpu]") {
  api_under_test t([](engine::engine_config&, service::job_api_config& c) { c.limits.max_body_bytes = 64; });
  const auto not_found = t.call(get("/v2/status"));
  CHECK(not_found->status == 404);
  CHECK(code_of(*not_found) == "not_found");
  api_request put = get("/v1/jobs");
  put.method = "PUT";
  const auto not_allowed = t.call(put);
  CHECK(not_allowed->status == 405);
  CHECK(not_allowed->field("Allow") == "POST");
  CHECK(t.call(post_job("{}", "text/plain"))->status == 415);
  CHECK(code_of(*t.call(post_job(R"({"log_constraints": 12})"))) == "exceeds_memory_plan");
  CHECK(code_of(*t.call(post_job(R"({"circuit": "sha256"})"))) == "unknown_circuit");
  CHECK(code_of(*t.call(post_job(std::string(65, ' ')))) == "body_too_large");
  CHECK(code_of(*t.call(get("/v1/jobs/012"))) == "unknown_job");
  CHECK(code_of(*t.call(get("/v1/keys/mimc/10/vk"))) == "unknown_key");
  // Nothing was submitted by any of them.
  const auto jobs = t.engine().status_json().at("jobs");
  CHECK(jobs.at("queued").to_number<int>() + jobs.at("running").to_number<int>() + jobs.at("finished").to_number<int>() ==
        0);
}

TEST_CASE("job API: who may drive it is checked before anything is routed", "[service][job_api][cpu]") {
  const std::string token = "0123456789abcdef0123456789abcdef";
  SECTION("a token on the Unix socket") {
    api_under_test t(no_change, api_under_test::unix_exposure(token));
    CHECK(t.call(get("/healthz"))->status == 200);
    const auto refused = t.call(get("/v1/status"));
    CHECK(refused->status == 401);
    CHECK(refused->field("WWW-Authenticate") == "Bearer");
    api_request with_token = get("/v1/status");
    with_token.authorization = "Bearer " + token;
    CHECK(t.call(with_token)->status == 200);
    // Unknown paths are not told apart from known ones without the token.
    CHECK(t.call(get("/v2/anything"))->status == 401);
  }
  SECTION("the Host and Origin on TCP") {
    api_under_test t(no_change, service::exposure_policy(service::parse_listen_address("127.0.0.1:8080"), "127.0.0.1:8080",
                                                         {"prover.internal"}, {"https://dashboard.internal"}, {}));
    api_request req = get("/v1/status");
    for (const std::string host : {"127.0.0.1:8080", "localhost", "prover.internal:8080"}) {
      req.host = host;
      CHECK(t.call(req)->status == 200);
    }
    for (const std::string host : {"", "evil.example", "127.0.0.1:8081"}) {
      req.host = host;
      CHECK(code_of(*t.call(req)) == "host_not_allowed");
    }
    req.host = "localhost:8080";
    req.origin = "https://evil.example";
    CHECK(code_of(*t.call(req)) == "origin_not_allowed");
    req.origin = "https://dashboard.internal";
    CHECK(t.call(req)->status == 200);
  }
}

TEST_CASE("job API: a header alone is refused or let through before its body is read", "[service][job_api][cpu]") {
  api_under_test t([](engine::engine_config&, service::job_api_config& c) { c.limits.max_body_bytes = 1024; });
  api_request head = post_job("");
  head.content_length = 100;
  CHECK_FALSE(t.refuse_header(head));
  head.content_length = 4096;
  const auto too_large = t.refuse_header(head);
  REQUIRE(too_large);
  CHECK(too_large->status == 413);
  CHECK(too_large->json().at("error").at("message") == "request body of 4096 bytes exceeds server.max_body_bytes = 1024");
  head.content_length.reset();  // chunked: judged once read
  CHECK_FALSE(t.refuse_header(head));
  head.content_type = "text/plain";
  CHECK(t.refuse_header(head)->status == 415);
  CHECK(t.refuse_header(get("/nowhere"))->status == 404);
  CHECK_FALSE(t.refuse_header(get("/healthz")));
  // Once stopped, no submission is worth its body.
  t.on_io([&] { t.api().stop(); });
  CHECK(code_of(*t.refuse_header(post_job("{}"))) == "shutting_down");
}

TEST_CASE("job API: a result wait ends with the job, the wait, or the client leaving", "[service][job_api][cpu]") {
  api_under_test t([](engine::engine_config& e, service::job_api_config&) { e.depth_per_device = 1; });
  t.gate.close();
  const auto id = submitted_id(t.call(post_job(R"({"seed": 5})")));
  const std::string result = "/v1/jobs/" + std::to_string(id) + "/result";
  // The wait passes first: 202 with the status.
  const auto waited = t.call(get(result + "?wait=0.05"));
  CHECK(waited->status == 202);
  CHECK(waited->json().at("job_id").to_number<std::uint64_t>() == id);
  // The client leaves first: nothing to answer, and the job goes on.
  const service::job_api::client_watch leaves_soon = []() -> asio::awaitable<void> {
    asio::steady_timer timer(co_await asio::this_coro::executor, 50ms);
    co_await timer.async_wait(asio::use_awaitable);
  };
  CHECK_FALSE(t.call(get(result + "?wait=60"), leaves_soon));
  CHECK(t.call(get("/v1/jobs/" + std::to_string(id)))->json().at("state") != "cancelled");
  // The job ends first: 200 with the result (the watch on a client that stays is cancelled).
  const service::job_api::client_watch stays = []() -> asio::awaitable<void> {
    asio::steady_timer timer(co_await asio::this_coro::executor, 600s);
    co_await timer.async_wait(asio::use_awaitable);
  };
  t.gate.release();
  CHECK(t.call(get(result + "?wait=60"), stays)->status == 200);
}

TEST_CASE("job API: a full queue is 429 with Retry-After; health and status show the service's state",
          "[service][job_api][cpu]") {
  api_under_test t([](engine::engine_config& e, service::job_api_config& c) {
    e.max_open_jobs = 1;
    e.depth_per_device = 1;
    c.retry_after_seconds = 9;
  });
  t.on_io([&] { t.api().set_service_figures([] { return boost::json::object{{"open_connections", 3}}; }); });
  t.gate.close();
  (void)submitted_id(t.call(post_job(R"({"seed": 1})")));
  const auto full = t.call(post_job(R"({"seed": 2})"));
  CHECK(full->status == 429);
  CHECK(full->field("Retry-After") == "9");
  const auto status = t.call(get("/v1/status"))->json();
  CHECK(status.at("service").at("listen") == "unix:/nowhere.sock");
  CHECK(status.at("service").at("accepting") == true);
  CHECK(status.at("service").at("open_connections") == 3);
  CHECK(t.call(get("/healthz"))->json().at("status") == "ok");
  t.on_io([&] { t.api().stop(); });
  const auto health = t.call(get("/healthz"));
  CHECK(health->status == 503);
  CHECK(health->json().at("status") == "stopping");
  CHECK(code_of(*t.call(post_job(R"({"seed": 3})"))) == "shutting_down");
  CHECK(t.call(get("/v1/status"))->json().at("service").at("stopping") == true);
  t.gate.release();
}

TEST_CASE("job API: a key path resolves under a configured root, or is 403 outside every root, 404 when absent",
          "[service][job_api][keys][cpu]") {
  const test::key_root keys;
  const std::vector<std::filesystem::path> roots{keys.base / "absent", keys.root};
  const auto canonical_dir = std::filesystem::canonical(keys.root / "mimc10");
  CHECK(service::resolve_key_path("mimc10", roots) == canonical_dir);
  CHECK(service::resolve_key_path("mimc10/../mimc10/.", roots) == canonical_dir);
  CHECK(service::resolve_key_path(canonical_dir.string(), roots) == canonical_dir);
  const auto status_of = [&](std::string_view path, const std::vector<std::filesystem::path>& r) {
    try {
      (void)service::resolve_key_path(path, r);
    } catch (const service::request_error& e) {
      return std::to_string(e.status()) + " " + e.code();
    }
    return std::string("resolved");
  };
  CHECK(status_of("../elsewhere/mimc10", roots) == "403 key_path_forbidden");
  CHECK(status_of("escape", roots) == "403 key_path_forbidden");  // a symlink out of the root
  CHECK(status_of("escape/params", roots) == "403 key_path_forbidden");
  CHECK(status_of((keys.outside / "mimc10").string(), roots) == "403 key_path_forbidden");
  CHECK(status_of("/etc/passwd", roots) == "403 key_path_forbidden");
  CHECK(status_of("mimc12", roots) == "404 key_not_found");
  CHECK(status_of("mimc10", {}) == "403 key_path_forbidden");
  CHECK(status_of("", roots) == "400 bad_key_path");
}

TEST_CASE("job API: a key is loaded from a root, listed, proved with, refused while its job runs, then evicted",
          "[service][job_api][keys][cpu]") {
  const test::key_root keys;
  api_under_test t(keys_from(keys));
  auto listed = t.call(get("/v1/keys"));
  REQUIRE(listed->status == 200);
  CHECK(listed->json().at("keys").as_array().empty());
  CHECK(listed->json().at("host_bytes") == 0);
  CHECK(code_of(*t.call(post_job(R"({"seed": 1})"))) != "");  // no key yet: refused

  CHECK(code_of(*t.call(keys_request("POST", "/v1/keys", R"({"path": "../elsewhere/mimc10"})"))) ==
        "key_path_forbidden");
  CHECK(code_of(*t.call(keys_request("POST", "/v1/keys", R"({"path": "escape"})"))) == "key_path_forbidden");
  CHECK(code_of(*t.call(keys_request("POST", "/v1/keys", R"({"path": "mimc10", "more": 1})"))) == "unknown_field");
  CHECK(t.call(keys_request("POST", "/v1/keys", R"({"path": "mimc10"})"))->status == 201);
  const auto again = t.call(keys_request("POST", "/v1/keys", R"({"path": "mimc10"})"));
  CHECK(again->status == 409);
  CHECK(code_of(*again) == "key_exists");

  listed = t.call(get("/v1/keys"));
  const auto listing = listed->json();
  const auto& key = listing.at("keys").at(0);
  CHECK(key.at("id") == "mimc/10");
  CHECK(key.at("curve") == "bls12-381");
  CHECK(key.at("size") == 1024);
  CHECK(key.at("state") == "loaded");
  CHECK(key.at("last_use").is_null());
  const auto host_bytes = key.at("host_bytes").to_number<std::size_t>();
  CHECK(host_bytes > 0);
  CHECK(listing.at("host_bytes") == host_bytes);

  t.gate.close();
  const std::uint64_t id = submitted_id(t.call(post_job(R"({"seed": 1})")));
  t.gate.wait_for_entered(1);
  const auto busy = t.call(keys_request("DELETE", "/v1/keys/mimc/10"));
  CHECK(busy->status == 409);
  CHECK(code_of(*busy) == "key_in_use");
  CHECK(busy->json().at("error").at("message").as_string().find("(" + std::to_string(id) + ")") !=
        std::string::npos);
  CHECK(t.call(get("/v1/keys"))->json().at("keys").at(0).at("state") == "in_use");
  CHECK(code_of(*t.call(keys_request("DELETE", "/v1/keys/mimc/12"))) == "unknown_key");
  CHECK(code_of(*t.call(keys_request("DELETE", "/v1/keys/mimc/10?cancel=maybe"))) == "bad_query");

  const auto evicted = t.call(keys_request("DELETE", "/v1/keys/mimc/10?cancel=true"));
  REQUIRE(evicted->status == 200);
  CHECK(evicted->json().at("state") == "evicted");
  CHECK(evicted->json().at("host_bytes") == host_bytes);
  t.gate.release();
  const auto result = t.call(get("/v1/jobs/" + std::to_string(id) + "/result?wait=60"));
  REQUIRE(result);  // the job's end, whatever its answer: it was cancelled
  CHECK(t.engine().status(id)->state == engine::job_state::cancelled);
  listed = t.call(get("/v1/keys"));
  CHECK(listed->json().at("keys").as_array().empty());
  CHECK(listed->json().at("host_bytes") == 0);
}

TEST_CASE("job API: a job for a known key that is not loaded loads it first, again after an eviction",
          "[service][job_api][keys][cpu]") {
  const test::key_root keys;
  api_under_test t([&](engine::engine_config& e, service::job_api_config& c) {
    test::keys_at_run_time(keys, e, c);
    e.key_loading = engine::key_loading::on_demand;
    e.known_keys = {{"mimc/10", test::key_root::loader(keys.root / "mimc10")}};
  });
  CHECK(t.call(get("/v1/keys"))->json().at("keys").as_array().empty());
  for (const std::string seed : {"1", "2"}) {
    const std::uint64_t id = submitted_id(t.call(post_job(R"({"seed": )" + seed + "}")));
    const auto result = t.call(get("/v1/jobs/" + std::to_string(id) + "/result?wait=60"));
    REQUIRE(result->status == 200);
    CHECK(result->json().at("partitions").at(0).at("verified") == true);
    CHECK(t.call(get("/v1/keys"))->json().at("keys").at(0).at("id") == "mimc/10");
    REQUIRE(t.call(keys_request("DELETE", "/v1/keys/mimc/10"))->status == 200);
  }
  // A size it has no key for is still refused.
  const auto unknown = t.call(post_job(R"({"seed": 3, "log_constraints": 11})"));
  CHECK(unknown->status == 422);
}
