// The engine: proves jobs (a circuit, its size, a number of partitions, a seed) by driving every
// partition through the pipeline GPU slot -> memory reservation -> pinned buffers -> synthesis ->
// GPU worker (the quotient h) -> Groth16 proof with the circuit's key (verified before it is
// returned), with C++20 coroutines on a control executor, and releases in reverse. It owns the memory plan, the pinned pool, the PCE cache and the dispatch state; the
// compute backend is chosen by the caller. This is the in-process async API (Asio completion
// tokens: use_awaitable, use_future, callbacks, deferred).
#pragma once

#include <coprove/engine/compute_backend.hpp>
#include <coprove/engine/dispatch.hpp>
#include <coprove/engine/engine_report.hpp>
#include <coprove/field/evaluation.hpp>
#include <coprove/engine/memory_plan.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/pce.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <variant>
#include <vector>

namespace coprove::runtime {
class trace_writer;
}

namespace coprove::engine {
using field::evaluation_record;
using field::fr;
using r1cs::circuit;
using r1cs::deferred_synthesis;
using r1cs::pce_policy;


/// Why a job failed; the job's status carries the full message.
enum class engine_errc {
  synthesis_failed = 1,  ///< a circuit or the PCE threw while filling a, b, c
  backend_failed,        ///< the compute backend refused or failed the quotient
  verification_failed,   ///< an evaluation record or a proof did not verify
  shut_down,             ///< the engine stopped before the job finished
  unknown_job,           ///< no job has this id
  proving_failed,        ///< the proof could not be made (e.g. the assignment does not satisfy the circuit)
  unknown_key,           ///< no key has this id
  key_exists,            ///< a key of this id is loaded already
  key_refused,           ///< a key to load could not be read or failed its checks
  key_does_not_fit,      ///< the keys would hold more host memory than the plan reserves for them
  key_in_use,            ///< jobs of the key are queued or running (evict with cancel_jobs)
};
const std::error_category& engine_category() noexcept;
std::error_code make_error_code(engine_errc e) noexcept;

struct prove_request {
  std::string circuit = "mimc";
  unsigned log_constraints = 16;
  std::size_t partitions = 16;
  std::uint64_t seed = 1;
  /// For a zkey circuit (engine_config::zkey_circuits): one witness a partition (circom's wtns
  /// values, the constant one first). The engine sets partitions and log_constraints from them
  /// and the key; the seed only varies the insecure test blinding.
  std::shared_ptr<const std::vector<std::vector<fr>>> witnesses;
  job_priority priority = job_priority::normal;  ///< orders admission; the proofs do not depend on it
};

/// Synthesizes one partition of a request in place of its circuit; called on a synthesis thread.
/// a is always the request's domain size; b and c are too, or both empty when the engine leased
/// only a (engine_config::synthesizer_sends_assignment). It returns, as pce_cache::synthesize_deferred
/// does, one of: a, b and c filled (matrices null); only the assignment written at the start of a,
/// with the matrices that make a, b and c of it (the backend evaluates them; needs
/// engine_config::backend_spmv); or, given empty b and c, needs_abc, having written nothing.
using synthesizer_fn = std::function<deferred_synthesis(const prove_request& request, std::size_t partition,
                                                        std::span<fr> a, std::span<fr> b, std::span<fr> c)>;

/// What a partition's result is.
enum class result_kind {
  proof,              ///< a Groth16 proof with the circuit's key, verified before it is returned
  evaluation_record,  ///< only the quotient's evaluation record: binds nothing (quotient benchmarks)
};
std::string_view to_string(result_kind kind) noexcept;

/// A circuit's Groth16 proving key as the engine proves with it: one per circuit and size, shared
/// by every partition and charged in the memory plan.
struct circuit_keys {
  std::string circuit;  ///< a built-in circuit's name (r1cs::make_circuit)
  unsigned log_constraints = 0;
  std::shared_ptr<const groth16::proving_key> pk;
  std::string source;  ///< where it came from, for the report (a directory, "development key ...")
};

/// A circom circuit proved from its snarkjs zkey: requests name it and bring one witness a
/// partition; the backend evaluates A w and B w (the zkey's coefficients) and snarkjs's
/// odd-coset quotient; the proof uses the zkey's queries and is verified with its vk. The key is
/// charged in the memory plan; its domain must fit max_log_constraints.
struct zkey_circuit {
  std::string name;
  std::shared_ptr<const groth16::zkey> key;
};

/// A key loaded at run time: a built-in circuit's proving key or a zkey circuit.
using loaded_key = std::variant<circuit_keys, zkey_circuit>;

/// Where a key to load at run time comes from. `load` runs on a CPU thread of the engine (never on
/// the control executor): it reads and checks the key (the composition root gives it, since the
/// engine reads no key directories itself) and throws, naming the file and what failed, when it
/// cannot. `name` says it in messages (a directory, a file).
struct key_source {
  std::string name;
  std::function<loaded_key()> load;
  /// A key already in memory (its checks against its circuit still run on the CPU thread).
  static key_source ready(loaded_key key, std::string name);
};

/// engine.key_loading: when the known keys (engine_config::known_keys) are read.
enum class key_loading {
  preload,    ///< all of them at start, on the CPU executor (the control executor runs meanwhile)
  on_demand,  ///< each when its first job comes
};
/// engine.key_eviction: what a load that does not fit engine_config::key_memory_bytes does.
enum class key_eviction {
  never,  ///< it is refused (key_does_not_fit)
  lru,    ///< the least recently used keys that no queued or running job holds are evicted first
};

/// A key as the engine holds it, for listings and for the completion of a load or an eviction.
struct key_info {
  std::string id;       ///< "circuit/log_constraints" for a built-in circuit, the name of a zkey circuit
  std::string curve = "bls12-381";
  std::string circuit;  ///< the built-in circuit or the zkey circuit's name
  unsigned log_constraints = 0;
  bool zkey = false;
  std::string source;   ///< where it came from
  std::string state;    ///< "loaded", "in_use" (held by a queued or running job), "evicted"
  std::size_t host_bytes = 0;    ///< host memory it holds
  std::size_t device_bytes = 0;  ///< device memory its resident copies hold, all devices together
  std::optional<std::chrono::system_clock::time_point> last_use;  ///< its last job's submission
  std::string message;  ///< what happened, or why it was refused (naming the key and the limit)
  boost::json::object to_json() const;
};

/// How long the engine keeps finished jobs (their results, for status and await). A finished job
/// is forgotten, oldest first, when more than max_jobs are kept, when together they hold more
/// than max_bytes, or max_age after it ended; its id then answers expired(). What a finished job
/// keeps is its result alone (the evaluation domain is shared by every job of its size).
struct result_retention {
  std::size_t max_jobs = 4096;
  std::size_t max_bytes = std::size_t{256} << 20;
  std::chrono::milliseconds max_age{3600 * 1000};
};

/// A job refused because the engine holds as much unfinished work as it is configured to
/// (engine_config::max_open_jobs, max_open_partitions); the message names the limit. Retry later.
class queue_full_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct engine_config {
  dispatch_policy policy = dispatch_policy::semaphore;
  /// The admission depth, given per device and enforced as one total: at most depth_per_device x
  /// devices partitions are in flight at once, shared by every device (a synthesized partition
  /// takes whichever worker slot frees first, so a slow device may hold more than its share).
  /// 0 (the default) = measured: it starts at its most and follows the measured stage times
  /// (slots x (1 + CPU time / device time) x a margin, see detail/depth_controller.hpp), at most
  /// what the CPU can use and the memory plan allows; the plan is sized for that most.
  std::size_t depth_per_device = 0;
  std::chrono::milliseconds poll_interval{5};  ///< poll policy: how often it looks
  std::size_t poll_queue_limit = 4;  ///< poll policy: admit while fewer are queued for the GPU
  pce_policy pce = pce_policy::wait;
  /// Where each circuit's constraint cache (PCE) is kept across processes: loaded from
  /// <dir>/<circuit id>.pce when the engine starts (for every keyed circuit) or first meets the
  /// circuit, saved there once built. A corrupt or stale file is rebuilt (said at warning). Empty
  /// (the engine's default): off, said once at info; the binary defaults to ~/.cache/coprove.
  std::string pce_cache_dir;
  /// PCE hits send only the assignment to the backend, which evaluates A w, B w, C w itself (on a
  /// GPU: a third or less of the bytes written on the host and copied, and no SpMV on the CPU).
  /// Under PCE `wait` (and when the plan circuit's assignment fits a vector), such a partition also
  /// leases two pinned vectors (assignment, h) instead of four, and the memory plan charges one
  /// input vector a slot plus two full sets for the slow path (status: full_input_slots).
  /// false: the synthesis thread does the SpMV into a, b, c, which are copied.
  bool backend_spmv = true;
  /// CPU pool for synthesis and evaluation; 0 = hardware. With synthesis_executor set, the
  /// threads that executor runs on (used to tell a depth-bound idle slot from a CPU-bound one).
  std::size_t synthesis_threads = 0;
  /// Where synthesis and the matrices' uploads run. Empty (the default): the engine's own
  /// thread_pool of synthesis_threads. Set (tests drive an io_context by hand), it must outlive
  /// the engine's work; partitions hop there and back to the control executor.
  boost::asio::any_io_executor synthesis_executor{};
  std::size_t memory_budget_bytes = 0;  ///< the memory plan's total; 0 = auto from free memory
  bool pageable_fallback = false;  ///< pinned pool may hand out pageable buffers when exhausted
  /// Pinned buffer sets allocated at start; 0 = the most the depth may reach (depth_max a device
  /// x devices: what the plan charges), so a rising measured depth never page-locks on a
  /// partition's path. Fewer leave the rest to be allocated when partitions lease them.
  std::size_t prewarm_partitions = 0;
  bool trace = false;                  ///< record a Chrome trace of every stage
  std::size_t trace_max_events = 1 << 20;
  /// The largest partition the memory plan sizes buffers for; bigger requests are rejected.
  unsigned max_log_constraints = 16;
  /// The circuit the memory plan sizes the PCE cache and synthesis working set for.
  std::string plan_circuit = "mimc";
  /// The most partitions one job may ask for (its results are held until it is awaited).
  std::size_t max_partitions_per_job = 4096;
  /// Unfinished work the engine accepts: jobs queued or running, and their partitions in all (0 =
  /// no limit). submit() beyond either throws queue_full_error; a job bigger than
  /// max_open_partitions alone is refused as invalid.
  std::size_t max_open_jobs = 0;
  std::size_t max_open_partitions = 0;
  /// Finished jobs kept for status and await.
  result_retention retention;
  /// The first job id; ids count up from it. A service sets it from the clock so that ids are not
  /// given twice across restarts.
  std::uint64_t first_job_id = 1;
  /// Fault injection for tests: called on the synthesis thread before each synthesis; an
  /// exception it throws fails that job like a failing circuit would.
  std::function<void(std::uint64_t job_id, std::size_t partition)> synthesis_hook;
  /// Replaces circuit synthesis. Unset (the default), every partition is synthesized from its
  /// circuit through the PCE cache. Set, it fills a, b, c instead: the engine says so at warning
  /// once (naming synthesizer_name), counts each such partition in
  /// coprove_engine_pce_syntheses_total{path="configured"} and in the report, and checks what it
  /// returns like any synthesis (the evaluation record must verify). bench_pipeline uses it to
  /// replay partitions synthesized before the run, which takes synthesis off the critical path.
  synthesizer_fn synthesizer;
  std::string synthesizer_name = "configured synthesizer";
  /// The configured synthesizer sends only the assignment when it can: every partition whose
  /// assignment fits a vector leases a and h alone (lean inputs, planned as for PCE hits), and b
  /// and c late when the synthesizer answers needs_abc. Needs synthesizer and backend_spmv; the
  /// engine refuses the configuration otherwise.
  bool synthesizer_sends_assignment = false;
  /// Proofs (the default) or, configured and said at warning once, evaluation records only.
  result_kind results = result_kind::proof;
  /// The proving keys, one per circuit and size the engine proves; with results = proof a request
  /// for a circuit and size without one is refused at submission. Checked against their circuits
  /// at construction (counts), charged in the memory plan.
  std::vector<circuit_keys> keys;
  /// Keys charged in the memory plan (at groth16::proving_key::estimate_bytes) without being given:
  /// with `keys` empty the engine is built for its plan alone (`coprove info`) and refuses every
  /// request for want of a key.
  std::vector<std::pair<std::string, unsigned>> planned_keys;
  /// Host bytes the memory plan reserves for proving keys; 0 (the default): what `keys`,
  /// `planned_keys` and `zkey_circuits` take. Set, keys may also be loaded at run time
  /// (engine::async_load_key) up to it, and the engine starts without any key.
  std::size_t key_memory_bytes = 0;
  /// Keys the engine may load while it runs, by id (key_info::id): with key_loading = preload all
  /// are loaded at start on the CPU executor; otherwise, and for any not loaded (yet or after an
  /// eviction), when a job needs it (engine::known_key; the service awaits the load before it
  /// submits). Either way the engine starts at once.
  std::vector<std::pair<std::string, key_source>> known_keys;
  enum key_loading key_loading = key_loading::preload;
  enum key_eviction key_eviction = key_eviction::never;
  /// Circom circuits and their zkeys (results = proof only).
  std::vector<zkey_circuit> zkey_circuits;
  /// Set: each proof's blinding r, s is derived from this seed, the request and the partition
  /// (the same proof on every backend and run: for tests that compare backends). Said at warning
  /// once; anyone who knows the seed learns the witness from the proof. Unset (the default): r and
  /// s come from the operating system's CSPRNG and are wiped after use.
  std::optional<std::uint64_t> insecure_proof_seed;
};

/// Nanoseconds per stage of one partition. queue_wait: submission to admission; gpu_queue:
/// synthesized to on a worker slot; evaluation: the backend's evaluation at zeta (device time on
/// the CUDA backend, part of the work between H2D and D2H); total: submission to verified record.
struct partition_timings {
  std::uint64_t queue_wait_ns = 0, synthesis_ns = 0, h2d_ns = 0, gpu_compute_ns = 0, d2h_ns = 0,
                total_ns = 0;
  std::uint64_t gpu_queue_ns = 0, evaluation_ns = 0;
  std::uint64_t spmv_ns = 0;  ///< the backend's A w, B w, C w (0 when a, b, c came from the host)
  std::uint64_t msm_ns = 0;           ///< the proof's MSMs, on the backend (the device for CUDA)
  std::uint64_t prove_ns = 0;         ///< the proof's blinding terms from the MSM sums, on the CPU
  std::uint64_t proof_verify_ns = 0;  ///< the pairing check of the proof before it is returned
};

struct partition_result {
  std::size_t index = 0;
  /// The quotient stage's check (h(zeta) Z(zeta) = a(zeta) b(zeta) - c(zeta)); not a proof.
  evaluation_record record;
  /// With result_kind::proof: the Groth16 proof and the public inputs it proves (without the
  /// constant one), checked against the key's verifying key before it is returned.
  std::optional<groth16::proof> proof;
  std::vector<fr> public_inputs;
  bool verified = false;  ///< the proof (or, for records, the record) verified
  bool is_pinned = false;
  bool pce_used = false;
  bool spmv_on_backend = false;  ///< only the assignment was sent; the backend evaluated A, B, C
  int device = -1;
  partition_timings timings;
  std::size_t slot = 0;                ///< the worker slot of `device` that computed it
  std::uint64_t dispatch_sequence = 0;  ///< order of admission across all jobs (0-based)
};

struct prove_result {
  std::uint64_t job_id = 0;
  prove_request request;
  std::vector<partition_result> partitions;  ///< by partition index
  std::uint64_t total_ns = 0;
  result_kind kind = result_kind::proof;
  std::string vk_sha256;  ///< proofs: SHA-256 of the verifying key (bellman's vk bytes), hex
  boost::json::object to_json() const;
};

enum class job_state { queued, running, done, failed, cancelled };
std::string_view to_string(job_state state) noexcept;

struct job_status {
  std::uint64_t job_id = 0;
  job_state state = job_state::queued;
  std::size_t partitions = 0, completed = 0;
  std::string error;
  boost::json::object to_json() const;
};

namespace detail {
class engine_core;
}

/// Thread model: the engine's state lives on one strand of the control executor and is changed
/// only there (no lock on a partition's path); every public method may be called from any thread
/// (work is posted to the strand). status(), status_snapshot(), report() and their JSON read a
/// snapshot: job states through a lock taken per job (submit, status, end), figures from atomics
/// the strand writes, each figure on its own. Handlers complete on their associated executor (the
/// system executor when they have none), never inside the call that started them. Destroying the
/// engine cancels what is still running; that work gives everything back on the control executor
/// once its device work is done, so keep the executor running (or await async_shutdown first for
/// a clean stop).
class engine {
 public:
  using prove_signature = void(std::error_code, prove_result);
  using prove_handler = boost::asio::any_completion_handler<prove_signature>;
  using shutdown_handler = boost::asio::any_completion_handler<void(std::error_code)>;

  /// Computes the memory plan and sets up the pinned pool; throws memory_plan_error when the plan
  /// does not fit and std::invalid_argument naming a bad config field.
  engine(boost::asio::any_io_executor control, engine_config cfg,
         std::unique_ptr<compute_backend> backend);
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// Submits and awaits a job. Throws std::invalid_argument naming the field for a bad request
  /// (at the call). Completes with the result once every partition's record is verified, or with
  /// an engine_errc / operation_aborted (cancelled) error and the partitions done so far. A
  /// per-operation cancellation (terminal or partial) cancels the job.
  template <boost::asio::completion_token_for<prove_signature> Token =
                boost::asio::default_completion_token_t<boost::asio::any_io_executor>>
  auto async_prove(prove_request request, Token&& token) {
    validate(request);
    return boost::asio::async_initiate<Token, prove_signature>(
        [this](auto handler, prove_request req) {
          start_prove(std::move(req), prove_handler(std::move(handler)));
        },
        token, std::move(request));
  }

  /// Validates (throws std::invalid_argument naming the field) and queues a job; returns its id.
  std::uint64_t submit(prove_request request);

  /// Awaits a submitted job's result (same completion as async_prove); an unknown id completes
  /// with runtime::errc::invalid_argument. Cancelling the wait does not cancel the job.
  template <boost::asio::completion_token_for<prove_signature> Token =
                boost::asio::default_completion_token_t<boost::asio::any_io_executor>>
  auto async_await(std::uint64_t job_id, Token&& token) {
    return boost::asio::async_initiate<Token, prove_signature>(
        [this](auto handler, std::uint64_t id) { start_await(id, prove_handler(std::move(handler))); },
        token, job_id);
  }

  /// Cancels a queued or running job: every permit, byte and buffer it holds is returned once
  /// its in-flight device work has finished. False if the id is unknown or the job has ended.
  bool cancel(std::uint64_t job_id);

  /// Cancels every job none of whose partitions has started (a drain that runs only the work
  /// already started); returns how many.
  std::size_t cancel_queued();

  /// True when job_id was given by this engine and its job has since been forgotten by the
  /// retention policy (engine_config::retention): its result is gone for good.
  bool expired(std::uint64_t job_id) const;

  std::optional<job_status> status(std::uint64_t job_id) const;
  /// The memory plan, pool, queues, devices, dispatch maxima and PCE statistics, now.
  engine_status status_snapshot() const;
  /// to_json(status_snapshot()).
  boost::json::object status_json() const;
  /// The cumulative run report (backend, partitions, verified, failed, throughput, dispatch,
  /// pinned pool, PCE, GPU busy fraction, stage percentiles).
  engine_report report() const;
  /// to_json(report()).
  boost::json::object report_json() const;
  /// Forgets the dispatch maxima, latency histograms and throughput window (between benchmark
  /// phases); jobs and pool stay as they are.
  void reset_report();

  /// Blocks until the pinned pool's background pre-warm (and any queued allocation) is done, so
  /// that a measurement starts from a warm pool. Never call it on the control executor's thread.
  void wait_for_prewarm();

  /// The verifying key of circuit/log_constraints among engine_config::keys; null when there is
  /// none (or results are evaluation records).
  std::shared_ptr<const groth16::verifying_key> verifying_key(std::string_view circuit,
                                                             unsigned log_constraints) const;
  /// The circuits and sizes the engine has keys for.
  std::vector<std::pair<std::string, unsigned>> key_ids() const;
  /// Every key held (built-in circuits' and zkeys'), by id: bytes, state, last use.
  std::vector<key_info> keys() const;
  /// The source of a key the engine knows (engine_config::known_keys) and does not hold now, for
  /// async_load_key; nothing when it holds it or does not know it.
  std::optional<key_source> known_key(const std::string& id) const;

  using key_signature = void(std::error_code, key_info);
  using key_handler = boost::asio::any_completion_handler<key_signature>;

  /// Loads a key while the engine runs: `source.load` and the key's checks run on the engine's
  /// CPU executor, never on the control executor; the key is then registered on the control
  /// strand. Completes with the key's info, or with key_refused (the loader threw or a check
  /// failed), key_exists, or key_does_not_fit (beyond engine_config::key_memory_bytes), the
  /// message in the info naming the key and the limit. Nothing changes on a refusal.
  template <boost::asio::completion_token_for<key_signature> Token =
                boost::asio::default_completion_token_t<boost::asio::any_io_executor>>
  auto async_load_key(key_source source, Token&& token) {
    return boost::asio::async_initiate<Token, key_signature>(
        [this](auto handler, key_source s) { start_load_key(std::move(s), key_handler(std::move(handler))); }, token,
        std::move(source));
  }

  /// Evicts a key (its id as key_info::id names it) on the control strand: refused with
  /// key_in_use while jobs of it are queued or running unless `cancel_jobs`, which cancels them
  /// first; unknown_key when none is held. New jobs for it are refused at once; its host memory
  /// is given back once the last partition that proves with it has ended, and its device copies
  /// when the backend lets go of keys nobody holds (the CUDA backend: at its next key upload).
  template <boost::asio::completion_token_for<key_signature> Token =
                boost::asio::default_completion_token_t<boost::asio::any_io_executor>>
  auto async_evict_key(std::string id, bool cancel_jobs, Token&& token) {
    return boost::asio::async_initiate<Token, key_signature>(
        [this](auto handler, std::string i, bool c) {
          start_evict_key(std::move(i), c, key_handler(std::move(handler)));
        },
        token, std::move(id), cancel_jobs);
  }

  const memory_plan& plan() const;
  const compute_backend& backend() const;
  const engine_config& config() const;
  /// The depth D per device the semaphore policy admits now (a measured depth moves).
  std::size_t depth_per_device() const noexcept;
  /// Null when tracing is off.
  runtime::trace_writer* trace();

  /// Stops admitting new jobs; with `drain` waits for the running ones, otherwise cancels them;
  /// completes once nothing is in flight.
  template <boost::asio::completion_token_for<void(std::error_code)> Token =
                boost::asio::default_completion_token_t<boost::asio::any_io_executor>>
  auto async_shutdown(bool drain, Token&& token) {
    return boost::asio::async_initiate<Token, void(std::error_code)>(
        [this](auto handler, bool d) { start_shutdown(d, shutdown_handler(std::move(handler))); },
        token, drain);
  }

 private:
  void validate(const prove_request& request) const;
  void start_prove(prove_request request, prove_handler handler);
  void start_await(std::uint64_t job_id, prove_handler handler);
  void start_shutdown(bool drain, shutdown_handler handler);
  void start_load_key(key_source source, key_handler handler);
  void start_evict_key(std::string id, bool cancel_jobs, key_handler handler);

  std::shared_ptr<detail::engine_core> core_;
};

}  // namespace coprove::engine

template <>
struct std::is_error_code_enum<coprove::engine::engine_errc> : std::true_type {};
