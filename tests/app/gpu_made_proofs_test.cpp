// Proofs the CUDA backend made on an H200 (its MSMs on the device), brought back as the run wrote
// them (tests/data/gpu: the report of `coprove run --backend cuda` and the key's bellman vk, see
// tests/data/gpu/README.md), checked here where node runs: by noble's pairing and by
// `coprove verify`; the same report with one proof's byte changed fails in both.
#include "app_test_support.hpp"
#include "proof_report_support.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace {

namespace json = boost::json;
using namespace coprove::test;

const std::string gpu_data = source_dir + "/tests/data/gpu";

}  // namespace

TEST_CASE("proofs made by the CUDA backend on an H200 verify with noble and coprove verify; a forged one fails",
          "[app][verify][gpu_made][cpu]") {
  scratch_dir dir;
  const std::string report_path = gpu_data + "/mimc14_cuda_report.json";
  const std::string vk = gpu_data + "/mimc14.vk";
  json::object report = json::parse(read_file(report_path)).as_object();
  REQUIRE(report.at("backend").as_string() == "cuda");
  const std::string devices = json::serialize(report.at("devices"));
  CHECK(devices.find("H200") != std::string::npos);
  auto& results = report.at("results").as_array();
  REQUIRE(results.size() == 2);
  std::size_t proofs = 0;
  for (const auto& job : results) proofs += job.at("partitions").as_array().size();
  CHECK(proofs == 8);

  const auto noble = noble_verify_report(dir, report_path, vk);
  INFO(noble.out << noble.err);
  CHECK(noble.exit_code == 0);
  CHECK(run_coprove({"verify", report_path, "--vk", vk}, dir).exit_code == 0);

  // One byte of one proof changed (C's x, still a valid hex string): refused by both.
  auto& proof = results[1].at("partitions").as_array()[2].at("proof").as_string();
  std::string forged(proof.c_str());
  forged[300] = forged[300] == '0' ? '1' : '0';
  proof = forged;
  write_file(dir.file("forged.json"), json::serialize(report));
  CHECK(noble_verify_report(dir, dir.file("forged.json"), vk).exit_code == 1);
  CHECK(run_coprove({"verify", dir.file("forged.json"), "--vk", vk}, dir).exit_code == 1);
}
