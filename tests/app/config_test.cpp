// The configuration of the coprove binary: file keys, flags over them, strict errors naming the
// key, and the documentation staying in step with the key table.
#include "config.hpp"

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace coprove::app;
using namespace coprove::engine;

namespace {

std::string error_key(const std::function<void()>& f) {
  try {
    f();
  } catch (const config_error& e) {
    return e.key();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("the defaults are the README's main job", "[app][config][cpu]") {
  const app_config cfg;
  CHECK(cfg.backend == backend_choice::automatic);
  CHECK(cfg.workload.circuit == "mimc");
  CHECK(cfg.workload.log_constraints == 16);
  CHECK(cfg.workload.partitions == 8);
  CHECK(cfg.workload.jobs == 2);
  CHECK(cfg.engine.policy == dispatch_policy::semaphore);
  CHECK(cfg.engine.pce == pce_policy::wait);
  CHECK(cfg.server.listen.empty());  // service::default_listen_address(), under $XDG_RUNTIME_DIR
  CHECK(cfg.server.socket_mode == 0600);
  CHECK(cfg.server.max_queued_partitions >= cfg.engine.max_partitions_per_job);
  CHECK(cfg.server.max_body_bytes == 64 * 1024);
  CHECK_NOTHROW(validate_config(cfg));
}

TEST_CASE("a configuration document sets nested keys", "[app][config][cpu]") {
  app_config cfg;
  apply_config_json(cfg, boost::json::parse(R"({
    "backend": "host", "host_devices": 2,
    "workload": {"circuit": "merkle", "log_constraints": 12, "partitions": 3, "jobs": 1, "seed": 99},
    "engine": {"dispatch": "poll", "pce": "eager", "memory_budget": "1.5GiB", "depth_per_device": 3},
    "server": {"listen": "127.0.0.1:0", "on_shutdown": "cancel", "max_body_bytes": "128KiB"},
    "log": {"level": "debug"}})"));
  CHECK(cfg.backend == backend_choice::host);
  CHECK(cfg.host_devices == 2);
  CHECK(cfg.workload.circuit == "merkle");
  CHECK(cfg.workload.log_constraints == 12);
  CHECK(cfg.workload.seed == 99);
  CHECK(cfg.engine.policy == dispatch_policy::poll);
  CHECK(cfg.engine.pce == pce_policy::eager);
  CHECK(cfg.engine.memory_budget_bytes == 1610612736);
  CHECK(cfg.engine.depth_per_device == 3);
  CHECK(cfg.server.listen == "127.0.0.1:0");
  CHECK_FALSE(cfg.server.drain_on_shutdown);
  CHECK(cfg.server.max_body_bytes == 131072);
  CHECK(cfg.log_level == "debug");
  const auto engine = effective_engine_config(cfg);
  CHECK(engine.plan_circuit == "merkle");
  CHECK(engine.max_log_constraints == 12);
}

TEST_CASE("unknown keys, wrong types and bad values are errors naming the key and change nothing",
          "[app][config][cpu]") {
  app_config cfg;
  const auto before = boost::json::serialize(to_json(cfg));
  const auto apply = [&](const char* text) { return [&cfg, text] { apply_config_json(cfg, boost::json::parse(text)); }; };
  CHECK(error_key(apply(R"({"engine": {"dispatchh": "poll"}})")) == "engine.dispatchh");
  CHECK(error_key(apply(R"({"workers": 3})")) == "workers");
  CHECK(error_key(apply(R"({"workload": {"partitions": "3"}})")) == "workload.partitions");
  CHECK(error_key(apply(R"({"workload": {"partitions": 0}})")) == "workload.partitions");
  CHECK(error_key(apply(R"({"workload": {"log_constraints": 40}})")) == "workload.log_constraints");
  CHECK(error_key(apply(R"({"workload": 3})")) == "workload");
  CHECK(error_key(apply(R"({"engine": {"dispatch": "fifo"}})")) == "engine.dispatch");
  CHECK(error_key(apply(R"({"engine": {"memory_budget": "12 parsecs"}})")) == "engine.memory_budget");
  CHECK(error_key(apply(R"({"devices": [0, 0]})")) == "devices");
  CHECK(error_key(apply(R"({"server": {"listen": "example.com:80"}})")) == "server.listen");
  CHECK(error_key(apply(R"({"log": {"level": "loud"}})")) == "log.level");
  CHECK(error_key(apply(R"({"bridge": "carrier_pigeon"})")) == "bridge");
  CHECK(error_key(apply(R"({"msm_copies": 17})")) == "msm_copies");
  CHECK(error_key(apply(R"({"msm_window_bits": 25})")) == "msm_window_bits");
  // A good key before the bad one is not applied either.
  CHECK(error_key(apply(R"({"backend": "host", "bogus": 1})")) == "bogus");
  CHECK(boost::json::serialize(to_json(cfg)) == before);
}

TEST_CASE("flag text is converted by the key's kind", "[app][config][cpu]") {
  app_config cfg;
  apply_config_text(cfg, "workload.partitions", "5");
  apply_config_text(cfg, "engine.pageable_fallback", "true");
  apply_config_text(cfg, "devices", "0,2");
  apply_config_text(cfg, "server.max_wait_seconds", "2.5");
  apply_config_text(cfg, "engine.memory_budget", "512MiB");
  apply_config_text(cfg, "bridge", "event_poller");
  CHECK(cfg.workload.partitions == 5);
  CHECK(cfg.engine.pageable_fallback);
  CHECK(cfg.devices == std::vector<int>{0, 2});
  CHECK(cfg.server.max_wait_seconds == 2.5);
  CHECK(cfg.engine.memory_budget_bytes == 512u << 20);
  CHECK(cfg.bridge == "event_poller");
  CHECK(error_key([&] { apply_config_text(cfg, "workload.partitions", "five"); }) == "--partitions");
  CHECK(error_key([&] { apply_config_text(cfg, "workload.partitions", "-1"); }) == "--partitions");
  CHECK(error_key([&] { apply_config_text(cfg, "engine.pageable_fallback", "maybe"); }) == "--pageable-fallback");
  CHECK(error_key([&] { apply_config_text(cfg, "devices", "0,,1"); }) == "--devices");
  CHECK(cfg.workload.partitions == 5);
}

TEST_CASE("cross-field checks refuse contradictory settings", "[app][config][cpu]") {
  app_config cfg;
  cfg.backend = backend_choice::host;
  cfg.devices = {0};
  CHECK(error_key([&] { validate_config(cfg); }) == "devices");
  app_config remote;
  remote.server.listen = "0.0.0.0:8080";
  CHECK(error_key([&] { validate_config(remote); }) == "server.listen");
  remote.server.allow_remote = true;
  CHECK(error_key([&] { validate_config(remote); }) == "server.auth_token_file");
  remote.server.auth_token_file = "/etc/coprove/token";
  CHECK_NOTHROW(validate_config(remote));
  app_config small_queue;
  small_queue.server.max_queued_partitions = 100;
  CHECK(error_key([&] { validate_config(small_queue); }) == "server.max_queued_partitions");
}

TEST_CASE("the service's exposure and limits are configured by keys and flags", "[app][config][cpu]") {
  app_config cfg;
  apply_config_json(cfg, boost::json::parse(R"({"server": {
    "allowed_hosts": ["prover.internal"], "allowed_origins": ["https://a.example", "https://b.example"],
    "socket_mode": "0660", "drain_seconds": 5, "on_shutdown_queued": "drain",
    "result_retention_jobs": 10, "result_retention_bytes": "1MiB", "result_retention_seconds": 2.5,
    "max_queued_jobs": 3, "header_timeout_seconds": 1.5}})"));
  CHECK(cfg.server.allowed_hosts == std::vector<std::string>{"prover.internal"});
  CHECK(cfg.server.allowed_origins.size() == 2);
  CHECK(cfg.server.socket_mode == 0660);
  CHECK(cfg.server.drain_seconds == 5.0);
  CHECK(cfg.server.drain_queued);
  CHECK(cfg.server.result_retention_bytes == 1048576);
  CHECK(cfg.server.max_queued_jobs == 3);
  apply_config_text(cfg, "server.allowed_origins", "https://c.example,https://d.example");
  CHECK(cfg.server.allowed_origins == std::vector<std::string>{"https://c.example", "https://d.example"});
  apply_config_text(cfg, "server.socket_mode", "600");
  CHECK(cfg.server.socket_mode == 0600);
  // The dump reads back as the same configuration.
  app_config copy;
  apply_config_json(copy, to_json(cfg));
  CHECK(boost::json::serialize(to_json(copy)) == boost::json::serialize(to_json(cfg)));
  for (const char* bad : {R"({"server": {"socket_mode": "0400"}})", R"({"server": {"socket_mode": "9"}})",
                          R"({"server": {"allowed_hosts": "x"}})", R"({"server": {"allowed_hosts": [""]}})",
                          R"({"server": {"on_shutdown_queued": "later"}})", R"({"server": {"header_timeout_seconds": 0}})"}) {
    INFO(bad);
    app_config c;
    CHECK_THROWS_AS(apply_config_json(c, boost::json::parse(bad)), config_error);
  }
}

TEST_CASE("byte sizes take binary and decimal units", "[app][config][cpu]") {
  CHECK(parse_byte_size("0") == 0);
  CHECK(parse_byte_size("4096") == 4096);
  CHECK(parse_byte_size("64KiB") == 65536);
  CHECK(parse_byte_size("2 GiB") == 2147483648ull);
  CHECK(parse_byte_size("1.5MB") == 1500000);
  CHECK_THROWS_AS(parse_byte_size("MiB"), std::invalid_argument);
  CHECK_THROWS_AS(parse_byte_size("3 furlongs"), std::invalid_argument);
  CHECK_THROWS_AS(parse_byte_size("1e30"), std::invalid_argument);
}

TEST_CASE("the effective configuration round-trips through the file format", "[app][config][cpu]") {
  app_config cfg;
  apply_config_text(cfg, "engine.dispatch", "unbounded");
  apply_config_text(cfg, "workload.jobs", "4");
  app_config copy;
  apply_config_json(copy, to_json(cfg));
  CHECK(boost::json::serialize(to_json(copy)) == boost::json::serialize(to_json(cfg)));
}

TEST_CASE("docs/CONFIG.md documents every key and its flag", "[app][config][cpu]") {
  std::ifstream in(std::string(COPROVE_SOURCE_DIR) + "/docs/CONFIG.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& key : config_keys()) {
    INFO(key.key);
    // Built by append: GCC 12 warns (-Wrestrict, a known false positive) on "literal" + string.
    std::string quoted_key = "`", quoted_flag = "`--";
    quoted_key.append(key.key).append("`");
    quoted_flag.append(key.flag).append("`");
    CHECK(text.str().find(quoted_key) != std::string::npos);
    CHECK(text.str().find(quoted_flag) != std::string::npos);
  }
}

TEST_CASE("the constraint cache folder defaults to the cache folder and an empty one turns it off",
          "[app][config][cpu]") {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string old_xdg = xdg ? xdg : "";
  ::setenv("XDG_CACHE_HOME", "/var/cache/me", 1);
  app_config cfg;
  CHECK(resolved_pce_cache_dir(cfg) == "/var/cache/me/coprove");
  CHECK(effective_engine_config(cfg).pce_cache_dir == "/var/cache/me/coprove");
  apply_config_json(cfg, boost::json::parse(R"({"engine": {"pce_cache_dir": ""}})"));
  CHECK(effective_engine_config(cfg).pce_cache_dir.empty());
  apply_config_json(cfg, boost::json::parse(R"({"engine": {"pce_cache_dir": "/srv/pce"}})"));
  CHECK(effective_engine_config(cfg).pce_cache_dir == "/srv/pce");
  CHECK(error_key([&] { apply_config_json(cfg, boost::json::parse(R"({"engine": {"pce_cache_dir": 3}})")); }) ==
        "engine.pce_cache_dir");
  if (xdg) ::setenv("XDG_CACHE_HOME", old_xdg.c_str(), 1); else ::unsetenv("XDG_CACHE_HOME");
}
