// The job table: every job the engine was given, by id, from submission until the retention policy
// forgets it: the ids it gives, the unfinished work it admits (engine_config::max_open_jobs,
// max_open_partitions), the finished jobs it keeps (engine_config::retention: count, bytes, age),
// the evaluation domains shared by every job of a size, and each circuit's facts. One mutex, held
// only inside its methods; what a job holds for its partitions is the strand's (see `job`).
#pragma once

#include <coprove/engine/detail/circuit_facts.hpp>
#include <coprove/engine/engine.hpp>
#include <coprove/field/evaluation.hpp>

#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace coprove::engine::detail {

struct key_entry;
class partition_source;

struct job_waiter {
  engine::prove_handler handler;
  bool cancels_job = false;  // async_prove: cancelling the wait cancels the job
};

struct job {
  std::uint64_t id = 0;
  prove_request request;
  std::shared_ptr<const field::evaluation_domain> domain;
  std::size_t reservation_bytes = 0;
  std::string circuit_id;                     // the PCE key of the request's circuit
  std::shared_ptr<const key_entry> key;       // results = proof: the circuit's key
  std::shared_ptr<const groth16::zkey> zkey;  // a zkey circuit: its key, witnesses in the request
  std::string vk_sha256;                      // the key's, kept once the job ends and lets go of it
  partition_source* source = nullptr;         // where its partitions come from (the core's)
  bool witness_fits = false;                  // its assignment fits one vector of the domain
  std::uint64_t submit_ns = 0, end_ns = 0;
  // Written on the strand, read by status() from any thread.
  std::atomic<job_state> state{job_state::queued};
  std::atomic<std::size_t> completed{0};
  std::string error;  // guarded by the job table's mutex (job_table::set_error, finish)
  // Strand only.
  std::error_code error_code;
  bool stop_requested = false;
  std::size_t ended = 0;  // partitions that have finished or will never run
  std::vector<std::optional<partition_result>> results;
  std::vector<std::unique_ptr<boost::asio::cancellation_signal>> cancel_signals;  // kept for the job's life
  std::vector<bool> running;
  std::map<std::uint64_t, job_waiter> waiters;
  std::uint64_t next_waiter = 0;

  bool finished() const noexcept {
    const job_state s = state.load(std::memory_order_acquire);
    return s == job_state::done || s == job_state::failed || s == job_state::cancelled;
  }
};

/// The unfinished work the table admits (0 = no limit).
struct open_work_limits {
  std::size_t jobs = 0;
  std::size_t partitions = 0;
};

class job_table {
 public:
  using clock = std::function<std::chrono::steady_clock::time_point()>;

  /// Ids count up from first_id. `now` is the retention's clock (tests pass their own).
  job_table(std::uint64_t first_id, open_work_limits limits, result_retention retention,
            clock now = [] { return std::chrono::steady_clock::now(); });

  /// Gives the job an id and keeps it as open work; throws queue_full_error, naming the limit,
  /// when it would exceed one (then nothing changes).
  void add(const std::shared_ptr<job>& j);
  /// The job, or null when it is unknown or forgotten.
  std::shared_ptr<job> find(std::uint64_t id) const;
  /// True when the id was given here and its job has since been forgotten.
  bool expired(std::uint64_t id) const;
  std::optional<job_status> status(std::uint64_t id) const;

  /// Keeps the first reason a job stopped for (status reads it from any thread).
  void set_error(job& j, const std::string& message);
  /// The job ended in `state`: it leaves the open work and is kept by the retention policy (and
  /// may be forgotten at once by it). Returns its error.
  std::string finish(job& j, job_state state);

  /// The jobs not finished yet, and the ids of those none of whose partitions has started.
  std::vector<std::shared_ptr<job>> unfinished() const;
  std::vector<std::uint64_t> queued() const;
  bool all_finished() const;
  /// Counts for the status: jobs by state, open partitions, retained bytes, expired jobs.
  engine_status::job_counts counts() const;

  /// The evaluation domain of a size, built once and shared by every job of it (built outside the
  /// lock: a second submitter of a new size may build one too, and the first stored is kept).
  std::shared_ptr<const field::evaluation_domain> domain_for(unsigned log_constraints);
  std::size_t domains() const;
  std::optional<circuit_facts> facts(const std::string& circuit, unsigned log_constraints) const;
  void remember_facts(const std::string& circuit, unsigned log_constraints, const circuit_facts& facts);

 private:
  // Every reader calls it too (status, expired, find, counts), so that an old result is forgotten
  // when it is next looked at, with no timer keeping the control executor's work count up; const
  // because forgetting changes no answer the policy did not allow.
  void forget_expired_locked() const;

  struct retained_job {
    std::uint64_t id = 0;
    std::size_t bytes = 0;
    std::chrono::steady_clock::time_point ended;
  };

  const open_work_limits limits_;
  const result_retention retention_;
  const clock now_;
  mutable std::mutex mutex_;
  const std::uint64_t first_id_;
  std::uint64_t next_id_;
  mutable std::map<std::uint64_t, std::shared_ptr<job>> jobs_;  // mutable: see forget_expired_locked
  std::size_t open_jobs_ = 0, open_partitions_ = 0;
  // Finished jobs still in jobs_, in the order they ended.
  mutable std::deque<retained_job> retained_;
  mutable std::size_t retained_bytes_ = 0;
  mutable std::uint64_t expired_ = 0;
  std::map<unsigned, std::shared_ptr<const field::evaluation_domain>> domains_;
  std::map<std::pair<std::string, unsigned>, circuit_facts> facts_;
};

}  // namespace coprove::engine::detail
