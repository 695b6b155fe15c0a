// The engine's keys (see engine_keys.hpp).
#include "engine_keys.hpp"

#include "cli.hpp"

#include <coprove/runtime/log.hpp>

#include <iostream>

namespace coprove::app {

namespace {

void add(engine_keys& out, key_set set) {
  out.any_development = out.any_development || set.development;
  out.keys.push_back({set.circuit, set.log_constraints, set.pk, set.describe()});
  out.metadata.push_back(set.metadata);
  out.dirs.push_back(set.dir.string());
  out.load_seconds.push_back(set.load_seconds);
}

// The setting a key refusal is about: the --keys directories, or the development key cache.
std::string key_setting(const std::vector<std::string>& dirs) { return dirs.empty() ? "keys.cache_dir" : "--keys"; }

std::string name_of(const std::string& circuit, unsigned log_constraints) {
  return circuit + "/" + std::to_string(log_constraints);
}

}  // namespace

boost::json::array engine_keys::to_json() const {
  boost::json::array out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    boost::json::object k{{"circuit", keys[i].circuit},
                          {"log_constraints", keys[i].log_constraints},
                          {"dir", dirs[i]},
                          {"development", metadata[i].development},
                          {"vk_sha256", metadata[i].vk_sha256},
                          {"load_s", load_seconds[i]}};
    if (metadata[i].insecure_seed) k["insecure_seed"] = *metadata[i].insecure_seed;
    out.push_back(std::move(k));
  }
  return out;
}

bool engine_keys::has(const std::string& circuit, unsigned log_constraints) const {
  for (const auto& k : keys)
    if (k.circuit == circuit && k.log_constraints == log_constraints) return true;
  return false;
}

engine_keys load_engine_keys(const std::vector<std::string>& dirs, const std::string& cache_dir,
                             const std::string& circuit, unsigned log_constraints, const std::string& command,
                             bool required, const groth16::bulk_subgroup_test* subgroup_test) {
  engine_keys out;
  try {
    if (dirs.empty()) {
      add(out, development_keys(circuit, log_constraints,
                                cache_dir.empty() ? default_key_cache_dir() : std::filesystem::path(cache_dir),
                                subgroup_test));
    } else {
      for (const auto& dir : dirs) {
        key_set set = read_key_dir(dir, std::nullopt, subgroup_test);
        if (out.has(set.circuit, set.log_constraints))
          throw usage_error("coprove " + command + ": --keys " + dir + ": a second key for " +
                            name_of(set.circuit, set.log_constraints));
        COPROVE_LOG(info, "app") << "keys: " << set.describe();
        add(out, std::move(set));
      }
    }
  } catch (const key_dir_error& e) {
    throw usage_error("coprove " + command + ": invalid configuration: " + key_setting(dirs) + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw usage_error("coprove " + command + ": invalid configuration: " + key_setting(dirs) + ": " + e.what());
  }
  if (required && !out.has(circuit, log_constraints)) {
    std::string have;
    for (const auto& k : out.keys) have += (have.empty() ? "" : ", ") + name_of(k.circuit, k.log_constraints);
    throw usage_error("coprove " + command + ": no key for " + name_of(circuit, log_constraints) +
                      " among --keys (" + have + "); make one with `coprove setup --circuit " + circuit +
                      " --log-constraints " + std::to_string(log_constraints) + " --out DIR`");
  }
  return out;
}

}  // namespace coprove::app
