// `coprove verify`: checks Groth16 proofs against a verifying key.
//
//   coprove verify FILE --vk KEY
//     FILE is a run report ({"results": [JOB, ...]}) or a job result (one JOB:
//     {"job_id", "state", "vk_sha256", "request": {"circuit", "log_constraints", "partitions", "seed"},
//      "partitions": [{"index", "proof": hex of bellman's 192 bytes, "public_inputs": [decimal,
//      ...]}, ...]}); KEY is a key directory (its vk), a bellman vk file or a verification_key.json.
//     The report is checked by check_report (report_check.hpp): every job done, once, with the key's
//     vk_sha256 and a built-in circuit the key supports; every proof decoded with all point checks
//     and its public inputs recomputed from the request (the witness of partition P of seed S),
//     so a proof cannot vouch for inputs the job did not have; missing, duplicated and
//     out-of-range partitions fail. The proofs are then checked in one batch (random coefficients
//     from the system CSPRNG) and, when the batch fails, one by one to name the failing ones.
//   coprove verify --vk verification_key.json --proof proof.json --public public.json
//     one proof in snarkjs's JSON formats.
//   coprove verify FILE (no --vk)
//     only for a file that holds evaluation records and no proofs: checks each record's
//     h(zeta) * (zeta^n - 1) == a(zeta) * b(zeta) - c(zeta), and says that records are not proofs.
//
// Every file is read through runtime/input_file.hpp (regular files only, within its kind's limit;
// a verification_key.json is sized here and then read by groth16::read_verifying_key_json).
// Exit status 0 when everything verifies, 1 when anything does not, 2 for bad usage and for a file
// refused as input (not readable as its kind, over its limit, a degenerate or malformed key).
#include "cli.hpp"
#include "commands.hpp"
#include "keys.hpp"
#include "report_check.hpp"

#include <coprove/field/evaluation.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/runtime/input_file.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <set>

namespace coprove::app {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

const std::vector<extra_flag> verify_flags = {
    {"vk", "KEY", "key directory, bellman vk file or verification_key.json to check proofs against"},
    {"proof", "FILE", "a snarkjs proof.json (with --public and --vk)"},
    {"public", "FILE", "a snarkjs public.json (with --proof and --vk)"},
};

/// The JSON of a file of kind `what` read within `limit`; runtime::input_file_error (exit 2)
/// naming the file when it cannot be read, is over the limit or is not JSON.
json::value parse_file(const fs::path& path, std::uint64_t limit, std::string_view what) {
  try {
    const std::string text = runtime::read_input_text(path, limit, what);
    boost::system::error_code ec;
    json::value document = json::parse(text, ec);
    if (ec) throw runtime::input_file_error(path.string(), "is not valid JSON (" + std::string(what) + "): " + ec.message());
    return document;
  } catch (const std::bad_alloc&) {
    throw runtime::input_file_error(path.string(), "out of memory while reading it as a " + std::string(what));
  }
}

// ---- the verifying key ----

struct loaded_vk {
  groth16::verifying_key vk;
  /// "vk sha256 X" (of bellman's vk bytes, the vk file's SHA-256 as coprove setup prints it), or
  /// "vk.json sha256 X" for a verification_key.json, which lacks two of the vk's points.
  std::string fingerprint;
  report_key facts;
};

/// The verifying key of a key directory: its vk, and (when present) key.json, which must describe
/// that vk and whose claim of circuit and size the key's own files must support.
void load_key_dir(const fs::path& key, loaded_vk& out) {
  const fs::path vk_path = key / vk_file_name;
  std::error_code ec;
  if (!fs::exists(vk_path, ec)) {
    throw key_dir_error("key directory '" + key.string() + "' has no 'vk' file (coprove setup writes one)");
  }
  const auto bytes = runtime::read_input_file(vk_path, runtime::input_limits::binary_file_bytes, "vk file");
  std::optional<key_metadata> metadata;
  if (fs::exists(key / key_json_file_name, ec)) {
    metadata = read_key_metadata(key);
    const std::string actual = sha256_hex(bytes);
    if (actual != metadata->vk_sha256) {
      throw key_dir_error("key file '" + vk_path.string() + "' is not the vk key.json describes (SHA-256 " + actual +
                          ", key.json says " + metadata->vk_sha256 + ")");
    }
    // Without params, nothing in the directory supports a size beyond what a bare vk is trusted with.
    check_key_claim(key, *metadata, metadata->log_constraints > unnamed_key_max_log_constraints);
  }
  out.vk = groth16::decode_verifying_key(bytes, vk_path.string(),
                                         metadata ? std::optional(metadata->num_inputs) : std::nullopt);
  out.facts.source = "the key '" + key.string() + "'";
  if (metadata) {
    out.facts.circuit = metadata->circuit;
    out.facts.log_constraints = metadata->log_constraints;
    out.facts.source = "the " + metadata->circuit_id + " key '" + key.string() + "'";
  }
}

/// Reads KEY: a key directory, a verification_key.json (by its first character) or a bellman vk
/// file; refuses a degenerate key.
loaded_vk load_vk(const fs::path& key) {
  std::error_code ec;
  if (!fs::exists(key, ec)) throw usage_error("coprove verify: --vk '" + key.string() + "' does not exist");
  loaded_vk out;
  bool json_form = false;
  if (fs::is_directory(key, ec)) {
    load_key_dir(key, out);
  } else {
    const auto bytes = runtime::read_input_file(key, runtime::input_limits::binary_file_bytes, "verifying key");
    const auto first = std::find_if(bytes.begin(), bytes.end(), [](std::uint8_t c) { return !std::isspace(c); });
    json_form = first != bytes.end() && *first == '{';
    if (json_form) {
      runtime::regular_file_size(key, runtime::input_limits::small_json_bytes, "verification_key.json");
      out.vk = groth16::read_verifying_key_json(key);
      out.fingerprint = "vk.json sha256 " + sha256_hex(bytes);
    } else {
      out.vk = groth16::decode_verifying_key(bytes, key.string());
    }
    out.facts.source = "the key '" + key.string() + "'";
  }
  refuse_degenerate_verifying_key(out.vk, key.string(), !json_form);
  out.facts.num_public = out.vk.ic.size() - 1;
  if (!json_form) {
    out.facts.vk_sha256 = sha256_hex(groth16::encode_verifying_key(out.vk));
    out.fingerprint = "vk sha256 " + *out.facts.vk_sha256;
  }
  return out;
}

// ---- proofs in a report ----

/// The pairing check of every proof check_report passed, in one batch; the ones that fail are
/// added to `checked`'s failures. Returns how many verify.
std::size_t verify_batch(const loaded_vk& key, report_check& checked) {
  if (checked.proofs.empty()) return 0;
  const auto pvk = groth16::prepared_verifying_key::from(key.vk);
  std::vector<groth16::proof> proofs;
  std::vector<std::vector<field::fr>> inputs;
  for (const auto& p : checked.proofs) {
    proofs.push_back(p.proof);
    inputs.push_back(p.inputs);
  }
  auto randomness = groth16::secret_source::system();
  const auto batch = groth16::verify_batch(pvk, proofs, inputs, randomness);
  std::size_t verified = 0;
  for (std::size_t k = 0; k < checked.proofs.size(); ++k) {
    if (batch.verdicts[k]) {
      ++verified;
    } else {
      checked.fail(checked.proofs[k].label + ": " + batch.verdicts[k].reason);
    }
  }
  return verified;
}

/// Prints the failures kept and says how many more there were.
void print_failures(const std::vector<std::string>& failures, std::size_t count) {
  for (const auto& failure : failures) std::cerr << "coprove verify: FAILED " << failure << "\n";
  if (count > failures.size()) {
    std::cerr << "coprove verify: ... and " << count - failures.size() << " more problem(s) not shown\n";
  }
}

int verify_proofs_in_file(const fs::path& path, const fs::path& key_path) {
  const loaded_vk key = load_vk(key_path);
  const json::value document = parse_file(path, runtime::input_limits::report_json_bytes, "run report");
  report_check checked = check_report(document, key.facts);
  if (!checked.not_a_report.empty()) throw runtime::input_file_error(path.string(), checked.not_a_report);
  const std::size_t verified = verify_batch(key, checked);

  for (const auto& note : checked.notes) std::cout << "coprove verify: note: " << note << "\n";
  print_failures(checked.failures, checked.failure_count);
  std::cout << "coprove verify: '" << path.string() << "': " << verified << " of " << checked.partitions << " proofs in " << checked.jobs
            << " job(s) verify against " << key.facts.source << " (" << key.fingerprint << ")"
            << (checked.passed() ? "" : "; " + std::to_string(checked.failure_count) + " problem(s)") << "\n";
  return checked.passed() ? exit_ok : exit_failed;
}

int verify_snarkjs_proof(const fs::path& proof_path, const fs::path& public_path, const fs::path& key_path) {
  const loaded_vk key = load_vk(key_path);
  const json::value proof_json = parse_file(proof_path, runtime::input_limits::small_json_bytes, "proof.json");
  const json::value public_json = parse_file(public_path, runtime::input_limits::small_json_bytes, "public.json");
  std::string reason;
  try {
    const groth16::proof p = groth16::proof_from_snarkjs_json(proof_json);
    const auto inputs = groth16::public_inputs_from_snarkjs_json(public_json);
    if (inputs.size() != key.facts.num_public) {
      throw groth16::proof_format_error("'" + public_path.string() + "' holds " + std::to_string(inputs.size()) +
                                        " public inputs; " + key.facts.source + " takes " +
                                        std::to_string(key.facts.num_public));
    }
    const auto verdict = groth16::verify(groth16::prepared_verifying_key::from(key.vk), p, inputs);
    reason = verdict.reason;
    if (verdict) {
      std::cout << "coprove verify: the proof in '" << proof_path.string() << "' verifies against " << key.facts.source
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

int verify_records_in_file(const fs::path& path) {
  const json::value document = parse_file(path, runtime::input_limits::report_json_bytes, "run report");
  const report_jobs found = jobs_of(document);
  if (!found.why.empty()) throw runtime::input_file_error(path.string(), found.why);
  const auto& jobs = found.jobs;
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
  std::cout << "coprove verify: '" << path.string() << "': " << totals.verified << " of " << totals.records << " records in " << totals.jobs
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
                 "Exit status 0 when every proof verifies, 1 otherwise, 2 for bad usage or a file refused as input.\n";
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
