// Records of checked params: the first load of a key directory checks every point and records the
// check; later loads verify the params' digest against the record instead; a changed file, a
// record of other bytes or of fewer checks, and a point outside the subgroup all bring the full
// check back; a key directory that cannot be written keeps its record in the cache folder. Proofs
// made with a digest-verified key are accepted by snarkjs.
#include "key_check_record.hpp"

#include "key_test_support.hpp"
#include "keys.hpp"
#include "proof_report_support.hpp"

#include <coprove/field/encoding.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/params_decode.hpp>

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace coprove;
using namespace coprove::test;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

/// XDG_CACHE_HOME pointed at a scratch folder for the life of the object.
class scratch_cache {
 public:
  explicit scratch_cache(const fs::path& root) {
    if (const char* old = std::getenv("XDG_CACHE_HOME")) old_ = old;
    ::setenv("XDG_CACHE_HOME", root.c_str(), 1);
  }
  scratch_cache(const scratch_cache&) = delete;
  scratch_cache& operator=(const scratch_cache&) = delete;
  ~scratch_cache() {
    if (old_) ::setenv("XDG_CACHE_HOME", old_->c_str(), 1);
    else ::unsetenv("XDG_CACHE_HOME");
  }

 private:
  std::optional<std::string> old_;
};

/// Takes CAP_DAC_OVERRIDE out of this thread's effective capabilities while it lives, so that a
/// test running as root meets a read-only directory as anyone else does (records are written
/// on the loading thread).
class without_dac_override {
 public:
  without_dac_override() {
    if (::geteuid() != 0) return;
    if (::syscall(SYS_capget, &header_, saved_) != 0) return;
    __user_cap_data_struct reduced[2] = {saved_[0], saved_[1]};
    reduced[0].effective &= ~(1u << CAP_DAC_OVERRIDE);
    dropped_ = ::syscall(SYS_capset, &header_, reduced) == 0;
  }
  without_dac_override(const without_dac_override&) = delete;
  without_dac_override& operator=(const without_dac_override&) = delete;
  ~without_dac_override() {
    if (dropped_) ::syscall(SYS_capset, &header_, saved_);
  }

 private:
  __user_cap_header_struct header_{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct saved_[2]{};
  bool dropped_ = false;
};

struct key_fixture {
  scratch_dir dir;
  std::string key_dir = dir.file("key");
  scratch_cache cache{dir.file("cache")};
  app::key_set made = app::make_key_dir("mimc", 10, key_dir, seeded_options(21));

  std::string record() const { return key_dir + "/" + std::string(app::points_checked_file_name); }
  json::object record_json() const { return json::parse(read_file(record())).as_object(); }
  /// Where h's point i starts in params.
  std::size_t h_offset(std::size_t i) const { return (3 * 96 + 3 * 192 + 4 + made.metadata.num_inputs * 96) + 4 + i * 96; }
  /// Replaces params (key.json's params_sha256 follows, as a key remade by hand would have it).
  void replace_params(const std::string& bytes) const {
    write_file(key_dir + "/params", bytes);
    auto doc = json::parse(read_file(key_dir + "/key.json")).as_object();
    doc["params_sha256"] = app::file_sha256(key_dir + "/params");
    write_file(key_dir + "/key.json", json::serialize(doc));
  }
};

/// A G1 point on the curve but outside the prime-order subgroup.
field::g1_affine off_subgroup_g1() {
  for (std::uint64_t x = 1;; ++x) {
    const auto fx = field::fq::from_u64(x);
    const auto y = (fx.square() * fx + field::g1_curve::b()).sqrt();
    if (!y) continue;
    const auto p = field::g1_affine::from_coordinates(fx, *y);
    if (p.is_on_curve() && !p.is_torsion_free()) return p;
  }
}

/// The SHA-256 of the SHA-256s of the file's leaves, computed here on its own.
std::string leaf_digest_of(const std::string& path) {
  const std::string bytes = read_file(path);
  std::string digests;
  for (std::size_t at = 0; at < bytes.size(); at += groth16::leaf_bytes) {
    const std::string_view leaf = std::string_view(bytes).substr(at, groth16::leaf_bytes);
    const auto d = field::sha256::hash(std::as_bytes(std::span(leaf.data(), leaf.size())));
    digests.append(reinterpret_cast<const char*>(d.data()), d.size());
  }
  return field::to_hex(field::sha256::hash(std::as_bytes(std::span(digests.data(), digests.size()))));
}

/// The message read_key_dir throws, or "" when it loads.
std::string load_error(const std::string& dir) {
  try {
    (void)app::read_key_dir(dir);
  } catch (const app::key_dir_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a key directory's points are checked once, and later loads verify the digest instead", "[app][keys][cpu]") {
  key_fixture f;
  CHECK(!fs::exists(f.record()));  // making a key records no check: the first load makes it

  const app::key_set first = app::read_key_dir(f.key_dir);
  CHECK(first.load.points_checked);
  CHECK(!first.load.digest_verified);
  CHECK(first.load.record_written);
  CHECK(first.load.record == fs::path(f.record()));
  CHECK(first.load.params_bytes == fs::file_size(f.key_dir + "/params"));
  const json::object record = f.record_json();
  CHECK(record.at("params_sha256") == json::string(f.made.metadata.params_sha256));
  CHECK(record.at("params_leaf_sha256") == json::string(leaf_digest_of(f.key_dir + "/params")));
  CHECK(record.at("leaf_bytes") == groth16::leaf_bytes);
  CHECK(record.at("params_bytes") == first.load.params_bytes);
  CHECK(record.at("format_version") == app::check_record_format_version);
  CHECK(record.at("checks").as_array().size() == app::params_checks().size());
  CHECK(record.at("circuit_id") == "mimc/10");
  CHECK(first.describe().find("every point checked") != std::string::npos);

  const app::key_set second = app::read_key_dir(f.key_dir);
  CHECK(!second.load.points_checked);
  CHECK(second.load.digest_verified);
  CHECK(!second.load.record_written);
  CHECK(second.load.record == fs::path(f.record()));
  CHECK(second.load.check_seconds == 0);
  CHECK(second.describe().find("digest verified") != std::string::npos);
  CHECK(*second.pk == *first.pk);
  CHECK(*second.pk == *f.made.pk);

  // A proof made with the digest-verified key: snarkjs accepts it against the directory's vk.json.
  scratch_dir out;
  const auto snarkjs = snarkjs_verify_a_proof(second, 9, out);
  INFO("snarkjs: " << snarkjs.out << snarkjs.err);
  CHECK(snarkjs.exit_code == 0);
  CHECK(snarkjs.out.find("OK") != std::string::npos);
}

TEST_CASE("a changed params file is checked in full again and its record rewritten", "[app][keys][cpu]") {
  key_fixture f;
  (void)app::read_key_dir(f.key_dir);  // checked and recorded
  const std::string old_sha = f.made.metadata.params_sha256;

  // Two points of h swapped: every point still sound, the bytes (and so the digest) are not the
  // ones checked.
  std::string bytes = read_file(f.key_dir + "/params");
  std::swap_ranges(bytes.begin() + static_cast<std::ptrdiff_t>(f.h_offset(0)),
                   bytes.begin() + static_cast<std::ptrdiff_t>(f.h_offset(1)),
                   bytes.begin() + static_cast<std::ptrdiff_t>(f.h_offset(1)));
  f.replace_params(bytes);
  const std::string new_sha = app::file_sha256(f.key_dir + "/params");
  REQUIRE(new_sha != old_sha);

  const app::key_set changed = app::read_key_dir(f.key_dir);
  CHECK(changed.load.points_checked);
  CHECK(!changed.load.digest_verified);
  CHECK(changed.load.record_written);
  CHECK(f.record_json().at("params_sha256") == json::string(new_sha));
  CHECK(changed.pk->h[0] == f.made.pk->h[1]);
  CHECK(app::read_key_dir(f.key_dir).load.digest_verified);
}

TEST_CASE("a point outside the subgroup is refused with its section named, whatever the record says of other bytes",
          "[app][keys][cpu]") {
  key_fixture f;
  (void)app::read_key_dir(f.key_dir);  // a record of the sound file
  const std::string record_before = read_file(f.record());

  std::string bytes = read_file(f.key_dir + "/params");
  const auto bad = field::encode_uncompressed(off_subgroup_g1());
  std::copy(bad.begin(), bad.end(), bytes.begin() + static_cast<std::ptrdiff_t>(f.h_offset(5)));
  f.replace_params(bytes);

  const std::string why = load_error(f.key_dir);
  INFO(why);
  CHECK(why.find(f.key_dir + "/params") != std::string::npos);
  CHECK(why.find("section h, point 5") != std::string::npos);
  CHECK(why.find("subgroup") != std::string::npos);
  CHECK(read_file(f.record()) == record_before);  // a refused load records nothing

  // Without any record, the same.
  fs::remove(f.record());
  CHECK(load_error(f.key_dir).find("section h, point 5") != std::string::npos);
  CHECK(!fs::exists(f.record()));
}

TEST_CASE("a record of other bytes, of fewer checks or of no format is ignored and rewritten", "[app][keys][cpu]") {
  key_fixture f;
  (void)app::read_key_dir(f.key_dir);
  const std::string sha = f.made.metadata.params_sha256;
  const auto expect_full_check = [&](const std::string& record_text) {
    write_file(f.record(), record_text);
    const app::key_set keys = app::read_key_dir(f.key_dir);
    CHECK(keys.load.points_checked);
    CHECK(!keys.load.digest_verified);
    CHECK(keys.load.record_written);
    CHECK(f.record_json().at("params_sha256") == json::string(sha));
    CHECK(app::read_key_dir(f.key_dir).load.digest_verified);
  };
  json::object record = f.record_json();

  SECTION("another digest") {
    record["params_sha256"] = std::string(64, 'a');
    expect_full_check(json::serialize(record));
  }
  SECTION("key.json's SHA-256 but another leaf digest: the file is read again and checked in full") {
    record["params_leaf_sha256"] = std::string(64, 'b');
    expect_full_check(json::serialize(record));
    CHECK(f.record_json().at("params_leaf_sha256") != json::string(std::string(64, 'b')));
  }
  SECTION("another leaf size") {
    record["leaf_bytes"] = 4096;
    expect_full_check(json::serialize(record));
  }
  SECTION("another size") {
    record["params_bytes"] = record.at("params_bytes").to_number<std::uint64_t>() + 1;
    expect_full_check(json::serialize(record));
  }
  SECTION("the subgroup test missing from its checks") {
    json::array checks;
    for (const auto& check : app::params_checks())
      if (check != "subgroup") checks.emplace_back(check);
    record["checks"] = checks;
    expect_full_check(json::serialize(record));
  }
  SECTION("another format version") {
    record["format_version"] = 2;
    expect_full_check(json::serialize(record));
  }
  SECTION("not JSON") { expect_full_check("{\"params_sha256\": "); }
}

TEST_CASE("a key directory that cannot be written keeps its record in the cache folder", "[app][keys][cpu]") {
  key_fixture f;
  const auto cache = app::check_record_cache_dir();
  REQUIRE(cache == fs::path(f.dir.file("cache")) / "coprove/keys/checked");
  fs::permissions(f.key_dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                 fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  struct writable_again {
    std::string dir;
    ~writable_again() { fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add); }
  } restore{f.key_dir};
  const fs::path cached = app::cached_check_record(*cache, f.made.metadata.params_sha256);
  {
    without_dac_override read_only;
    REQUIRE(!std::ofstream(f.key_dir + "/probe"));  // the directory is read-only for this thread

    const app::key_set first = app::read_key_dir(f.key_dir);
    CHECK(first.load.points_checked);
    CHECK(first.load.record_written);
    CHECK(first.load.record == cached);
    CHECK(!fs::exists(f.record()));
    CHECK(fs::exists(cached));

    const app::key_set second = app::read_key_dir(f.key_dir);
    CHECK(second.load.digest_verified);
    CHECK(!second.load.points_checked);
    CHECK(second.load.record == cached);
  }
  // The cached record is named by the digest: another file's bytes find nothing there.
  std::string why;
  const auto record = app::read_check_record(cached, why);
  REQUIRE(record);
  CHECK(!app::record_covers(*record, std::string(64, '0'), record->params_bytes, why));
  CHECK(why.find("other bytes") != std::string::npos);
}

TEST_CASE("a full check runs its subgroup tests on the bulk test when given, and a digest-verified load none",
          "[app][keys][cpu]") {
  key_fixture f;
  const auto& m = f.made.metadata;
  const groth16::key_shape shape = groth16::key_shape::of(*f.made.matrices);
  std::size_t g1_points = 0, g2_points = 0;
  const auto first_outside = [](auto points) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < points.size(); ++i)
      if (!points[i].is_torsion_free()) return i;
    return std::nullopt;
  };
  const groth16::bulk_subgroup_test bulk{"the test's loop",
                                         [&](std::span<const field::g1_affine> p) {
                                           g1_points += p.size();
                                           return first_outside(p);
                                         },
                                         [&](std::span<const field::g2_affine> p) {
                                           g2_points += p.size();
                                           return first_outside(p);
                                         }};
  const app::key_set first = app::read_key_dir(f.key_dir, std::nullopt, &bulk);
  CHECK(first.load.points_checked);
  // One point per variable for a, b_g1 and b_g2 (the identity for an empty column).
  CHECK(g1_points == shape.h_count() + shape.num_aux + 2 * shape.num_variables());
  CHECK(g2_points == shape.num_variables());
  CHECK(*first.pk == *f.made.pk);

  g1_points = g2_points = 0;
  CHECK(app::read_key_dir(f.key_dir, std::nullopt, &bulk).load.digest_verified);
  CHECK(g1_points == 0);
  CHECK(g2_points == 0);

  // A point outside the subgroup in b_g1, a section stored packed: both paths name its stored index.
  std::string bytes = read_file(f.key_dir + "/params");
  const std::size_t a_offset = f.h_offset(shape.h_count()) + 4 + m.num_aux * 96 + 4;
  const std::size_t b_g1_offset = a_offset + shape.a_count() * 96 + 4;
  const std::size_t index = shape.b_count() - 3;
  REQUIRE(shape.b_count() < shape.num_variables());  // some columns empty: stored and variable indices differ
  const auto bad = field::encode_uncompressed(off_subgroup_g1());
  std::copy(bad.begin(), bad.end(), bytes.begin() + static_cast<std::ptrdiff_t>(b_g1_offset + index * 96));
  f.replace_params(bytes);
  const std::string named = "section b_g1, point " + std::to_string(index) + ":";
  for (const auto* test : {static_cast<const groth16::bulk_subgroup_test*>(nullptr), &bulk}) {
    try {
      (void)app::read_key_dir(f.key_dir, std::nullopt, test);
      FAIL("a point outside the subgroup was accepted");
    } catch (const app::key_dir_error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(named) != std::string::npos);
      CHECK(std::string(e.what()).find("subgroup") != std::string::npos);
    }
  }
}
