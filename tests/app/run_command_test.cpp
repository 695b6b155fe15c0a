// The coprove binary end to end on the CPU backend: `run` (exit status, report keys, every proof
// verified by the binary, by `coprove verify`, by noble's pairing and by snarkjs; the development
// key cached and reused; --keys from `coprove setup`), `info`, and bad flags or configuration
// exiting with status 2 and a message naming the field. Tampered reports: verify_command_test.cpp.
#include "app_test_support.hpp"
#include "proof_report_support.hpp"

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
                                   "--jobs", "2", "--json", report, "--progress", "plain", "--log-level", "warning",
                                   "--key-cache", dir.file("keys")};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_coprove(args, dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(read_file(report)).as_object();
}

}  // namespace

TEST_CASE("coprove run proves, verifies every proof and writes the report keys", "[app][run][cpu]") {
  scratch_dir dir;
  const std::string report_path = dir.file("report.json");
  const std::string trace_path = dir.file("trace.json");
  const std::string cache = dir.file("keys");
  const json::object report =
      run_small(dir, report_path, {"--trace", trace_path, "--key-cache", cache, "--snarkjs", dir.file("snarkjs")});

  for (const char* key : {"backend", "partitions", "verified", "failed", "throughput_partitions_per_s",
                          "dispatch.policy", "dispatch.depth", "dispatch.max_in_flight",
                          "dispatch.max_concurrent_synthesis", "pinned_pool.allocator", "pinned_pool.allocations",
                          "pinned_pool.reuses", "pinned_pool.fallbacks", "pce.hits", "pce.slow_path",
                          "gpu_busy_fraction", "memory_plan", "memory_plan.key_bytes", "stages", "stages.prove",
                          "proof_check.accepted", "keys", "results", "dispatch.depth_source", "dispatch.depth_max",
                          "dispatch.depth_basis.samples", "bottleneck.kind", "bottleneck.message",
                          "warmup.pinned_pool_s", "pce.cache", "pce.cache_seconds"}) {
    INFO(key);
    CHECK(find(report, key) != nullptr);
  }
  CHECK(report.at("backend") == "host");
  CHECK(report.at("partitions").to_number<int>() == 6);
  CHECK(report.at("verified").to_number<int>() == 6);
  CHECK(report.at("failed").to_number<int>() == 0);
  CHECK(find(report, "proof_check.accepted")->to_number<int>() == 6);
  CHECK(find(report, "dispatch.policy")->as_string() == "semaphore");
  CHECK(report.at("throughput_partitions_per_s").to_number<double>() > 0.0);
  CHECK(find(report, "memory_plan.key_bytes")->to_number<std::size_t>() > 0);
  // The defaults: a measured depth, and the constraint cache built and saved in the cache folder
  // (XDG_CACHE_HOME is the scratch directory's).
  CHECK(find(report, "dispatch.depth_source")->as_string() == "measured");
  CHECK(find(report, "pce.cache_dir")->as_string() == dir.file("cache/coprove"));
  CHECK(find(report, "pce.cache")->at("mimc/10") == "built");
  CHECK(std::filesystem::exists(dir.file("cache/coprove/mimc_10.pce")));
  // The first partition was admitted to a warm pool.
  CHECK(find(report, "warmup.pinned_buffers")->to_number<int>() > 0);
  const auto& key = report.at("keys").as_array().at(0).as_object();
  CHECK(key.at("development").as_bool());
  CHECK(key.at("circuit") == "mimc");

  // Every partition carries a proof and its public inputs, bound to the verifying key's digest.
  const auto& results = report.at("results").as_array();
  REQUIRE(results.size() == 2);
  for (const auto& result : results) {
    CHECK(result.at("result_kind") == "proof");
    CHECK(result.at("vk_sha256") == key.at("vk_sha256"));
    const auto& partitions = result.at("partitions").as_array();
    REQUIRE(partitions.size() == 3);
    for (const auto& p : partitions) {
      CHECK(p.at("proof").as_string().size() == 384);
      CHECK(p.at("public_inputs").is_array());
      CHECK_FALSE(p.as_object().contains("record"));
    }
  }

  const auto trace = json::parse(read_file(trace_path));
  CHECK(trace.as_object().contains("traceEvents"));
  CHECK(!trace.at("traceEvents").as_array().empty());

  // Our verifier, noble's pairing and snarkjs accept what the run wrote.
  const std::string vk = cache + "/mimc-10/vk";
  const auto verified = run_coprove({"verify", report_path, "--vk", vk}, dir);
  INFO(verified.out << verified.err);
  CHECK(verified.exit_code == 0);
  const auto noble = noble_verify_report(dir, report_path, vk);
  INFO(noble.out << noble.err);
  CHECK(noble.exit_code == 0);
  const auto job = std::to_string(results[1].at("job_id").to_number<int>());
  const auto snarkjs = run_process({require_node(dir), snarkjs_cli, "groth16", "verify", dir.file("snarkjs/vk.json"),
                                    dir.file("snarkjs/public_" + job + "_2.json"),
                                    dir.file("snarkjs/proof_" + job + "_2.json")},
                                   dir);
  INFO(snarkjs.out << snarkjs.err);
  CHECK(snarkjs.exit_code == 0);
  CHECK(snarkjs.out.find("OK") != std::string::npos);

  // A second run reuses the cached development key: the same verifying key.
  const json::object again = run_small(dir, dir.file("again.json"), {"--key-cache", cache});
  CHECK(again.at("keys").as_array().at(0).at("vk_sha256") == key.at("vk_sha256"));
  // And starts from the constraint cache the first one saved.
  CHECK(find(again, "pce.cache")->at("mimc/10") == "loaded");
  CHECK(find(again, "pce.builds")->to_number<int>() == 0);
}

TEST_CASE("coprove run --keys proves with the keys coprove setup wrote", "[app][run][keys][cpu]") {
  scratch_dir dir;
  const auto setup = run_coprove({"setup", "--circuit", "mimc", "--log-constraints", "10", "--out", dir.file("k10"),
                                  "--insecure-seed", "5", "--log-level", "warning"},
                                 dir);
  INFO(setup.out << setup.err);
  REQUIRE(setup.exit_code == 0);
  const json::object report = run_small(dir, dir.file("report.json"), {"--keys", dir.file("k10")});
  CHECK(report.at("verified").to_number<int>() == 6);
  CHECK_FALSE(report.at("keys").as_array().at(0).at("development").as_bool());
  CHECK(run_coprove({"verify", dir.file("report.json"), "--vk", dir.file("k10")}, dir).exit_code == 0);
  const auto noble = noble_verify_report(dir, dir.file("report.json"), dir.file("k10/vk"));
  INFO(noble.out << noble.err);
  CHECK(noble.exit_code == 0);

  // Checked against another key, the same proofs fail, in our verifier (the jobs name the key's
  // vk_sha256, which is not the other's) and in noble's (the pairing).
  REQUIRE(run_coprove({"setup", "--circuit", "mimc", "--log-constraints", "10", "--out", dir.file("other"),
                       "--insecure-seed", "6", "--log-level", "warning"},
                      dir)
              .exit_code == 0);
  const auto wrong = run_coprove({"verify", dir.file("report.json"), "--vk", dir.file("other")}, dir);
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("vk_sha256") != std::string::npos);
  CHECK(wrong.err.find("is not the SHA-256 of") != std::string::npos);
  CHECK(noble_verify_report(dir, dir.file("report.json"), dir.file("other/vk")).exit_code == 1);

  // Keys for another size: refused before any work, naming what is missing and how to make it.
  const auto missing = run_coprove({"run", "--backend", "host", "--log-constraints", "11", "--partitions", "1",
                                    "--jobs", "1", "--keys", dir.file("k10")},
                                   dir);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("no key for mimc/11") != std::string::npos);
  CHECK(missing.err.find("coprove setup") != std::string::npos);
  const auto absent = run_coprove({"run", "--backend", "host", "--log-constraints", "10", "--keys", dir.file("nothing")}, dir);
  CHECK(absent.exit_code == 2);
  CHECK(absent.err.find("nothing") != std::string::npos);
}

TEST_CASE("coprove run --circuit bits makes proofs of an all-bit witness that noble accepts", "[app][run][keys][cpu]") {
  scratch_dir dir;
  REQUIRE(run_coprove({"setup", "--circuit", "bits", "--log-constraints", "10", "--out", dir.file("bits10"),
                       "--insecure-seed", "7", "--log-level", "warning"},
                      dir)
              .exit_code == 0);
  const json::object report =
      run_small(dir, dir.file("report.json"), {"--circuit", "bits", "--keys", dir.file("bits10")});
  CHECK(report.at("verified").to_number<int>() == 6);
  const auto noble = noble_verify_report(dir, dir.file("report.json"), dir.file("bits10/vk"));
  INFO(noble.out << noble.err);
  CHECK(noble.exit_code == 0);
  // The same proofs against the mimc key of the same size: noble refuses them.
  REQUIRE(run_coprove({"setup", "--circuit", "mimc", "--log-constraints", "10", "--out", dir.file("mimc10"),
                       "--insecure-seed", "7", "--log-level", "warning"},
                      dir)
              .exit_code == 0);
  CHECK(noble_verify_report(dir, dir.file("report.json"), dir.file("mimc10/vk")).exit_code == 1);
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
  expect_usage({"run", "--snarkjs"}, "--snarkjs");

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
    // Refused before any key is made or loaded (that can take minutes).
    CHECK(r.err.find("making one on this machine") == std::string::npos);
    CHECK(r.err.find("DEVELOPMENT key") == std::string::npos);
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
  // The key cache in the scratch directory (XDG_CACHE_HOME is where a user's run keeps it).
  const auto r = run_coprove({"run", "--json", dir.file("report.json"), "--key-cache", dir.file("keys")}, dir,
                             std::chrono::seconds(560));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // No GPU here: auto says so loudly instead of switching silently.
  if (r.err.find("no GPU found") != std::string::npos) CHECK(r.out.find("host") != std::string::npos);
  const auto report = json::parse(read_file(dir.file("report.json"))).as_object();
  CHECK(report.at("partitions").to_number<int>() == 16);
  CHECK(report.at("verified").to_number<int>() == 16);
  CHECK(find(report, "workload.log_constraints")->to_number<int>() == 16);
  const std::string vk = dir.file("keys/mimc-16/vk");
  CHECK(run_coprove({"verify", dir.file("report.json"), "--vk", vk}, dir).exit_code == 0);
  const auto noble = noble_verify_report(dir, dir.file("report.json"), vk);
  INFO(noble.out << noble.err);
  CHECK(noble.exit_code == 0);
}
