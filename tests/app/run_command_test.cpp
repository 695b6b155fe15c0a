// The coprove binary end to end on the CPU backend: `run` (exit status, report keys, every record
// verified), `verify` on the written report and on tampered copies, `info`, and bad flags or
// configuration exiting with status 2 and a message naming the field.
#include "app_test_support.hpp"

#include <coprove/field/evaluation.hpp>

using namespace coprove::test;
namespace json = boost::json;

namespace {

const json::value* find(const json::object& o, std::string_view dotted) {
  const json::object* current = &o;
  while (true) {
    const auto dot = dotted.find('.');
    const auto* v = current->if_contains(dotted.substr(0, dot));
    if (!v || dot == std::string_view::npos) return v;
    if (!v->is_object()) return nullptr;
    current = &v->get_object();
    dotted = dotted.substr(dot + 1);
  }
}

json::object run_small(const scratch_dir& dir, const std::string& report, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"run", "--backend", "host", "--log-constraints", "10", "--partitions", "3",
                                   "--jobs", "2", "--json", report, "--progress", "plain", "--log-level", "warning"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_coprove(args, dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(read_file(report)).as_object();
}

}  // namespace

TEST_CASE("coprove run proves, verifies every record and writes the report keys", "[app][run][cpu]") {
  scratch_dir dir;
  const std::string report_path = dir.file("report.json");
  const std::string trace_path = dir.file("trace.json");
  const json::object report = run_small(dir, report_path, {"--trace", trace_path});

  for (const char* key : {"backend", "partitions", "verified", "failed", "throughput_partitions_per_s",
                          "dispatch.policy", "dispatch.depth", "dispatch.max_in_flight",
                          "dispatch.max_concurrent_synthesis", "pinned_pool.allocator", "pinned_pool.allocations",
                          "pinned_pool.reuses", "pinned_pool.fallbacks", "pce.hits", "pce.slow_path",
                          "gpu_busy_fraction", "memory_plan", "stages", "results"}) {
    INFO(key);
    CHECK(find(report, key) != nullptr);
  }
  CHECK(report.at("backend") == "host");
  CHECK(report.at("partitions").to_number<int>() == 6);
  CHECK(report.at("verified").to_number<int>() == 6);
  CHECK(report.at("failed").to_number<int>() == 0);
  CHECK(find(report, "dispatch.policy")->as_string() == "semaphore");
  CHECK(report.at("throughput_partitions_per_s").to_number<double>() > 0.0);

  // The records in the report verify on their own, here as in `coprove verify`.
  const auto& results = report.at("results").as_array();
  REQUIRE(results.size() == 2);
  for (const auto& result : results) {
    const auto& partitions = result.at("partitions").as_array();
    REQUIRE(partitions.size() == 3);
    for (const auto& p : partitions) {
      CHECK(coprove::field::verify(coprove::field::record_from_json(p.at("record")), 1024));
    }
  }

  const auto trace = json::parse(read_file(trace_path));
  CHECK(trace.as_object().contains("traceEvents"));
  CHECK(!trace.at("traceEvents").as_array().empty());

  const auto verified = run_coprove({"verify", report_path}, dir);
  INFO(verified.out << verified.err);
  CHECK(verified.exit_code == 0);
  CHECK(verified.out.find("6 of 6 records") != std::string::npos);
}

TEST_CASE("coprove verify fails a tampered report and names the partition", "[app][verify][cpu]") {
  scratch_dir dir;
  const std::string report_path = dir.file("report.json");
  json::object report = run_small(dir, report_path);

  SECTION("a changed h(zeta)") {
    auto& record = report.at("results").as_array()[1].at("partitions").as_array()[2].at("record").as_object();
    std::string h(record.at("h").as_string());
    h.back() = h.back() == '1' ? '2' : '1';
    record["h"] = h;
    write_file(dir.file("tampered.json"), json::serialize(report));
    const auto r = run_coprove({"verify", dir.file("tampered.json")}, dir);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("partition 2") != std::string::npos);
    CHECK(r.err.find("does not verify") != std::string::npos);
  }
  SECTION("a missing partition") {
    report.at("results").as_array()[0].at("partitions").as_array().pop_back();
    write_file(dir.file("short.json"), json::serialize(report));
    const auto r = run_coprove({"verify", dir.file("short.json")}, dir);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("2 of 3 partitions") != std::string::npos);
  }
  SECTION("a malformed field element") {
    report.at("results").as_array()[0].at("partitions").as_array()[0].at("record").as_object()["zeta"] = "0xnothex";
    write_file(dir.file("bad.json"), json::serialize(report));
    const auto r = run_coprove({"verify", dir.file("bad.json")}, dir);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("partition 0") != std::string::npos);
  }
  SECTION("a file that is not a report") {
    write_file(dir.file("other.json"), "{\"hello\": 1}");
    CHECK(run_coprove({"verify", dir.file("other.json")}, dir).exit_code == 1);
    write_file(dir.file("garbage.json"), "{not json");
    CHECK(run_coprove({"verify", dir.file("garbage.json")}, dir).exit_code == 1);
    CHECK(run_coprove({"verify", dir.file("missing.json")}, dir).exit_code == 2);
  }
}

TEST_CASE("bad flags and configuration exit with status 2 naming the field", "[app][cli][cpu]") {
  scratch_dir dir;
  const auto expect_usage = [&](std::vector<std::string> args, const std::string& named) {
    const auto r = run_coprove(args, dir);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(named) != std::string::npos);
  };
  expect_usage({"run", "--partitions", "0"}, "workload.partitions");
  expect_usage({"run", "--partitions", "lots"}, "--partitions");
  expect_usage({"run", "--dispatch", "fifo"}, "engine.dispatch");
  expect_usage({"run", "--pce", "later"}, "engine.pce");
  expect_usage({"run", "--no-such-flag"}, "--no-such-flag");
  expect_usage({"run", "--log-constraints", "40"}, "workload.log_constraints");
  expect_usage({"run", "--backend", "tpu"}, "backend");
  expect_usage({"run", "--circuit", "sha256", "--backend", "host"}, "circuit");
  expect_usage({"run", "--memory-budget", "lots"}, "engine.memory_budget");
  expect_usage({"run", "--backend", "host", "--log-constraints", "12", "--memory-budget", "1MiB"}, "memory plan");
  expect_usage({"serve", "--listen", "10.1.2.3:8080"}, "allow-remote");
  expect_usage({"serve", "--listen", "nowhere"}, "server.listen");
  expect_usage({"frobnicate"}, "unknown command");
  expect_usage({"verify"}, "FILE");

  write_file(dir.file("unknown.json"), R"({"engine": {"depth": 4}})");
  expect_usage({"run", "--config", dir.file("unknown.json")}, "engine.depth");
  write_file(dir.file("type.json"), R"({"workload": {"jobs": "two"}})");
  expect_usage({"run", "--config", dir.file("type.json")}, "workload.jobs");
  write_file(dir.file("syntax.json"), R"({"workload": )");
  expect_usage({"run", "--config", dir.file("syntax.json")}, "not valid JSON");
  expect_usage({"run", "--config", dir.file("absent.json")}, "cannot open");
}

TEST_CASE("the CUDA backend asked for where there is none is an error, not a switch", "[app][cli][cpu]") {
  scratch_dir dir;
  const auto r = run_coprove({"run", "--backend", "cuda", "--log-constraints", "10", "--partitions", "1", "--jobs", "1"}, dir);
  if (r.exit_code == 0) {
    // A GPU host: the CUDA backend ran.
    CHECK(r.out.find("cuda") != std::string::npos);
  } else {
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("cuda") != std::string::npos);
    CHECK(r.out.find("report") == std::string::npos);
  }
}

TEST_CASE("flags override the configuration file", "[app][cli][cpu]") {
  scratch_dir dir;
  write_file(dir.file("cfg.json"), R"({"backend": "host", "workload": {"log_constraints": 10, "partitions": 5, "jobs": 1},
                                      "engine": {"dispatch": "poll"}, "log": {"level": "warning"}})");
  const auto r = run_coprove({"run", "--config", dir.file("cfg.json"), "--partitions", "2", "--dispatch", "unbounded",
                          "--json", dir.file("report.json"), "--progress", "none"},
                         dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = json::parse(read_file(dir.file("report.json"))).as_object();
  CHECK(report.at("partitions").to_number<int>() == 2);
  CHECK(find(report, "dispatch.policy")->as_string() == "unbounded");
  CHECK(find(report, "config.workload.log_constraints")->to_number<int>() == 10);
}

TEST_CASE("coprove info reports the build, the backend and the memory plan", "[app][info][cpu]") {
  scratch_dir dir;
  const auto r = run_coprove({"info", "--json", "--backend", "host", "--log-constraints", "12", "--log-level", "error"}, dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto info = json::parse(r.out).as_object();
  CHECK(info.contains("version"));
  CHECK(info.contains("cuda_compiled_in"));
  CHECK(info.at("backend") == "host");
  CHECK(info.at("memory_plan").at("domain_size").to_number<int>() == 4096);

  const auto text = run_coprove({"info", "--log-level", "error"}, dir);
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("auto picks") != std::string::npos);
  CHECK(text.out.find("memory plan") != std::string::npos);
}

TEST_CASE("coprove run with no flags proves the README's main job", "[app][run][slow][cpu]") {
  scratch_dir dir;
  const auto r = run_coprove({"run", "--json", dir.file("report.json")}, dir, std::chrono::seconds(170));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // No GPU here: auto says so loudly instead of switching silently.
  if (r.err.find("no GPU found") != std::string::npos) CHECK(r.out.find("host") != std::string::npos);
  const auto report = json::parse(read_file(dir.file("report.json"))).as_object();
  CHECK(report.at("partitions").to_number<int>() == 32);
  CHECK(report.at("verified").to_number<int>() == 32);
  CHECK(find(report, "workload.log_constraints")->to_number<int>() == 16);
  CHECK(run_coprove({"verify", dir.file("report.json")}, dir).exit_code == 0);
}
