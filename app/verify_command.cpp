// `coprove verify`: checks Groth16 proofs against a verifying key.
//
//   coprove verify FILE --vk KEY
//     FILE is a run report ({"results": [JOB, ...]}) or a job result (one JOB:
//     {"job_id", "state", "request": {"circuit", "log_constraints", "partitions", "seed"},
//      "partitions": [{"index", "proof": hex of bellman's 192 bytes, "public_inputs": [decimal,
//      ...]}, ...]}); KEY is a key directory (its vk), a bellman vk file or a verification_key.json.
//     Every proof is decoded with all point checks; for built-in circuits each partition's public
//     inputs are recomputed from the request (the witness of partition P of seed S) and must be
//     the written ones, so a proof cannot vouch for inputs the job did not have; missing,
//     duplicated and out-of-range partitions fail. The proofs are then checked in one batch
//     (random coefficients from the system CSPRNG) and, when the batch fails, one by one to name
//     the failing ones.
//   coprove verify --vk verification_key.json --proof proof.json --public public.json
//     one proof in snarkjs's JSON formats.
//   coprove verify FILE (no --vk)
//     only for a file that holds evaluation records and no proofs: checks each record's
//     h(zeta) * (zeta^n - 1) == a(zeta) * b(zeta) - c(zeta), and says that records are not proofs.
//
// Exit status 0 when everything verifies, 1 when anything does not, 2 for bad usage.
#include "cli.hpp"
#include "commands.hpp"
#include "keys.hpp"

#include <coprove/field/evaluation.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

namespace coprove::app {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

const std::vector<extra_flag> verify_flags = {
    {"vk", "KEY", "key directory, bellman vk file or verification_key.json to check proofs against"},
    {"proof", "FILE", "a snarkjs proof.json (with --public and --vk)"},
    {"public", "FILE", "a snarkjs public.json (with --proof and --vk)"},
};

std::uint64_t unsigned_at(const json::object& o, std::string_view key, const std::string& where) {
  const auto* v = o.if_contains(key);
  if (v && v->is_uint64()) return v->get_uint64();
  if (v && v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
  throw std::invalid_argument(where + ": '" + std::string(key) + "' is missing or not a non-negative integer");
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error("coprove verify: cannot open '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The JSON of a file, or nullopt (said on stderr) when it is not JSON.
std::optional<json::value> parse_file(const fs::path& path) {
  boost::system::error_code ec;
  json::value document = json::parse(text_of(path), ec);
  if (ec) {
    std::cerr << "coprove verify: '" << path.string() << "' is not valid JSON: " << ec.message() << "\n";
    return std::nullopt;
  }
  return document;
}

/// The jobs of a run report or the one job of a job result; nullptr when the file is neither.
std::vector<const json::value*> jobs_of(const json::value& document, const fs::path& path) {
  std::vector<const json::value*> jobs;
  const json::object* root = document.if_object();
  if (root && root->contains("results")) {
    if (!root->at("results").is_array()) {
      std::cerr << "coprove verify: '" << path.string() << "': 'results' is not an array\n";
      return jobs;
    }
    for (const auto& r : root->at("results").get_array()) jobs.push_back(&r);
  } else if (root && root->contains("partitions") && root->at("partitions").is_array()) {
    jobs.push_back(&document);
  } else {
    std::cerr << "coprove verify: '" << path.string()
              << "' is neither a run report (with 'results') nor a job result (with 'partitions')\n";
  }
  return jobs;
}

bool holds_proofs(const std::vector<const json::value*>& jobs) {
  for (const auto* job : jobs) {
    const auto* o = job->if_object();
    const auto* partitions = o ? o->if_contains("partitions") : nullptr;
    if (!partitions || !partitions->is_array()) continue;
    for (const auto& p : partitions->get_array()) {
      if (p.is_object() && p.get_object().contains("proof")) return true;
    }
  }
  return false;
}

/// "job 7", or "result 2" for a job without an id.
std::string job_label(const json::value& job, std::size_t position) {
  if (const auto* o = job.if_object()) {
    if (const auto* id = o->if_contains("job_id"); id && (id->is_uint64() || id->is_int64())) {
      return "job " + json::serialize(*id);
    }
  }
  return "result " + std::to_string(position);
}

std::vector<std::uint8_t> from_hex(std::string_view text) {
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (text.size() % 2 != 0) throw std::invalid_argument("the proof's hex has an odd number of digits");
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int high = digit(text[i]), low = digit(text[i + 1]);
    if (high < 0 || low < 0) throw std::invalid_argument("the proof is not hex (character " + std::to_string(i) + ")");
    out.push_back(static_cast<std::uint8_t>(high * 16 + low));
  }
  return out;
}

// ---- the verifying key ----

struct loaded_vk {
  groth16::verifying_key vk;
  /// "vk sha256 X" (of bellman's vk bytes, the vk file's SHA-256 as coprove setup prints it), or
  /// "vk.json sha256 X" for a verification_key.json, which lacks two of the vk's points.
  std::string fingerprint;
  std::optional<key_metadata> metadata;  ///< when KEY is a key directory
  std::string source;                   ///< for the summary line
};

/// Reads KEY: a key directory (its vk, checked against key.json), a verification_key.json (by its
/// first character) or a bellman vk file.
loaded_vk load_vk(const fs::path& key) {
  std::error_code ec;
  if (!fs::exists(key, ec)) throw usage_error("coprove verify: --vk '" + key.string() + "' does not exist");
  loaded_vk out;
  try {
    if (fs::is_directory(key, ec)) {
      const fs::path vk_path = key / vk_file_name;
      if (!fs::exists(vk_path, ec)) {
        throw key_dir_error("key directory '" + key.string() + "' has no 'vk' file (coprove setup writes one)");
      }
      if (fs::exists(key / key_json_file_name, ec)) {
        out.metadata = read_key_metadata(key);
        const std::string actual = file_sha256(vk_path);
        if (actual != out.metadata->vk_sha256) {
          throw key_dir_error("key file '" + vk_path.string() + "' is not the vk key.json describes (SHA-256 " + actual +
                              ", key.json says " + out.metadata->vk_sha256 + ")");
        }
      }
      out.vk = groth16::read_verifying_key(vk_path, out.metadata ? std::optional(out.metadata->num_inputs) : std::nullopt);
      out.source = out.metadata ? out.metadata->circuit_id + " key " + key.string() : vk_path.string();
    } else {
      const std::string text = text_of(key);
      const auto first = text.find_first_not_of(" \t\r\n");
      if (first != std::string::npos && text[first] == '{') {
        out.vk = groth16::read_verifying_key_json(key);
        out.fingerprint = "vk.json sha256 " + file_sha256(key);
      } else {
        out.vk = groth16::read_verifying_key(key);
      }
      out.source = key.string();
    }
  } catch (const groth16::key_file_error& e) {
    throw key_dir_error(e.what());
  }
  if (out.fingerprint.empty()) {
    const auto bytes = groth16::encode_verifying_key(out.vk);
    out.fingerprint = "vk sha256 " + sha256_hex(bytes);
  }
  return out;
}

// ---- proofs in a report ----

struct proof_to_check {
  std::string label;  ///< "job 3 partition 1"
  groth16::proof proof;
  std::vector<field::fr> inputs;
};

struct proof_totals {
  std::size_t jobs = 0, partitions = 0;
  std::vector<proof_to_check> proofs;
  std::vector<std::string> failures;  ///< "job 3 partition 1: reason"
  std::vector<std::string> notes;
};

/// The request's circuit, when it is built in and its public inputs can be recomputed.
struct recomputation {
  std::string circuit;
  unsigned log_constraints = 0;
  std::uint64_t seed = 0;

  std::vector<field::fr> inputs(std::size_t partition) const {
    const auto c = r1cs::make_circuit(circuit, log_constraints, seed, partition);
    return r1cs::public_inputs_of(c->shape(), r1cs::synthesize_witness(*c));
  }
};

bool builtin_circuit(const std::string& name, std::uint64_t log_constraints) {
  if (log_constraints > r1cs::max_log_constraints) return false;
  try {
    r1cs::validate_circuit_parameters(name, static_cast<unsigned>(log_constraints));
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

void collect_partition(const json::value& entry, const std::string& where, std::uint64_t expected,
                       const std::optional<recomputation>& recompute, std::set<std::uint64_t>& seen,
                       proof_totals& totals) {
  std::string label = where + " partition ?";
  try {
    if (!entry.is_object()) throw std::invalid_argument("not a JSON object");
    const auto& p = entry.get_object();
    const auto index = unsigned_at(p, "index", "the partition");
    label = where + " partition " + std::to_string(index);
    if (!seen.insert(index).second) throw std::invalid_argument("appears twice");
    if (index >= expected) throw std::invalid_argument("index is beyond the job's " + std::to_string(expected) + " partitions");
    const auto* proof_hex = p.if_contains("proof");
    if (!proof_hex || !proof_hex->is_string()) {
      std::string why = "no proof";
      if (const auto* error = p.if_contains("error"); error && error->is_string()) {
        why += " (" + std::string(error->get_string()) + ")";
      }
      throw std::invalid_argument(why);
    }
    const auto bytes = from_hex(proof_hex->get_string());
    if (bytes.size() != groth16::proof_bytes) {
      throw std::invalid_argument("the proof is " + std::to_string(bytes.size()) + " bytes, not " +
                                  std::to_string(groth16::proof_bytes));
    }
    groth16::proof decoded;
    try {
      decoded = groth16::decode_proof(bytes);
    } catch (const groth16::proof_format_error& e) {
      throw std::invalid_argument(std::string("the proof does not decode: ") + e.what());
    }
    const auto* written = p.if_contains("public_inputs");
    if (!written) throw std::invalid_argument("'public_inputs' is missing");
    std::vector<field::fr> inputs;
    try {
      inputs = groth16::public_inputs_from_snarkjs_json(*written);
    } catch (const groth16::proof_format_error& e) {
      throw std::invalid_argument(std::string("bad public_inputs: ") + e.what());
    }
    if (recompute && recompute->inputs(index) != inputs) {
      throw std::invalid_argument("public inputs do not match " + where + " partition " + std::to_string(index) + " of " +
                                  recompute->circuit + "/" + std::to_string(recompute->log_constraints) + " seed " +
                                  std::to_string(recompute->seed));
    }
    totals.proofs.push_back({label, decoded, std::move(inputs)});
  } catch (const std::invalid_argument& e) {
    totals.failures.push_back(label + ": " + e.what());
  }
}

void collect_job(const json::value& value, std::size_t position, const loaded_vk& key, proof_totals& totals) {
  const std::string where = job_label(value, position);
  ++totals.jobs;
  try {
    if (!value.is_object()) throw std::invalid_argument(where + ": not a JSON object");
    const auto& job = value.get_object();
    if (const auto* state = job.if_contains("state"); state && state->is_string() && state->get_string() != "done") {
      totals.failures.push_back(where + ": the job did not finish (state " + std::string(state->get_string()) + ")");
    }
    const auto* request_value = job.if_contains("request");
    if (!request_value || !request_value->is_object()) throw std::invalid_argument(where + ": 'request' is missing");
    const auto& request = request_value->get_object();
    const auto* circuit = request.if_contains("circuit");
    if (!circuit || !circuit->is_string()) throw std::invalid_argument(where + ": request.circuit is missing");
    const std::string name(circuit->get_string());
    const auto log_constraints = unsigned_at(request, "log_constraints", where + " request");
    const auto expected = unsigned_at(request, "partitions", where + " request");
    const std::string job_circuit = name + "/" + std::to_string(log_constraints);
    if (key.metadata && (key.metadata->circuit != name || key.metadata->log_constraints != log_constraints)) {
      throw std::invalid_argument(where + " is " + job_circuit + " but the key is for " + key.metadata->circuit_id);
    }
    std::optional<recomputation> recompute;
    if (builtin_circuit(name, log_constraints)) {
      recompute = recomputation{name, static_cast<unsigned>(log_constraints), unsigned_at(request, "seed", where + " request")};
    } else {
      totals.notes.push_back(where + ": " + job_circuit +
                             " is not a built-in circuit, so its public inputs are taken as written, not recomputed");
    }
    const auto* partitions = job.if_contains("partitions");
    if (!partitions || !partitions->is_array()) throw std::invalid_argument(where + ": 'partitions' is missing or not an array");
    std::set<std::uint64_t> seen;
    for (const auto& entry : partitions->get_array()) {
      ++totals.partitions;
      collect_partition(entry, where, expected, recompute, seen, totals);
    }
    for (std::uint64_t index = 0; index < expected; ++index) {
      if (!seen.count(index)) totals.failures.push_back(where + " partition " + std::to_string(index) + ": missing");
    }
  } catch (const std::invalid_argument& e) {
    totals.failures.push_back(e.what());
  }
}

int verify_proofs_in_file(const fs::path& path, const fs::path& key_path) {
  const loaded_vk key = load_vk(key_path);
  const auto document = parse_file(path);
  if (!document) return exit_failed;
  const auto jobs = jobs_of(*document, path);
  if (jobs.empty()) return exit_failed;

  proof_totals totals;
  for (std::size_t i = 0; i < jobs.size(); ++i) collect_job(*jobs[i], i, key, totals);
  if (totals.proofs.empty() && totals.failures.empty()) totals.failures.push_back("no proofs found in '" + path.string() + "'");

  std::size_t verified = 0;
  if (!totals.proofs.empty()) {
    const auto pvk = groth16::prepared_verifying_key::from(key.vk);
    std::vector<groth16::proof> proofs;
    std::vector<std::vector<field::fr>> inputs;
    for (const auto& p : totals.proofs) {
      proofs.push_back(p.proof);
      inputs.push_back(p.inputs);
    }
    auto randomness = groth16::secret_source::system();
    const auto batch = groth16::verify_batch(pvk, proofs, inputs, randomness);
    for (std::size_t k = 0; k < totals.proofs.size(); ++k) {
      if (batch.verdicts[k]) {
        ++verified;
      } else {
        totals.failures.push_back(totals.proofs[k].label + ": " + batch.verdicts[k].reason);
      }
    }
  }

  for (const auto& note : totals.notes) std::cout << "coprove verify: note: " << note << "\n";
  for (const auto& failure : totals.failures) std::cerr << "coprove verify: FAILED " << failure << "\n";
  std::cout << "coprove verify: " << verified << " of " << totals.partitions << " proofs in " << totals.jobs
            << " job(s) verify against " << key.source << " (" << key.fingerprint << ")"
            << (totals.failures.empty() ? "" : "; " + std::to_string(totals.failures.size()) + " problem(s)") << "\n";
  return totals.failures.empty() ? exit_ok : exit_failed;
}

int verify_snarkjs_proof(const fs::path& proof_path, const fs::path& public_path, const fs::path& key_path) {
  const loaded_vk key = load_vk(key_path);
  const auto proof_json = parse_file(proof_path);
  const auto public_json = parse_file(public_path);
  if (!proof_json || !public_json) return exit_failed;
  std::string reason;
  try {
    const groth16::proof p = groth16::proof_from_snarkjs_json(*proof_json);
    const auto inputs = groth16::public_inputs_from_snarkjs_json(*public_json);
    const auto verdict = groth16::verify(groth16::prepared_verifying_key::from(key.vk), p, inputs);
    reason = verdict.reason;
    if (verdict) {
      std::cout << "coprove verify: the proof in '" << proof_path.string() << "' verifies against " << key.source
                << " (" << key.fingerprint << ")\n";
      return exit_ok;
    }
  } catch (const groth16::proof_format_error& e) {
    reason = e.what();
  }
  std::cerr << "coprove verify: FAILED proof '" << proof_path.string() << "' with '" << public_path.string()
            << "': " << reason << "\n";
  return exit_failed;
}

// ---- evaluation records (no --vk) ----

struct record_totals {
  std::size_t jobs = 0, records = 0, verified = 0;
  std::vector<std::string> failures;
};

void verify_records(const json::value& value, std::size_t position, record_totals& totals) {
  std::string where = job_label(value, position);
  ++totals.jobs;
  if (!value.is_object()) {
    totals.failures.push_back(where + ": not a JSON object");
    return;
  }
  const auto& result = value.get_object();
  try {
    if (const auto* state = result.if_contains("state"); state && state->is_string() && state->get_string() != "done") {
      totals.failures.push_back(where + ": the job did not finish (state " + std::string(state->get_string()) + ")");
    }
    const auto* request = result.if_contains("request");
    if (!request || !request->is_object()) throw std::invalid_argument(where + ": 'request' is missing");
    const auto log_constraints = unsigned_at(request->get_object(), "log_constraints", where + " request");
    const auto expected = unsigned_at(request->get_object(), "partitions", where + " request");
    if (log_constraints < 1 || log_constraints > 40) {
      throw std::invalid_argument(where + ": request.log_constraints " + std::to_string(log_constraints) + " is out of range");
    }
    const std::size_t n = std::size_t{1} << log_constraints;
    const auto* partitions = result.if_contains("partitions");
    if (!partitions || !partitions->is_array()) throw std::invalid_argument(where + ": 'partitions' is missing or not an array");
    std::set<std::uint64_t> seen;
    for (const auto& entry : partitions->get_array()) {
      ++totals.records;
      std::string part = where + " partition ?";
      try {
        if (!entry.is_object()) throw std::invalid_argument("not a JSON object");
        const auto index = unsigned_at(entry.get_object(), "index", "partition");
        part = where + " partition " + std::to_string(index);
        if (!seen.insert(index).second) throw std::invalid_argument("appears twice");
        if (index >= expected) {
          throw std::invalid_argument("index is beyond the job's " + std::to_string(expected) + " partitions");
        }
        const auto* record = entry.get_object().if_contains("record");
        if (!record) throw std::invalid_argument("'record' is missing");
        const field::evaluation_record parsed = field::record_from_json(*record);
        if (!field::verify(parsed, n)) {
          throw std::invalid_argument("evaluation record does not verify: h(zeta) * (zeta^n - 1) != a(zeta) * b(zeta) - c(zeta)");
        }
        ++totals.verified;
      } catch (const std::invalid_argument& e) {
        totals.failures.push_back(part + ": " + e.what());
      }
    }
    if (seen.size() != expected) {
      totals.failures.push_back(where + ": " + std::to_string(seen.size()) + " of " + std::to_string(expected) +
                                " partitions have a record");
    }
  } catch (const std::invalid_argument& e) {
    totals.failures.push_back(e.what());
  }
}

int verify_records_in_file(const fs::path& path) {
  const auto document = parse_file(path);
  if (!document) return exit_failed;
  const auto jobs = jobs_of(*document, path);
  if (jobs.empty()) return exit_failed;
  if (holds_proofs(jobs)) {
    throw usage_error("coprove verify: '" + path.string() +
                      "' holds proofs, and checking a proof needs the verifying key: coprove verify " + path.string() +
                      " --vk KEY_DIR (or a vk file)");
  }
  std::cout << "coprove verify: note: '" << path.string()
            << "' holds evaluation records, not proofs: a record checks the quotient at one point and proves "
               "nothing to anyone else; proofs are checked with --vk\n";
  record_totals totals;
  for (std::size_t i = 0; i < jobs.size(); ++i) verify_records(*jobs[i], i, totals);
  if (totals.records == 0) totals.failures.push_back("no evaluation records found");

  for (const auto& failure : totals.failures) std::cerr << "coprove verify: FAILED " << failure << "\n";
  std::cout << "coprove verify: " << totals.verified << " of " << totals.records << " records in " << totals.jobs
            << " job(s) verify" << (totals.failures.empty() ? "" : "; " + std::to_string(totals.failures.size()) + " problem(s)")
            << "\n";
  return totals.failures.empty() ? exit_ok : exit_failed;
}

}  // namespace

int verify_command(const std::vector<std::string>& args) {
  const command_line cl = parse_command_line("verify", args, verify_flags, false, 1);
  if (cl.help) {
    std::cout << command_help("verify", "FILE --vk KEY | --vk KEY --proof proof.json --public public.json", verify_flags, false)
              << "\nFILE is a run report (coprove run --json) or a job result (GET /v1/jobs/{id}/result); KEY is a key\n"
                 "directory (coprove setup), a bellman vk file or a snarkjs verification_key.json. Each partition's\n"
                 "public inputs are recomputed from the job's request and every proof is checked with the pairing.\n"
                 "Exit status 0 when every proof verifies, 1 otherwise, 2 for bad usage.\n";
    return exit_ok;
  }
  const bool snarkjs_form = cl.has("proof") || cl.has("public");
  if (snarkjs_form) {
    if (!cl.has("proof") || !cl.has("public")) throw usage_error("coprove verify: --proof and --public go together");
    if (!cl.positional.empty()) throw usage_error("coprove verify: give FILE or --proof/--public, not both");
    if (!cl.has("vk")) throw usage_error("coprove verify: checking a proof needs its verifying key: add --vk verification_key.json");
    return verify_snarkjs_proof(cl.extra("proof"), cl.extra("public"), cl.extra("vk"));
  }
  if (cl.positional.empty()) {
    throw usage_error("coprove verify: missing FILE (a run report or a job result), or --proof and --public");
  }
  const fs::path path = cl.positional.front();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw usage_error("coprove verify: cannot open '" + path.string() + "'");
  if (cl.has("vk")) return verify_proofs_in_file(path, cl.extra("vk"));
  return verify_records_in_file(path);
}

}  // namespace coprove::app
