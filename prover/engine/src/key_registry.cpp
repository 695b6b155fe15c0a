// The proving keys by id (see the header).
#include <coprove/engine/detail/key_registry.hpp>

#include <coprove/engine/memory_plan.hpp>
#include <coprove/field/sha256.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/runtime/log.hpp>

#include <algorithm>
#include <stdexcept>

namespace coprove::engine::detail {
namespace {

// The verifying key prepared once and its digest (bellman's vk bytes, SHA-256, hex).
std::shared_ptr<key_entry> make_entry(circuit_keys keys, std::size_t host_bytes) {
  auto entry = std::make_shared<key_entry>();
  entry->pvk = groth16::prepared_verifying_key::from(keys.pk->vk);
  const std::vector<std::uint8_t> vk_bytes = groth16::encode_verifying_key(keys.pk->vk);
  entry->vk_sha256 = field::to_hex(field::sha256::hash(std::as_bytes(std::span(vk_bytes))));
  entry->keys = std::move(keys);
  entry->host_bytes = host_bytes;
  return entry;
}

r1cs::circuit_shape shape_of(const std::string& circuit, unsigned log_constraints, const std::string& where) {
  try {
    r1cs::validate_circuit_parameters(circuit, log_constraints);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + e.what());
  }
  return r1cs::make_circuit(circuit, log_constraints, 1, 0)->shape();
}

}  // namespace

std::string key_name(const std::string& circuit, unsigned log_constraints) {
  return circuit + "/" + std::to_string(log_constraints);
}

key_registry::key_registry(unsigned max_log_constraints) : max_log_constraints_(max_log_constraints) {}

key_registry::key_registry(const engine_config& cfg) : key_registry(cfg.max_log_constraints) {
  if (cfg.results == result_kind::evaluation_record) {
    runtime::warn_once("engine.results.evaluation_record", "engine",
                       "results are configured as evaluation records (engine_config.results): partitions end "
                       "after the quotient with a self-check that binds nothing, not a proof");
    if (!cfg.keys.empty())
      throw std::invalid_argument("engine_config.keys: given, but results = evaluation_record makes no proofs");
    for (const zkey_circuit& z : cfg.zkey_circuits) {
      const std::string where = "engine_config.zkey_circuits (" + z.name + "): ";
      if (!z.key) throw std::invalid_argument(where + "the zkey is null");
      throw std::invalid_argument(where + "zkey circuits are proved; results = evaluation_record makes no proofs");
    }
    return;
  }
  for (const auto& [circuit, log] : cfg.planned_keys)
    plan(circuit, log, "engine_config.planned_keys (" + key_name(circuit, log) + "): ");
  if (cfg.keys.empty() && cfg.planned_keys.empty() && cfg.zkey_circuits.empty() && cfg.key_memory_bytes == 0)
    throw std::invalid_argument(
        "engine_config.keys: results = proof needs the proving key of every circuit and size it proves, and none "
        "is given (coprove setup makes one; or set results = evaluation_record, or key_memory_bytes to load keys "
        "at run time)");
  if (cfg.insecure_proof_seed)
    runtime::warn_once("engine.insecure_proof_seed", "engine",
                       "proof blinding (r, s) is derived from the configured seed " +
                           std::to_string(*cfg.insecure_proof_seed) +
                           " (engine_config.insecure_proof_seed): the same proof every run, and anyone who knows "
                           "the seed learns about the witness; for tests only");
  for (const circuit_keys& k : cfg.keys)
    add(k, "engine_config.keys (" + key_name(k.circuit, k.log_constraints) + (k.source.empty() ? "" : ", " + k.source) +
               "): ");
  for (const zkey_circuit& z : cfg.zkey_circuits) add_zkey(z, "engine_config.zkey_circuits (" + z.name + "): ");
}

prepared_key key_registry::prepare(const circuit_keys& k, const std::string& where) const {
  if (!k.pk) throw std::invalid_argument(where + "the proving key is null");
  const r1cs::circuit_shape shape = shape_of(k.circuit, k.log_constraints, where);
  const std::size_t n = std::size_t{1} << k.log_constraints;
  try {
    k.pk->check_consistent();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + e.what());
  }
  if (k.pk->domain_size() != n || k.pk->num_inputs() != shape.num_inputs || k.pk->num_aux() != shape.num_aux)
    throw std::invalid_argument(where + "the key is for a domain of " + std::to_string(k.pk->domain_size()) +
                                " rows, " + std::to_string(k.pk->num_inputs()) + " inputs and " +
                                std::to_string(k.pk->num_aux()) + " auxiliaries; the circuit has " +
                                std::to_string(n) + ", " + std::to_string(shape.num_inputs) + " and " +
                                std::to_string(shape.num_aux));
  return {key_name(k.circuit, k.log_constraints), make_entry(k, k.pk->bytes()), nullptr};
}

prepared_key key_registry::prepare_zkey(const zkey_circuit& z, const std::string& where) const {
  if (!z.key) throw std::invalid_argument(where + "the zkey is null");
  if (z.name.empty()) throw std::invalid_argument(where + "the name is empty or given twice");
  const unsigned log_n = z.key->domain().log_size();
  if (log_n > max_log_constraints_)
    throw std::invalid_argument(where + "its domain of 2^" + std::to_string(log_n) +
                                " rows exceeds the memory plan's 2^" + std::to_string(max_log_constraints_) +
                                " (engine_config.max_log_constraints)");
  // The aliasing pointer keeps the zkey alive while the key entry lives.
  const std::shared_ptr<const groth16::proving_key> pk(z.key, &z.key->pk);
  auto entry = std::make_shared<const zkey_entry>(
      zkey_entry{z.key, make_entry(circuit_keys{z.name, log_n, pk, z.key->name}, z.key->bytes()),
                 std::make_shared<const field::evaluation_domain>(z.key->domain())});
  return {z.name, entry->keys, entry};
}

void key_registry::insert(prepared_key key, const std::string& where) {
  std::lock_guard lock(mutex_);
  const bool held = zkeys_.count(key.id) != 0 ||
                    std::any_of(keys_.begin(), keys_.end(),
                                [&](const auto& k) { return key_name(k.first.first, k.first.second) == key.id; });
  if (key.zkey) {
    if (held || keys_.count({key.id, 0}) != 0) throw std::invalid_argument(where + "the name is empty or given twice");
    zkeys_.emplace(key.id, std::move(key.zkey));
    return;
  }
  if (held) throw std::invalid_argument(where + "given twice");
  const circuit_keys& k = key.key->keys;
  keys_.emplace(std::make_pair(k.circuit, k.log_constraints), std::move(key.key));
}

bool key_registry::holds(const std::string& id) const { return find_id(id) != nullptr; }

void key_registry::plan(const std::string& circuit, unsigned log_constraints, const std::string& where) {
  const r1cs::circuit_shape shape = shape_of(circuit, log_constraints, where);
  const std::size_t bytes =
      groth16::proving_key::estimate_bytes(shape.num_inputs, shape.num_aux, std::size_t{1} << log_constraints);
  std::lock_guard lock(mutex_);
  planned_.emplace_back(circuit, log_constraints);
  planned_bytes_ += bytes;
}

bool key_registry::remove(const std::string& circuit, unsigned log_constraints) {
  std::lock_guard lock(mutex_);
  std::shared_ptr<const key_entry> removed;
  if (auto it = keys_.find({circuit, log_constraints}); it != keys_.end()) {
    removed = std::move(it->second);
    keys_.erase(it);
  } else if (auto z = zkeys_.find(circuit); log_constraints == 0 && z != zkeys_.end()) {
    removed = z->second->keys;
    zkeys_.erase(z);
  } else {
    return false;
  }
  last_use_.erase(key_name(circuit, log_constraints));
  if (log_constraints == 0) last_use_.erase(circuit);  // a zkey circuit's
  released_.push_back(removed);
  return true;
}

std::shared_ptr<const key_entry> key_registry::remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  std::shared_ptr<const key_entry> removed;
  if (auto z = zkeys_.find(id); z != zkeys_.end()) {
    removed = z->second->keys;
    zkeys_.erase(z);
  } else {
    const auto it = std::find_if(keys_.begin(), keys_.end(),
                                 [&](const auto& k) { return key_name(k.first.first, k.first.second) == id; });
    if (it == keys_.end()) return nullptr;
    removed = std::move(it->second);
    keys_.erase(it);
  }
  last_use_.erase(id);
  released_.push_back(removed);
  return removed;
}

std::shared_ptr<const key_entry> key_registry::find_id(const std::string& id) const {
  std::lock_guard lock(mutex_);
  if (const auto z = zkeys_.find(id); z != zkeys_.end()) return z->second->keys;
  for (const auto& [k, entry] : keys_)
    if (key_name(k.first, k.second) == id) return entry;
  return nullptr;
}

void key_registry::touch(const std::string& id, std::chrono::system_clock::time_point when) {
  std::lock_guard lock(mutex_);
  last_use_[id] = when;
}

std::vector<held_key> key_registry::held() const {
  std::lock_guard lock(mutex_);
  std::vector<held_key> out;
  const auto last = [&](const std::string& id) -> std::optional<std::chrono::system_clock::time_point> {
    const auto it = last_use_.find(id);
    if (it == last_use_.end()) return std::nullopt;
    return it->second;
  };
  for (const auto& [k, entry] : keys_) {
    const std::string id = key_name(k.first, k.second);
    out.push_back({id, false, entry, last(id)});
  }
  for (const auto& [name, z] : zkeys_) out.push_back({name, true, z->keys, last(name)});
  return out;
}

std::shared_ptr<const key_entry> key_registry::find(const std::string& circuit, unsigned log_constraints) const {
  std::lock_guard lock(mutex_);
  const auto it = keys_.find({circuit, log_constraints});
  return it == keys_.end() ? nullptr : it->second;
}

std::shared_ptr<const zkey_entry> key_registry::find_zkey(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = zkeys_.find(name);
  return it == zkeys_.end() ? nullptr : it->second;
}

std::vector<std::pair<std::string, unsigned>> key_registry::ids() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, unsigned>> out;
  for (const auto& [id, entry] : keys_) out.push_back(id);
  return out;
}

std::string key_registry::names() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [id, entry] : keys_) out += (out.empty() ? "" : ", ") + key_name(id.first, id.second);
  return out;
}

std::size_t key_registry::host_bytes() const {
  std::lock_guard lock(mutex_);
  std::size_t bytes = planned_bytes_;
  for (const auto& [id, entry] : keys_) bytes += entry->host_bytes;
  for (const auto& [name, z] : zkeys_) bytes += z->keys->host_bytes;
  return bytes;
}

std::size_t key_registry::held_bytes() const {
  std::size_t bytes = host_bytes();
  std::lock_guard lock(mutex_);
  std::erase_if(released_, [](const auto& weak) { return weak.expired(); });
  for (const auto& weak : released_)
    if (const auto entry = weak.lock()) bytes += entry->host_bytes;
  return bytes;
}

key_sizes key_registry::sizes() const {
  key_sizes out;
  out.host_bytes = host_bytes();
  std::lock_guard lock(mutex_);
  for (const auto& [id, entry] : keys_)
    out.device.push_back({key_name(id.first, id.second), device_key_bytes(*entry->keys.pk),
                          entry->keys.pk->domain_size(), entry->keys.pk->num_variables()});
  for (const auto& [name, z] : zkeys_)
    out.device.push_back(
        {name, device_key_bytes(z->key->pk), z->key->pk.domain_size(), z->key->pk.num_variables()});
  for (const auto& [circuit, log] : planned_) {
    if (keys_.count({circuit, log}) != 0) continue;
    const r1cs::circuit_shape shape = r1cs::make_circuit(circuit, log, 1, 0)->shape();
    const std::size_t domain = std::size_t{1} << log;
    out.device.push_back({key_name(circuit, log), device_key_bytes(shape.num_inputs, shape.num_aux, domain), domain,
                          shape.num_inputs + shape.num_aux});
  }
  return out;
}

}  // namespace coprove::engine::detail
