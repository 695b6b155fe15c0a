// Making, reading and caching key directories (see keys.hpp).
#include "keys.hpp"

#include "key_check_record.hpp"

#include <coprove/field/sha256.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/params_decode.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/runtime/input_file.hpp>
#include <coprove/runtime/log.hpp>

#include <boost/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <mutex>
#include <sstream>
#include <system_error>
#include <vector>

namespace coprove::app {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

std::string quoted(const fs::path& p) {
  std::string out = "'";
  out += p.string();
  out += '\'';
  return out;
}

std::string hex_digest(const field::sha256::digest& d) { return field::to_hex(d); }

std::string hex_u64(std::uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  ::gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

/// A directory path without a trailing separator, so that its filename() is the directory's name.
fs::path normalized(const fs::path& dir) {
  fs::path out = fs::absolute(dir).lexically_normal();
  if (!out.has_filename() && out.has_parent_path()) out = out.parent_path();
  return out;
}

/// key.json, one key a line so that a person can read it.
void write_key_json(const key_metadata& m, const fs::path& path) {
  json::object o;
  o["format_version"] = m.format_version;
  o["circuit"] = m.circuit;
  o["log_constraints"] = m.log_constraints;
  o["circuit_id"] = m.circuit_id;
  o["structure_digest"] = hex_u64(m.structure_digest);
  o["num_inputs"] = m.num_inputs;
  o["num_aux"] = m.num_aux;
  o["num_constraints"] = m.num_constraints;
  o["domain_size"] = m.domain_size;
  o["params_sha256"] = m.params_sha256;
  o["vk_sha256"] = m.vk_sha256;
  o["created"] = m.created;
  if (m.insecure_seed) o["insecure_seed"] = *m.insecure_seed;
  o["development"] = m.development;

  std::string text = "{\n";
  bool first = true;
  for (const auto& [key, value] : o) {
    if (!first) text += ",\n";
    first = false;
    text += "  " + json::serialize(json::string(key)) + ": " + json::serialize(value);
  }
  text += "\n}\n";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw key_dir_error("cannot write " + quoted(path));
}

std::string bad_field(const fs::path& file, std::string_view key, std::string_view what) {
  return "key file " + quoted(file) + ": '" + std::string(key) + "' " + std::string(what);
}

std::uint64_t unsigned_field(const json::object& o, std::string_view key, const fs::path& file) {
  const auto* v = o.if_contains(key);
  if (v && v->is_uint64()) return v->get_uint64();
  if (v && v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
  throw key_dir_error(bad_field(file, key, "is missing or not a non-negative integer"));
}

std::string string_field(const json::object& o, std::string_view key, const fs::path& file) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_string()) throw key_dir_error(bad_field(file, key, "is missing or not a string"));
  return std::string(v->get_string());
}

std::string sha256_field(const json::object& o, std::string_view key, const fs::path& file) {
  std::string v = string_field(o, key, file);
  const bool hex = v.size() == 64 && v.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hex) throw key_dir_error(bad_field(file, key, "is not 64 lowercase hex digits"));
  return v;
}

/// The size of a key file, refused as key_dir_error (naming the file and the limit) when it is not
/// a regular file within `limit`.
std::uint64_t key_file_size(const fs::path& path, std::uint64_t limit, std::string_view what) {
  try {
    return runtime::regular_file_size(path, limit, what);
  } catch (const runtime::input_file_error& e) {
    throw key_dir_error(std::string("key file ") + e.what());
  }
}

/// Bytes of bellman's VerifyingKey with `ic` IC points: six points uncompressed (three G1 of 96
/// bytes, three G2 of 192), the u32 count, the IC points.
constexpr std::uint64_t g1_uncompressed = 96, g2_uncompressed = 192;
std::uint64_t vk_bytes_for(std::uint64_t ic) { return 3 * g1_uncompressed + 3 * g2_uncompressed + 4 + ic * g1_uncompressed; }

/// The big-endian u32 at `offset` of `file` (a regular file of `size` bytes); key_dir_error when the
/// file ends first.
std::uint64_t count_at(const fs::path& file, std::uint64_t size, std::uint64_t offset, std::string_view section) {
  if (offset > size || size - offset < 4) {
    throw key_dir_error("key file " + quoted(file) + " ends (" + std::to_string(size) + " bytes) before the count of its " +
                        std::string(section) + " section (at byte " + std::to_string(offset) + ")");
  }
  std::ifstream in(file, std::ios::binary);
  std::array<unsigned char, 4> b{};
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(b.data()), 4);
  if (!in) throw key_dir_error("cannot read " + quoted(file));
  return (std::uint64_t{b[0]} << 24) | (std::uint64_t{b[1]} << 16) | (std::uint64_t{b[2]} << 8) | b[3];
}

/// Says what a non-empty directory holds, for the refusal to write a key into it.
std::string what_it_holds(const fs::path& dir) {
  if (!fs::exists(dir / key_json_file_name)) return "";
  try {
    const key_metadata m = read_key_metadata(dir);
    return " (it holds the key of " + m.circuit_id + ", made " + m.created + ")";
  } catch (const key_dir_error&) {
    return " (it holds a key.json)";
  }
}

/// Announces a development key, loudly: at warning and on stderr, whatever the log level.
void announce_development_key(const key_set& keys) {
  const std::string message = "using a DEVELOPMENT key for " + keys.metadata.circuit_id + " at " + quoted(keys.dir) +
                              ": it was made by this machine alone (a single-party setup), so whoever ran it could "
                              "forge proofs; NOT FOR PRODUCTION (make keys with coprove setup, or use a ceremony's)";
  COPROVE_LOG(warning, "keys") << message;
  std::cerr << "coprove: WARNING: " << message << "\n";
}

}  // namespace

std::string file_sha256(const fs::path& path) {
  static std::once_flag said;
  std::call_once(said, [] { COPROVE_LOG(info, "keys") << "SHA-256 of key files: " << field::sha256_path() << " path"; });
  // Only a regular file is hashed (a device would be read forever).
  key_file_size(path, runtime::input_limits::binary_file_bytes, "key file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw key_dir_error("cannot open " + quoted(path));
  field::sha256 hasher;
  std::vector<char> buffer(std::size_t{1} << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    hasher.update(std::span<const std::byte>(reinterpret_cast<const std::byte*>(buffer.data()), got));
  }
  if (in.bad()) throw key_dir_error("cannot read " + quoted(path));
  return hex_digest(hasher.finish());
}

std::string sha256_hex(std::span<const std::uint8_t> bytes) { return hex_digest(field::sha256::hash(std::as_bytes(bytes))); }

std::string key_set::describe() const {
  std::ostringstream out;
  out << metadata.circuit_id << " key in " << quoted(dir);
  if (development) out << " (development key: single-party setup on this machine, not for production)";
  if (insecure) out << " (INSECURE: toxic waste from seed " << *metadata.insecure_seed << ")";
  out << ": " << metadata.num_inputs - 1 << " public input(s), domain 2^" << log_constraints;
  if (pk) out << ", " << (pk->bytes() + (1 << 19)) / (1 << 20) << " MiB of points";
  out << ", loaded in " << load_seconds << " s";
  if (load.digest_verified) out << " (points checked before: digest verified against " << load.record.string() << ")";
  if (load.points_checked) out << " (every point checked)";
  return out.str();
}

void check_new_key_dir(const fs::path& dir) {
  const fs::path target = normalized(dir);
  std::error_code ec;
  if (!fs::exists(target, ec)) return;
  if (!fs::is_directory(target, ec)) throw key_dir_error(quoted(target) + " exists and is not a directory");
  if (!fs::is_empty(target, ec)) {
    throw key_dir_error("key directory " + quoted(target) + " is not empty" + what_it_holds(target) +
                        "; a key is never overwritten: remove it or choose another directory");
  }
}

key_set make_key_dir(const std::string& circuit, unsigned log_constraints, const fs::path& dir,
                     const key_options& options) {
  r1cs::validate_circuit_parameters(circuit, log_constraints);
  const fs::path target = normalized(dir);
  check_new_key_dir(target);
  std::error_code ec;
  const auto started = clock_type::now();
  const auto report = [&](std::string name, clock_type::time_point since, std::string detail) {
    if (options.progress) options.progress(key_stage{std::move(name), seconds_since(since), std::move(detail)});
  };

  auto secrets = options.insecure_seed
                     ? groth16::secret_source::insecure_seeded(*options.insecure_seed,
                                                               "the setup of " + circuit + "/" + std::to_string(log_constraints))
                     : groth16::secret_source::system();

  auto stage = clock_type::now();
  const auto made = r1cs::make_circuit(circuit, log_constraints, 1, 0);
  auto matrices = std::make_shared<r1cs::pce_matrices>(groth16::record_matrices(*made));
  const groth16::key_shape shape = groth16::key_shape::of(*matrices);
  report("matrices", stage,
         std::to_string(matrices->num_rows) + " rows, " + std::to_string(matrices->num_inputs) + " inputs, " +
             std::to_string(matrices->num_aux) + " auxiliaries, " + std::to_string(matrices->nonzeros()) + " non-zeros");

  stage = clock_type::now();
  auto pk = std::make_shared<groth16::proving_key>(groth16::setup(*matrices, secrets));
  report("setup", stage, std::string(options.insecure_seed ? "toxic waste from an INSECURE seed" : "toxic waste from the system CSPRNG") +
                             ", wiped; domain 2^" + std::to_string(log_constraints));

  stage = clock_type::now();
  fs::create_directories(target.parent_path(), ec);
  if (ec) throw key_dir_error("cannot create " + quoted(target.parent_path()) + ": " + ec.message());
  static std::atomic<unsigned> counter{0};
  const fs::path partial = target.parent_path() / ("." + target.filename().string() + ".partial-" +
                                                   std::to_string(::getpid()) + "-" + std::to_string(counter++));
  struct remove_on_failure {
    fs::path path;
    bool keep = false;
    ~remove_on_failure() {
      std::error_code ignored;
      if (!keep) fs::remove_all(path, ignored);
    }
  } cleanup{partial};
  fs::create_directory(partial, ec);
  if (ec) throw key_dir_error("cannot create " + quoted(partial) + ": " + ec.message());

  key_metadata m;
  m.circuit = circuit;
  m.log_constraints = log_constraints;
  m.circuit_id = made->id();
  m.structure_digest = made->structure_digest();
  m.num_inputs = shape.num_inputs;
  m.num_aux = shape.num_aux;
  m.num_constraints = matrices->num_rows;
  m.domain_size = shape.domain_size;
  m.created = utc_now();
  m.insecure_seed = options.insecure_seed;
  m.development = options.development;
  try {
    groth16::write_params(*pk, shape, partial / params_file_name);
    groth16::write_verifying_key(pk->vk, partial / vk_file_name);
    groth16::write_verifying_key_json(pk->vk, partial / vk_json_file_name);
  } catch (const groth16::key_file_error& e) {
    throw key_dir_error(e.what());
  }
  m.params_sha256 = file_sha256(partial / params_file_name);
  m.vk_sha256 = file_sha256(partial / vk_file_name);
  write_key_json(m, partial / key_json_file_name);
  // rename(2) replaces an empty directory and refuses a non-empty one, so a key another process
  // put there meanwhile is kept.
  fs::rename(partial, target, ec);
  if (ec) throw key_dir_error("cannot move the new key into " + quoted(target) + ": " + ec.message());
  cleanup.keep = true;
  report("write", stage, "4 files in " + target.string());

  key_set out;
  out.circuit = circuit;
  out.log_constraints = log_constraints;
  out.pk = std::move(pk);
  out.matrices = std::move(matrices);
  out.dir = target;
  out.metadata = std::move(m);
  out.development = options.development;
  out.insecure = options.insecure_seed.has_value();
  out.load_seconds = seconds_since(started);
  return out;
}

key_metadata read_key_metadata(const fs::path& dir) {
  const fs::path file = dir / key_json_file_name;
  std::string text;
  try {
    text = runtime::read_input_text(file, runtime::input_limits::small_json_bytes, "key.json");
  } catch (const runtime::input_file_error& e) {
    throw key_dir_error(std::string("key file ") + e.what());
  }
  boost::system::error_code ec;
  const json::value doc = json::parse(text, ec);
  if (ec) throw key_dir_error("key file " + quoted(file) + " is not valid JSON: " + ec.message());
  if (!doc.is_object()) throw key_dir_error("key file " + quoted(file) + " is not a JSON object");
  const auto& o = doc.get_object();

  key_metadata m;
  m.format_version = static_cast<unsigned>(unsigned_field(o, "format_version", file));
  if (m.format_version != key_format_version) {
    throw key_dir_error("key file " + quoted(file) + " has format_version " + std::to_string(m.format_version) +
                        "; this build reads version " + std::to_string(key_format_version));
  }
  m.circuit = string_field(o, "circuit", file);
  m.log_constraints = static_cast<unsigned>(unsigned_field(o, "log_constraints", file));
  m.circuit_id = string_field(o, "circuit_id", file);
  const std::string digest = string_field(o, "structure_digest", file);
  try {
    std::size_t used = 0;
    if (digest.rfind("0x", 0) != 0) throw std::invalid_argument("no 0x");
    m.structure_digest = std::stoull(digest.substr(2), &used, 16);
    if (used != digest.size() - 2) throw std::invalid_argument("trailing characters");
  } catch (const std::exception&) {
    throw key_dir_error(bad_field(file, "structure_digest", "is not a 0x-prefixed hex number"));
  }
  m.num_inputs = unsigned_field(o, "num_inputs", file);
  m.num_aux = unsigned_field(o, "num_aux", file);
  m.num_constraints = unsigned_field(o, "num_constraints", file);
  m.domain_size = unsigned_field(o, "domain_size", file);
  m.params_sha256 = sha256_field(o, "params_sha256", file);
  m.vk_sha256 = sha256_field(o, "vk_sha256", file);
  m.created = string_field(o, "created", file);
  if (o.contains("insecure_seed")) m.insecure_seed = unsigned_field(o, "insecure_seed", file);
  const auto* development = o.if_contains("development");
  if (!development || !development->is_bool()) throw key_dir_error(bad_field(file, "development", "is missing or not a boolean"));
  m.development = development->get_bool();
  return m;
}

namespace {

/// Modification time of `path` in ns since the epoch (0 when it cannot be had): a record's hint.
std::int64_t modification_time_ns(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
}

/// params of the key in `dir`, read once and hashed (groth16::read_params_hashed); its SHA-256
/// must be key.json's, and the subgroup tests are made unless a record of a check of these bytes
/// is found, after which the check is recorded. Fills `load`.
std::shared_ptr<groth16::proving_key> read_checked_params(const fs::path& dir, const fs::path& params,
                                                          const std::function<const groth16::key_shape&()>& shape,
                                                          const key_metadata& m,
                                                          const groth16::bulk_subgroup_test* subgroup_test,
                                                          key_load_stats& load) {
  const std::int64_t mtime = modification_time_ns(params);
  const groth16::params_counts counts{m.num_inputs, m.domain_size - 1, m.num_aux};
  const std::uint64_t size = key_file_size(params, runtime::input_limits::binary_file_bytes, "params file");
  // A record is trusted as far as the folder that holds it: whoever can write the key directory
  // can replace the key itself (key_check_record.hpp). One of a check of the bytes key.json
  // describes lets this load verify them by their leaf digest, on all cores, instead of their
  // SHA-256 on one thread: equal leaf digests mean the very bytes whose SHA-256 the record holds.
  const auto cache = check_record_cache_dir();
  const check_record_use found = find_check_record(dir, cache, m.params_sha256, size);
  auto stage = clock_type::now();
  if (found.record) {
    groth16::hashed_params read = groth16::read_params_hashed(params, counts, shape, false);
    load.read_seconds = seconds_since(stage);
    load.params_bytes = read.bytes;
    if (read.bytes == size && hex_digest(read.leaf_digest) == found.record->params_leaf_sha256) {
      load.digest_verified = true;
      load.record = found.file;
      COPROVE_LOG(info, "keys") << "the points of " << quoted(params) << " were checked before (" << found.file.string()
                                << " records their digests); their subgroup tests are not repeated";
      return std::make_shared<groth16::proving_key>(std::move(read.pk));
    }
    COPROVE_LOG(warning, "keys") << "the bytes of " << quoted(params) << " are not those " << found.file.string()
                                 << " records a check of, though it names key.json's SHA-256: reading the file "
                                    "again with every check";
  }
  stage = clock_type::now();
  groth16::hashed_params read = groth16::read_params_hashed(params, counts, shape, true);
  load.read_seconds += seconds_since(stage);
  load.params_bytes = read.bytes;
  const std::string sha256 = hex_digest(read.sha256);
  if (sha256 != m.params_sha256) {
    throw key_dir_error("key file " + quoted(params) + " is not the file key.json describes (its SHA-256 is " + sha256 +
                        ", key.json says " + m.params_sha256 + "): it was changed or replaced");
  }
  COPROVE_LOG(info, "keys") << "checking every point of " << quoted(params) << " ("
                            << (found.record ? "its record is of other bytes" : "no record of an earlier check: " + found.note)
                            << ")";
  stage = clock_type::now();
  groth16::check_params_subgroups(read.pk, shape(), params.string(), subgroup_test);
  load.check_seconds = seconds_since(stage);
  load.points_checked = true;

  check_record record;
  record.params_sha256 = sha256;
  record.params_leaf_sha256 = hex_digest(read.leaf_digest);
  record.leaf_bytes = groth16::leaf_bytes;
  record.params_bytes = read.bytes;
  record.params_mtime_ns = mtime;
  record.checks = params_checks();
  record.circuit_id = m.circuit_id;
  record.checked = utc_now();
  const check_record_use written = record_check(dir, cache, record);
  if (written.file.empty()) {
    COPROVE_LOG(warning, "keys") << "the check of " << quoted(params) << " could not be recorded (" << written.note
                                 << "): the next load checks every point again";
  } else {
    load.record = written.file;
    load.record_written = true;
    COPROVE_LOG(info, "keys") << "recorded the check of " << quoted(params) << " in " << written.file.string();
  }
  return std::make_shared<groth16::proving_key>(std::move(read.pk));
}

}  // namespace

void check_key_claim(const fs::path& dir, const key_metadata& m, bool params_required) {
  const fs::path key_json = dir / key_json_file_name;
  const std::string named = m.circuit + "/" + std::to_string(m.log_constraints);
  std::unique_ptr<r1cs::circuit> made;
  try {
    made = r1cs::make_circuit(m.circuit, m.log_constraints, 1, 0);  // no synthesis: its shape is arithmetic
  } catch (const std::invalid_argument& e) {
    throw key_dir_error("key file " + quoted(key_json) + " names circuit " + named + ", which this build does not have: " +
                        e.what());
  }
  if (made->id() != m.circuit_id) {
    throw key_dir_error("key file " + quoted(key_json) + ": circuit_id '" + m.circuit_id + "' is not the id of " + named +
                        " ('" + made->id() + "')");
  }
  if (made->structure_digest() != m.structure_digest) {
    throw key_dir_error("key file " + quoted(key_json) + ": the key was made for " + m.circuit_id +
                        " with structure digest " + hex_u64(m.structure_digest) + ", but this build's " + made->id() +
                        " has " + hex_u64(made->structure_digest()) +
                        ": the circuit has changed and the key cannot prove it (make the key again)");
  }
  const r1cs::circuit_shape shape = made->shape();
  if (shape.num_inputs != m.num_inputs || shape.num_aux != m.num_aux || made->domain_size() != m.domain_size) {
    throw key_dir_error("key file " + quoted(key_json) + ": its counts (" + std::to_string(m.num_inputs) + " inputs, " +
                        std::to_string(m.num_aux) + " auxiliaries, domain " + std::to_string(m.domain_size) +
                        ") are not those of " + made->id() + " (" + std::to_string(shape.num_inputs) + ", " +
                        std::to_string(shape.num_aux) + ", " + std::to_string(made->domain_size()) + ")");
  }
  // The files' own counts: each file must be as large as the claim makes it.
  const fs::path vk_path = dir / vk_file_name;
  const std::uint64_t vk_size = key_file_size(vk_path, runtime::input_limits::binary_file_bytes, "vk file");
  const std::uint64_t vk_bytes = vk_bytes_for(m.num_inputs);
  if (vk_size != vk_bytes) {
    throw key_dir_error("key file " + quoted(vk_path) + " is " + std::to_string(vk_size) + " bytes; the vk of " + named +
                        " (key.json: num_inputs " + std::to_string(m.num_inputs) + ") is " + std::to_string(vk_bytes));
  }
  const fs::path params = dir / params_file_name;
  std::error_code ec;
  if (!params_required && !fs::exists(params, ec)) return;
  const std::uint64_t size = key_file_size(params, runtime::input_limits::binary_file_bytes, "params file");
  const auto expect = [&](std::string_view section, std::uint64_t offset, std::uint64_t claimed, std::string_view key_field) {
    const std::uint64_t held = count_at(params, size, offset, section);
    if (held != claimed) {
      throw key_dir_error("key file " + quoted(params) + ": its " + std::string(section) + " section holds " +
                          std::to_string(held) + " points, but key.json (" + std::string(key_field) + ") makes it " +
                          std::to_string(claimed) + " for " + named);
    }
  };
  expect("ic", vk_bytes - 4 - m.num_inputs * g1_uncompressed, m.num_inputs, "num_inputs");
  const std::uint64_t h_count = m.domain_size - 1;
  expect("h", vk_bytes, h_count, "domain_size");
  const std::uint64_t l_offset = vk_bytes + 4 + h_count * g1_uncompressed;
  expect("l", l_offset, m.num_aux, "num_aux");
  // a, b_g1 and b_g2 follow, each a count and its points (their counts need the matrices).
  const std::uint64_t least = l_offset + 4 + m.num_aux * g1_uncompressed + 3 * 4;
  if (size < least) {
    throw key_dir_error("key file " + quoted(params) + " is " + std::to_string(size) + " bytes; the params of " + named +
                        " need at least " + std::to_string(least));
  }
}

void refuse_degenerate_verifying_key(const groth16::verifying_key& vk, const std::string& file, bool has_g1_copies) {
  groth16::check_verifying_key(vk, file);
  // bellman's files also carry beta and delta in G1 (the prover's B and C use them).
  const auto refuse = [&](const char* section) {
    throw groth16::key_file_error(file, section, std::nullopt, "the point at infinity: a key with it is degenerate");
  };
  if (has_g1_copies && vk.beta_g1.is_identity()) refuse("beta_g1");
  if (has_g1_copies && vk.delta_g1.is_identity()) refuse("delta_g1");
}

key_set read_key_dir(const fs::path& dir_given, const std::optional<expected_key>& expected,
                     const groth16::bulk_subgroup_test* subgroup_test) {
  const auto started = clock_type::now();
  const fs::path dir = normalized(dir_given);
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw key_dir_error("key directory " + quoted(dir) + " does not exist (coprove setup makes one)");
  if (!fs::is_directory(dir, ec)) throw key_dir_error(quoted(dir) + " is not a key directory");
  std::string missing;
  for (const auto name : {params_file_name, vk_file_name, vk_json_file_name, key_json_file_name}) {
    if (!fs::exists(dir / name, ec)) missing += (missing.empty() ? "'" : ", '") + std::string(name) + "'";
  }
  if (!missing.empty()) {
    throw key_dir_error("key directory " + quoted(dir) + " is incomplete: " + missing +
                        " missing (a key directory holds params, vk, vk.json and key.json, as coprove setup writes them)");
  }
  key_file_size(dir / vk_json_file_name, runtime::input_limits::small_json_bytes, "vk.json");

  key_metadata m = read_key_metadata(dir);
  const fs::path key_json = dir / key_json_file_name;
  const std::string named = m.circuit + "/" + std::to_string(m.log_constraints);
  if (expected && (expected->circuit != m.circuit || expected->log_constraints != m.log_constraints)) {
    throw key_dir_error("key file " + quoted(key_json) + " is the key of " + named + ", not of " + expected->circuit +
                        "/" + std::to_string(expected->log_constraints));
  }
  // What key.json claims is compared with the files before the circuit it names is built.
  check_key_claim(dir, m);
  const auto made = r1cs::make_circuit(m.circuit, m.log_constraints, 1, 0);
  const fs::path params = dir / params_file_name;
  const fs::path vk_path = dir / vk_file_name;
  const fs::path vk_json = dir / vk_json_file_name;
  // The circuit's matrices are recorded on a thread of their own while params is read: its
  // verifying key, h and l need only key.json's counts (compared with the circuit above), a, b_g1
  // and b_g2 wait for the matrices' shape.
  std::future<std::shared_ptr<r1cs::pce_matrices>> recording = std::async(std::launch::async, [&made] {
    return std::make_shared<r1cs::pce_matrices>(groth16::record_matrices(*made));
  });
  std::shared_ptr<r1cs::pce_matrices> matrices;
  std::optional<groth16::key_shape> recorded_shape;
  const auto shape_of = [&]() -> const groth16::key_shape& {
    if (recorded_shape) return *recorded_shape;
    matrices = recording.get();
    const groth16::key_shape shape = groth16::key_shape::of(*matrices);
    if (shape.num_inputs != m.num_inputs || shape.num_aux != m.num_aux || shape.domain_size != m.domain_size) {
      throw key_dir_error("key file " + quoted(key_json) + ": its counts (" + std::to_string(m.num_inputs) + " inputs, " +
                          std::to_string(m.num_aux) + " auxiliaries, domain " + std::to_string(m.domain_size) +
                          ") are not those of " + made->id() + " (" + std::to_string(shape.num_inputs) + ", " +
                          std::to_string(shape.num_aux) + ", " + std::to_string(shape.domain_size) + ")");
    }
    return recorded_shape.emplace(shape);
  };

  key_load_stats load;
  std::shared_ptr<groth16::proving_key> pk;
  groth16::verifying_key vk, vk_from_json;
  try {
    pk = read_checked_params(dir, params, shape_of, m, subgroup_test, load);
    vk = groth16::read_verifying_key(vk_path, m.num_inputs);
    refuse_degenerate_verifying_key(vk, vk_path.string());
  } catch (const groth16::key_file_error& e) {
    throw key_dir_error(e.what());
  }
  try {
    vk_from_json = groth16::read_verifying_key_json(vk_json);
  } catch (const groth16::key_file_error& e) {
    throw key_dir_error(e.what());
  } catch (const std::exception& e) {
    throw key_dir_error("key file " + quoted(vk_json) + ": " + e.what());
  }
  const auto check_recorded = [](const fs::path& path, const std::string& actual, const std::string& recorded) {
    if (actual != recorded) {
      throw key_dir_error("key file " + quoted(path) + " is not the file key.json describes (its SHA-256 is " + actual +
                          ", key.json says " + recorded + "): it was changed or replaced");
    }
  };
  check_recorded(vk_path, file_sha256(vk_path), m.vk_sha256);
  if (vk != pk->vk) throw key_dir_error("key file " + quoted(vk_path) + " is not the verifying key in " + quoted(params));
  // verification_key.json has no beta_g1 or delta_g1 (verification needs neither).
  vk_from_json.beta_g1 = pk->vk.beta_g1;
  vk_from_json.delta_g1 = pk->vk.delta_g1;
  if (vk_from_json != pk->vk) {
    throw key_dir_error("key file " + quoted(vk_json) + " is not the verifying key in " + quoted(params));
  }

  (void)shape_of();  // read_params_hashed took the matrices' shape; this makes sure of them
  key_set out;
  out.circuit = m.circuit;
  out.log_constraints = m.log_constraints;
  out.pk = std::move(pk);
  out.matrices = std::move(matrices);
  out.dir = dir;
  out.development = m.development;
  out.insecure = m.insecure_seed.has_value();
  out.metadata = std::move(m);
  out.load = std::move(load);
  out.load_seconds = seconds_since(started);
  return out;
}

std::optional<fs::path> default_cache_dir() {
  const auto absolute_env = [](const char* name) -> std::optional<fs::path> {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0' || value[0] != '/') return std::nullopt;
    return fs::path(value);
  };
  if (const auto xdg = absolute_env("XDG_CACHE_HOME")) return *xdg / "coprove";
  if (const auto home = absolute_env("HOME")) return *home / ".cache" / "coprove";
  return std::nullopt;
}

fs::path default_key_cache_dir() {
  if (const auto root = default_cache_dir()) return *root / "keys";
  throw key_dir_error("no cache directory for development keys: neither XDG_CACHE_HOME nor HOME is an absolute path");
}

key_set development_keys(const std::string& circuit, unsigned log_constraints, const fs::path& cache_dir,
                         const groth16::bulk_subgroup_test* subgroup_test) {
  r1cs::validate_circuit_parameters(circuit, log_constraints);
  const fs::path dir = normalized(cache_dir / (circuit + "-" + std::to_string(log_constraints)));
  const expected_key expected{circuit, log_constraints};
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    try {
      key_set keys = read_key_dir(dir, expected, subgroup_test);
      announce_development_key(keys);
      return keys;
    } catch (const key_dir_error& e) {
      COPROVE_LOG(warning, "keys") << "the cached development key " << quoted(dir) << " cannot be used (" << e.what()
                                   << "); making a new one and keeping the old one as " << dir.string() << ".invalid";
      fs::path aside = dir;
      aside += ".invalid";
      fs::remove_all(aside, ec);
      fs::rename(dir, aside, ec);
      if (ec) throw key_dir_error("cannot move the unusable development key " + quoted(dir) + " aside: " + ec.message());
    }
  } else {
    COPROVE_LOG(warning, "keys") << "no development key for " << circuit << "/" << log_constraints << " in "
                                 << quoted(cache_dir) << ": making one on this machine (a single-party setup)";
  }
  key_options options;
  options.development = true;
  options.progress = [](const key_stage& s) {
    COPROVE_LOG(info, "keys") << "development key: " << s.name << " took " << s.seconds << " s (" << s.detail << ")";
  };
  key_set keys;
  try {
    keys = make_key_dir(circuit, log_constraints, dir, options);
  } catch (const key_dir_error&) {
    // Another process may have written the same key meanwhile; its key is as good as ours.
    if (!fs::exists(dir / key_json_file_name, ec)) throw;
    COPROVE_LOG(info, "keys") << "another process wrote " << quoted(dir) << " meanwhile; reading it";
    keys = read_key_dir(dir, expected, subgroup_test);
  }
  announce_development_key(keys);
  return keys;
}

}  // namespace coprove::app
