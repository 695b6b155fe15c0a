// The checks of a report's jobs and partitions before any pairing (see report_check.hpp).
#include "report_check.hpp"

#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <boost/json.hpp>

#include <iterator>
#include <set>
#include <stdexcept>
#include <utility>

namespace coprove::app {

namespace json = boost::json;

void report_check::fail(std::string message) {
  ++failure_count;
  if (failures.size() < max_kept_failures) failures.push_back(std::move(message));
}

std::vector<field::fr> builtin_public_inputs(const std::string& circuit, unsigned log_constraints, std::uint64_t seed,
                                             std::uint64_t partition) {
  const auto c = r1cs::make_circuit(circuit, log_constraints, seed, static_cast<std::size_t>(partition));
  return r1cs::public_inputs_of(c->shape(), r1cs::synthesize_witness(*c));
}

std::uint64_t unsigned_at(const json::object& o, std::string_view key, const std::string& where) {
  const auto* v = o.if_contains(key);
  if (v && v->is_uint64()) return v->get_uint64();
  if (v && v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
  throw std::invalid_argument(where + ": '" + std::string(key) + "' is missing or not a non-negative integer");
}

std::string job_label(const json::value& job, std::size_t position) {
  if (const auto* o = job.if_object()) {
    if (const auto* id = o->if_contains("job_id"); id && (id->is_uint64() || id->is_int64())) {
      return "job " + json::serialize(*id);
    }
  }
  return "result " + std::to_string(position);
}

report_jobs jobs_of(const json::value& document) {
  report_jobs out;
  const json::object* root = document.if_object();
  if (root && root->contains("results")) {
    if (!root->at("results").is_array()) {
      out.why = "'results' is not an array";
      return out;
    }
    for (const auto& r : root->at("results").get_array()) out.jobs.push_back(&r);
    if (out.jobs.empty()) out.why = "'results' is empty: the report holds no job";
  } else if (root && root->contains("partitions") && root->at("partitions").is_array()) {
    out.jobs.push_back(&document);
    out.lone_job = true;
  } else {
    out.why = "it is neither a run report (with 'results') nor a job result (with 'partitions')";
  }
  return out;
}

namespace {

/// Partitions named one by one when missing beyond those listed; more make one message.
constexpr std::uint64_t max_missing_named = 64;

/// What a job's request asks for, once its fields are read.
struct job_request {
  std::string circuit;
  unsigned log_constraints = 0;
  std::uint64_t partitions = 0;
  std::uint64_t seed = 0;
};

/// The one quoted string of a JSON value, cut to a length a message can hold.
std::string shown(std::string_view text) {
  constexpr std::size_t longest = 64;
  std::string out = json::serialize(json::string(text.substr(0, longest)));
  if (text.size() > longest) out += "...";
  return out;
}

std::string names_of_circuits() {
  std::string out;
  for (const auto name : r1cs::circuit_families()) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

/// The job finished: state "done", or (a lone job result of the service, which answers with a
/// result only for a finished job) no state and result_kind "proof".
void check_finished(const json::object& job, const std::string& where, bool lone_job) {
  const auto* state = job.if_contains("state");
  if (state == nullptr) {
    const auto* kind = job.if_contains("result_kind");
    if (lone_job && kind && kind->is_string() && kind->get_string() == "proof") return;
    throw std::invalid_argument(where + ": 'state' is missing (only a job that says it is done is checked)");
  }
  if (!state->is_string()) throw std::invalid_argument(where + ": 'state' is not a string");
  if (state->get_string() != "done") {
    throw std::invalid_argument(where + ": the job did not finish (state " +
                                std::string(std::string_view(state->get_string()).substr(0, 64)) + ")");
  }
}

/// The job's vk_sha256 is the key's; a note when the key's form has no such digest.
void check_vk_digest(const json::object& job, const std::string& where, const report_key& key, report_check& out) {
  const auto* digest = job.if_contains("vk_sha256");
  if (digest == nullptr || !digest->is_string()) {
    throw std::invalid_argument(where + ": 'vk_sha256' is missing or not a string (a job names the key its proofs verify with)");
  }
  const std::string_view named = digest->get_string();
  if (!key.vk_sha256) {
    if (!out.notes.empty()) return;  // said once
    out.notes.push_back("the jobs' vk_sha256 (" + where + ": " + shown(named) + ") are not compared: " + key.source +
                        " is a verification_key.json, which lacks two of the vk's points (give the vk file or the key "
                        "directory to compare them)");
    return;
  }
  if (named != *key.vk_sha256) {
    throw std::invalid_argument(where + ": vk_sha256 " + shown(named) + " is not the SHA-256 of " + key.source + " (" +
                                *key.vk_sha256 + ")");
  }
}

/// The request's fields, and that the key supports recomputing its public inputs; refused before
/// anything is built.
job_request read_request(const json::object& job, const std::string& where, const report_key& key) {
  const auto* value = job.if_contains("request");
  if (!value || !value->is_object()) throw std::invalid_argument(where + ": 'request' is missing or not an object");
  const auto& request = value->get_object();
  const auto* circuit = request.if_contains("circuit");
  if (!circuit || !circuit->is_string()) throw std::invalid_argument(where + ": request.circuit is missing or not a string");
  job_request out;
  out.circuit = std::string(circuit->get_string());
  if (!r1cs::circuit_known(out.circuit)) {
    throw std::invalid_argument(where + ": request.circuit " + shown(out.circuit) + " is not a built-in circuit (" +
                                names_of_circuits() +
                                "), so its public inputs cannot be recomputed and its proofs say nothing about the "
                                "request (a circom proof is checked with --proof and --public)");
  }
  const std::uint64_t log_constraints = unsigned_at(request, "log_constraints", where + " request");
  if (log_constraints < r1cs::min_log_constraints || log_constraints > r1cs::max_log_constraints) {
    throw std::invalid_argument(where + ": request.log_constraints " + std::to_string(log_constraints) +
                                " is out of range (" + std::to_string(r1cs::min_log_constraints) + ".." +
                                std::to_string(r1cs::max_log_constraints) + ")");
  }
  out.log_constraints = static_cast<unsigned>(log_constraints);
  out.partitions = unsigned_at(request, "partitions", where + " request");
  out.seed = unsigned_at(request, "seed", where + " request");
  const std::string claimed = out.circuit + "/" + std::to_string(out.log_constraints);
  // The key's IC count: the circuit's public inputs, known without building it.
  const std::size_t circuit_public = r1cs::make_circuit(out.circuit, out.log_constraints, 0, 0)->shape().num_inputs - 1;
  if (circuit_public != key.num_public) {
    throw std::invalid_argument(where + ": " + claimed + " (request.circuit) has " + std::to_string(circuit_public) +
                                " public input(s); " + key.source + " takes " + std::to_string(key.num_public));
  }
  if (key.circuit) {
    if (*key.circuit != out.circuit || key.log_constraints != out.log_constraints) {
      throw std::invalid_argument(where + " is " + claimed + " but the key is for " + *key.circuit + "/" +
                                  std::to_string(key.log_constraints) + " (request.circuit, request.log_constraints)");
    }
  } else if (out.log_constraints > key.unnamed_max_log_constraints) {
    throw std::invalid_argument(where + ": request.log_constraints " + std::to_string(out.log_constraints) + " (" + claimed +
                                "): " + key.source + " does not say which circuit it is for, and with such a key the "
                                "public inputs are recomputed only up to 2^" +
                                std::to_string(key.unnamed_max_log_constraints) +
                                " constraints; give the key directory (its key.json names the circuit and size)");
  }
  return out;
}

/// The proof of a partition entry: 384 hex digits, every point checked.
groth16::proof proof_of(const json::object& p) {
  const auto* hex = p.if_contains("proof");
  if (!hex || !hex->is_string()) {
    std::string why = "no proof";
    if (const auto* error = p.if_contains("error"); error && error->is_string()) why += " (" + shown(error->get_string()) + ")";
    throw std::invalid_argument(why);
  }
  const std::string_view digits = hex->get_string();
  if (digits.size() % 2 != 0) throw std::invalid_argument("the proof's hex has an odd number of digits");
  if (digits.size() != 2 * groth16::proof_bytes) {
    throw std::invalid_argument("the proof is " + std::to_string(digits.size() / 2) + " bytes, not " +
                                std::to_string(groth16::proof_bytes));
  }
  try {
    return groth16::decode_proof_hex(digits);
  } catch (const groth16::proof_format_error& e) {
    throw std::invalid_argument(std::string("the proof does not decode: ") + e.what());
  }
}

class job_checker {
 public:
  job_checker(const report_key& key, const public_input_source& inputs, report_check& out)
      : key_(key), inputs_(inputs), out_(out) {}

  void check(const json::value& value, std::size_t position, bool lone_job) {
    const std::string where = job_label(value, position);
    ++out_.jobs;
    try {
      if (!value.is_object()) throw std::invalid_argument(where + ": not a JSON object");
      const auto& job = value.get_object();
      // Every listed partition counts in the summary, also those of a job refused as a whole.
      const auto* partitions = job.if_contains("partitions");
      if (!partitions || !partitions->is_array()) throw std::invalid_argument(where + ": 'partitions' is missing or not an array");
      out_.partitions += partitions->get_array().size();
      if (const auto* id = job.if_contains("job_id"); id && !ids_.insert(json::serialize(*id)).second) {
        throw std::invalid_argument(where + " appears twice in the report");
      }
      check_finished(job, where, lone_job);
      const job_request request = read_request(job, where, key_);
      check_vk_digest(job, where, key_, out_);
      const auto& entries = partitions->get_array();
      std::set<std::uint64_t> seen;
      for (const auto& entry : entries) check_partition(entry, where, request, seen);
      if (request.partitions > entries.size() + max_missing_named) {
        // The request's count is a claim; the listed entries bound the work and the messages.
        const auto in_range = static_cast<std::uint64_t>(std::distance(seen.begin(), seen.lower_bound(request.partitions)));
        out_.fail(where + ": the request says " + std::to_string(request.partitions) + " partitions but the job lists " +
                  std::to_string(entries.size()) + "; " + std::to_string(request.partitions - in_range) +
                  " partitions have no entry");
        return;
      }
      for (std::uint64_t index = 0; index < request.partitions; ++index) {
        if (!seen.count(index)) out_.fail(where + " partition " + std::to_string(index) + ": missing");
      }
    } catch (const std::invalid_argument& e) {
      out_.fail(e.what());
    }
  }

 private:
  void check_partition(const json::value& entry, const std::string& where, const job_request& request,
                       std::set<std::uint64_t>& seen) {
    std::string label = where + " partition ?";
    try {
      if (!entry.is_object()) throw std::invalid_argument("not a JSON object");
      const auto& p = entry.get_object();
      const auto index = unsigned_at(p, "index", "the partition");
      label = where + " partition " + std::to_string(index);
      if (!seen.insert(index).second) throw std::invalid_argument("appears twice");
      if (index >= request.partitions) {
        throw std::invalid_argument("index is beyond the job's " + std::to_string(request.partitions) + " partitions");
      }
      const groth16::proof proof = proof_of(p);
      const auto* written = p.if_contains("public_inputs");
      if (!written || !written->is_array()) throw std::invalid_argument("'public_inputs' is missing or not an array");
      if (written->get_array().size() != key_.num_public) {
        throw std::invalid_argument("it has " + std::to_string(written->get_array().size()) + " public inputs; " +
                                    key_.source + " takes " + std::to_string(key_.num_public));
      }
      std::vector<field::fr> inputs;
      try {
        inputs = groth16::public_inputs_from_snarkjs_json(*written);
      } catch (const groth16::proof_format_error& e) {
        throw std::invalid_argument(std::string("bad public_inputs: ") + e.what());
      }
      if (inputs_(request.circuit, request.log_constraints, request.seed, index) != inputs) {
        throw std::invalid_argument("public inputs do not match " + label + " of " + request.circuit + "/" +
                                    std::to_string(request.log_constraints) + " seed " + std::to_string(request.seed));
      }
      out_.proofs.push_back({label, proof, std::move(inputs)});
    } catch (const std::invalid_argument& e) {
      out_.fail(label + ": " + e.what());
    }
  }

  const report_key& key_;
  const public_input_source& inputs_;
  report_check& out_;
  std::set<std::string> ids_;
};

}  // namespace

report_check check_report(const json::value& document, const report_key& key, const public_input_source& inputs) {
  report_check out;
  const report_jobs found = jobs_of(document);
  if (!found.why.empty()) {
    out.not_a_report = found.why;
    return out;
  }
  job_checker checker(key, inputs, out);
  for (std::size_t i = 0; i < found.jobs.size(); ++i) checker.check(*found.jobs[i], i, found.lone_job);
  if (out.proofs.empty() && out.failure_count == 0) out.fail("no proofs found");
  return out;
}

}  // namespace coprove::app
