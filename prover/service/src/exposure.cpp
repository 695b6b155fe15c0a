// The exposure checks of the HTTP API (see the header): DNS rebinding cannot reach it under another
// name, a browser page of another origin cannot drive it, a token is compared in constant time,
// and neither a remote address nor another user's socket path is listened on by accident.
#include "coprove/service/exposure.hpp"

#include <boost/beast/core/string.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace coprove::service {

namespace {

bool iequal(std::string_view a, std::string_view b) { return boost::beast::iequals(a, b); }

// Constant-time comparison of a presented credential with the configured one.
bool same_secret(std::string_view presented, std::string_view expected) {
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < presented.size(); ++i)
    diff |= static_cast<unsigned char>(presented[i] ^ expected[i % std::max<std::size_t>(expected.size(), 1)]);
  return diff == 0 && !expected.empty();
}

}  // namespace

exposure_policy::exposure_policy(listen_address listen, std::string bound, std::vector<std::string> allowed_hosts,
                                 std::vector<std::string> allowed_origins, std::string auth_token)
    : listen_(std::move(listen)),
      bound_(std::move(bound)),
      allowed_hosts_(std::move(allowed_hosts)),
      allowed_origins_(std::move(allowed_origins)),
      auth_token_(std::move(auth_token)) {}

// On TCP the Host must name the listen address (DNS rebinding cannot reach it under another
// name); an Origin, where a browser sends one, must be allowed; with a token, every request but
// the health check carries it.
void exposure_policy::check(const api_request& req) const {
  if (!listen_.is_unix()) {
    const std::string_view host = req.host;
    std::string_view name = host;
    std::string_view port;
    if (!name.empty() && name.front() == '[') {
      const auto close = name.find(']');
      if (close != std::string_view::npos) {
        port = name.substr(close + 1);
        name = name.substr(1, close - 1);
      }
    } else if (const auto colon = name.rfind(':'); colon != std::string_view::npos) {
      port = name.substr(colon);
      name = name.substr(0, colon);
    }
    bool allowed = iequal(name, listen_.host) || (listen_.is_loopback() && iequal(name, "localhost"));
    for (const auto& h : allowed_hosts_) allowed = allowed || iequal(name, h);
    const std::string bound_port = ":" + bound_.substr(bound_.rfind(':') + 1);
    if (host.empty() || !allowed || (!port.empty() && port != bound_port)) {
      throw request_error(403, "host_not_allowed",
                          "Host '" + std::string(host.substr(0, 64)) + "' is not the address this service listens on (" +
                              bound_ + ") nor a name in server.allowed_hosts");
    }
  }
  if (!req.origin.empty()) {
    const std::string_view origin = req.origin;
    bool allowed = false;
    for (const auto& o : allowed_origins_) allowed = allowed || origin == o;
    if (!allowed) {
      throw request_error(403, "origin_not_allowed",
                          "Origin '" + std::string(origin.substr(0, 64)) + "' is not in server.allowed_origins");
    }
  }
  if (!auth_token_.empty()) {
    const std::string_view target = req.target;
    if (target.substr(0, target.find('?')) == "/healthz") return;
    const std::string_view presented = req.authorization;
    constexpr std::string_view scheme = "Bearer ";
    if (presented.size() <= scheme.size() || !iequal(presented.substr(0, scheme.size()), scheme) ||
        !same_secret(presented.substr(scheme.size()), auth_token_)) {
      throw request_error(401, "unauthorized",
                          "this service needs 'Authorization: Bearer <token>' with the token of server.auth_token_file");
    }
  }
}

void check_listen_policy(const listen_address& listen, bool allow_remote, const std::string& auth_token) {
  if (!listen.is_loopback() && !allow_remote) {
    throw std::invalid_argument("listen address " + listen.to_string() +
                                " is not loopback: pass --allow-remote to listen on it (server.allow_remote)");
  }
  if (!listen.is_loopback() && auth_token.empty()) {
    throw std::invalid_argument("listen address " + listen.to_string() +
                                " is not loopback: it needs a bearer token (server.auth_token_file)");
  }
}

bool check_socket_path(const std::string& socket_path) {
  namespace fs = std::filesystem;
  const fs::path path = socket_path;
  const std::string where = "cannot listen on " + path.string() + ": ";
  // A path that another user owns, or in a directory another user owns, is theirs to replace or
  // listen on: refuse it rather than talk to (or remove) their socket.
  const uid_t me = ::geteuid();
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  struct stat parent_info {};
  if (::stat(parent.c_str(), &parent_info) != 0) {
    throw std::system_error(std::error_code(errno, std::generic_category()), where + "its directory " + parent.string());
  }
  if (parent_info.st_uid != me && parent_info.st_uid != 0) {
    throw std::system_error(std::make_error_code(std::errc::permission_denied),
                            where + "its directory " + parent.string() + " belongs to uid " +
                                std::to_string(parent_info.st_uid) + ", not this user (uid " + std::to_string(me) + ")");
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return false;
  if (info.st_uid != me) {
    throw std::system_error(std::make_error_code(std::errc::permission_denied),
                            where + "it exists and belongs to uid " + std::to_string(info.st_uid) +
                                ", not this user (uid " + std::to_string(me) + ")");
  }
  if (!S_ISSOCK(info.st_mode)) {
    throw std::system_error(std::make_error_code(std::errc::file_exists), where + "it exists and is not a socket");
  }
  return true;
}

}  // namespace coprove::service
