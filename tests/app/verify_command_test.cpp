// `coprove verify` on Groth16 proofs in the engine's report format, checked against the noble
// script on the same files: a good report passes both, every kind of tampering fails both (naming
// the partition), and the failures only coprove can see (inputs recomputed from the request,
// a key for another circuit) fail coprove. Also the usage errors and the record-only mode.
#include "proof_report_support.hpp"

#include <coprove/groth16/proof.hpp>

using namespace coprove;
using namespace coprove::test;
namespace json = boost::json;

namespace {

const proof_report_fixture& fixture() { return proof_report_fixture::get(); }

json::object& partition(json::object& report, std::size_t job, std::size_t index) {
  return report.at("results").as_array()[job].at("partitions").as_array()[index].as_object();
}

/// The proof bytes of a partition, changed by `change`, written back.
template <class Change>
void change_proof(json::object& report, std::size_t job, std::size_t index, Change change) {
  auto& p = partition(report, job, index);
  auto bytes = from_hex(p.at("proof").as_string());
  change(bytes);
  p["proof"] = to_hex(bytes);
}

/// Compressed G1 bytes of an x whose x^3 + 4 has no square root: no point of the curve.
std::vector<std::uint8_t> off_curve_a(std::vector<std::uint8_t> proof) {
  for (std::uint8_t k = 1; k < 100; ++k) {
    std::fill(proof.begin(), proof.begin() + 48, 0);
    proof[0] = 0x80;
    proof[47] = k;
    try {
      (void)groth16::decode_proof(proof);
    } catch (const groth16::proof_format_error& e) {
      if (std::string(e.what()).find("not on the curve") != std::string::npos) return proof;
    }
  }
  FAIL("no x below 100 is off the curve");
  return proof;
}

struct both_verdicts {
  process_result coprove, noble;
};

both_verdicts check_both(const scratch_dir& dir, const json::object& report, const std::string& vk) {
  const std::string path = dir.file("changed.json");
  write_file(path, json::serialize(report));
  return {run_coprove({"verify", path, "--vk", vk}, dir), noble_verify_report(dir, path, vk)};
}

/// Both refuse, and both name `where` ("job 1 partition 2") as failing.
void expect_both_refuse(const scratch_dir& dir, const json::object& report, const std::string& where,
                        const std::string& reason = "") {
  const auto r = check_both(dir, report, fixture().key_dir);
  INFO("coprove: " << r.coprove.out << r.coprove.err);
  INFO("noble: " << r.noble.out << r.noble.err);
  CHECK(r.coprove.exit_code == 1);
  CHECK(r.coprove.err.find("FAILED " + where + ":") != std::string::npos);
  if (!reason.empty()) CHECK(r.coprove.err.find(reason) != std::string::npos);
  CHECK(r.noble.exit_code == 1);
  CHECK(r.noble.out.find(where + ": FAILED") != std::string::npos);
}

}  // namespace

TEST_CASE("a report's proofs verify with coprove verify --vk and with noble", "[app][verify][noble][cpu]") {
  scratch_dir dir;
  const auto& f = fixture();
  for (const std::string& vk : {f.key_dir, f.key_dir + "/vk", f.key_dir + "/vk.json"}) {
    const auto r = run_coprove({"verify", f.report_path, "--vk", vk}, dir);
    INFO(vk << ": " << r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("5 of 5 proofs in 2 job(s) verify") != std::string::npos);
    const std::string fingerprint = vk.ends_with(".json") ? "vk.json sha256 " + app::file_sha256(vk)
                                                          : "vk sha256 " + f.keys.metadata.vk_sha256;
    CHECK(r.out.find(fingerprint) != std::string::npos);
  }
  const auto job = run_coprove({"verify", f.job_path, "--vk", f.key_dir}, dir);
  INFO(job.out << job.err);
  CHECK(job.exit_code == 0);
  CHECK(job.out.find("3 of 3 proofs in 1 job(s) verify") != std::string::npos);

  for (const auto& [file, count] : {std::pair{f.report_path, 5}, std::pair{f.job_path, 3}}) {
    for (const std::string& vk : {f.key_dir, f.key_dir + "/vk"}) {
      const auto noble = noble_verify_report(dir, file, vk);
      INFO(file << " " << vk << ": " << noble.out << noble.err);
      CHECK(noble.exit_code == 0);
      CHECK(noble.out.find(std::to_string(count) + " of " + std::to_string(count) + " proofs verify") != std::string::npos);
    }
  }
}

TEST_CASE("coprove verify and noble refuse a tampered report, naming the partition", "[app][verify][noble][cpu]") {
  scratch_dir dir;
  json::object report = fixture().report;

  SECTION("a changed proof byte") {
    change_proof(report, 0, 2, [](auto& b) { b[170] ^= 0x04; });
    expect_both_refuse(dir, report, "job 1 partition 2");
  }
  SECTION("the proofs of two partitions swapped") {
    auto& p0 = partition(report, 0, 0);
    auto& p1 = partition(report, 0, 1);
    std::swap(p0["proof"], p1["proof"]);
    expect_both_refuse(dir, report, "job 1 partition 0", "the pairing equation does not hold");
    expect_both_refuse(dir, report, "job 1 partition 1");
  }
  SECTION("a wrong public input") {
    partition(report, 1, 1)["public_inputs"] = json::array{"12345"};
    expect_both_refuse(dir, report, "job 2 partition 1", "public inputs do not match job 2 partition 1 of mimc/10 seed 8");
  }
  SECTION("a truncated proof") {
    change_proof(report, 1, 0, [](auto& b) { b.pop_back(); });
    expect_both_refuse(dir, report, "job 2 partition 0", "191 bytes");
  }
  SECTION("a proof point off the curve") {
    change_proof(report, 0, 1, [](auto& b) { b = off_curve_a(b); });
    expect_both_refuse(dir, report, "job 1 partition 1", "not on the curve");
  }
  SECTION("a missing partition") {
    report.at("results").as_array()[0].at("partitions").as_array().pop_back();
    expect_both_refuse(dir, report, "job 1 partition 2", "missing");
  }
  SECTION("a partition twice") {
    auto& entries = report.at("results").as_array()[1].at("partitions").as_array();
    entries.push_back(entries[0]);
    expect_both_refuse(dir, report, "job 2 partition 0", "appears twice");
  }
  SECTION("a partition beyond the job's") {
    partition(report, 1, 1)["index"] = 5;
    expect_both_refuse(dir, report, "job 2 partition 5", "beyond");
  }
}

TEST_CASE("coprove verify and noble refuse proofs against another key", "[app][verify][noble][cpu]") {
  scratch_dir dir;
  const auto other = app::make_key_dir("mimc", 10, dir.file("other"), seeded_options(77));
  // The report names its key's vk_sha256: against the other key, every job fails on that first.
  const auto named = run_coprove({"verify", fixture().report_path, "--vk", other.dir.string()}, dir);
  INFO(named.out << named.err);
  CHECK(named.exit_code == 1);
  CHECK(named.err.find("FAILED job 1: vk_sha256") != std::string::npos);
  CHECK(named.err.find("FAILED job 2: vk_sha256") != std::string::npos);
  // A report that names the other key's digest gets to the pairing, which fails for every proof.
  json::object claims_other = fixture().report;
  for (auto& job : claims_other.at("results").as_array()) job.as_object()["vk_sha256"] = other.metadata.vk_sha256;
  write_file(dir.file("claims_other.json"), json::serialize(claims_other));
  const auto r = run_coprove({"verify", dir.file("claims_other.json"), "--vk", other.dir.string()}, dir);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("0 of 5 proofs") != std::string::npos);
  for (const char* where : {"job 1 partition 0", "job 1 partition 2", "job 2 partition 1"}) {
    CHECK(r.err.find(std::string("FAILED ") + where + ": the pairing equation does not hold") != std::string::npos);
  }
  const auto noble = noble_verify_report(dir, fixture().report_path, other.dir.string());
  INFO(noble.out << noble.err);
  CHECK(noble.exit_code == 1);
  CHECK(noble.out.find("0 of 5 proofs verify") != std::string::npos);
}

TEST_CASE("coprove verify recomputes the public inputs from the request", "[app][verify][cpu]") {
  scratch_dir dir;
  json::object report = fixture().report;
  SECTION("entries moved to other partitions (each proof still matches its inputs)") {
    partition(report, 0, 0)["index"] = 1;
    partition(report, 0, 1)["index"] = 0;
    const auto r = check_both(dir, report, fixture().key_dir);
    INFO(r.coprove.out << r.coprove.err);
    CHECK(r.coprove.exit_code == 1);
    CHECK(r.coprove.err.find("FAILED job 1 partition 1: public inputs do not match job 1 partition 1 of mimc/10 seed 7") !=
          std::string::npos);
    CHECK(r.coprove.err.find("FAILED job 1 partition 0: public inputs do not match") != std::string::npos);
    // noble takes the inputs as written and cannot see this.
    CHECK(r.noble.exit_code == 0);
  }
  SECTION("another seed in the request") {
    report.at("results").as_array()[1].at("request").as_object()["seed"] = 9;
    const auto r = check_both(dir, report, fixture().key_dir);
    CHECK(r.coprove.exit_code == 1);
    CHECK(r.coprove.err.find("of mimc/10 seed 9") != std::string::npos);
  }
  SECTION("a job for another circuit than the key's") {
    report.at("results").as_array()[0].at("request").as_object()["log_constraints"] = 11;
    const auto r = check_both(dir, report, fixture().key_dir);
    CHECK(r.coprove.exit_code == 1);
    CHECK(r.coprove.err.find("FAILED job 1 is mimc/11 but the key is for mimc/10") != std::string::npos);
  }
  SECTION("a job that did not finish") {
    report.at("results").as_array()[1].as_object()["state"] = "failed";
    const auto r = check_both(dir, report, fixture().key_dir);
    CHECK(r.coprove.exit_code == 1);
    CHECK(r.coprove.err.find("job 2: the job did not finish (state failed)") != std::string::npos);
  }
}

TEST_CASE("coprove verify needs a verifying key for proofs and says why", "[app][verify][cli][cpu]") {
  scratch_dir dir;
  const auto& f = fixture();
  const auto no_vk = run_coprove({"verify", f.report_path}, dir);
  CHECK(no_vk.exit_code == 2);
  CHECK(no_vk.err.find("needs the verifying key") != std::string::npos);
  CHECK(no_vk.err.find("--vk") != std::string::npos);

  const auto missing_vk = run_coprove({"verify", f.report_path, "--vk", dir.file("nowhere")}, dir);
  CHECK(missing_vk.exit_code == 2);
  CHECK(missing_vk.err.find("nowhere") != std::string::npos);

  write_file(dir.file("bad_vk"), "not a key");
  const auto bad_vk = run_coprove({"verify", f.report_path, "--vk", dir.file("bad_vk")}, dir);
  CHECK(bad_vk.exit_code == 2);  // a file refused as input
  CHECK(bad_vk.err.find(dir.file("bad_vk")) != std::string::npos);

  const auto half = run_coprove({"verify", "--vk", f.key_dir, "--proof", dir.file("p.json")}, dir);
  CHECK(half.exit_code == 2);
  CHECK(half.err.find("--proof and --public go together") != std::string::npos);

  // A file of evaluation records and no proofs is still checked, with a note that records are not proofs.
  json::object records = f.report;
  for (auto& job : records.at("results").as_array()) {
    for (auto& p : job.at("partitions").as_array()) {
      p.as_object().erase("proof");
      p.as_object()["record"] = json::object{{"zeta", "0x1"}};
    }
  }
  write_file(dir.file("records.json"), json::serialize(records));
  const auto r = run_coprove({"verify", dir.file("records.json")}, dir);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("not proofs") != std::string::npos);
  const auto with_vk = run_coprove({"verify", dir.file("records.json"), "--vk", f.key_dir}, dir);
  CHECK(with_vk.exit_code == 1);
  CHECK(with_vk.err.find("no proof") != std::string::npos);
}
