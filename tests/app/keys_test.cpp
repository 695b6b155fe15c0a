// Key directories: `coprove setup` writes one that read_key_dir loads and snarkjs accepts the
// vk.json of; bad flags exit with status 2; missing, truncated, corrupt and mismatched files are
// refused with a message naming the file; development keys are made once, then read, and remade
// when the cached one is unusable.
#include "keys.hpp"

#include "key_test_support.hpp"
#include "proof_report_support.hpp"

#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/verifier.hpp>

#include <cstdlib>
#include <filesystem>

using namespace coprove;
using namespace coprove::test;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

/// The message read_key_dir throws for `dir`, or "" when it loads.
std::string read_error(const std::string& dir, const std::optional<app::expected_key>& expected = std::nullopt) {
  try {
    (void)app::read_key_dir(dir, expected);
  } catch (const app::key_dir_error& e) {
    return e.what();
  }
  return "";
}

/// A copy of the fixture's key directory to spoil.
std::string copy_of_key(const scratch_dir& dir, const std::string& name) {
  const std::string copy = dir.file(name);
  fs::copy(proof_report_fixture::get().key_dir, copy, fs::copy_options::recursive);
  return copy;
}

void set_key_json_field(const std::string& key_dir, const std::string& field, json::value value) {
  auto doc = json::parse(read_file(key_dir + "/key.json")).as_object();
  doc[field] = value;
  write_file(key_dir + "/key.json", json::serialize(doc));
}

}  // namespace

TEST_CASE("coprove setup writes a key directory that read_key_dir loads and snarkjs accepts", "[app][keys][snarkjs][cpu]") {
  scratch_dir dir;
  const std::string key_dir = dir.file("mimc-10");
  const auto r = run_coprove({"setup", "--circuit", "mimc", "--log-constraints", "10", "--out", key_dir}, dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* stage : {"matrices", "setup", "write", "params", "vk.json", "key.json", "bytes", "vk sha256: "}) {
    INFO(stage);
    CHECK(r.out.find(stage) != std::string::npos);
  }
  CHECK(r.err.find("insecure") == std::string::npos);

  const app::key_set keys = app::read_key_dir(key_dir, app::expected_key{"mimc", 10});
  CHECK(keys.circuit == "mimc");
  CHECK(keys.log_constraints == 10);
  CHECK(!keys.development);
  CHECK(!keys.insecure);
  CHECK(keys.load_seconds > 0);
  CHECK(keys.metadata.circuit_id == "mimc/10");
  CHECK(keys.metadata.domain_size == 1024);
  CHECK(keys.metadata.vk_sha256 == app::file_sha256(key_dir + "/vk"));
  CHECK(r.out.find("vk sha256: " + keys.metadata.vk_sha256) != std::string::npos);
  CHECK(keys.describe().find("mimc/10") != std::string::npos);
  const json::object key_json = json::parse(read_file(key_dir + "/key.json")).as_object();
  CHECK(!key_json.contains("insecure_seed"));
  CHECK(key_json.at("development") == false);
  CHECK(key_json.at("format_version") == 1);

  // A proof made with the loaded key, checked by snarkjs against vk.json and by coprove verify in
  // the snarkjs form.
  const auto snarkjs = snarkjs_verify_a_proof(keys, 5, dir);
  INFO("snarkjs: " << snarkjs.out << snarkjs.err);
  CHECK(snarkjs.exit_code == 0);
  CHECK(snarkjs.out.find("OK") != std::string::npos);
  const auto ours = run_coprove({"verify", "--vk", key_dir + "/vk.json", "--proof", dir.file("proof.json"), "--public",
                                 dir.file("public.json")},
                                dir);
  INFO(ours.out << ours.err);
  CHECK(ours.exit_code == 0);

  // The same files with a wrong input: both refuse.
  write_file(dir.file("wrong.json"), "[\"12345\"]");
  const auto wrong = run_coprove({"verify", "--vk", key_dir, "--proof", dir.file("proof.json"), "--public",
                                  dir.file("wrong.json")},
                                 dir);
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("FAILED") != std::string::npos);
}

TEST_CASE("coprove setup with an insecure seed warns and records the seed", "[app][keys][cpu]") {
  scratch_dir dir;
  const auto r = run_coprove({"setup", "--circuit", "mimc", "--log-constraints", "10", "--out", dir.file("k"),
                              "--insecure-seed", "42"},
                             dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("WARNING: --insecure-seed 42") != std::string::npos);
  const json::object key_json = json::parse(read_file(dir.file("k/key.json"))).as_object();
  CHECK(key_json.at("insecure_seed") == 42);
  CHECK(app::read_key_dir(dir.file("k")).insecure);
}

TEST_CASE("coprove setup refuses bad input with status 2 and a message", "[app][keys][cli][cpu]") {
  scratch_dir dir;
  const auto expect_usage = [&](std::vector<std::string> args, const std::string& named) {
    args.insert(args.begin(), "setup");
    const auto r = run_coprove(args, dir);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(named) != std::string::npos);
  };
  const std::string out = dir.file("k");
  expect_usage({"--log-constraints", "10", "--out", out}, "missing --circuit");
  expect_usage({"--circuit", "mimc", "--out", out}, "missing --log-constraints");
  expect_usage({"--circuit", "mimc", "--log-constraints", "10"}, "missing --out");
  expect_usage({"--circuit", "sha3", "--log-constraints", "10", "--out", out}, "no built-in circuit sha3");
  expect_usage({"--circuit", "mimc", "--log-constraints", "40", "--out", out}, "--log-constraints 10..27");
  expect_usage({"--circuit", "mimc", "--log-constraints", "ten", "--out", out}, "--log-constraints 'ten'");
  expect_usage({"--circuit", "mimc", "--log-constraints", "10", "--out", out, "--insecure-seed", "-1"}, "--insecure-seed");
  expect_usage({"--circuit", "mimc", "--log-constraints", "10", "--out", out, "extra"}, "unexpected argument");
  fs::create_directories(out);
  write_file(out + "/notes.txt", "mine");
  expect_usage({"--circuit", "mimc", "--log-constraints", "10", "--out", out}, "is not empty");
  CHECK(read_file(out + "/notes.txt") == "mine");

  const auto help = run_coprove({"setup", "--help"}, dir);
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--insecure-seed") != std::string::npos);
}

TEST_CASE("make_key_dir never overwrites a key and leaves nothing half-written", "[app][keys][cpu]") {
  scratch_dir dir;
  const auto& fixture = proof_report_fixture::get();
  const auto before = app::file_sha256(fixture.key_dir + "/params");
  try {
    (void)app::make_key_dir("mimc", 10, fixture.key_dir);
    FAIL("a second key was written over the first");
  } catch (const app::key_dir_error& e) {
    CHECK(std::string(e.what()).find("holds the key of mimc/10") != std::string::npos);
  }
  CHECK(app::file_sha256(fixture.key_dir + "/params") == before);

  // An empty directory is fine; afterwards no temporary directory is left beside it.
  fs::create_directories(dir.file("empty"));
  app::key_options options = seeded_options(3);
  std::vector<std::string> stages;
  options.progress = [&](const app::key_stage& s) { stages.push_back(s.name); };
  const auto keys = app::make_key_dir("mimc", 10, dir.file("empty") + "/", options);
  CHECK(stages == std::vector<std::string>{"matrices", "setup", "write"});
  CHECK(keys.dir == fs::path(dir.file("empty")));
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    CHECK(entry.path().filename().string().find(".partial") == std::string::npos);
  }
  CHECK_THROWS_AS(app::make_key_dir("sha3", 10, dir.file("other")), std::invalid_argument);
}

TEST_CASE("read_key_dir refuses missing, truncated, corrupt and mismatched files, naming the file", "[app][keys][cpu]") {
  scratch_dir dir;
  const auto& fixture = proof_report_fixture::get();
  CHECK(read_error(fixture.key_dir) == "");

  SECTION("a directory that does not exist") {
    CHECK(read_error(dir.file("nowhere")).find("does not exist") != std::string::npos);
  }
  SECTION("missing files") {
    const auto key = copy_of_key(dir, "k");
    fs::remove(key + "/vk");
    fs::remove(key + "/key.json");
    const auto why = read_error(key);
    CHECK(why.find("incomplete: 'vk', 'key.json' missing") != std::string::npos);
  }
  SECTION("a truncated params file") {
    const auto key = copy_of_key(dir, "k");
    fs::resize_file(key + "/params", fs::file_size(key + "/params") - 50);
    const auto why = read_error(key);
    INFO(why);
    CHECK(why.find(key + "/params") != std::string::npos);
  }
  SECTION("a corrupt point in params") {
    const auto key = copy_of_key(dir, "k");
    std::string bytes = read_file(key + "/params");
    bytes[bytes.size() - 100] ^= 0x01;  // inside the last b_g2 point
    write_file(key + "/params", bytes);
    const auto why = read_error(key);
    INFO(why);
    CHECK(why.find(key + "/params") != std::string::npos);
  }
  SECTION("another key's vk") {
    const auto key = copy_of_key(dir, "k");
    const auto other = app::make_key_dir("mimc", 10, dir.file("other"), seeded_options(99));
    fs::copy_file(dir.file("other/vk"), key + "/vk", fs::copy_options::overwrite_existing);
    const auto why = read_error(key);
    INFO(why);
    CHECK(why.find(key + "/vk") != std::string::npos);
    // Even with key.json's hash updated, the vk is not the params' vk.
    set_key_json_field(key, "vk_sha256", json::string(other.metadata.vk_sha256));
    CHECK(read_error(key).find("is not the verifying key in") != std::string::npos);
  }
  SECTION("key.json for another circuit") {
    const auto key = copy_of_key(dir, "k");
    set_key_json_field(key, "circuit", "merkle");
    const auto why = read_error(key);
    INFO(why);
    CHECK(why.find(key + "/key.json") != std::string::npos);
    CHECK(why.find("merkle") != std::string::npos);
  }
  SECTION("key.json for another structure") {
    const auto key = copy_of_key(dir, "k");
    set_key_json_field(key, "structure_digest", "0x0123456789abcdef");
    const auto why = read_error(key);
    INFO(why);
    CHECK(why.find(key + "/key.json") != std::string::npos);
    CHECK(why.find("structure digest 0x0123456789abcdef") != std::string::npos);
  }
  SECTION("a key for another size than the one expected") {
    const auto why = read_error(fixture.key_dir, app::expected_key{"mimc", 12});
    CHECK(why.find("is the key of mimc/10, not of mimc/12") != std::string::npos);
  }
  SECTION("a key.json that is not JSON, or lacks a field") {
    const auto key = copy_of_key(dir, "k");
    write_file(key + "/key.json", "{\"format_version\": 1");
    CHECK(read_error(key).find("is not valid JSON") != std::string::npos);
    write_file(key + "/key.json", "{\"format_version\": 1}");
    CHECK(read_error(key).find("'circuit' is missing") != std::string::npos);
    write_file(key + "/key.json", "{\"format_version\": 7}");
    CHECK(read_error(key).find("format_version 7") != std::string::npos);
  }
}

TEST_CASE("development keys are made once, read after, and remade when unusable", "[app][keys][cpu]") {
  scratch_dir dir;
  const fs::path cache = dir.file("cache");
  const auto first = app::development_keys("mimc", 10, cache);
  CHECK(first.development);
  CHECK(!first.insecure);
  CHECK(first.dir == cache / "mimc-10");
  CHECK(first.describe().find("development key") != std::string::npos);
  CHECK(app::read_key_metadata(cache / "mimc-10").development);

  const auto second = app::development_keys("mimc", 10, cache);
  CHECK(second.pk->vk == first.pk->vk);

  write_file((cache / "mimc-10" / "key.json").string(), "garbage");
  const auto third = app::development_keys("mimc", 10, cache);
  CHECK(third.pk->vk != first.pk->vk);
  CHECK(fs::exists(cache / "mimc-10.invalid" / "key.json"));
  CHECK(app::read_key_dir(cache / "mimc-10").pk->vk == third.pk->vk);
}

TEST_CASE("the default key cache follows XDG_CACHE_HOME, then HOME", "[app][keys][cpu]") {
  const auto restore = [](const char* name, const char* old) {
    if (old) ::setenv(name, old, 1); else ::unsetenv(name);
  };
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string old_xdg = xdg ? xdg : "";
  ::setenv("XDG_CACHE_HOME", "/var/cache/me", 1);
  CHECK(app::default_key_cache_dir() == fs::path("/var/cache/me/coprove/keys"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') CHECK(app::default_key_cache_dir() == fs::path(home) / ".cache/coprove/keys");
  restore("XDG_CACHE_HOME", xdg ? old_xdg.c_str() : nullptr);
}
