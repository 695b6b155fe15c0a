// The proving keys the engine proves with, by id: a built-in circuit's key by (circuit, log size),
// a circom circuit's zkey by its name. Each is checked against its circuit once, when it is added,
// and kept with its prepared verifying key and the verifying key's digest. Keys are held through
// shared ownership: a job takes its key when it is submitted and holds it until it ends, so a key
// removed while partitions prove with it is freed after the last of them (held_bytes() counts it
// until then). The host bytes of the keys are accounted here, the memory plan charges them.
#pragma once

#include <coprove/engine/detail/engine_sizing.hpp>
#include <coprove/engine/engine.hpp>
#include <coprove/field/evaluation.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/groth16/zkey.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace coprove::engine::detail {

/// A circuit's key as partitions prove with it: the proving key, its verifying key prepared for the
/// check of every proof, and the verifying key's digest for the report.
struct key_entry {
  circuit_keys keys;
  groth16::prepared_verifying_key pvk;
  std::string vk_sha256;
  std::size_t host_bytes = 0;  ///< what holding it costs the host (the zkey's bytes for a zkey)
};

/// A circom circuit proved from its zkey: the zkey, its key entry and its domain (ffjavascript's
/// roots).
struct zkey_entry {
  std::shared_ptr<const groth16::zkey> key;
  std::shared_ptr<const key_entry> keys;
  std::shared_ptr<const field::evaluation_domain> domain;
};

/// "circuit/log_constraints", as messages name a key.
std::string key_name(const std::string& circuit, unsigned log_constraints);

/// A key checked against its circuit and not yet held: prepared on a CPU thread (the checks and
/// the verifying key's preparation are the slow part), inserted on the control strand.
struct prepared_key {
  std::string id;  ///< key_name for a built-in circuit's key, the name for a zkey circuit
  std::shared_ptr<const key_entry> key;    ///< set for either
  std::shared_ptr<const zkey_entry> zkey;  ///< set for a zkey circuit
};

/// A key held, as a listing shows it.
struct held_key {
  std::string id;
  bool zkey = false;
  std::shared_ptr<const key_entry> key;
  std::optional<std::chrono::system_clock::time_point> last_use;
};

/// Thread-safe (one mutex, inside its methods); lookups hand out shared ownership.
class key_registry {
 public:
  /// An empty registry; `max_log_constraints` bounds a zkey's domain (the plan's buffers).
  explicit key_registry(unsigned max_log_constraints);
  /// The configured keys, zkeys and planned keys (engine_config::keys, zkey_circuits, planned_keys),
  /// each checked; throws std::invalid_argument naming the field and the key. With results =
  /// evaluation_record it holds none (and refuses keys given), said at warning.
  explicit key_registry(const engine_config& cfg);

  /// Adds a built-in circuit's key: checked for its circuit's counts and domain; refused (std::
  /// invalid_argument, the message starting with `where`) when null, inconsistent or already held.
  void add(const circuit_keys& k, const std::string& where) { insert(prepare(k, where), where); }
  /// Adds a zkey circuit; refused when its name is empty or held, or its domain exceeds the plan.
  void add_zkey(const zkey_circuit& z, const std::string& where) { insert(prepare_zkey(z, where), where); }
  /// add's and add_zkey's checks without holding the key (any thread; refusals as theirs).
  prepared_key prepare(const circuit_keys& k, const std::string& where) const;
  prepared_key prepare_zkey(const zkey_circuit& z, const std::string& where) const;
  /// Holds a prepared key; refused ("given twice") when its id is held.
  void insert(prepared_key key, const std::string& where);
  /// Whether a key of this id is held.
  bool holds(const std::string& id) const;
  /// Charges a key that is not given (at groth16::proving_key::estimate_bytes, for the plan).
  void plan(const std::string& circuit, unsigned log_constraints, const std::string& where);
  /// Removes a key (a built-in circuit's, or a zkey circuit's with log_constraints 0); false when
  /// none is held. Jobs that hold it keep it until they end.
  bool remove(const std::string& circuit, unsigned log_constraints);
  /// Removes the key of this id (key_name or a zkey circuit's name): its entry, or null when none
  /// is held. Jobs that hold it keep it until they end.
  std::shared_ptr<const key_entry> remove(const std::string& id);
  /// The key of this id, or null.
  std::shared_ptr<const key_entry> find_id(const std::string& id) const;
  /// Records a job's use of the key of this id (for the listing and the least recently used).
  void touch(const std::string& id, std::chrono::system_clock::time_point when);
  /// Every key held, built-in circuits' first, each in id order.
  std::vector<held_key> held() const;

  std::shared_ptr<const key_entry> find(const std::string& circuit, unsigned log_constraints) const;
  std::shared_ptr<const zkey_entry> find_zkey(const std::string& name) const;
  /// The built-in circuits and sizes held.
  std::vector<std::pair<std::string, unsigned>> ids() const;
  /// The built-in keys held, named for a refusal ("mimc/10, mimc/12").
  std::string names() const;

  /// The host bytes of the keys held and planned.
  std::size_t host_bytes() const;
  /// host_bytes() plus the keys removed that jobs still hold.
  std::size_t held_bytes() const;
  /// The keys as the sizing charges them: on the host, and on a device each key held, each zkey
  /// and each planned key not held, in that order.
  key_sizes sizes() const;

 private:
  const unsigned max_log_constraints_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, unsigned>, std::shared_ptr<const key_entry>> keys_;
  std::map<std::string, std::shared_ptr<const zkey_entry>> zkeys_;
  std::map<std::string, std::chrono::system_clock::time_point> last_use_;  // by id
  std::vector<std::pair<std::string, unsigned>> planned_;
  std::size_t planned_bytes_ = 0;
  // Removed while jobs held them: counted in held_bytes() until the last job lets go.
  mutable std::vector<std::weak_ptr<const key_entry>> released_;
};

}  // namespace coprove::engine::detail
