// A bounded randomized test of the request parser (the libFuzzer target in fuzz/ runs the same
// checks for longer where clang is available): thousands of mutated bodies and targets, each of
// which must either parse into a request within the limits or be refused with a request_error
// carrying a 4xx status, a code and a short message; nothing else may escape.
#include <coprove/service/request_parser.hpp>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <random>
#include <string>
#include <vector>

using namespace coprove::service;

namespace {

const std::vector<std::string> body_seeds = {
    R"({})",
    R"({"circuit": "mimc", "log_constraints": 12, "partitions": 4, "seed": 7})",
    R"({"circuit": "merkle", "partitions": 1})",
    R"({"seed": 18446744073709551615})",
    R"({"log_constraints": -3})",
    R"({"partitions": [1, 2, {"x": null}]})",
    R"({"circuit": "m\u00e9mc"})",
    R"([{"a": 1.5e300}, true, false, null])",
    R"("just a string")",
};

const std::vector<std::string> target_seeds = {
    "/healthz", "/metrics", "/v1/status", "/v1/jobs", "/v1/jobs/12", "/v1/jobs/12/result?wait=1.5",
    "/v1/jobs/0/result?wait=0&", "/v1/jobs/18446744073709551615",
};

const std::vector<std::string> methods = {"GET", "POST", "DELETE", "PUT", "", "get", "GET\r\n"};

const std::vector<std::string> tokens = {
    "{", "}", "[", "]", ",", ":", "\"", "\\", "\"circuit\"", "\"partitions\"", "\"seed\"", "\"log_constraints\"",
    "-", "0", "1e400", "-0", "4096", "99999999999999999999999", "null", "true", "\\u0000", "\xff", "\xc3\x28",
    "/", "?", "&", "=", "wait", "%2F", "..", "result", "\r\n", " ",
};

std::string mutate(std::string input, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> op_dist(0, 6);
  const int rounds = 1 + static_cast<int>(rng() % 4);
  for (int round = 0; round < rounds; ++round) {
    const std::size_t pos = input.empty() ? 0 : rng() % (input.size() + 1);
    switch (op_dist(rng)) {
      case 0:  // flip a bit
        if (!input.empty()) input[pos % input.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:  // insert a random byte
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(pos), static_cast<char>(rng() % 256));
        break;
      case 2:  // delete a run
        if (!input.empty()) input.erase(pos % input.size(), 1 + rng() % 8);
        break;
      case 3:  // insert a token
        input.insert(pos, tokens[rng() % tokens.size()]);
        break;
      case 4:  // truncate
        input.resize(pos);
        break;
      case 5:  // duplicate a slice
        if (!input.empty()) {
          const std::size_t from = rng() % input.size();
          input.insert(pos, input.substr(from, 1 + rng() % 16));
        }
        break;
      case 6:  // deep nesting
        input.insert(pos, std::string(rng() % 40, rng() % 2 ? '[' : '{'));
        break;
    }
  }
  return input;
}

// Empty when the outcome is acceptable, otherwise what was wrong.
std::string check_body(const std::string& body, const request_limits& limits) {
  try {
    const job_request r = parse_job_request(body, job_request{}, limits);
    if (r.circuit.empty() || r.circuit.size() > limits.max_circuit_name) return "accepted a bad circuit name";
    for (char c : r.circuit) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return "bad circuit character";
    }
    if (r.log_constraints < limits.min_log_constraints || r.log_constraints > limits.max_log_constraints) {
      return "log_constraints out of range";
    }
    if (r.partitions < 1 || r.partitions > limits.max_partitions) return "partitions out of range";
  } catch (const request_error& e) {
    if (e.status() < 400 || e.status() > 499) return "status " + std::to_string(e.status());
    if (e.code().empty()) return "empty code";
    if (std::string_view(e.what()).empty() || std::string_view(e.what()).size() > 400) return "message size";
    boost::system::error_code ec;
    (void)boost::json::parse(error_body(e.code(), e.what()), ec);
    if (ec) return "error body is not JSON";
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  }
  return {};
}

std::string check_route(const std::string& method, const std::string& target, const request_limits& limits) {
  try {
    const route r = parse_route(method, target, limits);
    if (r.wait_seconds < 0.0 || r.wait_seconds > limits.max_wait_seconds) return "wait out of range";
    if (r.target == endpoint::job_result && target.find("/result") == std::string::npos) return "routed to result";
  } catch (const request_error& e) {
    if (e.status() < 400 || e.status() > 499) return "status " + std::to_string(e.status());
    if (e.code().empty()) return "empty code";
    if (std::string_view(e.what()).size() > 400) return "message size";
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("thousands of mutated job bodies parse or are refused cleanly", "[app][request_parser][fuzz][cpu]") {
  std::mt19937_64 rng(0xC0FFEE);
  request_limits limits;
  limits.max_body_bytes = 4096;
  std::size_t accepted = 0, refused = 0;
  std::string first_problem;
  for (int i = 0; i < 6000; ++i) {
    const std::string body = mutate(body_seeds[rng() % body_seeds.size()], rng);
    const std::string problem = check_body(body, limits);
    if (!problem.empty() && first_problem.empty()) first_problem = problem + " for input: " + body;
    try {
      (void)parse_job_request(body, job_request{}, limits);
      ++accepted;
    } catch (const request_error&) {
      ++refused;
    } catch (...) {
    }
  }
  INFO(first_problem);
  CHECK(first_problem.empty());
  // The mutations reach both outcomes: some bodies still parse, most are refused.
  CHECK(accepted > 50);
  CHECK(refused > 1000);
}

TEST_CASE("thousands of mutated request targets route or are refused cleanly", "[app][request_parser][fuzz][cpu]") {
  std::mt19937_64 rng(0xBADC0DE);
  const request_limits limits;
  std::string first_problem;
  for (int i = 0; i < 6000; ++i) {
    const std::string target = mutate(target_seeds[rng() % target_seeds.size()], rng);
    const std::string& method = methods[rng() % methods.size()];
    const std::string problem = check_route(method, target, limits);
    if (!problem.empty() && first_problem.empty()) first_problem = problem + " for " + method + " " + target;
  }
  INFO(first_problem);
  CHECK(first_problem.empty());
}

TEST_CASE("random valid job bodies round-trip through the parser", "[app][request_parser][fuzz][cpu]") {
  std::mt19937_64 rng(42);
  const request_limits limits;
  std::string first_problem;
  for (int i = 0; i < 2000; ++i) {
    job_request expected;
    boost::json::object body;
    if (rng() % 2) body["circuit"] = expected.circuit = (rng() % 2) ? "mimc" : "merkle";
    if (rng() % 2) {
      expected.log_constraints = limits.min_log_constraints +
                                 static_cast<unsigned>(rng() % (limits.max_log_constraints - limits.min_log_constraints + 1));
      body["log_constraints"] = expected.log_constraints;
    }
    if (rng() % 2) body["partitions"] = expected.partitions = 1 + rng() % limits.max_partitions;
    if (rng() % 2) body["seed"] = expected.seed = rng();
    const auto parsed = parse_job_request(boost::json::serialize(body), job_request{}, limits);
    if (parsed.circuit != expected.circuit || parsed.log_constraints != expected.log_constraints ||
        parsed.partitions != expected.partitions || parsed.seed != expected.seed) {
      if (first_problem.empty()) first_problem = boost::json::serialize(body);
    }
  }
  INFO(first_problem);
  CHECK(first_problem.empty());
}
