// Keys while the engine runs: a key loaded (read and checked on the CPU executor, registered on
// the control strand within the memory plan's key bytes), evicted (refused while jobs of it are
// queued or running unless they are cancelled), listed, and the metrics that show them.
#include <coprove/engine/detail/engine_core.hpp>

#include <coprove/runtime/error.hpp>
#include <coprove/runtime/metrics.hpp>

#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>

#include <algorithm>
#include <variant>

namespace coprove::engine::detail {
namespace {

runtime::counter& key_loads(const std::string& outcome) {
  return runtime::registry::global().get_counter("coprove_engine_key_loads_total",
                                                 "Proving keys loaded while the engine runs, by outcome",
                                                 {{"outcome", outcome}});
}

runtime::counter& key_evictions(const std::string& reason) {
  return runtime::registry::global().get_counter("coprove_engine_key_evictions_total",
                                                 "Proving keys evicted while the engine runs, by reason",
                                                 {{"reason", reason}});
}

std::string id_list(const std::vector<std::uint64_t>& ids) {
  std::string out;
  for (const std::uint64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

}  // namespace

std::size_t engine_core::device_bytes_of(const groth16::proving_key& pk) const {
  if (!backend_->copies_to_device()) return 0;
  std::size_t bytes = 0;
  for (std::size_t d = 0; d < backend_->device_count(); ++d)
    if (backend_->key_resident(d, pk)) bytes += device_key_bytes(pk) * backend_->device_key_copies();
  return bytes;
}

key_info engine_core::info_of(const held_key& k) const {
  key_info info;
  info.id = k.id;
  info.circuit = k.key->keys.circuit;
  info.log_constraints = k.key->keys.log_constraints;
  info.zkey = k.zkey;
  info.source = k.key->keys.source;
  // The registry and `k` hold it; anyone else is a job that has not ended.
  info.state = k.key.use_count() > 2 ? "in_use" : "loaded";
  info.host_bytes = k.key->host_bytes;
  info.device_bytes = device_bytes_of(*k.key->keys.pk);
  info.last_use = k.last_use;
  return info;
}

held_key engine_core::held_as_listed(const std::string& id) const {
  for (held_key& k : keys_.held())
    if (k.id == id) return std::move(k);
  return {id, false, nullptr, std::nullopt};
}

std::vector<key_info> engine_core::keys() const {
  std::vector<key_info> out;
  for (const held_key& k : keys_.held()) out.push_back(info_of(k));
  return out;
}

void engine_core::publish_key_metrics() const {
  auto& metrics = runtime::registry::global();
  metrics.get_gauge("coprove_engine_keys_held", "Proving keys held (built-in circuits' and zkeys')")
      .set(static_cast<double>(keys_.held().size()));
  metrics
      .get_gauge("coprove_engine_key_host_bytes",
                 "Host bytes of the proving keys held, with evicted ones that running jobs still hold")
      .set(static_cast<double>(keys_.held_bytes()));
  metrics.get_gauge("coprove_engine_key_device_bytes", "Device bytes of the proving keys resident, all devices")
      .set(static_cast<double>(backend_->resident_key_bytes()));
}

std::optional<key_source> engine_core::known_key(const std::string& id) const {
  if (keys_.holds(id)) return std::nullopt;
  for (const auto& [known, source] : config_.known_keys)
    if (known == id) return source;
  return std::nullopt;
}

void engine_core::preload_keys() {
  if (config_.key_loading != key_loading::preload) return;
  for (const auto& known : config_.known_keys)
    load_key(known.second, [id = known.first](std::error_code ec, key_info info) {
      if (ec && ec != engine_errc::key_exists)
        COPROVE_LOG(error, "engine") << "preloading key " << id << ": " << info.message;
    });
}

// The ids of the keys no queued or running job holds, least recently used first (never used first
// of all, by id).
bool engine_core::make_room(std::size_t bytes, const std::string& for_id) {
  if (config_.key_eviction != key_eviction::lru) return false;
  std::vector<held_key> idle;
  for (held_key& k : keys_.held()) {
    const bool busy = std::any_of(live_jobs_.begin(), live_jobs_.end(),
                                  [&](const auto& live) { return live.second->key == k.key; });
    if (!busy) idle.push_back(std::move(k));
  }
  std::stable_sort(idle.begin(), idle.end(), [](const held_key& a, const held_key& b) { return a.last_use < b.last_use; });
  // Only what the registry alone holds comes back at once: count those.
  std::size_t freed = 0, i = 0;
  const std::size_t held = keys_.held_bytes(), limit = sizing_.plan.key_bytes;
  while (held - freed + bytes > limit && i < idle.size()) freed += idle[i++].key->host_bytes;
  if (held - freed + bytes > limit) return false;
  for (std::size_t e = 0; e < i; ++e) {
    const std::string id = idle[e].id;
    const std::size_t key_bytes = idle[e].key->host_bytes;
    idle[e].key.reset();
    keys_.remove(id);
    key_evictions("lru").inc();
    COPROVE_LOG(info, "engine") << "key " << id << " evicted (least recently used, no job holds it): " << key_bytes
                                << " host bytes given back to load " << for_id
                                << " within engine_config.key_memory_bytes = " << limit;
  }
  idle.clear();
  publish_key_metrics();
  return true;
}

void engine_core::load_key(key_source source, engine::key_handler handler) {
  // The control executor has work while the key is read on the CPU executor.
  auto work = boost::asio::prefer(executor_, boost::asio::execution::outstanding_work.tracked);
  boost::asio::post(cpu_, [self = shared_from_this(), source = std::move(source), handler = std::move(handler),
                           work = std::move(work)]() mutable {
    const std::string where = "load key (" + source.name + "): ";
    std::optional<prepared_key> prepared;
    std::string error;
    try {
      if (self->config_.results != result_kind::proof)
        throw std::invalid_argument(where + "results = evaluation_record makes no proofs");
      if (!source.load) throw std::invalid_argument(where + "no loader given");
      loaded_key key;
      try {
        key = source.load();
      } catch (const std::exception& e) {
        throw std::invalid_argument(where + e.what());
      }
      if (const auto* k = std::get_if<circuit_keys>(&key)) {
        if (k->log_constraints > self->config_.max_log_constraints)
          throw std::invalid_argument(where + "its domain of 2^" + std::to_string(k->log_constraints) +
                                      " rows exceeds the memory plan's 2^" +
                                      std::to_string(self->config_.max_log_constraints) +
                                      " (engine_config.max_log_constraints)");
        prepared = self->keys_.prepare(*k, where);
      } else {
        prepared = self->keys_.prepare_zkey(std::get<zkey_circuit>(key), where);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    boost::asio::post(self->strand_, [self, prepared = std::move(prepared), error = std::move(error), where,
                                      handler = std::move(handler), work = std::move(work)]() mutable {
      self->register_key(std::move(prepared), error, where, std::move(handler));
    });
  });
}

void engine_core::register_key(std::optional<prepared_key> prepared, const std::string& error,
                               const std::string& where, engine::key_handler handler) {
  const auto refuse = [&](engine_errc code, std::string message) {
    key_loads("refused").inc();
    COPROVE_LOG(warning, "engine") << message;
    key_info info;
    if (prepared) info.id = prepared->id;
    info.message = std::move(message);
    complete_on_associated(strand_, std::move(handler), make_error_code(code), std::move(info));
  };
  if (!prepared) return refuse(engine_errc::key_refused, error);
  if (stopping_) return refuse(engine_errc::shut_down, where + "the engine is shutting down");
  if (keys_.holds(prepared->id)) return refuse(engine_errc::key_exists, where + prepared->id + " is loaded already");
  const std::size_t bytes = prepared->key->host_bytes, held = keys_.held_bytes(), limit = sizing_.plan.key_bytes;
  if (held + bytes > limit && !make_room(bytes, prepared->id))
    return refuse(engine_errc::key_does_not_fit,
                  where + prepared->id + " takes " + std::to_string(bytes) + " bytes; with the " +
                      std::to_string(held) + " held, the proving keys would take more than the memory plan's " +
                      std::to_string(limit) + " (engine_config.key_memory_bytes" +
                      (config_.key_eviction == key_eviction::lru ? "; the keys that jobs hold cannot be evicted"
                                                                  : ", and key_eviction = never") +
                      ")");
  const std::string id = prepared->id;
  try {
    keys_.insert(std::move(*prepared), where);
  } catch (const std::invalid_argument& e) {
    return refuse(engine_errc::key_exists, e.what());
  }
  key_loads("loaded").inc();
  publish_key_metrics();
  key_info info = info_of({id, false, keys_.find_id(id), std::nullopt});
  info.zkey = keys_.find_zkey(id) != nullptr;
  info.message = "key " + id + " loaded (" + std::to_string(bytes) + " host bytes)";
  COPROVE_LOG(info, "engine") << info.message << " from " << info.source;
  complete_on_associated(strand_, std::move(handler), std::error_code{}, std::move(info));
}

void engine_core::evict_key(std::string id, bool cancel_jobs, engine::key_handler handler) {
  boost::asio::post(strand_, [self = shared_from_this(), id = std::move(id), cancel_jobs,
                              handler = std::move(handler)]() mutable {
    self->evict_on_strand(id, cancel_jobs, std::move(handler));
  });
}

void engine_core::evict_on_strand(const std::string& id, bool cancel_jobs, engine::key_handler handler) {
  const std::string where = "evict key (" + id + "): ";
  key_info info;
  info.id = id;
  auto entry = keys_.find_id(id);
  if (!entry) {
    const std::vector<held_key> held = keys_.held();
    std::string names;
    for (const held_key& k : held) names += (names.empty() ? "" : ", ") + k.id;
    info.message = where + "no key of this id is held (held: " + (names.empty() ? "none" : names) + ")";
    complete_on_associated(strand_, std::move(handler), make_error_code(engine_errc::unknown_key), std::move(info));
    return;
  }
  std::vector<std::uint64_t> holding;
  for (const auto& [job_id, j] : live_jobs_)
    if (j->key == entry) holding.push_back(job_id);
  std::sort(holding.begin(), holding.end());
  if (!holding.empty() && !cancel_jobs) {
    info = info_of(held_as_listed(id));
    info.message = where + std::to_string(holding.size()) + " job(s) of it are queued or running (" +
                   id_list(holding) + "); evict with cancel_jobs to cancel them";
    complete_on_associated(strand_, std::move(handler), make_error_code(engine_errc::key_in_use), std::move(info));
    return;
  }
  for (const std::uint64_t job_id : holding)
    stop_job(live_jobs_.at(job_id), runtime::operation_aborted(), "cancelled: its key " + id + " was evicted");
  info = info_of(held_as_listed(id));
  keys_.remove(id);
  entry.reset();  // held from here on only by the jobs cancelled above, if any
  info.state = "evicted";
  info.message = "key " + id + " evicted: " + std::to_string(info.host_bytes) + " host bytes given back" +
                 (holding.empty() ? "" : " once its cancelled jobs (" + id_list(holding) + ") end");
  key_evictions("requested").inc();
  publish_key_metrics();
  COPROVE_LOG(info, "engine") << info.message;
  maybe_complete_shutdown();
  pump();
  complete_on_associated(strand_, std::move(handler), std::error_code{}, std::move(info));
}

}  // namespace coprove::engine::detail
