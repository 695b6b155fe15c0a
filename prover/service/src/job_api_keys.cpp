// The job API's keys (see job_api.hpp): GET /v1/keys lists them, POST /v1/keys loads a key
// directory or zkey that lies under server.key_roots (the network names a file, the configuration
// decides which files may be named), DELETE /v1/keys/{id} evicts one. The engine reads and checks
// a key on its CPU executor; these handlers only await it.
#include "coprove/service/job_api.hpp"

#include <coprove/engine/engine.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <system_error>

namespace coprove::service {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

bool within(const fs::path& path, const fs::path& root) {
  const auto [root_end, path_at] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  (void)path_at;
  return root_end == root.end();
}

std::string roots_text(const std::vector<fs::path>& roots) {
  std::string out;
  for (const fs::path& root : roots) out += (out.empty() ? "" : ", ") + root.string();
  return out;
}

}  // namespace

request_error key_refusal(std::error_code ec, const std::string& message) {
  using engine::engine_errc;
  if (ec == engine_errc::key_exists) return {409, "key_exists", message};
  if (ec == engine_errc::key_in_use)
    return {409, "key_in_use", message + " (DELETE /v1/keys/{id}?cancel=true cancels them)"};
  if (ec == engine_errc::unknown_key) return {404, "unknown_key", message};
  if (ec == engine_errc::key_does_not_fit) return {507, "key_does_not_fit", message};
  if (ec == engine_errc::key_refused) return {422, "key_refused", message};
  if (ec == engine_errc::shut_down) return {503, "shutting_down", message};
  return {500, "internal_error", message.empty() ? ec.message() : message};
}

fs::path resolve_key_path(std::string_view requested, const std::vector<fs::path>& roots) {
  if (roots.empty())
    throw request_error(403, "key_path_forbidden",
                        "keys are not loaded over the network: server.key_roots names no folder");
  if (requested.empty() || requested.size() > 4096 || requested.find('\0') != std::string_view::npos)
    throw request_error(400, "bad_key_path", "a key's path is 1 to 4096 characters without NUL");
  const fs::path asked{std::string(requested)};
  bool inside = false;
  for (const fs::path& root : roots) {
    std::error_code ec;
    const fs::path base = fs::canonical(root, ec);
    if (ec) continue;  // an absent root holds nothing
    // Symlinks of the part that exists resolved, `..` and `.` folded: what would be opened.
    const fs::path resolved = fs::weakly_canonical(asked.is_absolute() ? asked : base / asked, ec);
    if (ec || !within(resolved, base)) continue;
    inside = true;
    if (fs::exists(resolved, ec)) return resolved;
  }
  if (inside)
    throw request_error(404, "key_not_found",
                        "no key '" + asked.string() + "' under server.key_roots (" + roots_text(roots) + ")");
  throw request_error(403, "key_path_forbidden",
                      "'" + asked.string() + "' is outside server.key_roots (" + roots_text(roots) +
                          ") once symlinks and '..' are resolved");
}

api_response job_api::list_keys() const {
  json::array keys;
  std::size_t host_bytes = 0;
  for (const engine::key_info& k : eng_.keys()) {
    host_bytes += k.host_bytes;
    keys.push_back(k.to_json());
  }
  return api_response::json_body(200, json::object{{"keys", std::move(keys)},
                                                   {"host_bytes", host_bytes},
                                                   {"device_bytes", eng_.backend().resident_key_bytes()},
                                                   {"key_memory_bytes", eng_.plan().key_bytes}});
}

asio::awaitable<api_response> job_api::load_key(const api_request& req) {
  if (stopping_ || !accepting_)
    throw request_error(503, "shutting_down", "the service is shutting down and loads no keys");
  std::string_view media = std::string_view(req.content_type).substr(0, req.content_type.find(';'));
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
  if (!boost::beast::iequals(media, "application/json"))
    throw request_error(415, "unsupported_media_type",
                        "a key to load is named in a body sent with Content-Type: application/json, got '" +
                            std::string(std::string_view(req.content_type).substr(0, 64)) + "'");
  if (req.body.size() > cfg_.limits.max_body_bytes)
    throw request_error(413, "body_too_large",
                        "request body of " + std::to_string(req.body.size()) +
                            " bytes exceeds server.max_body_bytes = " + std::to_string(cfg_.limits.max_body_bytes));
  std::error_code parse_error;
  const json::value body = json::parse(req.body, parse_error);
  if (parse_error || !body.is_object())
    throw request_error(400, "bad_json", "the body is not a JSON object: {\"path\": \"<key directory or zkey>\"}");
  const json::object& fields = body.as_object();
  for (const auto& [name, value] : fields)
    if (name != "path")
      throw request_error(400, "unknown_field", "unknown field '" + std::string(name) + "' (allowed: path)");
  const json::value* path = fields.if_contains("path");
  if (!path || !path->is_string())
    throw request_error(400, "bad_field", "path: a string naming a key directory or a zkey under server.key_roots");
  const fs::path resolved = resolve_key_path(std::string_view(path->as_string()), cfg_.key_roots);
  if (!cfg_.key_loader)
    throw request_error(403, "key_path_forbidden", "this service loads no keys over the network");
  engine::key_source source;
  try {
    source = cfg_.key_loader(resolved);
  } catch (const std::exception& e) {
    throw request_error(422, "key_refused", e.what());
  }
  auto [ec, info] = co_await eng_.async_load_key(std::move(source), asio::as_tuple(asio::use_awaitable));
  if (ec) throw key_refusal(ec, info.message);
  co_return api_response::json_body(201, info.to_json());
}

asio::awaitable<api_response> job_api::evict_key(const route& r) {
  auto [ec, info] =
      co_await eng_.async_evict_key(r.key_id, r.cancel_jobs, asio::as_tuple(asio::use_awaitable));
  if (ec) throw key_refusal(ec, info.message);
  co_return api_response::json_body(200, info.to_json());
}

}  // namespace coprove::service
