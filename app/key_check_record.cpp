// Reading, matching and writing the records of checked params (see key_check_record.hpp).
#include "key_check_record.hpp"

#include "keys.hpp"

#include <coprove/groth16/params_decode.hpp>
#include <coprove/runtime/input_file.hpp>

#include <boost/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <system_error>

namespace coprove::app {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

bool is_sha256_hex(const std::string& v) {
  return v.size() == 64 && v.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::optional<std::uint64_t> unsigned_of(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v && v->is_uint64()) return v->get_uint64();
  if (v && v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
  return std::nullopt;
}

std::optional<std::string> string_of(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string(v->get_string());
}

}  // namespace

const std::vector<std::string>& params_checks() {
  // The checks read_key_dir makes of params when it has no record (groth16::read_params_hashed,
  // then groth16::check_params_subgroups); a check added here makes older records insufficient.
  static const std::vector<std::string> checks{"counts",   "canonical_coordinates", "on_curve",
                                               "subgroup", "identity_refused",      "verifying_key"};
  return checks;
}

std::optional<fs::path> check_record_cache_dir() {
  if (const auto root = default_cache_dir()) return *root / "keys" / "checked";
  return std::nullopt;
}

fs::path cached_check_record(const fs::path& cache, const std::string& params_sha256) {
  return cache / (params_sha256 + ".json");
}

std::optional<check_record> read_check_record(const fs::path& file, std::string& why) {
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    why = "no record at " + file.string();
    return std::nullopt;
  }
  std::string text;
  try {
    text = runtime::read_input_text(file, runtime::input_limits::small_json_bytes, "check record");
  } catch (const runtime::input_file_error& e) {
    why = e.what();
    return std::nullopt;
  }
  boost::system::error_code parse_error;
  const json::value doc = json::parse(text, parse_error);
  if (parse_error || !doc.is_object()) {
    why = file.string() + " is not a JSON object";
    return std::nullopt;
  }
  const auto& o = doc.get_object();
  check_record r;
  const auto version = unsigned_of(o, "format_version");
  if (!version || *version != check_record_format_version) {
    why = file.string() + " is not a check record of format version " + std::to_string(check_record_format_version);
    return std::nullopt;
  }
  const auto sha = string_of(o, "params_sha256");
  const auto leaf_sha = string_of(o, "params_leaf_sha256");
  const auto leaf_bytes = unsigned_of(o, "leaf_bytes");
  const auto bytes = unsigned_of(o, "params_bytes");
  const auto* checks = o.if_contains("checks");
  if (!sha || !is_sha256_hex(*sha) || !leaf_sha || !is_sha256_hex(*leaf_sha) || !leaf_bytes || !bytes ||
      checks == nullptr || !checks->is_array()) {
    why = file.string() + " lacks params_sha256 or params_leaf_sha256 (64 lowercase hex digits), leaf_bytes, " +
          "params_bytes or checks";
    return std::nullopt;
  }
  r.params_sha256 = *sha;
  r.params_leaf_sha256 = *leaf_sha;
  r.leaf_bytes = *leaf_bytes;
  r.params_bytes = *bytes;
  for (const auto& check : checks->get_array()) {
    if (!check.is_string()) {
      why = file.string() + ": 'checks' holds something other than names";
      return std::nullopt;
    }
    r.checks.emplace_back(check.get_string());
  }
  if (const auto* mtime = o.if_contains("params_mtime_ns"); mtime && mtime->is_int64()) r.params_mtime_ns = mtime->get_int64();
  r.circuit_id = string_of(o, "circuit_id").value_or("");
  r.checked = string_of(o, "checked").value_or("");
  return r;
}

bool record_covers(const check_record& record, const std::string& params_sha256, std::uint64_t params_bytes,
                   std::string& why) {
  if (record.params_sha256 != params_sha256 || record.params_bytes != params_bytes) {
    why = "it is the record of other bytes (SHA-256 " + record.params_sha256 + ", " +
          std::to_string(record.params_bytes) + " bytes; the params read are " + params_sha256 + ", " +
          std::to_string(params_bytes) + " bytes)";
    return false;
  }
  if (record.leaf_bytes != groth16::leaf_bytes) {
    why = "its leaf digest is of " + std::to_string(record.leaf_bytes) + "-byte leaves, not " +
          std::to_string(groth16::leaf_bytes);
    return false;
  }
  for (const auto& check : params_checks()) {
    if (std::find(record.checks.begin(), record.checks.end(), check) == record.checks.end()) {
      why = "it does not list the check '" + check + "'";
      return false;
    }
  }
  return true;
}

bool write_check_record(const check_record& record, const fs::path& file, std::string& why) {
  json::object o;
  o["format_version"] = record.format_version;
  o["params_sha256"] = record.params_sha256;
  o["params_leaf_sha256"] = record.params_leaf_sha256;
  o["leaf_bytes"] = record.leaf_bytes;
  o["params_bytes"] = record.params_bytes;
  o["params_mtime_ns"] = record.params_mtime_ns;
  json::array checks;
  for (const auto& check : record.checks) checks.emplace_back(check);
  o["checks"] = std::move(checks);
  o["circuit_id"] = record.circuit_id;
  o["checked"] = record.checked;
  std::string text = "{\n";
  for (auto it = o.begin(); it != o.end(); ++it) {
    text += "  " + json::serialize(json::string(it->key())) + ": " + json::serialize(it->value());
    text += std::next(it) == o.end() ? "\n" : ",\n";
  }
  text += "}\n";

  static std::atomic<unsigned> counter{0};
  const fs::path temporary = file.parent_path() / ("." + file.filename().string() + ".tmp-" +
                                                   std::to_string(::getpid()) + "-" + std::to_string(counter++));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      why = "cannot write " + temporary.string();
      return false;
    }
  }
  std::error_code ec;
  fs::rename(temporary, file, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    why = "cannot move " + temporary.string() + " to " + file.string() + ": " + ec.message();
    return false;
  }
  return true;
}

check_record_use find_check_record(const fs::path& dir, const std::optional<fs::path>& cache,
                                   const std::string& params_sha256, std::uint64_t params_bytes) {
  check_record_use use;
  std::vector<fs::path> places{dir / points_checked_file_name};
  if (cache) places.push_back(cached_check_record(*cache, params_sha256));
  for (const auto& place : places) {
    std::string why;
    if (auto record = read_check_record(place, why); record && record_covers(*record, params_sha256, params_bytes, why)) {
      use.file = place;
      use.record = std::move(record);
      return use;
    }
    use.note += (use.note.empty() ? "" : "; ") + place.string() + ": " + why;
  }
  return use;
}

check_record_use record_check(const fs::path& dir, const std::optional<fs::path>& cache, const check_record& record) {
  check_record_use use;
  const fs::path beside = dir / points_checked_file_name;
  if (write_check_record(record, beside, use.note)) {
    use.file = beside;
    return use;
  }
  if (!cache) {
    use.note += "; and there is no cache folder (neither XDG_CACHE_HOME nor HOME is an absolute path)";
    return use;
  }
  std::error_code ec;
  fs::create_directories(*cache, ec);
  const fs::path cached = cached_check_record(*cache, record.params_sha256);
  std::string why;
  if (!ec && write_check_record(record, cached, why)) {
    use.file = cached;
    return use;
  }
  use.note += "; nor " + cached.string() + ": " + (ec ? ec.message() : why);
  return use;
}

}  // namespace coprove::app
