// The checks `coprove verify` makes on a run report or a job result before any pairing: from the
// parsed JSON and what is known of the key to the proofs to check and the failures found. No file
// is read here, so the checks can be tested (and fuzzed) on any JSON value.
//
// The work is bounded by what the document holds and by the key, never by what the document
// claims: a request's partition count larger than the partitions listed is one failure with the
// two counts; a circuit's public inputs are recomputed only at the size the key is for (its
// key.json), or up to a small size for a key that does not say its circuit; at most
// max_kept_failures messages are kept (the rest are counted).
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/groth16/proof.hpp>

#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::app {

/// The largest circuit (log2 of its domain) whose public inputs verify recomputes for a key that
/// does not say which circuit it is for (a bare vk file or verification_key.json): 2^20 rows cost
/// tens of MiB and a fraction of a second a partition. A key directory's key.json says its
/// circuit and size, and that size is recomputed whatever it is.
inline constexpr unsigned unnamed_key_max_log_constraints = 20;

/// Failure messages kept in a report_check; further failures are only counted.
inline constexpr std::size_t max_kept_failures = 1000;

/// What is known of the key the proofs are checked against.
struct report_key {
  std::string source;  ///< for messages: "the key 'keys/mimc-10'", "the key 'vk.json'"
  /// Public inputs the key takes (its IC count less the constant one).
  std::size_t num_public = 0;
  /// SHA-256 (lowercase hex) of bellman's vk bytes; absent for a verification_key.json, which
  /// lacks two of the vk's points.
  std::optional<std::string> vk_sha256;
  /// The built-in circuit and size the key is for (a key directory's key.json); absent when the key
  /// does not say.
  std::optional<std::string> circuit;
  unsigned log_constraints = 0;
  /// Without `circuit`: the largest log_constraints whose public inputs are recomputed.
  unsigned unnamed_max_log_constraints = unnamed_key_max_log_constraints;
};

/// A decoded proof whose written public inputs are those recomputed from its job's request.
struct checked_proof {
  std::string label;  ///< "job 3 partition 1"
  groth16::proof proof;
  std::vector<field::fr> inputs;
};

/// What check_report found.
struct report_check {
  /// Non-empty when the document is neither a run report nor a job result (nothing was checked).
  std::string not_a_report;
  std::size_t jobs = 0, partitions = 0;
  std::vector<checked_proof> proofs;
  /// "job 3 partition 1: reason"; the first max_kept_failures of failure_count.
  std::vector<std::string> failures;
  std::size_t failure_count = 0;
  std::vector<std::string> notes;

  void fail(std::string message);
  bool passed() const noexcept { return not_a_report.empty() && failure_count == 0; }
};

/// The public inputs (without the constant one) of partition `partition` of built-in circuit
/// `circuit` at 2^log_constraints with `seed`: its witness synthesized.
using public_input_source = std::function<std::vector<field::fr>(const std::string& circuit, unsigned log_constraints,
                                                                 std::uint64_t seed, std::uint64_t partition)>;

/// public_input_source of the built-in circuits (r1cs::make_circuit and synthesis).
std::vector<field::fr> builtin_public_inputs(const std::string& circuit, unsigned log_constraints, std::uint64_t seed,
                                             std::uint64_t partition);

/// Checks every job of `document` (a run report {"results": [JOB...]} or one JOB) against `key`:
/// the job finished (state "done"; a lone job result of the service, without state, says
/// result_kind "proof"), its job_id is not repeated, its vk_sha256 is the key's, its request
/// names a built-in circuit the key supports, every partition is listed once with a proof that
/// decodes with every point check and the public inputs that `inputs` recomputes. Never throws
/// for anything in `document`.
report_check check_report(const boost::json::value& document, const report_key& key,
                          const public_input_source& inputs = builtin_public_inputs);

// ---- shared with the evaluation-record check ----

/// The jobs of a run report or the one job of a job result; empty with `why` set when the
/// document is neither.
struct report_jobs {
  std::vector<const boost::json::value*> jobs;
  bool lone_job = false;  ///< a job result, not a run report
  std::string why;
};
report_jobs jobs_of(const boost::json::value& document);

/// "job 7", or "result 2" for a job without an id.
std::string job_label(const boost::json::value& job, std::size_t position);

/// The non-negative integer at `key` of `o`; std::invalid_argument naming `where` and the key.
std::uint64_t unsigned_at(const boost::json::object& o, std::string_view key, const std::string& where);

}  // namespace coprove::app
