// The server.* section of the configuration: where and how `coprove serve` listens, its
// limits, its shutdown and its result retention, in the order docs/CONFIG.md lists them.
#include "config_readers.hpp"

#include <coprove/service/listen_address.hpp>

#include <charconv>

namespace coprove::app::config_detail {
using service::parse_listen_address;

const std::vector<binding>& server_bindings() {
  using k = config_kind;
  static const std::vector<binding> table = {
      {{"server.listen", "listen", k::string, "\"\" (unix:$XDG_RUNTIME_DIR/coprove.sock, else unix:/run/coprove/coprove.sock)",
        "Where `coprove serve` listens: unix:PATH or HOST:PORT (TCP). A TCP address other than loopback "
        "needs server.allow_remote and server.auth_token_file."},
       [](app_config& c, const json::value& v) {
         const std::string text = as_string(v, "server.listen");
         try {
           if (!text.empty()) (void)parse_listen_address(text);
         } catch (const std::invalid_argument& e) {
           throw config_error("server.listen", e.what());
         }
         c.server.listen = text;
       },
       [](const app_config& c) { return json::value(c.server.listen); }},
      {{"server.allow_remote", "allow-remote", k::boolean, "false",
        "Allow listening on a non-loopback TCP address (which also needs server.auth_token_file). The API "
        "is plain HTTP: put TLS in front of it beyond a trusted network."},
       [](app_config& c, const json::value& v) { c.server.allow_remote = as_bool(v, "server.allow_remote"); },
       [](const app_config& c) { return json::value(c.server.allow_remote); }},
      {{"server.on_shutdown", "on-shutdown", k::string, "\"drain\"",
        "On SIGINT/SIGTERM, after it stops accepting: drain (finish the running jobs) or cancel them."},
       [](app_config& c, const json::value& v) {
         c.server.drain_on_shutdown = as_enum<bool>(v, "server.on_shutdown", {{"drain", true}, {"cancel", false}});
       },
       [](const app_config& c) { return json::value(c.server.drain_on_shutdown ? "drain" : "cancel"); }},
      {{"server.drain_seconds", "drain-seconds", k::number, "60",
        "The longest a drain may take: then the jobs still running are cancelled. A second SIGINT/SIGTERM "
        "cancels at once; a third exits at once (status 130)."},
       [](app_config& c, const json::value& v) {
         c.server.drain_seconds = as_number(v, "server.drain_seconds", 0.0, 86400.0);
       },
       [](const app_config& c) { return json::value(c.server.drain_seconds); }},
      {{"server.on_shutdown_queued", "on-shutdown-queued", k::string, "\"cancel\"",
        "What a drain does with the jobs still queued (none of their partitions started): cancel them, or "
        "drain (run) them too, within server.drain_seconds."},
       [](app_config& c, const json::value& v) {
         c.server.drain_queued = as_enum<bool>(v, "server.on_shutdown_queued", {{"cancel", false}, {"drain", true}});
       },
       [](const app_config& c) { return json::value(c.server.drain_queued ? "drain" : "cancel"); }},
      {{"server.auth_token_file", "auth-token-file", k::string, "\"\" (none)",
        "A file holding the bearer token (16 to 4096 printable characters, surrounding white space ignored; "
        "the file readable by its owner alone): every request but GET /healthz must carry `Authorization: "
        "Bearer TOKEN` (401 otherwise). Required to listen on a non-loopback address; optional on loopback "
        "and the Unix socket."},
       [](app_config& c, const json::value& v) { c.server.auth_token_file = as_string(v, "server.auth_token_file"); },
       [](const app_config& c) { return json::value(c.server.auth_token_file); }},
      {{"server.allowed_hosts", "allowed-hosts", k::string_list, "[]",
        "On TCP, Host names accepted besides the listen address (and localhost on loopback); any other Host "
        "gets 403 host_not_allowed (DNS rebinding). On the command line a comma-separated list."},
       [](app_config& c, const json::value& v) { c.server.allowed_hosts = as_strings(v, "server.allowed_hosts"); },
       [](const app_config& c) { return strings_json(c.server.allowed_hosts); }},
      {{"server.allowed_origins", "allowed-origins", k::string_list, "[]",
        "Origin values accepted (e.g. \"https://dashboard.example\"); a request with any other Origin gets "
        "403 origin_not_allowed. Requests without Origin (every non-browser client) are not affected."},
       [](app_config& c, const json::value& v) { c.server.allowed_origins = as_strings(v, "server.allowed_origins"); },
       [](const app_config& c) { return strings_json(c.server.allowed_origins); }},
      {{"server.socket_mode", "socket-mode", k::string, "\"0600\"",
        "The Unix socket file's mode (octal), set before it accepts a connection, whatever the umask."},
       [](app_config& c, const json::value& v) {
         const std::string text = as_string(v, "server.socket_mode");
         unsigned mode = 0;
         const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
         if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || mode > 0777) {
           throw config_error("server.socket_mode", "expected an octal mode such as \"0600\", got '" + text + "'");
         }
         if ((mode & 0600) != 0600) {
           throw config_error("server.socket_mode", "'" + text + "' does not let the owner read and write the socket");
         }
         c.server.socket_mode = mode;
       },
       [](const app_config& c) { return json::value(octal_text(c.server.socket_mode)); }},
      {{"server.max_body_bytes", "max-body-bytes", k::bytes, "65536",
        "Largest request body; larger ones get 413."},
       [](app_config& c, const json::value& v) {
         c.server.max_body_bytes = as_bytes(v, "server.max_body_bytes");
         if (c.server.max_body_bytes < 64 || c.server.max_body_bytes > (std::size_t{16} << 20)) {
           throw config_error("server.max_body_bytes", "must be in [64, 16MiB], got " + std::to_string(c.server.max_body_bytes));
         }
       },
       [](const app_config& c) { return json::value(c.server.max_body_bytes); }},
      {{"server.max_wait_seconds", "max-wait-seconds", k::number, "300",
        "The longest ?wait= a result request may ask for."},
       [](app_config& c, const json::value& v) {
         c.server.max_wait_seconds = as_number(v, "server.max_wait_seconds", 0.0, 86400.0);
       },
       [](const app_config& c) { return json::value(c.server.max_wait_seconds); }},
      {{"server.circuits", "circuits", k::name_map, "{}",
        "circom circuits `serve` proves, each a name and the path of its snarkjs Groth16 zkey (BLS12-381), e.g. "
        "{\"poseidon\": \"keys/poseidon.zkey\"}; on the command line NAME=PATH[,NAME=PATH]. Loaded with every check "
        "at start (a bad key stops the service, naming the file, the section and the problem), charged in the memory "
        "plan; POST /v1/circuits/NAME/proofs proves a .wtns body."},
       [](app_config& c, const json::value& v) { c.server.circuits = as_name_map(v, "server.circuits"); },
       [](const app_config& c) {
         json::object o;
         for (const auto& [name, path] : c.server.circuits) o[name] = path;
         return json::value(std::move(o));
       }},
      {{"server.key_roots", "key-roots", k::string_list, "[] (none)",
        "Folders under which POST /v1/keys may name a key directory or a snarkjs zkey to load (relative paths "
        "are looked up under each in turn); a path outside all of them once symlinks and '..' are resolved gets "
        "403 key_path_forbidden, so the network never chooses files. Empty: no key is loaded over the network. "
        "On the command line a comma-separated list."},
       [](app_config& c, const json::value& v) { c.server.key_roots = as_strings(v, "server.key_roots"); },
       [](const app_config& c) { return strings_json(c.server.key_roots); }},
      {{"server.max_connections", "max-connections", k::unsigned_integer, "64",
        "Connections served at once; more wait in the listen backlog."},
       [](app_config& c, const json::value& v) {
         c.server.max_connections = as_unsigned(v, "server.max_connections", 1, 65536);
       },
       [](const app_config& c) { return json::value(c.server.max_connections); }},
      {{"server.max_connections_per_peer", "max-connections-per-peer", k::unsigned_integer, "16",
        "TCP connections one remote address may hold. Past it (or past server.max_connections) a new "
        "connection takes the slot of the oldest one that has not sent a whole request; when all are "
        "answering requests it gets 429 (503 for the total)."},
       [](app_config& c, const json::value& v) {
         c.server.max_connections_per_peer = as_unsigned(v, "server.max_connections_per_peer", 1, 65536);
       },
       [](const app_config& c) { return json::value(c.server.max_connections_per_peer); }},
      {{"server.header_timeout_seconds", "header-timeout-seconds", k::number, "10",
        "From a request's first byte to its whole header; past it the request gets 408 request_timeout."},
       [](app_config& c, const json::value& v) {
         c.server.header_timeout_seconds = as_number(v, "server.header_timeout_seconds", 0.01, 3600.0);
       },
       [](const app_config& c) { return json::value(c.server.header_timeout_seconds); }},
      {{"server.body_timeout_seconds", "body-timeout-seconds", k::number, "30",
        "From a request's header to its whole body; past it the request gets 408 request_timeout."},
       [](app_config& c, const json::value& v) {
         c.server.body_timeout_seconds = as_number(v, "server.body_timeout_seconds", 0.01, 3600.0);
       },
       [](const app_config& c) { return json::value(c.server.body_timeout_seconds); }},
      {{"server.idle_timeout_seconds", "idle-timeout-seconds", k::number, "60",
        "A keep-alive connection that sends nothing this long is closed (without an answer)."},
       [](app_config& c, const json::value& v) {
         c.server.idle_timeout_seconds = as_number(v, "server.idle_timeout_seconds", 0.01, 86400.0);
       },
       [](const app_config& c) { return json::value(c.server.idle_timeout_seconds); }},
      {{"server.result_retention_jobs", "result-retention-jobs", k::unsigned_integer, "4096",
        "Finished jobs whose results are kept for GET; beyond it the oldest is forgotten and its id answers "
        "410 result_expired."},
       [](app_config& c, const json::value& v) {
         c.server.result_retention_jobs = as_unsigned(v, "server.result_retention_jobs", 0, 1u << 24);
       },
       [](const app_config& c) { return json::value(c.server.result_retention_jobs); }},
      {{"server.result_retention_bytes", "result-retention-bytes", k::bytes, "268435456 (256 MiB)",
        "Memory the kept results may hold together (estimated per job); beyond it the oldest are forgotten "
        "(410 result_expired)."},
       [](app_config& c, const json::value& v) {
         c.server.result_retention_bytes = as_bytes(v, "server.result_retention_bytes");
       },
       [](const app_config& c) { return json::value(c.server.result_retention_bytes); }},
      {{"server.result_retention_seconds", "result-retention-seconds", k::number, "3600",
        "How long after it ended a job's result is kept (then 410 result_expired)."},
       [](app_config& c, const json::value& v) {
         c.server.result_retention_seconds = as_number(v, "server.result_retention_seconds", 0.0, 30.0 * 86400.0);
       },
       [](const app_config& c) { return json::value(c.server.result_retention_seconds); }},
      {{"server.max_queued_jobs", "max-queued-jobs", k::unsigned_integer, "256",
        "Unfinished jobs (queued or running) accepted at once; more are refused with 429 queue_full and "
        "Retry-After."},
       [](app_config& c, const json::value& v) {
         c.server.max_queued_jobs = as_unsigned(v, "server.max_queued_jobs", 1, 1u << 20);
       },
       [](const app_config& c) { return json::value(c.server.max_queued_jobs); }},
      {{"server.max_queued_partitions", "max-queued-partitions", k::unsigned_integer, "16384",
        "Partitions of the unfinished jobs accepted at once; a job that would exceed it is refused with 429 "
        "queue_full. At least engine.max_partitions_per_job."},
       [](app_config& c, const json::value& v) {
         c.server.max_queued_partitions = as_unsigned(v, "server.max_queued_partitions", 1, 1u << 26);
       },
       [](const app_config& c) { return json::value(c.server.max_queued_partitions); }},
      {{"server.retry_after_seconds", "retry-after-seconds", k::unsigned_integer, "5",
        "The Retry-After a 429 queue_full answers with."},
       [](app_config& c, const json::value& v) {
         c.server.retry_after_seconds = static_cast<unsigned>(as_unsigned(v, "server.retry_after_seconds", 1, 3600));
       },
       [](const app_config& c) { return json::value(c.server.retry_after_seconds); }},
  };
  return table;
}

}  // namespace coprove::app::config_detail
