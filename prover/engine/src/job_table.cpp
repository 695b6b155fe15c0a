// The job table (see the header).
#include <coprove/engine/detail/job_table.hpp>

#include <algorithm>

namespace coprove::engine::detail {
namespace {

// What a finished job still holds: its record, its per-partition results (proof, public inputs,
// evaluation record, timings), the strings of its request and error, and its cancellation signals.
std::size_t finished_job_bytes(const job& j) {
  std::size_t bytes = sizeof(job) + j.request.circuit.capacity() + j.circuit_id.capacity() + j.error.capacity();
  bytes += j.results.capacity() * sizeof(std::optional<partition_result>);
  for (const auto& r : j.results)
    if (r) bytes += r->public_inputs.capacity() * sizeof(field::fr);
  bytes += j.cancel_signals.capacity() * sizeof(std::unique_ptr<boost::asio::cancellation_signal>);
  for (const auto& signal : j.cancel_signals)
    if (signal) bytes += sizeof(boost::asio::cancellation_signal);
  bytes += j.running.capacity() / 8;
  return bytes;
}

}  // namespace

job_table::job_table(std::uint64_t first_id, open_work_limits limits, result_retention retention, clock now)
    : limits_(limits), retention_(retention), now_(std::move(now)), first_id_(first_id), next_id_(first_id) {}

void job_table::add(const std::shared_ptr<job>& j) {
  std::lock_guard lock(mutex_);
  if (limits_.jobs != 0 && open_jobs_ >= limits_.jobs)
    throw queue_full_error("the engine holds " + std::to_string(open_jobs_) +
                           " unfinished jobs, its limit (engine_config.max_open_jobs)");
  if (limits_.partitions != 0 && open_partitions_ + j->request.partitions > limits_.partitions)
    throw queue_full_error("the engine holds " + std::to_string(open_partitions_) + " unfinished partitions; " +
                           std::to_string(j->request.partitions) + " more exceed its limit of " +
                           std::to_string(limits_.partitions) + " (engine_config.max_open_partitions)");
  forget_expired_locked();
  ++open_jobs_;
  open_partitions_ += j->request.partitions;
  j->id = next_id_++;
  jobs_.emplace(j->id, j);
}

std::shared_ptr<job> job_table::find(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  forget_expired_locked();
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

bool job_table::expired(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  forget_expired_locked();
  return id >= first_id_ && id < next_id_ && jobs_.count(id) == 0;
}

std::optional<job_status> job_table::status(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  forget_expired_locked();
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  const job& j = *it->second;
  return job_status{j.id, j.state.load(std::memory_order_acquire), j.request.partitions,
                    j.completed.load(std::memory_order_relaxed), j.error};
}

void job_table::set_error(job& j, const std::string& message) {
  std::lock_guard lock(mutex_);
  j.error = message;
}

std::string job_table::finish(job& j, job_state state) {
  std::lock_guard lock(mutex_);
  j.state.store(state, std::memory_order_release);
  if (open_jobs_ > 0) --open_jobs_;
  open_partitions_ -= std::min(open_partitions_, j.request.partitions);
  const std::size_t bytes = finished_job_bytes(j);
  retained_.push_back({j.id, bytes, now_()});
  retained_bytes_ += bytes;
  std::string error = j.error;
  forget_expired_locked();
  return error;
}

std::vector<std::shared_ptr<job>> job_table::unfinished() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<job>> out;
  for (const auto& [id, j] : jobs_)
    if (!j->finished()) out.push_back(j);
  return out;
}

std::vector<std::uint64_t> job_table::queued() const {
  std::lock_guard lock(mutex_);
  std::vector<std::uint64_t> out;
  for (const auto& [id, j] : jobs_)
    if (j->state.load(std::memory_order_acquire) == job_state::queued) out.push_back(id);
  return out;
}

bool job_table::all_finished() const {
  std::lock_guard lock(mutex_);
  return std::all_of(jobs_.begin(), jobs_.end(), [](const auto& entry) { return entry.second->finished(); });
}

engine_status::job_counts job_table::counts() const {
  std::lock_guard lock(mutex_);
  forget_expired_locked();
  engine_status::job_counts c;
  c.open_partitions = open_partitions_;
  c.retained_bytes = retained_bytes_;
  c.expired = expired_;
  for (const auto& [id, j] : jobs_) {
    const job_state st = j->state.load(std::memory_order_acquire);
    if (st == job_state::queued)
      ++c.queued;
    else if (st == job_state::running)
      ++c.running;
    else
      ++c.finished;
  }
  return c;
}

std::shared_ptr<const field::evaluation_domain> job_table::domain_for(unsigned log_constraints) {
  {
    std::lock_guard lock(mutex_);
    auto it = domains_.find(log_constraints);
    if (it != domains_.end()) return it->second;
  }
  auto domain = std::make_shared<const field::evaluation_domain>(std::size_t{1} << log_constraints);
  std::lock_guard lock(mutex_);
  return domains_.emplace(log_constraints, std::move(domain)).first->second;
}

std::size_t job_table::domains() const {
  std::lock_guard lock(mutex_);
  return domains_.size();
}

std::optional<circuit_facts> job_table::facts(const std::string& circuit, unsigned log_constraints) const {
  std::lock_guard lock(mutex_);
  auto it = facts_.find({circuit, log_constraints});
  if (it == facts_.end()) return std::nullopt;
  return it->second;
}

void job_table::remember_facts(const std::string& circuit, unsigned log_constraints, const circuit_facts& facts) {
  std::lock_guard lock(mutex_);
  facts_[{circuit, log_constraints}] = facts;
}

void job_table::forget_expired_locked() const {
  if (retained_.empty()) return;
  const auto now = now_();
  while (!retained_.empty() && (retained_.size() > retention_.max_jobs || retained_bytes_ > retention_.max_bytes ||
                                now - retained_.front().ended >= retention_.max_age)) {
    jobs_.erase(retained_.front().id);
    retained_bytes_ -= retained_.front().bytes;
    retained_.pop_front();
    ++expired_;
  }
}

}  // namespace coprove::engine::detail
