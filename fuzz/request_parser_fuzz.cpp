// libFuzzer target for the HTTP request parser of `coprove serve` (built with clang
// -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh). The first byte picks what the rest is
// fed to: a job body, or a method and request target split at the first newline. Any outcome but
// a request within the limits or a request_error with a 4xx status is a crash.
#include <coprove/service/request_parser.hpp>

#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace coprove::service;

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

void check_refusal(const request_error& e) {
  check(e.status() >= 400 && e.status() <= 499);
  check(!e.code().empty());
  check(std::string_view(e.what()).size() <= 400);
  boost::system::error_code ec;
  (void)boost::json::parse(error_body(e.code(), e.what()), ec);
  check(!ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  request_limits limits;
  limits.max_body_bytes = 4096;
  if (data[0] % 2 == 0) {
    try {
      const job_request r = parse_job_request(input, job_request{}, limits);
      check(!r.circuit.empty() && r.circuit.size() <= limits.max_circuit_name);
      check(r.log_constraints >= limits.min_log_constraints && r.log_constraints <= limits.max_log_constraints);
      check(r.partitions >= 1 && r.partitions <= limits.max_partitions);
    } catch (const request_error& e) {
      check_refusal(e);
    }
  } else {
    const auto newline = input.find('\n');
    const std::string_view method = input.substr(0, newline);
    const std::string_view target = newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);
    try {
      const route r = parse_route(method, target, limits);
      check(r.wait_seconds >= 0.0 && r.wait_seconds <= limits.max_wait_seconds);
    } catch (const request_error& e) {
      check_refusal(e);
    }
  }
  return 0;
}
