// Who may reach the HTTP API, and where it may listen: the Host and Origin a request must carry,
// its bearer token, an address other than loopback only with allow_remote and a token, and a Unix
// socket path only where this user owns it. Plain checks, no socket: the listener applies the
// listen rules before it binds, the job API the request rules before it routes.
#pragma once

#include <coprove/service/api_message.hpp>
#include <coprove/service/listen_address.hpp>

#include <string>
#include <vector>

namespace coprove::service {

/// What a request must carry to be served.
class exposure_policy {
 public:
  /// `bound`: the address as bound (listen with the port the system picked); on TCP the Host must
  /// name it, localhost (on loopback) or one of `allowed_hosts`, its port (where given) the bound one.
  /// A non-empty `auth_token` is required of every request but GET /healthz.
  exposure_policy(listen_address listen, std::string bound, std::vector<std::string> allowed_hosts,
                  std::vector<std::string> allowed_origins, std::string auth_token);

  /// Throws request_error: 403 host_not_allowed or origin_not_allowed, 401 unauthorized.
  void check(const api_request& req) const;
  const std::string& bound() const noexcept { return bound_; }

 private:
  listen_address listen_;
  std::string bound_;
  std::vector<std::string> allowed_hosts_;
  std::vector<std::string> allowed_origins_;
  std::string auth_token_;
};

/// Refuses (std::invalid_argument, naming the setting) a non-loopback address without
/// allow_remote (server.allow_remote) or without a token (server.auth_token_file).
void check_listen_policy(const listen_address& listen, bool allow_remote, const std::string& auth_token);

/// Refuses (std::system_error) a Unix socket path that another user owns, in a directory another
/// user owns, or that exists and is not a socket: theirs to replace or listen on. True when a
/// socket of this user is there (live or stale: the listener finds out).
bool check_socket_path(const std::string& path);

}  // namespace coprove::service
