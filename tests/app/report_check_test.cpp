// check_report without files: its work and its messages are bounded by what the document holds,
// it recomputes nothing for a job it refuses, and it never throws on any JSON.
#include "proof_report_support.hpp"
#include "report_check.hpp"

#include <limits>

using namespace coprove;
using namespace coprove::test;
namespace json = boost::json;

namespace {

const proof_report_fixture& fixture() { return proof_report_fixture::get(); }

/// What the fixture's key directory says of itself.
app::report_key named_key() {
  app::report_key key;
  key.source = "the test key";
  key.num_public = 1;
  key.vk_sha256 = fixture().keys.metadata.vk_sha256;
  key.circuit = "mimc";
  key.log_constraints = 10;
  return key;
}

/// The built-in public inputs, counting the partitions recomputed.
struct counting_source {
  std::size_t calls = 0;
  app::public_input_source source() {
    return [this](const std::string& circuit, unsigned log_constraints, std::uint64_t seed, std::uint64_t partition) {
      ++calls;
      return app::builtin_public_inputs(circuit, log_constraints, seed, partition);
    };
  }
};

}  // namespace

TEST_CASE("check_report passes the fixture's report and recomputes each partition once", "[app][report_check][cpu]") {
  counting_source counted;
  const auto checked = app::check_report(fixture().report, named_key(), counted.source());
  INFO((checked.failures.empty() ? "" : checked.failures.front()));
  CHECK(checked.passed());
  CHECK(checked.jobs == 2);
  CHECK(checked.partitions == 5);
  CHECK(checked.proofs.size() == 5);
  CHECK(counted.calls == 5);
}

TEST_CASE("check_report bounds its work by the document, not by its claims", "[app][report_check][cpu]") {
  counting_source counted;
  json::object report = fixture().report;
  auto& first = report.at("results").as_array()[0].as_object();

  SECTION("a partition count of 2^64 - 1 is one failure with the counts") {
    first.at("request").as_object()["partitions"] = std::numeric_limits<std::uint64_t>::max();
    const auto checked = app::check_report(report, named_key(), counted.source());
    REQUIRE(checked.failure_count == 1);
    CHECK(checked.failures[0] == "job 1: the request says 18446744073709551615 partitions but the job lists 3; "
                                 "18446744073709551612 partitions have no entry");
    CHECK(checked.proofs.size() == 5);
  }
  SECTION("a size the key does not support is refused before anything is recomputed") {
    first.at("request").as_object()["log_constraints"] = 27;
    app::report_key unnamed = named_key();
    unnamed.circuit.reset();
    const auto checked = app::check_report(report, unnamed, counted.source());
    CHECK(checked.failure_count == 1);
    CHECK(counted.calls == 2);  // job 2's partitions only
    CHECK(checked.partitions == 5);
  }
  SECTION("a refused job recomputes nothing: unknown circuit, other key, not done") {
    first.at("request").as_object()["circuit"] = "mimc ";
    auto& second = report.at("results").as_array()[1].as_object();
    second["vk_sha256"] = std::string(64, '0');
    report.at("results").as_array().push_back(second);
    report.at("results").as_array().back().as_object()["job_id"] = 3;
    report.at("results").as_array().back().as_object()["state"] = "failed";
    const auto checked = app::check_report(report, named_key(), counted.source());
    CHECK(checked.failure_count == 3);
    CHECK(counted.calls == 0);
    CHECK(checked.proofs.empty());
  }
  SECTION("a key whose IC count is not the circuit's is refused before anything is recomputed") {
    app::report_key wider = named_key();
    wider.circuit.reset();
    wider.num_public = 3;
    const auto checked = app::check_report(report, wider, counted.source());
    CHECK(checked.failure_count == 2);
    CHECK(checked.failures[0] == "job 1: mimc/10 (request.circuit) has 1 public input(s); the test key takes 3");
    CHECK(counted.calls == 0);
  }
  SECTION("failure messages are kept up to max_kept_failures, the rest counted") {
    json::array junk;
    for (std::size_t i = 0; i < app::max_kept_failures + 500; ++i) junk.push_back(nullptr);
    first["partitions"] = std::move(junk);
    first.at("request").as_object()["partitions"] = app::max_kept_failures + 500;
    const auto checked = app::check_report(report, named_key(), counted.source());
    CHECK(checked.failures.size() == app::max_kept_failures);
    CHECK(checked.failure_count > app::max_kept_failures + 500);
  }
}

TEST_CASE("check_report never throws on JSON that is not a report", "[app][report_check][cpu]") {
  counting_source counted;
  const json::object job = fixture().report.at("results").as_array()[0].as_object();
  std::vector<json::value> documents = {
      nullptr, 1, "text", json::array{}, json::object{}, json::object{{"results", 5}}, json::object{{"results", json::array{}}},
      json::object{{"results", json::array{nullptr, 1, json::object{}, json::array{}}}},
      json::object{{"partitions", json::array{}}},
      json::object{{"partitions", json::array{nullptr, 7, json::object{{"index", -1}}}}},
  };
  // The fixture's job with each field replaced by values of every kind.
  for (const auto* field : {"state", "vk_sha256", "request", "partitions"}) {
    for (const json::value& v : {json::value(nullptr), json::value(-1), json::value(1.5), json::value("x"),
                                 json::value(json::array{}), json::value(json::object{})}) {
      json::object changed = job;
      changed[field] = v;
      documents.push_back(changed);
      documents.push_back(json::object{{"results", json::array{changed}}});
    }
  }
  for (const auto* field : {"circuit", "log_constraints", "partitions", "seed"}) {
    for (const json::value& v : {json::value(nullptr), json::value(-1), json::value(std::numeric_limits<std::uint64_t>::max()),
                                 json::value("mimc "), json::value(json::array{})}) {
      json::object changed = job;
      changed.at("request").as_object()[field] = v;
      documents.push_back(json::object{{"results", json::array{changed}}});
    }
  }
  for (const auto& document : documents) {
    INFO(json::serialize(document));
    app::report_check checked;
    REQUIRE_NOTHROW(checked = app::check_report(document, named_key(), counted.source()));
    CHECK_FALSE(checked.passed());
  }
}
