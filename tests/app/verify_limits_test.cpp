// `coprove verify` on input that tries to cost more than its size or to be taken for what it is
// not: a claimed partition count or circuit size the report and key do not hold, an unknown
// circuit, another key's digest, a job without a state or given twice, devices and directories as
// files, and degenerate verifying keys. Each run is bounded in time and address space, so that a
// reader that grows without bound fails its test instead of taking the machine.
#include "proof_report_support.hpp"
#include "report_check.hpp"

#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/proof.hpp>

#include <chrono>
#include <cstdio>
#include <limits>

using namespace coprove;
using namespace coprove::test;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

const proof_report_fixture& fixture() { return proof_report_fixture::get(); }

/// coprove with at most 4 GiB of address space and `limit` of time.
process_result run_bounded(std::vector<std::string> args, const scratch_dir& dir,
                           std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  std::vector<std::string> argv = {"sh", "-c", "ulimit -v 4194304 && exec \"$0\" \"$@\"", COPROVE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, dir, limit);
}

json::object& job(json::object& report, std::size_t index) { return report.at("results").as_array()[index].as_object(); }

process_result verify_report(const scratch_dir& dir, const json::object& report, const std::string& vk) {
  const std::string path = dir.file("report-" + std::to_string(std::rand()) + ".json");
  write_file(path, json::serialize(report));
  return run_bounded({"verify", path, "--vk", vk}, dir);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// A copy of the fixture's key directory whose key.json claims `circuit`/`log_constraints`, every
/// field consistent with that circuit (id, digest, counts) and the files left as they are.
std::string key_claiming(const scratch_dir& dir, const std::string& circuit, unsigned log_constraints, bool with_params) {
  const std::string out = dir.file("claims-" + circuit + "-" + std::to_string(log_constraints) + (with_params ? "" : "-no-params"));
  fs::create_directories(out);
  for (const auto* name : {"params", "vk", "vk.json", "key.json"}) {
    if (std::string(name) == "params" && !with_params) continue;
    fs::copy_file(fixture().key_dir + "/" + name, out + "/" + name);
  }
  json::object meta = json::parse(read_file(out + "/key.json")).as_object();
  const auto made = r1cs::make_circuit(circuit, log_constraints, 1, 0);
  char digest[19];
  std::snprintf(digest, sizeof digest, "0x%016llx", static_cast<unsigned long long>(made->structure_digest()));
  meta["circuit"] = circuit;
  meta["log_constraints"] = log_constraints;
  meta["circuit_id"] = made->id();
  meta["structure_digest"] = digest;
  meta["num_inputs"] = made->shape().num_inputs;
  meta["num_aux"] = made->shape().num_aux;
  meta["num_constraints"] = made->shape().num_constraints + made->shape().num_inputs;
  meta["domain_size"] = made->domain_size();
  write_file(out + "/key.json", json::serialize(meta));
  return out;
}

}  // namespace

TEST_CASE("verify checks a claimed partition count against the partitions listed", "[app][verify][limits][cpu]") {
  scratch_dir dir;
  json::object report = fixture().report;
  job(report, 0).at("request").as_object()["partitions"] = std::numeric_limits<std::uint64_t>::max();
  const auto started = std::chrono::steady_clock::now();
  const auto r = verify_report(dir, report, fixture().key_dir);
  INFO(r.out << r.err.substr(0, 2000));
  CHECK(r.exit_code == 1);
  CHECK(has(r.err, "FAILED job 1: the request says 18446744073709551615 partitions but the job lists 3"));
  CHECK(r.err.size() < 4096);  // one message, not one per missing index
  CHECK(has(r.out, "5 of 5 proofs in 2 job(s) verify"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
}

TEST_CASE("verify recomputes only the circuit size the key supports", "[app][verify][limits][cpu]") {
  scratch_dir dir;
  const auto& f = fixture();
  json::object report = f.report;
  job(report, 0).at("request").as_object()["log_constraints"] = 27;

  SECTION("a bare vk or vk.json: a size beyond 2^20 is refused at once, naming the job and the field") {
    for (const std::string& vk : {f.key_dir + "/vk", f.key_dir + "/vk.json"}) {
      const auto started = std::chrono::steady_clock::now();
      const auto r = verify_report(dir, report, vk);
      INFO(vk << ": " << r.out << r.err);
      CHECK(r.exit_code == 1);
      CHECK(has(r.err, "FAILED job 1: request.log_constraints 27 (mimc/27)"));
      CHECK(has(r.err, "only up to 2^20 constraints"));
      CHECK(has(r.out, "2 of 5 proofs in 2 job(s) verify"));  // job 2 is still checked
      CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
    }
  }
  SECTION("a key directory: its key.json decides") {
    const auto r = verify_report(dir, report, f.key_dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(has(r.err, "FAILED job 1 is mimc/27 but the key is for mimc/10 (request.circuit, request.log_constraints)"));
  }
  SECTION("a key directory whose key.json claims a size its files do not hold is refused before anything is built") {
    job(report, 0).at("request").as_object()["log_constraints"] = 24;
    job(report, 1).at("request").as_object()["log_constraints"] = 24;
    const std::string with_params = key_claiming(dir, "mimc", 24, true);
    const auto r = verify_report(dir, report, with_params);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, with_params + "/params': its h section holds 1023 points, but key.json (domain_size) makes it 16777215"));
    const std::string without_params = key_claiming(dir, "mimc", 24, false);
    const auto bare = verify_report(dir, report, without_params);
    INFO(bare.out << bare.err);
    CHECK(bare.exit_code == 2);
    CHECK(has(bare.err, without_params + "/params"));
  }
}

TEST_CASE("read_key_dir compares key.json's claim with the files before it builds the circuit", "[app][keys][limits][cpu]") {
  scratch_dir dir;
  const std::string claims = key_claiming(dir, "mimc", 20, true);
  const auto started = std::chrono::steady_clock::now();
  try {
    (void)app::read_key_dir(claims);
    FAIL("a key.json claiming mimc/20 over mimc/10's files was accepted");
  } catch (const app::key_dir_error& e) {
    CHECK(has(e.what(), "its h section holds 1023 points, but key.json (domain_size) makes it 1048575 for mimc/20"));
  }
  // Building mimc/20's matrices first took seconds; the counts are a few bytes of the files.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(1));
}

TEST_CASE("verify fails a job it cannot tie to the key and the request", "[app][verify][limits][cpu]") {
  scratch_dir dir;
  const auto& f = fixture();
  json::object report = f.report;
  const auto expect_failed = [&](const std::string& vk, const std::string& message) {
    const auto r = verify_report(dir, report, vk);
    INFO(vk << ": " << r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(has(r.err, message));
  };
  SECTION("an unknown circuit name") {
    job(report, 0).at("request").as_object()["circuit"] = "mimc ";
    for (const std::string& vk : {f.key_dir, f.key_dir + "/vk", f.key_dir + "/vk.json"})
      expect_failed(vk, "FAILED job 1: request.circuit \"mimc \" is not a built-in circuit (mimc, merkle, bits)");
  }
  SECTION("another key's vk_sha256") {
    job(report, 1)["vk_sha256"] = std::string(64, 'a');
    for (const std::string& vk : {f.key_dir, f.key_dir + "/vk"})
      expect_failed(vk, "FAILED job 2: vk_sha256 \"" + std::string(64, 'a') + "\" is not the SHA-256 of");
  }
  SECTION("no vk_sha256") {
    job(report, 1).erase("vk_sha256");
    expect_failed(f.key_dir, "FAILED job 2: 'vk_sha256' is missing");
  }
  SECTION("no state") {
    job(report, 0).erase("state");
    expect_failed(f.key_dir + "/vk", "FAILED job 1: 'state' is missing");
  }
  SECTION("a job twice") {
    report.at("results").as_array().push_back(job(report, 0));
    expect_failed(f.key_dir, "FAILED job 1 appears twice in the report");
  }
  SECTION("a partition twice, with its index changed to another's") {
    auto& entries = job(report, 0).at("partitions").as_array();
    entries.push_back(entries[1]);
    expect_failed(f.key_dir, "FAILED job 1 partition 1: appears twice");
  }
}

TEST_CASE("verify takes the service's job result, which has no state, by its result_kind", "[app][verify][limits][cpu]") {
  scratch_dir dir;
  json::object lone = fixture().report.at("results").as_array()[0].as_object();
  lone.erase("state");
  lone["result_kind"] = "proof";
  write_file(dir.file("result.json"), json::serialize(lone));
  const auto ok = run_bounded({"verify", dir.file("result.json"), "--vk", fixture().key_dir + "/vk"}, dir);
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(has(ok.out, "3 of 3 proofs in 1 job(s) verify"));
  lone.erase("result_kind");
  write_file(dir.file("stateless.json"), json::serialize(lone));
  const auto refused = run_bounded({"verify", dir.file("stateless.json"), "--vk", fixture().key_dir + "/vk"}, dir);
  CHECK(refused.exit_code == 1);
  CHECK(has(refused.err, "'state' is missing"));
}

TEST_CASE("verify reads only regular files and refuses the others with exit status 2, naming them",
          "[app][verify][limits][cpu]") {
  scratch_dir dir;
  const auto& f = fixture();
  fs::create_directories(dir.file("a_directory"));
  write_file(dir.file("proof.json"), json::serialize(groth16::proof_to_snarkjs_json(
                                         groth16::decode_proof_hex(f.report.at("results").as_array()[0].at("partitions")
                                                                       .as_array()[0].at("proof").as_string()))));
  write_file(dir.file("public.json"), "[\"1\"]");
  const auto expect_refused = [&](const std::vector<std::string>& args, const std::string& file, const std::string& why) {
    const auto r = run_bounded(args, dir, std::chrono::seconds(20));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, file));
    CHECK(has(r.err, why));
  };
  const std::string device = "is a character device, not a regular file";
  const std::string directory = "is a directory, not a regular file";
  expect_refused({"verify", "/dev/zero", "--vk", f.key_dir}, "/dev/zero", device);
  expect_refused({"verify", dir.file("a_directory"), "--vk", f.key_dir}, dir.file("a_directory"), directory);
  expect_refused({"verify", "/dev/zero"}, "/dev/zero", device);
  expect_refused({"verify", f.report_path, "--vk", "/dev/zero"}, "/dev/zero", device);
  expect_refused({"verify", "--vk", f.key_dir + "/vk.json", "--proof", "/dev/zero", "--public", dir.file("public.json")},
                 "/dev/zero", device);
  expect_refused({"verify", "--vk", f.key_dir + "/vk.json", "--proof", dir.file("proof.json"), "--public",
                  dir.file("a_directory")},
                 dir.file("a_directory"), directory);
  expect_refused({"info", "--config", "/dev/zero"}, "/dev/zero", device);

  // A key directory whose key.json is a device, or whose vk is a directory.
  const std::string zero_json = dir.file("zero_json");
  fs::create_directories(zero_json);
  fs::copy_file(f.key_dir + "/vk", zero_json + "/vk");
  fs::create_symlink("/dev/zero", zero_json + "/key.json");
  expect_refused({"verify", f.report_path, "--vk", zero_json}, zero_json + "/key.json", device);
  const std::string vk_dir = dir.file("vk_dir");
  fs::create_directories(vk_dir + "/vk");
  expect_refused({"verify", f.report_path, "--vk", vk_dir}, vk_dir + "/vk", directory);

  // A report that is not JSON, and a vk that is not a key.
  write_file(dir.file("text.json"), "not json");
  expect_refused({"verify", dir.file("text.json"), "--vk", f.key_dir}, dir.file("text.json"), "is not valid JSON");
  write_file(dir.file("bad_vk"), "not a key");
  expect_refused({"verify", f.report_path, "--vk", dir.file("bad_vk")}, dir.file("bad_vk"), "");
}

TEST_CASE("verify refuses degenerate verifying keys, which a forged proof satisfies", "[app][verify][limits][cpu]") {
  scratch_dir dir;
  const auto& f = fixture();
  // With gamma and delta at infinity, e(A, B) = e(alpha, beta) alone: A = alpha and B = beta
  // verify for any inputs.
  groth16::verifying_key degenerate = f.keys.pk->vk;
  degenerate.gamma_g2 = field::g2_affine::identity();
  degenerate.delta_g2 = field::g2_affine::identity();
  const groth16::proof forged{degenerate.alpha_g1, degenerate.beta_g2, field::g1_affine::generator()};
  groth16::write_verifying_key(degenerate, dir.file("vk"));
  groth16::write_verifying_key_json(degenerate, dir.file("vk.json"));
  const auto inputs = app::builtin_public_inputs("mimc", 10, 7, 0);
  json::object report = {
      {"results", json::array{json::object{
                      {"job_id", 1},
                      {"state", "done"},
                      {"vk_sha256", app::file_sha256(dir.file("vk"))},
                      {"request", json::object{{"circuit", "mimc"}, {"log_constraints", 10}, {"partitions", 1}, {"seed", 7}}},
                      {"partitions", json::array{json::object{{"index", 0},
                                                              {"proof", to_hex(groth16::encode_proof(forged))},
                                                              {"public_inputs", groth16::public_inputs_to_snarkjs_json(inputs)}}}}}}}};
  write_file(dir.file("forged.json"), json::serialize(report));
  write_file(dir.file("proof.json"), json::serialize(groth16::proof_to_snarkjs_json(forged)));
  write_file(dir.file("public.json"), "[\"12345\"]");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"verify", dir.file("forged.json"), "--vk", dir.file("vk")},
           {"verify", dir.file("forged.json"), "--vk", dir.file("vk.json")},
           {"verify", "--vk", dir.file("vk"), "--proof", dir.file("proof.json"), "--public", dir.file("public.json")},
           {"verify", "--vk", dir.file("vk.json"), "--proof", dir.file("proof.json"), "--public", dir.file("public.json")}}) {
    const auto r = run_bounded(args, dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    // Each file names the point as its own format does: bellman's vk "gamma_g2", snarkjs's "vk_gamma_2".
    CHECK((has(r.err, "gamma_g2") || has(r.err, "vk_gamma_2")));
    CHECK(has(r.err, "point at infinity"));
  }
}

TEST_CASE("refuse_degenerate_verifying_key names each point at infinity", "[app][keys][limits][cpu]") {
  const auto& good = fixture().keys.pk->vk;
  CHECK_NOTHROW(app::refuse_degenerate_verifying_key(good, "vk"));
  const auto refused = [&](auto change, const std::string& section, bool has_g1_copies = true) {
    groth16::verifying_key vk = good;
    change(vk);
    try {
      app::refuse_degenerate_verifying_key(vk, "the_vk", has_g1_copies);
      return false;
    } catch (const groth16::key_file_error& e) {
      CHECK(e.file() == "the_vk");
      CHECK(e.section() == section);
      return true;
    }
  };
  CHECK(refused([](auto& vk) { vk.alpha_g1 = field::g1_affine::identity(); }, "alpha_g1"));
  CHECK(refused([](auto& vk) { vk.beta_g1 = field::g1_affine::identity(); }, "beta_g1"));
  CHECK(refused([](auto& vk) { vk.beta_g2 = field::g2_affine::identity(); }, "beta_g2"));
  CHECK(refused([](auto& vk) { vk.gamma_g2 = field::g2_affine::identity(); }, "gamma_g2"));
  CHECK(refused([](auto& vk) { vk.delta_g1 = field::g1_affine::identity(); }, "delta_g1"));
  CHECK(refused([](auto& vk) { vk.delta_g2 = field::g2_affine::identity(); }, "delta_g2"));
  CHECK(refused([](auto& vk) { vk.ic[1] = field::g1_affine::identity(); }, "ic"));
  CHECK(refused([](auto& vk) { vk.ic.clear(); }, "ic"));
  // A verification_key.json holds no beta_g1 or delta_g1: their absence is not a refusal.
  CHECK_FALSE(refused([](auto& vk) { vk.beta_g1 = vk.delta_g1 = field::g1_affine::identity(); }, "", false));
}
