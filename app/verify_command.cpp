// `coprove verify FILE`: checks every evaluation record of a result (GET /v1/jobs/{id}/result) or
// a run report (coprove run --json) from the five field elements alone:
// h(zeta) * (zeta^n - 1) == a(zeta) * b(zeta) - c(zeta), n = 2^log_constraints. A job whose
// records are missing, duplicated or malformed fails as well.
#include "cli.hpp"
#include "commands.hpp"

#include <coprove/field/evaluation.hpp>

#include <boost/json.hpp>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

namespace coprove::app {

namespace json = boost::json;

namespace {

struct verify_totals {
  std::size_t jobs = 0, records = 0, verified = 0;
  std::vector<std::string> failures;
};

std::uint64_t unsigned_at(const json::object& o, std::string_view key, const std::string& where) {
  const auto* v = o.if_contains(key);
  if (v && v->is_uint64()) return v->get_uint64();
  if (v && v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
  throw std::invalid_argument(where + ": '" + std::string(key) + "' is missing or not a non-negative integer");
}

void verify_result(const json::value& value, std::size_t position, verify_totals& totals) {
  std::string where = "result " + std::to_string(position);
  if (!value.is_object()) {
    totals.failures.push_back(where + ": not a JSON object");
    return;
  }
  const auto& result = value.get_object();
  try {
    if (const auto* id = result.if_contains("job_id"); id && (id->is_uint64() || id->is_int64())) {
      where = "job " + json::serialize(*id);
    }
    ++totals.jobs;
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

}  // namespace

int verify_command(const std::vector<std::string>& args) {
  const command_line cl = parse_command_line("verify", args, {}, false, 1);
  if (cl.help) {
    std::cout << command_help("verify", "FILE", {}, false)
              << "\nFILE is a run report (coprove run --json) or a job result (GET /v1/jobs/{id}/result).\n";
    return exit_ok;
  }
  if (cl.positional.empty()) throw usage_error("coprove verify: missing FILE (a run report or a job result)");
  const std::string path = cl.positional.front();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error("coprove verify: cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  const json::value document = json::parse(text.str(), ec);
  if (ec) {
    std::cerr << "coprove verify: '" << path << "' is not valid JSON: " << ec.message() << "\n";
    return exit_failed;
  }

  verify_totals totals;
  const json::object* root = document.if_object();
  if (root && root->contains("results")) {
    const auto& results = root->at("results");
    if (!results.is_array()) {
      std::cerr << "coprove verify: '" << path << "': 'results' is not an array\n";
      return exit_failed;
    }
    std::size_t position = 0;
    for (const auto& r : results.get_array()) verify_result(r, position++, totals);
  } else if (root && root->contains("partitions") && root->at("partitions").is_array()) {
    verify_result(document, 0, totals);
  } else {
    std::cerr << "coprove verify: '" << path
              << "' is neither a run report (with 'results') nor a job result (with 'partitions')\n";
    return exit_failed;
  }
  if (totals.records == 0) totals.failures.push_back("no evaluation records found");

  for (const auto& failure : totals.failures) std::cerr << "coprove verify: FAILED " << failure << "\n";
  std::cout << "coprove verify: " << totals.verified << " of " << totals.records << " records in " << totals.jobs
            << " job(s) verify" << (totals.failures.empty() ? "" : "; " + std::to_string(totals.failures.size()) + " problem(s)")
            << "\n";
  return totals.failures.empty() ? exit_ok : exit_failed;
}

}  // namespace coprove::app
