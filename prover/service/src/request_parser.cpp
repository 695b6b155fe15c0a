// The HTTP request parser: strict about shape (unknown fields, wrong types and out-of-range values
// are errors, never ignored) and bounded (body size and JSON depth) so that any byte string can be
// fed to it safely.
#include "coprove/service/request_parser.hpp"
#include "coprove/service/json_field.hpp"

#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace coprove::service {

namespace json = boost::json;

request_error::request_error(unsigned status, std::string code, const std::string& message, std::string allow)
    : std::runtime_error(message), status_(status), code_(std::move(code)), allow_(std::move(allow)) {}

namespace {

constexpr std::array<std::string_view, 6> job_fields = {"circuit", "log_constraints", "partitions", "seed",
                                                        "priority", "request_id"};
constexpr std::array<std::string_view, 4> priorities = {"low", "normal", "high", "critical"};

// Keeps client-supplied text short in messages: a hostile key must not make a huge error body.
std::string quoted(std::string_view text) {
  constexpr std::size_t max_shown = 48;
  std::string out = "'";
  for (char c : text.substr(0, max_shown)) {
    const auto byte = static_cast<unsigned char>(c);
    out += (byte >= 0x20 && byte < 0x7f) ? c : '?';  // printable ASCII only: safe in logs and JSON
  }
  if (text.size() > max_shown) out += "...";
  out += "'";
  return out;
}

// A job field read with the readers the configuration uses too; their refusal becomes the API's:
// 400 invalid_type for a wrong type, 422 out_of_range for a value out of range.
template <class Read>
auto job_field(std::string_view name, Read read) {
  try {
    return read();
  } catch (const json_field_error& e) {
    if (e.why() == json_field_error::reason::wrong_type)
      throw request_error(400, "invalid_type", "field '" + std::string(name) + "': " + e.what());
    throw request_error(422, "out_of_range", "field '" + std::string(name) + "' " + e.what());
  }
}

std::uint64_t unsigned_field(const json::value& v, std::string_view name) {
  return job_field(name, [&] { return json_unsigned(v, name); });
}

std::string string_field(const json::value& v, std::string_view name) {
  return job_field(name, [&] { return json_string(v, name); });
}

bool valid_circuit_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// A number in canonical decimal: digits only, no sign, no leading zero ("0" itself aside), so that
// one id has one spelling (a cache or a log keyed by the path sees one job under one name).
std::optional<std::uint64_t> parse_canonical_decimal(std::string_view text) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text.front() == '0')) return std::nullopt;
  std::uint64_t id = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, id);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return id;
}

// A number of seconds as a person writes it in a configuration: 300, 0.5 (not 300.000000).
std::string seconds_text(double seconds) {
  std::array<char, 32> text{};
  const auto [end, ec] = std::to_chars(text.data(), text.data() + text.size(), seconds);
  return ec == std::errc{} ? std::string(text.data(), end) : std::to_string(seconds);
}

double parse_wait(std::string_view query, const request_limits& limits) {
  double wait = 0.0;
  bool seen = false;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    const std::string_view key = pair.substr(0, eq);
    if (key != "wait") {
      throw request_error(400, "unknown_parameter", "unknown query parameter " + quoted(key) + " (known: wait)");
    }
    if (seen) throw request_error(400, "invalid_parameter", "query parameter 'wait' given twice");
    seen = true;
    if (eq == std::string_view::npos) {
      throw request_error(400, "invalid_parameter", "query parameter 'wait' needs a value in seconds");
    }
    const std::string_view value = pair.substr(eq + 1);
    const auto* end = value.data() + value.size();
    const auto [ptr, ec] = std::from_chars(value.data(), end, wait, std::chars_format::fixed);
    if (value.empty() || ec != std::errc{} || ptr != end || !std::isfinite(wait) || wait < 0.0) {
      throw request_error(400, "invalid_parameter",
                          "query parameter 'wait' must be a non-negative number of seconds, got " + quoted(value));
    }
    if (wait > limits.max_wait_seconds) {
      throw request_error(400, "invalid_parameter",
                          "query parameter 'wait' must be at most server.max_wait_seconds = " +
                              seconds_text(limits.max_wait_seconds) + ", got " + quoted(value));
    }
  }
  return wait;
}

// HEAD is allowed wherever GET is: the service answers it as GET without the body.
void require_method(std::string_view method, std::string_view allowed, std::string_view path) {
  if (method == allowed || (method == "HEAD" && allowed == "GET")) return;
  const std::string allow = allowed == "GET" ? "GET, HEAD" : std::string(allowed);
  throw request_error(405, "method_not_allowed",
                      "method " + quoted(method) + " not allowed on " + quoted(path) + " (allowed: " + allow + ")",
                      allow);
}

void require_no_query(std::string_view query, std::string_view path) {
  if (!query.empty()) {
    throw request_error(400, "unknown_parameter", quoted(path) + " takes no query parameters");
  }
}

// A SAX handler that finds the first key given twice in one object, at any depth. Boost.JSON keeps
// the last of duplicate keys silently; a client that sends two values for a field must hear which
// one is wrong rather than have one dropped.
class duplicate_key_finder {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  std::optional<std::string> duplicate;

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    keys_.emplace_back();
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) {
    keys_.pop_back();
    return true;
  }
  bool on_array_begin(boost::system::error_code&) { return true; }
  bool on_array_end(std::size_t, boost::system::error_code&) { return true; }
  bool on_key_part(json::string_view part, std::size_t, boost::system::error_code&) {
    key_.append(part.data(), part.size());
    return true;
  }
  bool on_key(json::string_view part, std::size_t, boost::system::error_code& ec) {
    key_.append(part.data(), part.size());
    if (!keys_.back().insert(key_).second) {
      duplicate = key_;
      ec = json::error::extra_data;  // stops the parse; the caller reads `duplicate`
      return false;
    }
    key_.clear();
    return true;
  }
  bool on_string_part(json::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_string(json::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_number_part(json::string_view, boost::system::error_code&) { return true; }
  bool on_int64(std::int64_t, json::string_view, boost::system::error_code&) { return true; }
  bool on_uint64(std::uint64_t, json::string_view, boost::system::error_code&) { return true; }
  bool on_double(double, json::string_view, boost::system::error_code&) { return true; }
  bool on_bool(bool, boost::system::error_code&) { return true; }
  bool on_null(boost::system::error_code&) { return true; }
  bool on_comment_part(json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(json::string_view, boost::system::error_code&) { return true; }

 private:
  std::vector<std::set<std::string>> keys_;  // the keys seen in each open object
  std::string key_;
};

// The first key given twice in one object of `body` (already known to be valid JSON), if any.
std::optional<std::string> duplicate_key(std::string_view body, const json::parse_options& options) {
  json::basic_parser<duplicate_key_finder> parser(options);
  boost::system::error_code ec;
  parser.write_some(false, body.data(), body.size(), ec);
  return parser.handler().duplicate;
}

}  // namespace

job_request parse_job_request(std::string_view body, const job_request& defaults, const request_limits& limits) {
  if (body.size() > limits.max_body_bytes) {
    throw request_error(413, "body_too_large",
                        "request body of " + std::to_string(body.size()) + " bytes exceeds server.max_body_bytes = " +
                            std::to_string(limits.max_body_bytes));
  }
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw request_error(400, "malformed_json", "request body is empty: send a JSON object such as {\"circuit\": \"mimc\"}");
  }

  json::parse_options options;
  options.max_depth = limits.max_json_depth;
  json::stream_parser parser({}, options);
  boost::system::error_code ec;
  const std::size_t consumed = parser.write(body.data(), body.size(), ec);
  if (!ec) parser.finish(ec);
  if (ec) {
    throw request_error(400, "malformed_json",
                        "request body is not valid JSON at byte " + std::to_string(consumed) + ": " + ec.message());
  }
  const json::value root = parser.release();
  if (const auto key = duplicate_key(body, options)) {
    throw request_error(400, "duplicate_field", "field " + quoted(*key) + " is given more than once");
  }
  if (!root.is_object()) {
    throw request_error(400, "invalid_type",
                        "request body must be a JSON object, got " + std::string(json_kind_name(root.kind())));
  }

  job_request request = defaults;
  for (const auto& [key, value] : root.get_object()) {
    if (key == "circuit") {
      const std::string name = string_field(value, key);
      if (name.size() > limits.max_circuit_name || !valid_circuit_name(name)) {
        throw request_error(422, "unknown_circuit", "unknown circuit " + quoted(name));
      }
      request.circuit = name;
    } else if (key == "log_constraints") {
      const std::uint64_t v = unsigned_field(value, key);
      const std::string range = "[" + std::to_string(limits.min_log_constraints) + ", " +
                                std::to_string(limits.max_log_constraints) + "]";
      if (v < limits.min_log_constraints) {
        throw request_error(422, "out_of_range",
                            "field 'log_constraints' must be in " + range + ", got " + std::to_string(v) + ": " +
                                std::to_string(limits.min_log_constraints) + " is the smallest circuit size");
      }
      if (v > limits.max_log_constraints) {
        throw request_error(422, "exceeds_memory_plan",
                            "field 'log_constraints' must be in " + range + ", got " + std::to_string(v) +
                                ": engine.max_log_constraints = " + std::to_string(limits.max_log_constraints) +
                                " is the largest job the memory plan is sized for");
      }
      request.log_constraints = static_cast<unsigned>(v);
    } else if (key == "partitions") {
      const std::uint64_t v = unsigned_field(value, key);
      if (v < 1 || v > limits.max_partitions) {
        throw request_error(422, "out_of_range",
                            "field 'partitions' must be in [1, " + std::to_string(limits.max_partitions) + "], got " +
                                std::to_string(v) + " (engine.max_partitions_per_job = " +
                                std::to_string(limits.max_partitions) + ")");
      }
      request.partitions = static_cast<std::size_t>(v);
    } else if (key == "seed") {
      request.seed = unsigned_field(value, key);
    } else if (key == "priority") {
      const std::string name = string_field(value, key);
      bool known = false;
      for (auto p : priorities) known = known || name == p;
      if (!known) {
        throw request_error(422, "out_of_range",
                            "field 'priority' must be low, normal, high or critical, got " + quoted(name));
      }
      request.priority = name;
    } else if (key == "request_id") {
      const std::string id = string_field(value, key);
      bool printable = !id.empty() && id.size() <= limits.max_request_id;
      for (char c : id) printable = printable && c > 0x20 && c < 0x7f;
      if (!printable) {
        throw request_error(422, "out_of_range",
                            "field 'request_id' must be 1 to " + std::to_string(limits.max_request_id) +
                                " printable ASCII characters without spaces, got " + quoted(id));
      }
      request.request_id = id;
    } else {
      std::string known;
      for (auto field : job_fields) known += (known.empty() ? "" : ", ") + std::string(field);
      throw request_error(400, "unknown_field", "unknown field " + quoted(key) + " (known: " + known + ")");
    }
  }
  return request;
}

route parse_route(std::string_view method, std::string_view target, const request_limits& limits) {
  const auto question = target.find('?');
  const std::string_view path = target.substr(0, question);
  const std::string_view query = question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);

  route r;
  if (path == "/healthz") {
    require_method(method, "GET", path);
    require_no_query(query, path);
    r.target = endpoint::health;
    return r;
  }
  if (path == "/metrics") {
    require_method(method, "GET", path);
    require_no_query(query, path);
    r.target = endpoint::metrics;
    return r;
  }
  if (path == "/v1/status") {
    require_method(method, "GET", path);
    require_no_query(query, path);
    r.target = endpoint::service_status;
    return r;
  }
  if (path == "/v1/jobs") {
    require_method(method, "POST", path);
    require_no_query(query, path);
    r.target = endpoint::submit_job;
    return r;
  }
  constexpr std::string_view jobs_prefix = "/v1/jobs/";
  if (path.substr(0, jobs_prefix.size()) == jobs_prefix) {
    std::string_view rest = path.substr(jobs_prefix.size());
    const auto slash = rest.find('/');
    const std::string_view id_text = rest.substr(0, slash);
    const std::string_view tail = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    const auto id = parse_canonical_decimal(id_text);
    if (!id) {
      throw request_error(404, "unknown_job",
                          "no job " + quoted(id_text) + ": job ids are decimal integers without leading zeros");
    }
    r.job_id = *id;
    if (tail.empty()) {
      if (method == "GET" || method == "HEAD") {
        r.target = endpoint::job_status;
      } else if (method == "DELETE") {
        r.target = endpoint::cancel_job;
      } else {
        throw request_error(405, "method_not_allowed",
                            "method " + quoted(method) + " not allowed on " + quoted(path) +
                                " (allowed: GET, HEAD, DELETE)",
                            "GET, HEAD, DELETE");
      }
      require_no_query(query, path);
      return r;
    }
    if (tail == "/result") {
      require_method(method, "GET", path);
      r.target = endpoint::job_result;
      r.wait_seconds = parse_wait(query, limits);
      return r;
    }
  }
  if (path == "/v1/circuits") {
    require_method(method, "GET", path);
    require_no_query(query, path);
    r.target = endpoint::list_circuits;
    return r;
  }
  constexpr std::string_view circuits_prefix = "/v1/circuits/";
  constexpr std::string_view proofs_suffix = "/proofs";
  if (path.substr(0, circuits_prefix.size()) == circuits_prefix && path.size() > circuits_prefix.size() + proofs_suffix.size() &&
      path.substr(path.size() - proofs_suffix.size()) == proofs_suffix) {
    const std::string_view name =
        path.substr(circuits_prefix.size(), path.size() - circuits_prefix.size() - proofs_suffix.size());
    if (name.find('/') == std::string_view::npos && name.size() <= limits.max_circuit_name) {
      require_method(method, "POST", path);
      require_no_query(query, path);
      r.target = endpoint::prove_circuit;
      r.circuit = std::string(name);
      return r;
    }
  }
  if (path == "/v1/keys") {
    if (method != "GET" && method != "POST")
      throw request_error(405, "method_not_allowed",
                          "method " + quoted(method) + " not allowed on " + quoted(path) + " (allowed: GET, POST)",
                          "GET, POST");
    require_no_query(query, path);
    r.target = method == "GET" ? endpoint::list_keys : endpoint::load_key;
    return r;
  }
  constexpr std::string_view keys_prefix = "/v1/keys/";
  if (path.substr(0, keys_prefix.size()) == keys_prefix && path.size() > keys_prefix.size() &&
      (path.size() < 3 || path.substr(path.size() - 3) != "/vk")) {
    // /v1/keys/{id}: a built-in circuit's "circuit/log_constraints" or a zkey circuit's name.
    const std::string_view id = path.substr(keys_prefix.size());
    if (id.size() > limits.max_circuit_name + 8)
      throw request_error(404, "unknown_key", "no key " + quoted(id.substr(0, 64)) + ": the id is too long");
    require_method(method, "DELETE", path);
    r.target = endpoint::evict_key;
    r.key_id = std::string(id);
    if (query == "cancel=true") {
      r.cancel_jobs = true;
    } else if (!query.empty() && query != "cancel=false") {
      throw request_error(400, "bad_query",
                          "unknown query " + quoted(query) + " on " + quoted(path) + " (allowed: cancel=true, cancel=false)");
    }
    return r;
  }
  if (path.substr(0, keys_prefix.size()) == keys_prefix) {
    // /v1/keys/{circuit}/{log_constraints}/vk
    const std::string_view rest = path.substr(keys_prefix.size());
    const auto first = rest.find('/');
    const auto second = first == std::string_view::npos ? first : rest.find('/', first + 1);
    if (second != std::string_view::npos && rest.substr(second) == "/vk" && first > 0) {
      const std::string_view log_text = rest.substr(first + 1, second - first - 1);
      const auto log = parse_canonical_decimal(log_text);
      if (!log || *log > 64)
        throw request_error(404, "unknown_key", "no key for " + quoted(rest.substr(0, second)) +
                                                    ": the size is a decimal log_constraints without leading zeros");
      require_method(method, "GET", path);
      r.target = endpoint::verifying_key;
      r.circuit = std::string(rest.substr(0, first));
      r.log_constraints = static_cast<unsigned>(*log);
      if (query == "format=snarkjs") {
        r.snarkjs_format = true;
      } else if (!query.empty() && query != "format=bellman") {
        throw request_error(400, "bad_query",
                            "unknown query " + quoted(query) + " on " + quoted(path) +
                                " (allowed: format=bellman, format=snarkjs)");
      }
      return r;
    }
  }
  throw request_error(404, "not_found", "no endpoint " + quoted(path));
}

std::string error_body(std::string_view code, std::string_view message) {
  json::object inner;
  inner["code"] = code;
  inner["message"] = message;
  json::object outer;
  outer["error"] = std::move(inner);
  return json::serialize(outer);
}

std::string_view endpoint_name(endpoint e) noexcept {
  switch (e) {
    case endpoint::submit_job: return "submit_job";
    case endpoint::job_status: return "job_status";
    case endpoint::job_result: return "job_result";
    case endpoint::cancel_job: return "cancel_job";
    case endpoint::service_status: return "service_status";
    case endpoint::metrics: return "metrics";
    case endpoint::health: return "health";
    case endpoint::verifying_key: return "verifying_key";
    case endpoint::list_circuits: return "list_circuits";
    case endpoint::prove_circuit: return "prove_circuit";
    case endpoint::list_keys: return "list_keys";
    case endpoint::load_key: return "load_key";
    case endpoint::evict_key: return "evict_key";
  }
  return "unknown";
}

}  // namespace coprove::service
