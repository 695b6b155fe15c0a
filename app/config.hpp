// The configuration of the coprove binary: one JSON file format (Boost.JSON) plus command-line
// flags that override it. Every key has a default and a flag, is listed by config_keys() (which
// docs/CONFIG.md mirrors), and unknown keys or values of the wrong type are errors naming the key.
#pragma once

#include <coprove/engine/engine.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::app {
using engine::engine_config;


/// A configuration the binary refuses: names the key (or flag) and says what was wrong.
class config_error : public std::invalid_argument {
public:
  config_error(std::string key, const std::string& message);
  /// The dotted key ("engine.dispatch") the error is about.
  const std::string& key() const noexcept { return key_; }

private:
  std::string key_;
};

/// Which compute backend the binary builds. automatic: the CUDA backend when it is compiled in and
/// a GPU is visible, otherwise the host backend (logged at warning). cuda: the CUDA backend or an
/// error. host: the CPU backend.
enum class backend_choice { automatic, cuda, host };
std::string_view to_string(backend_choice choice) noexcept;
/// Parses "auto", "cuda" or "host"; nullopt for any other.
std::optional<backend_choice> parse_backend_choice(std::string_view name) noexcept;

/// What `coprove run` proves.
struct workload_config {
  std::string circuit = "mimc";
  unsigned log_constraints = 16;
  std::size_t partitions = 8;
  std::size_t jobs = 2;  ///< jobs submitted at once, each with its own seed (seed, seed + 1, ...)
  std::uint64_t seed = 1;
};

/// What `coprove serve` listens on and how it treats requests and shutdown.
struct server_config {
  /// "unix:PATH" or "HOST:PORT"; empty = service::default_listen_address() (under
  /// $XDG_RUNTIME_DIR, or /run/coprove).
  std::string listen;
  bool allow_remote = false;  ///< a TCP address other than loopback needs this (and auth_token_file)
  bool drain_on_shutdown = true;  ///< SIGINT/SIGTERM: finish running jobs (true) or cancel them
  double drain_seconds = 60.0;    ///< the longest a drain may take; then the running jobs are cancelled
  bool drain_queued = false;      ///< a drain also runs the jobs still queued (else they are cancelled)
  std::string auth_token_file;    ///< the bearer token every request but /healthz must carry
  std::vector<std::string> allowed_hosts;    ///< TCP: Host names accepted besides the listen address
  std::vector<std::string> allowed_origins;  ///< Origin values accepted (browsers); others get 403
  unsigned socket_mode = 0600;               ///< the Unix socket file's mode
  double header_timeout_seconds = 10.0;
  double body_timeout_seconds = 30.0;
  double idle_timeout_seconds = 60.0;
  std::size_t max_connections_per_peer = 16;
  std::size_t max_body_bytes = 64 * 1024;
  double max_wait_seconds = 300.0;  ///< the largest ?wait= a result request may ask for
  std::size_t max_connections = 64;
  /// circom circuits `serve` proves from their snarkjs zkeys: (name, zkey path), loaded at start.
  std::vector<std::pair<std::string, std::string>> circuits;
  /// Folders under which POST /v1/keys may name a key to load (server.key_roots); empty: none.
  std::vector<std::string> key_roots;
  // Finished jobs kept for GET (engine_config::retention); older ones answer 410 result_expired.
  std::size_t result_retention_jobs = 4096;
  std::size_t result_retention_bytes = std::size_t{256} << 20;
  double result_retention_seconds = 3600.0;
  // Unfinished work accepted (engine_config::max_open_jobs / max_open_partitions); more gets 429.
  std::size_t max_queued_jobs = 256;
  std::size_t max_queued_partitions = 16384;
  unsigned retry_after_seconds = 5;  ///< the Retry-After of a 429
};

struct app_config {
  backend_choice backend = backend_choice::automatic;
  std::vector<int> devices;           ///< CUDA device ids; empty = every visible GPU
  std::size_t host_devices = 1;       ///< devices the host backend presents
  std::size_t slots_per_device = 3;   ///< worker slots per device (both backends)
  std::size_t host_threads = 0;       ///< host backend worker threads; 0 = one per slot
  /// The CUDA backend's completion-bridge strategy; empty = its default (stream_write).
  std::string bridge;
  /// Shifted copies of each proving key's points on the device (0: auto, as many as the device
  /// memory plan holds of msm_auto_copies, else 1; 1: none) and their window width (0: the MSM
  /// plan's per query); cuda::make_cuda_backend.
  unsigned msm_copies = 0;
  unsigned msm_window_bits = 0;
  std::string log_level = "info";
  std::string log_json_file;
  workload_config workload;
  engine_config engine;  ///< plan_circuit follows the workload's circuit
  /// The largest log size the memory plan is sized for; 0 = the workload's log_constraints.
  unsigned plan_log_constraints = 0;
  server_config server;
  /// Where development keys are cached (made on first use when no --keys is given); empty =
  /// $XDG_CACHE_HOME/coprove/keys or ~/.cache/coprove/keys.
  std::string key_cache_dir;
  /// Where the constraint caches (PCE) are kept across runs; unset = $XDG_CACHE_HOME/coprove or
  /// ~/.cache/coprove (off when neither is known); empty = off. Resolved by effective_engine_config.
  std::optional<std::string> pce_cache_dir;
};

/// engine.pce_cache_dir as the engine gets it: the configured folder, or the default one.
std::string resolved_pce_cache_dir(const app_config& cfg);

/// The value kinds a key may hold; flags are converted to them.
enum class config_kind { string, unsigned_integer, number, boolean, bytes, device_list, name_map, string_list };

/// One configuration key: its dotted name, the flag that sets it, its kind, default and meaning.
struct config_key {
  std::string_view key;
  std::string_view flag;
  config_kind kind;
  std::string_view default_value;
  std::string_view help;
};

/// Every key, in documentation order.
const std::vector<config_key>& config_keys();

/// Applies a JSON configuration document (nested objects, e.g. {"engine": {"dispatch": "poll"}})
/// on top of `cfg`. Throws config_error naming the first unknown key, wrong type or bad value.
void apply_config_json(app_config& cfg, const boost::json::value& document);

/// Reads and applies a JSON configuration file; config_error names the file for I/O and syntax
/// errors.
void apply_config_file(app_config& cfg, const std::string& path);

/// Applies one flag value given as text (as typed on the command line) to the key it sets.
void apply_config_text(app_config& cfg, std::string_view key, std::string_view text);

/// Cross-field checks after everything is applied (e.g. backend "host" with devices listed).
/// Throws config_error.
void validate_config(const app_config& cfg);

/// The effective configuration as the nested JSON document apply_config_json accepts.
boost::json::object to_json(const app_config& cfg);

/// Parses a byte count: an integer, or a number with a unit B, KiB, MiB, GiB, TiB, KB, MB, GB, TB
/// ("512MiB", "1.5GiB"). Throws std::invalid_argument.
std::size_t parse_byte_size(std::string_view text);

/// The engine configuration the binary runs with: the `engine` section, with the memory plan sized
/// for the workload (plan_circuit, max_log_constraints) unless engine.max_log_constraints was set.
engine_config effective_engine_config(const app_config& cfg);

}  // namespace coprove::app
