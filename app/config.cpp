// The configuration of the coprove binary: key tables (one per section, config_<section>.cpp) bind
// every key to its flag, kind, default, help text, setter and getter, so that the file format, the
// flags, the effective-config dump and docs/CONFIG.md cannot drift apart. Here: finding a key,
// applying a document, a file or a flag's text, the checks across keys, and the dump.
#include "config.hpp"
#include "config_readers.hpp"

#include "keys.hpp"

#include <coprove/service/json_field.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/service/http_service.hpp>
#include <coprove/runtime/input_file.hpp>
#include <coprove/runtime/log.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

namespace coprove::app {
using r1cs::circuit_families;
using r1cs::circuit_known;
using r1cs::max_log_constraints;
using r1cs::min_log_constraints;
using r1cs::pce_policy;
using engine::dispatch_policy;
using engine::engine_config;
using service::parse_listen_address;


namespace json = boost::json;

config_error::config_error(std::string key, const std::string& message)
    : std::invalid_argument(key + ": " + message), key_(std::move(key)) {}

std::string_view to_string(backend_choice choice) noexcept {
  switch (choice) {
    case backend_choice::automatic: return "auto";
    case backend_choice::cuda: return "cuda";
    case backend_choice::host: return "host";
  }
  return "unknown";
}

std::optional<backend_choice> parse_backend_choice(std::string_view name) noexcept {
  for (backend_choice choice : {backend_choice::automatic, backend_choice::cuda, backend_choice::host})
    if (name == to_string(choice)) return choice;
  return std::nullopt;
}

namespace {

using namespace config_detail;

// Every key, section by section.
const std::vector<binding>& bindings() {
  static const std::vector<binding> table = [] {
    std::vector<binding> all;
    for (const auto* section : {&general_bindings(), &workload_bindings(), &engine_bindings(), &server_bindings()})
      all.insert(all.end(), section->begin(), section->end());
    return all;
  }();
  return table;
}

const binding* find_binding(std::string_view key) {
  for (const auto& b : bindings()) {
    if (b.meta.key == key) return &b;
  }
  return nullptr;
}

bool is_section(std::string_view prefix) {
  for (const auto& b : bindings()) {
    if (b.meta.key.size() > prefix.size() && b.meta.key.substr(0, prefix.size()) == prefix &&
        b.meta.key[prefix.size()] == '.') {
      return true;
    }
  }
  return false;
}

void apply_object(app_config& cfg, const json::object& object, const std::string& prefix) {
  for (const auto& [name, value] : object) {
    const std::string key = prefix.empty() ? std::string(name) : prefix + "." + std::string(name);
    if (const binding* b = find_binding(key)) {
      b->set(cfg, value);
    } else if (is_section(key)) {
      if (!value.is_object()) wrong_type(key, "an object (a section)", value);
      apply_object(cfg, value.get_object(), key);
    } else {
      throw config_error(key, "unknown configuration key (see docs/CONFIG.md)");
    }
  }
}

}  // namespace

const std::vector<config_key>& config_keys() {
  static const std::vector<config_key> keys = [] {
    std::vector<config_key> out;
    for (const auto& b : bindings()) out.push_back(b.meta);
    return out;
  }();
  return keys;
}

void apply_config_json(app_config& cfg, const json::value& document) {
  if (!document.is_object()) {
    throw config_error("(document)", "a configuration must be a JSON object, got " + std::string(service::json_kind_name(document.kind())));
  }
  app_config updated = cfg;  // all or nothing: a bad key changes nothing
  apply_object(updated, document.get_object(), "");
  cfg = std::move(updated);
}

void apply_config_file(app_config& cfg, const std::string& path) {
  std::string text;
  try {
    text = runtime::read_input_text(path, runtime::input_limits::small_json_bytes, "configuration file");
  } catch (const runtime::input_file_error& e) {
    throw config_error("--config", e.what());
  }
  boost::system::error_code ec;
  json::parse_options options;
  options.allow_comments = true;
  options.allow_trailing_commas = true;
  const json::value document = json::parse(text, ec, {}, options);
  if (ec) throw config_error("--config", "'" + path + "' is not valid JSON: " + ec.message());
  try {
    apply_config_json(cfg, document);
  } catch (const config_error& e) {
    throw config_error(e.key(), std::string(e.what()).substr(e.key().size() + 2) + " (in " + path + ")");
  }
}

void apply_config_text(app_config& cfg, std::string_view key, std::string_view text) {
  const binding* b = find_binding(key);
  if (!b) throw config_error(std::string(key), "unknown configuration key");
  const std::string flag = "--" + std::string(b->meta.flag);
  json::value value;
  switch (b->meta.kind) {
    case config_kind::string:
    case config_kind::bytes: value = json::string(text); break;
    case config_kind::unsigned_integer: {
      std::uint64_t n = 0;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
        throw config_error(flag, "expected a non-negative integer, got '" + std::string(text) + "'");
      }
      value = n;
      break;
    }
    case config_kind::number: {
      double d = 0;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
        throw config_error(flag, "expected a number, got '" + std::string(text) + "'");
      }
      value = d;
      break;
    }
    case config_kind::boolean: {
      if (text == "true" || text == "1" || text == "yes" || text == "on") {
        value = true;
      } else if (text == "false" || text == "0" || text == "no" || text == "off") {
        value = false;
      } else {
        throw config_error(flag, "expected true or false, got '" + std::string(text) + "'");
      }
      break;
    }
    case config_kind::name_map: {
      json::object map;
      for (const std::string_view item : comma_separated(text)) {
        const auto equals = item.find('=');
        if (equals == std::string_view::npos || equals == 0)
          throw config_error(flag, "expected NAME=PATH[,NAME=PATH], got '" + std::string(text) + "'");
        map[item.substr(0, equals)] = std::string(item.substr(equals + 1));
      }
      value = std::move(map);
      break;
    }
    case config_kind::string_list: {
      json::array items;
      std::string_view rest = text;
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        items.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
      value = std::move(items);
      break;
    }
    case config_kind::device_list: {
      json::array ids;
      for (const std::string_view item : comma_separated(text)) {
        std::uint64_t id = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
        if (item.empty() || ec != std::errc{} || ptr != item.data() + item.size()) {
          throw config_error(flag, "expected a comma-separated list of device ids, got '" + std::string(text) + "'");
        }
        ids.push_back(id);
      }
      value = std::move(ids);
      break;
    }
  }
  try {
    app_config updated = cfg;
    b->set(updated, value);
    cfg = std::move(updated);
  } catch (const config_error& e) {
    throw config_error(flag, e.what());
  }
}

void validate_config(const app_config& cfg) {
  if (cfg.backend == backend_choice::host && !cfg.devices.empty()) {
    throw config_error("devices", "CUDA device ids were given but backend is \"host\"");
  }
  if (cfg.plan_log_constraints != 0 && cfg.workload.log_constraints > cfg.plan_log_constraints) {
    throw config_error("workload.log_constraints",
                       std::to_string(cfg.workload.log_constraints) + " exceeds engine.max_log_constraints = " +
                           std::to_string(cfg.plan_log_constraints));
  }
  if (cfg.server.max_queued_partitions < cfg.engine.max_partitions_per_job) {
    throw config_error("server.max_queued_partitions",
                       std::to_string(cfg.server.max_queued_partitions) + " is less than engine.max_partitions_per_job = " +
                           std::to_string(cfg.engine.max_partitions_per_job) + ": a job of that size could never run");
  }
  if (cfg.server.listen.empty()) return;  // the default, a Unix socket
  const auto address = parse_listen_address(cfg.server.listen);
  if (!address.is_unix() && !address.is_loopback() && !cfg.server.allow_remote) {
    throw config_error("server.listen", "'" + cfg.server.listen +
                                            "' is not a loopback address: pass --allow-remote (server.allow_remote) "
                                            "to listen on it, with a token (server.auth_token_file)");
  }
  if (!address.is_unix() && !address.is_loopback() && cfg.server.auth_token_file.empty()) {
    throw config_error("server.auth_token_file",
                       "listening on the non-loopback address '" + cfg.server.listen +
                           "' needs a bearer token: set server.auth_token_file (--auth-token-file)");
  }
}

json::object to_json(const app_config& cfg) {
  json::object root;
  for (const auto& b : bindings()) {
    json::object* section = &root;
    std::string_view key = b.meta.key;
    for (auto dot = key.find('.'); dot != std::string_view::npos; dot = key.find('.')) {
      json::value& child = (*section)[key.substr(0, dot)];
      if (!child.is_object()) child = json::object();
      section = &child.get_object();
      key = key.substr(dot + 1);
    }
    (*section)[key] = b.get(cfg);
  }
  return root;
}

std::size_t parse_byte_size(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("bad byte size '" + std::string(text) + "': " + why);
  };
  std::size_t pos = 0;
  while (pos < text.size() && ((text[pos] >= '0' && text[pos] <= '9') || text[pos] == '.')) ++pos;
  if (pos == 0) throw bad("expected a number, optionally with a unit such as MiB or GiB");
  double number = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + pos, number);
  if (ec != std::errc{} || ptr != text.data() + pos) throw bad("expected a number");
  std::string_view unit = text.substr(pos);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  struct suffix {
    std::string_view name;
    double factor;
  };
  static constexpr suffix units[] = {{"", 1.0},           {"B", 1.0},           {"KiB", 1024.0},
                                     {"MiB", 1048576.0},  {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
                                     {"KB", 1e3},         {"MB", 1e6},           {"GB", 1e9},
                                     {"TB", 1e12}};
  for (const auto& u : units) {
    if (unit == u.name) {
      const double bytes = std::floor(number * u.factor);
      if (!std::isfinite(bytes) || bytes >= 1.8e19) throw bad("too large");
      return static_cast<std::size_t>(bytes);
    }
  }
  throw bad("unknown unit '" + std::string(unit) + "' (expected B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
}

std::string resolved_pce_cache_dir(const app_config& cfg) {
  if (cfg.pce_cache_dir) return *cfg.pce_cache_dir;
  const auto root = default_cache_dir();
  return root ? root->string() : std::string();
}

engine_config effective_engine_config(const app_config& cfg) {
  engine_config out = cfg.engine;
  out.pce_cache_dir = resolved_pce_cache_dir(cfg);
  out.plan_circuit = cfg.workload.circuit;
  out.max_log_constraints = cfg.plan_log_constraints != 0 ? cfg.plan_log_constraints : cfg.workload.log_constraints;
  return out;
}

}  // namespace coprove::app
