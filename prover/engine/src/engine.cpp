// The engine's public face: its error category, the results' JSON and the engine, which hands
// every call to its core (detail/engine_core.hpp).
#include <coprove/engine/engine.hpp>

#include <coprove/engine/detail/engine_core.hpp>

#include <coprove/groth16/key_files.hpp>

#include <boost/asio/system_executor.hpp>
#include <boost/json/array.hpp>

#include <ctime>

namespace coprove::engine {
namespace {

class engine_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "coprove.engine"; }
  std::string message(int value) const override {
    switch (static_cast<engine_errc>(value)) {
      case engine_errc::synthesis_failed: return "synthesis failed";
      case engine_errc::backend_failed: return "compute backend failed";
      case engine_errc::verification_failed: return "a proof or an evaluation record did not verify";
      case engine_errc::shut_down: return "engine shut down";
      case engine_errc::unknown_job: return "unknown job id";
      case engine_errc::proving_failed: return "the proof could not be made";
      case engine_errc::unknown_key: return "no key of this id is held";
      case engine_errc::key_exists: return "a key of this id is loaded already";
      case engine_errc::key_refused: return "the key could not be read or failed its checks";
      case engine_errc::key_does_not_fit: return "the proving keys would exceed the memory plan's key bytes";
      case engine_errc::key_in_use: return "jobs of the key are queued or running";
    }
    return "unknown engine error";
  }
};

boost::json::object timings_json(const partition_timings& t) {
  return {{"queue_wait_ns", t.queue_wait_ns}, {"synthesis_ns", t.synthesis_ns},
          {"h2d_ns", t.h2d_ns},               {"gpu_compute_ns", t.gpu_compute_ns},
          {"d2h_ns", t.d2h_ns},               {"total_ns", t.total_ns},
          {"gpu_queue_ns", t.gpu_queue_ns},   {"evaluation_ns", t.evaluation_ns},
          {"spmv_ns", t.spmv_ns},             {"msm_ns", t.msm_ns},
          {"prove_ns", t.prove_ns},
          {"proof_verify_ns", t.proof_verify_ns}};
}

boost::json::object request_json(const prove_request& r) {
  return {{"circuit", r.circuit},
          {"log_constraints", r.log_constraints},
          {"partitions", r.partitions},
          {"seed", r.seed},
          {"priority", std::string(to_string(r.priority))}};
}

}  // namespace

const std::error_category& engine_category() noexcept {
  static const engine_category_impl category;
  return category;
}

std::error_code make_error_code(engine_errc e) noexcept {
  return {static_cast<int>(e), engine_category()};
}

std::string_view to_string(job_state state) noexcept {
  switch (state) {
    case job_state::queued: return "queued";
    case job_state::running: return "running";
    case job_state::done: return "done";
    case job_state::failed: return "failed";
    case job_state::cancelled: return "cancelled";
  }
  return "unknown";
}

std::string_view to_string(result_kind kind) noexcept {
  switch (kind) {
    case result_kind::proof: return "proof";
    case result_kind::evaluation_record: return "evaluation_record";
  }
  return "unknown";
}

boost::json::object prove_result::to_json() const {
  boost::json::array parts;
  for (const auto& p : partitions) {
    boost::json::object part{{"index", p.index}};
    if (p.proof) {
      part["proof"] = groth16::encode_proof_hex(*p.proof);
      part["public_inputs"] = groth16::public_inputs_to_snarkjs_json(p.public_inputs);
      // The same proof as snarkjs's proof.json, for `snarkjs groth16 verify` with the key's vk.json.
      part["proof_snarkjs"] = groth16::proof_to_snarkjs_json(*p.proof);
    } else {
      part["record"] = field::to_json(p.record);
    }
    part["verified"] = p.verified;
    part["is_pinned"] = p.is_pinned;
    part["pce_used"] = p.pce_used;
    part["device"] = p.device;
    part["slot"] = p.slot;
    part["dispatch_sequence"] = p.dispatch_sequence;
    part["timings"] = timings_json(p.timings);
    parts.push_back(std::move(part));
  }
  boost::json::object out{{"job_id", job_id},
                          {"request", request_json(request)},
                          {"result_kind", std::string(to_string(kind))},
                          {"total_ns", total_ns}};
  if (!vk_sha256.empty()) out["vk_sha256"] = vk_sha256;
  out["partitions"] = std::move(parts);
  return out;
}

key_source key_source::ready(loaded_key key, std::string name) {
  return {std::move(name), [key = std::move(key)] { return key; }};
}

boost::json::object key_info::to_json() const {
  boost::json::object o{{"id", id},
                        {"curve", curve},
                        {"circuit", circuit},
                        {"log_constraints", log_constraints},
                        {"size", std::size_t{1} << log_constraints},
                        {"kind", zkey ? "zkey" : "key"},
                        {"source", source},
                        {"state", state},
                        {"host_bytes", host_bytes},
                        {"device_bytes", device_bytes}};
  if (last_use) {
    const std::time_t t = std::chrono::system_clock::to_time_t(*last_use);
    std::tm utc{};
    gmtime_r(&t, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    o["last_use"] = text;
  } else {
    o["last_use"] = nullptr;
  }
  if (!message.empty()) o["message"] = message;
  return o;
}

boost::json::object job_status::to_json() const {
  boost::json::object o{{"job_id", job_id},
                        {"state", std::string(to_string(state))},
                        {"partitions", partitions},
                        {"completed", completed}};
  if (!error.empty()) o["error"] = error;
  return o;
}

engine::engine(boost::asio::any_io_executor control, engine_config cfg, std::unique_ptr<compute_backend> backend)
    : core_(std::make_shared<detail::engine_core>(std::move(control), std::move(cfg), std::move(backend))) {
  core_->start();
}

engine::~engine() {
  if (core_) core_->close();
}

void engine::validate(const prove_request& request) const { core_->validate(request); }

void engine::start_prove(prove_request request, prove_handler handler) {
  std::uint64_t id = 0;
  try {
    id = core_->submit(std::move(request));
  } catch (...) {
    // Validated at the call already; a failure here (e.g. out of memory) is reported through the
    // handler like any other asynchronous error.
    detail::complete_on_associated(boost::asio::system_executor(), std::move(handler),
                                   make_error_code(runtime::errc::invalid_argument), prove_result{});
    return;
  }
  core_->await(id, std::move(handler), true);
}

std::uint64_t engine::submit(prove_request request) { return core_->submit(std::move(request)); }

void engine::start_await(std::uint64_t job_id, prove_handler handler) { core_->await(job_id, std::move(handler), false); }

void engine::start_shutdown(bool drain, shutdown_handler handler) { core_->shutdown(drain, std::move(handler)); }

bool engine::cancel(std::uint64_t job_id) { return core_->cancel(job_id); }

bool engine::expired(std::uint64_t job_id) const { return core_->expired(job_id); }

std::size_t engine::cancel_queued() { return core_->cancel_queued(); }

std::optional<job_status> engine::status(std::uint64_t job_id) const { return core_->status(job_id); }

engine_status engine::status_snapshot() const { return core_->status_snapshot(); }

boost::json::object engine::status_json() const { return to_json(core_->status_snapshot()); }

engine_report engine::report() const { return core_->report(); }

boost::json::object engine::report_json() const { return to_json(core_->report()); }

void engine::reset_report() { core_->reset_report(); }
void engine::wait_for_prewarm() { core_->wait_for_prewarm(); }

const memory_plan& engine::plan() const { return core_->plan(); }

std::shared_ptr<const groth16::verifying_key> engine::verifying_key(std::string_view circuit,
                                                                   unsigned log_constraints) const {
  return core_->verifying_key(circuit, log_constraints);
}

std::vector<std::pair<std::string, unsigned>> engine::key_ids() const { return core_->key_ids(); }

std::vector<key_info> engine::keys() const { return core_->keys(); }

std::optional<key_source> engine::known_key(const std::string& id) const { return core_->known_key(id); }

void engine::start_load_key(key_source source, key_handler handler) {
  core_->load_key(std::move(source), std::move(handler));
}

void engine::start_evict_key(std::string id, bool cancel_jobs, key_handler handler) {
  core_->evict_key(std::move(id), cancel_jobs, std::move(handler));
}

const compute_backend& engine::backend() const { return core_->backend(); }

const engine_config& engine::config() const { return core_->config(); }

std::size_t engine::depth_per_device() const noexcept { return core_->depth_per_device(); }

runtime::trace_writer* engine::trace() { return core_->trace(); }

}  // namespace coprove::engine
