// libFuzzer target for `coprove verify REPORT --vk KEY` (app::verify_command, in process) on a
// report of mimc/10 proofs, checked twice: against that key's directory (fuzz/fixtures/
// keys-mimc-10: its vk and key.json) and against its bare vk file, which says nothing of the
// circuit's size. Any bytes end in an exit status, never in a crash, a hang or work out of
// proportion to the report (a claimed partition count or circuit size bounds nothing; the report
// and the key do). A report that verifies (exit 0) has recomputed every job's public inputs, so
// names only built-in circuits.
#include "fuzz_support.hpp"

#include "cli.hpp"
#include "commands.hpp"

#include <coprove/r1cs/circuits.hpp>

#include <boost/json/parse.hpp>

#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

using namespace coprove;
namespace json = boost::json;

namespace {

/// The circuit names of the jobs in a report ({"results": [JOB...]}) or a job result (one JOB).
std::vector<std::string> job_circuits(std::string_view text) {
  std::vector<std::string> names;
  boost::system::error_code ec;
  const json::value document = json::parse(text, ec);
  if (ec || !document.is_object()) return names;
  std::vector<const json::value*> jobs;
  if (const auto* results = document.get_object().if_contains("results"); results && results->is_array()) {
    for (const auto& job : results->get_array()) jobs.push_back(&job);
  } else {
    jobs.push_back(&document);
  }
  for (const auto* job : jobs) {
    const auto* o = job->if_object();
    const auto* request = o ? o->if_contains("request") : nullptr;
    const auto* circuit = request && request->is_object() ? request->get_object().if_contains("circuit") : nullptr;
    names.push_back(circuit && circuit->is_string() ? std::string(circuit->get_string()) : std::string());
  }
  return names;
}

/// `coprove verify PATH --vk KEY`'s exit status; fails on what coprove's main would not turn into
/// one, and on a verified report that names a circuit that is not built in.
void verify(const std::string& path, const std::string& key, std::string_view text) {
  int status = -1;
  try {
    status = app::verify_command({path, "--vk", key});
  } catch (const std::bad_alloc& e) {
    fuzz::unexpected(e);
  } catch (const std::length_error& e) {
    fuzz::unexpected(e);
  } catch (const std::exception&) {
    return;  // coprove's main says what() and exits 1 (2 for a usage_error)
  }
  fuzz::check(status == app::exit_ok || status == app::exit_failed || status == app::exit_usage,
              "verify returned an exit status it does not document: " + std::to_string(status));
  if (status != app::exit_ok) return;
  for (const auto& name : job_circuits(text)) {
    fuzz::check(r1cs::circuit_known(name), "a report verified whose job names circuit '" + name +
                                               "', which is not built in (its public inputs were not recomputed)");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::silence_streams();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::write_scratch("report.json", {data, size}).string();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  verify(path, fuzz::fixture("keys-mimc-10").string(), text);
  verify(path, fuzz::fixture("keys-mimc-10/vk").string(), text);
  return 0;
}
