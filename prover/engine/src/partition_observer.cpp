// The pipeline's observer: report, metrics and trace from one call per event.
#include <coprove/engine/detail/partition_observer.hpp>

#include <coprove/runtime/log.hpp>

#include <boost/json/object.hpp>

#include <algorithm>

namespace coprove::engine::detail {
namespace {

constexpr std::uint32_t dispatch_pid = 1;
constexpr std::uint32_t synthesis_pid = 2;
constexpr std::uint32_t device_pid_base = 10;
constexpr const char* stage_names[] = {"queue_wait", "synthesis", "gpu_queue", "h2d",   "spmv",
                                       "gpu_compute", "d2h",       "evaluation", "msm",   "prove",
                                       "proof_verify", "total"};

std::uint64_t now_ns() { return runtime::trace_writer::now_ns(); }

runtime::trace_lane device_lane(worker_ref w) {
  return {static_cast<std::uint32_t>(device_pid_base + w.device), static_cast<std::uint32_t>(w.slot)};
}

}  // namespace

// Metrics shared by every engine of the process (runtime::registry::global()).
struct partition_observer::metrics {
  runtime::counter* verified;
  runtime::counter* failed;
  runtime::counter* cancelled;
  runtime::counter* pce_hits;
  runtime::counter* pce_slow;
  runtime::counter* configured_syntheses;
  runtime::counter* late_abc;
  runtime::counter* starved_depth;
  runtime::counter* starved_synthesis;
  runtime::counter* h2d_bytes;
  runtime::counter* h2d_ns;
  runtime::gauge* partitions_per_second;
  runtime::gauge* queue_depth;
  runtime::gauge* gpu_queue_depth;
  runtime::gauge* in_flight;
  runtime::gauge* max_in_flight;
  runtime::gauge* max_concurrent_synthesis;
  runtime::gauge* h2d_gb_per_s;
  runtime::gauge* pool_reuses;
  runtime::gauge* pool_allocations;
  runtime::gauge* depth;
  std::map<std::string, runtime::gauge*, std::less<>> bottleneck;
  std::map<std::string, runtime::histogram*, std::less<>> stage_seconds;
  std::vector<runtime::gauge*> gpu_busy;

  explicit metrics(std::size_t devices) {
    auto& r = runtime::registry::global();
    const std::string p = "coprove_engine_";
    verified = &r.get_counter(p + "partitions_total", "Partitions finished, by outcome", {{"outcome", "verified"}});
    failed = &r.get_counter(p + "partitions_total", "Partitions finished, by outcome", {{"outcome", "failed"}});
    cancelled = &r.get_counter(p + "partitions_total", "Partitions finished, by outcome", {{"outcome", "cancelled"}});
    pce_hits = &r.get_counter(p + "pce_syntheses_total", "Syntheses by path", {{"path", "pce"}});
    pce_slow = &r.get_counter(p + "pce_syntheses_total", "Syntheses by path", {{"path", "slow"}});
    configured_syntheses =
        &r.get_counter(p + "pce_syntheses_total", "Syntheses by path", {{"path", "configured"}});
    late_abc = &r.get_counter(p + "late_abc_leases_total",
                              "Partitions leased lean (assignment and h) whose synthesis then needed b and c");
    const char* starved_help =
        "Worker slots gone idle while partitions waited for admission behind a full dispatch depth, by what held "
        "them back: the depth (synthesis threads to spare) or synthesis (every thread busy)";
    starved_depth = &r.get_counter(p + "starved_slots_total", starved_help, {{"cause", "depth"}});
    starved_synthesis = &r.get_counter(p + "starved_slots_total", starved_help, {{"cause", "synthesis"}});
    h2d_bytes = &r.get_counter(p + "h2d_bytes_total", "Bytes copied host to device");
    h2d_ns = &r.get_counter(p + "h2d_nanoseconds_total", "Time spent copying host to device");
    partitions_per_second = &r.get_gauge(p + "partitions_per_second", "Verified partitions per second since the report window began");
    queue_depth = &r.get_gauge(p + "queue_depth", "Partitions waiting for admission");
    gpu_queue_depth = &r.get_gauge(p + "gpu_queue_depth", "Synthesized partitions queued for or running on a device");
    in_flight = &r.get_gauge(p + "in_flight", "Partitions admitted and not finished");
    max_in_flight = &r.get_gauge(p + "max_in_flight", "Most partitions in flight at once");
    max_concurrent_synthesis = &r.get_gauge(p + "max_concurrent_synthesis", "Most syntheses running at once");
    h2d_gb_per_s = &r.get_gauge(p + "h2d_gb_per_second", "Host to device copy throughput");
    pool_reuses = &r.get_gauge(p + "pinned_pool_reuses", "Pinned pool checkouts served by a free buffer");
    pool_allocations = &r.get_gauge(p + "pinned_pool_allocations", "Pinned pool buffers allocated");
    depth = &r.get_gauge(p + "dispatch_depth",
                         "Admission depth per device: partitions a device may have in flight (measured or configured)");
    for (const char* kind : {"device", "key", "synthesis", "depth", "memory", "copies", "none"})
      bottleneck[kind] = &r.get_gauge(p + "bottleneck",
                                      "What limits throughput over the report window (1 for the kind named, 0 for the "
                                      "others), as the report's bottleneck says",
                                      {{"kind", kind}});
    for (const char* stage : stage_names)
      stage_seconds[stage] = &r.get_histogram(p + "stage_seconds", "Partition stage latency", {{"stage", stage}});
    for (std::size_t d = 0; d < devices; ++d)
      gpu_busy.push_back(&r.get_gauge(p + "gpu_busy_fraction", "Fraction of the report window a device had work", {{"device", std::to_string(d)}}));
  }
};

partition_observer::partition_observer(observer_config cfg)
    : cfg_(std::move(cfg)),
      metrics_(std::make_unique<metrics>(cfg_.device_names.size())),
      busy_ns_(std::make_unique<counter[]>(cfg_.device_names.size())),
      busy_since_(std::make_unique<counter[]>(cfg_.device_names.size())),
      key_ns_(std::make_unique<counter[]>(cfg_.device_names.size())),
      key_until_(std::make_unique<counter[]>(cfg_.device_names.size())),
      active_(std::make_unique<std::atomic<std::size_t>[]>(cfg_.device_names.size())) {
  for (const char* stage : stage_names) stage_ms_[stage] = std::make_unique<runtime::histogram>();
  set_depth(cfg_.depth_per_device);
  if (cfg_.trace) {
    trace_ = std::make_unique<runtime::trace_writer>(cfg_.trace_max_events);
    for (std::size_t d = 0; d < cfg_.device_names.size(); ++d)
      for (std::size_t s = 0; s < cfg_.slots_per_device; ++s)
        trace_->name_lane(device_lane({d, s}), "device " + std::to_string(d) + " (" + cfg_.device_names[d] + ")",
                          "worker slot " + std::to_string(s));
  }
}

partition_observer::~partition_observer() = default;

void partition_observer::trace_event(std::string_view name, std::string_view category, runtime::trace_lane lane,
                                     std::uint64_t start, std::uint64_t end, const partition_ref& p) {
  if (!trace_) return;
  trace_->complete(name, category, lane, start, end > start ? end - start : 0,
                   boost::json::object{{"job", p.job}, {"partition", p.partition}});
}

void partition_observer::update_gauges() {
  metrics_->queue_depth->set(static_cast<double>(queued()));
  metrics_->gpu_queue_depth->set(static_cast<double>(gpu_queue_.current()));
  metrics_->in_flight->set(static_cast<double>(in_flight_.current()));
  metrics_->max_in_flight->set_max(static_cast<double>(in_flight_.maximum()));
  metrics_->max_concurrent_synthesis->set_max(static_cast<double>(synthesizing_.maximum()));
}

void partition_observer::partitions_queued(std::size_t count) {
  queued_.fetch_add(count, std::memory_order_relaxed);
  update_gauges();
}

void partition_observer::partitions_dropped(std::size_t count) {
  queued_.fetch_sub(std::min(count, queued()), std::memory_order_relaxed);
  update_gauges();
}

std::uint32_t partition_observer::admitted() {
  queued_.fetch_sub(std::min<std::size_t>(1, queued()), std::memory_order_relaxed);
  in_flight_.increment();
  std::uint64_t none = 0;
  window_start_ns_.compare_exchange_strong(none, now_ns(), std::memory_order_relaxed);
  update_gauges();
  auto it = std::find(lanes_.begin(), lanes_.end(), false);
  if (it != lanes_.end()) {
    *it = true;
    return static_cast<std::uint32_t>(it - lanes_.begin());
  }
  const auto lane = static_cast<std::uint32_t>(lanes_.size());
  lanes_.push_back(true);
  if (trace_) trace_->name_lane({dispatch_pid, lane}, "dispatch", "in flight " + std::to_string(lane));
  return lane;
}

void partition_observer::memory_reserved(const partition_ref& p, std::uint64_t start, std::uint64_t end) {
  trace_event("memory_reservation", "wait", {dispatch_pid, p.lane}, start, end, p);
}

void partition_observer::buffers_leased(const partition_ref& p, std::uint64_t start, std::uint64_t end) {
  trace_event("pinned_checkout", "wait", {dispatch_pid, p.lane}, start, end, p);
}

void partition_observer::synthesis_started() {
  synthesizing_.increment();
  update_gauges();
}

void partition_observer::synthesis_stopped() {
  synthesizing_.decrement();
  update_gauges();
}

void partition_observer::late_abc_leased(const partition_ref& p, std::uint64_t start, std::uint64_t end) {
  trace_event("pinned_checkout", "wait", {dispatch_pid, p.lane}, start, end, p);
  add(late_abc_);
  metrics_->late_abc->inc();
}

void partition_observer::proved(const partition_ref& p, std::uint32_t cpu_lane, std::uint64_t start,
                                std::uint64_t proved, std::uint64_t verified) {
  trace_event("prove", "cpu", {synthesis_pid, cpu_lane}, start, proved, p);
  trace_event("proof_verify", "cpu", {synthesis_pid, cpu_lane}, proved, verified, p);
  trace_event("prove", "cpu", {dispatch_pid, p.lane}, start, verified, p);
}

void partition_observer::synthesized(const partition_ref& p, std::uint32_t cpu_lane, std::uint64_t start,
                                     std::uint64_t end, synthesis_path path, bool spmv_on_backend) {
  trace_event("synthesis", "cpu", {synthesis_pid, cpu_lane}, start, end, p);
  trace_event("synthesis", "cpu", {dispatch_pid, p.lane}, start, end, p);
  switch (path) {
    case synthesis_path::configured:
      add(configured_);
      metrics_->configured_syntheses->inc();
      break;
    case synthesis_path::pce:
      add(pce_hits_);
      metrics_->pce_hits->inc();
      break;
    case synthesis_path::slow:
      add(pce_slow_);
      metrics_->pce_slow->inc();
      break;
    case synthesis_path::witness:  // nothing synthesized: the request brought the witness
      break;
  }
  if (spmv_on_backend) add(spmv_on_backend_);
}

void partition_observer::gpu_queued() {
  gpu_queue_.increment();
  if (gpu_queue_.current() > max_gpu_queue_.load(std::memory_order_relaxed))
    max_gpu_queue_.store(gpu_queue_.current(), std::memory_order_relaxed);
  update_gauges();
}

void partition_observer::on_worker(const partition_ref& p, std::uint64_t queued, std::uint64_t acquired) {
  trace_event("gpu_queue", "wait", {dispatch_pid, p.lane}, queued, acquired, p);
}

void partition_observer::left_gpu_queue() {
  gpu_queue_.decrement();
  update_gauges();
}

void partition_observer::matrices_uploaded(const partition_ref& p, worker_ref w, std::uint64_t start,
                                           std::uint64_t end) {
  trace_event("matrices_upload", "gpu", device_lane(w), start, end, p);
}

void partition_observer::key_uploaded(const partition_ref& p, worker_ref w, std::uint64_t start, std::uint64_t end) {
  trace_event("key_upload", "gpu", device_lane(w), start, end, p);
  // Slots that wait for the same upload report overlapping spans: each adds only what reaches
  // past the latest end seen, and nothing before the window.
  const std::size_t d = w.device;
  std::uint64_t until = key_until_[d].load(std::memory_order_relaxed);
  while (until < end && !key_until_[d].compare_exchange_weak(until, end, std::memory_order_relaxed)) {
  }
  const std::uint64_t from = std::max({start, until, window_start_ns_.load(std::memory_order_relaxed)});
  if (end > from) add(key_ns_[d], end - from);
}

void partition_observer::device_started(std::size_t device) {
  if (active_[device].fetch_add(1, std::memory_order_relaxed) == 0)
    busy_since_[device].store(now_ns(), std::memory_order_relaxed);
}

void partition_observer::device_done(const partition_ref& p, worker_ref w, std::uint64_t started,
                                     std::uint64_t finished, const quotient_timings& t) {
  const std::size_t d = w.device;
  if (active_[d].load(std::memory_order_relaxed) > 0 && active_[d].fetch_sub(1, std::memory_order_relaxed) == 1) {
    const std::uint64_t since =
        std::max(busy_since_[d].load(std::memory_order_relaxed), window_start_ns_.load(std::memory_order_relaxed));
    add(busy_ns_[d], finished > since ? finished - since : 0);
  }
  if (trace_) {
    // The device stages, laid end to end from when the slot started the work (the evaluation's
    // two parts, before and after the quotient kernels, are shown as one).
    const runtime::trace_lane lane = device_lane(w);
    std::uint64_t at = started;
    if (t.h2d_ns != 0) {
      trace_event("h2d", "gpu", lane, at, at + t.h2d_ns, p);
      at += t.h2d_ns;
    }
    if (t.spmv_ns != 0) {
      trace_event("spmv", "gpu", lane, at, at + t.spmv_ns, p);
      at += t.spmv_ns;
    }
    trace_event("quotient", "gpu", lane, at, at + t.compute_ns, p);
    at += t.compute_ns;
    trace_event("evaluation", "gpu", lane, at, at + t.evaluation_ns, p);
    at += t.evaluation_ns;
    if (t.msm_ns != 0) {
      trace_event("msm", "gpu", lane, at, at + t.msm_ns, p);
      at += t.msm_ns;
    }
    if (t.d2h_ns != 0) trace_event("d2h", "gpu", lane, at, at + t.d2h_ns, p);
    trace_event("device", "gpu", {dispatch_pid, p.lane}, started, finished, p);
  }
  if (t.h2d_ns != 0) {
    metrics_->h2d_bytes->inc(t.h2d_bytes);
    metrics_->h2d_ns->inc(t.h2d_ns);
    add(h2d_bytes_, t.h2d_bytes);
    add(h2d_ns_, t.h2d_ns);
  }
}

// A worker slot found nothing synthesized to take up while every dispatch slot is taken: with
// fewer partitions before the device than synthesis threads, the depth holds it back (a
// configuration to change; said once at warning), and otherwise the CPU does.
void partition_observer::slot_idle(worker_ref w) {
  const std::size_t in_flight = in_flight_.current();
  // In flight and not yet on a device: admitted, being leased buffers, or being synthesized.
  const std::size_t before_device = in_flight - std::min(in_flight, gpu_queue_.current());
  const bool depth_bound = before_device < cfg_.synthesis_threads;
  add(depth_bound ? starved_depth_ : starved_synthesis_);
  (depth_bound ? metrics_->starved_depth : metrics_->starved_synthesis)->inc();
  // A measured depth moves by itself (the report names it if it stays the bottleneck); a configured
  // one is the user's to change.
  if (depth_bound && !cfg_.depth_measured)
    runtime::warn_once(
        "engine.starved_by_depth", "engine",
        "device " + std::to_string(w.device) + " worker slot " + std::to_string(w.slot) +
            " went idle while partitions waited for admission: none of the " +
            std::to_string(depth_per_device_.load(std::memory_order_relaxed) * cfg_.device_names.size()) +
            " partitions in flight was ready for it, and fewer were being synthesized than there are synthesis "
            "threads. The depth (" +
            std::to_string(depth_per_device_.load(std::memory_order_relaxed)) +
            " a device, engine.depth_per_device) is too small to keep the devices fed: raise it (the memory plan "
            "charges each partition in flight its pinned vectors and a synthesis working set); counted in "
            "coprove_engine_starved_slots_total{cause=\"depth\"}");
}

void partition_observer::partition_ended(const partition_ref& p, std::uint64_t admitted_at, std::uint64_t end,
                                         std::uint64_t queue_wait_ns, const partition_timings* timings,
                                         bool is_pinned, std::error_code failure) {
  if (p.lane < lanes_.size()) lanes_[p.lane] = false;
  if (trace_) {
    // The wait for admission happened before this partition had a lane: it goes in the args.
    trace_->complete("partition", "partition", {dispatch_pid, p.lane}, admitted_at, end - admitted_at,
                     boost::json::object{{"job", p.job},
                                         {"partition", p.partition},
                                         {"queue_wait_ns", queue_wait_ns},
                                         {"outcome", failure ? failure.message() : std::string("verified")}});
  }
  if (timings) {
    const std::pair<const char*, std::uint64_t> stages[] = {
        {"queue_wait", timings->queue_wait_ns}, {"synthesis", timings->synthesis_ns},
        {"gpu_queue", timings->gpu_queue_ns},   {"h2d", timings->h2d_ns},
        {"spmv", timings->spmv_ns},             {"gpu_compute", timings->gpu_compute_ns},
        {"d2h", timings->d2h_ns},               {"evaluation", timings->evaluation_ns},
        {"msm", timings->msm_ns},               {"prove", timings->prove_ns},
        {"proof_verify", timings->proof_verify_ns},
        {"total", timings->total_ns}};
    for (const auto& [stage, ns] : stages) {
      metrics_->stage_seconds.find(stage)->second->record(static_cast<double>(ns) / 1e9);
      stage_ms_.find(stage)->second->record(static_cast<double>(ns) / 1e6);
    }
  }
  in_flight_.decrement();
  const std::uint64_t now = now_ns();
  last_end_ns_.store(now, std::memory_order_relaxed);
  const std::uint64_t start = window_start_ns_.load(std::memory_order_relaxed);
  if (timings) {
    if (start != 0 && now > start)
      metrics_->partitions_per_second->set(static_cast<double>(verified_.load(std::memory_order_relaxed) + 1) * 1e9 /
                                           static_cast<double>(now - start));
    add(verified_);
    if (is_pinned) add(pinned_partitions_);
    metrics_->verified->inc();
  } else if (failure == std::errc::operation_canceled) {
    add(cancelled_);
    metrics_->cancelled->inc();
  } else {
    add(failed_);
    metrics_->failed->inc();
  }
  update_gauges();
}

void partition_observer::set_depth(std::size_t depth) {
  depth_per_device_.store(depth, std::memory_order_relaxed);
  metrics_->depth->set(static_cast<double>(depth));
}

void partition_observer::set_bottleneck(const std::string& kind) const {
  for (const auto& [name, gauge] : metrics_->bottleneck) gauge->set(name == kind ? 1.0 : 0.0);
}

void partition_observer::job_ended(job_state state) {
  switch (state) {
    case job_state::done: add(jobs_done_); break;
    case job_state::cancelled: add(jobs_cancelled_); break;
    case job_state::failed: add(jobs_failed_); break;
    case job_state::queued:
    case job_state::running: break;
  }
}

std::uint32_t partition_observer::synthesis_lane() {
  if (!trace_) return 0;
  std::lock_guard lock(synthesis_lanes_mutex_);
  const auto id = std::this_thread::get_id();
  auto it = synthesis_lanes_.find(id);
  if (it != synthesis_lanes_.end()) return it->second;
  const auto lane = static_cast<std::uint32_t>(synthesis_lanes_.size());
  synthesis_lanes_.emplace(id, lane);
  trace_->name_lane({synthesis_pid, lane}, "synthesis", "cpu thread " + std::to_string(lane));
  return lane;
}

void partition_observer::fill(engine_report& r) const {
  auto load = [](const counter& c) { return c.load(std::memory_order_relaxed); };
  const std::size_t devices = cfg_.device_names.size();
  const std::uint64_t now = now_ns();
  const std::uint64_t start = load(window_start_ns_);
  const std::uint64_t end = in_flight_.current() > 0 ? now : std::max(load(last_end_ns_), start);
  r.backend = cfg_.backend;
  r.devices = cfg_.device_names;
  r.verified = load(verified_);
  r.failed = load(failed_);
  r.cancelled = load(cancelled_);
  r.pinned_partitions = load(pinned_partitions_);
  r.jobs_done = load(jobs_done_);
  r.jobs_failed = load(jobs_failed_);
  r.jobs_cancelled = load(jobs_cancelled_);
  r.elapsed_s = start == 0 || end < start ? 0.0 : static_cast<double>(end - start) / 1e9;
  r.throughput_partitions_per_s = r.elapsed_s > 0 ? static_cast<double>(r.verified) / r.elapsed_s : 0.0;
  r.dispatch = {cfg_.policy,
                depth_per_device_.load(std::memory_order_relaxed),
                devices,
                in_flight_.maximum(),
                synthesizing_.maximum(),
                max_gpu_queue_.load(std::memory_order_relaxed),
                load(starved_depth_),
                load(starved_synthesis_),
                r.dispatch.basis};
  r.syntheses = {load(pce_hits_), load(pce_slow_), load(configured_), load(spmv_on_backend_), load(late_abc_)};
  r.gpu_busy_fraction_per_device.clear();
  double busy_sum = 0, key_sum = 0;
  for (std::size_t d = 0; d < devices; ++d) {
    key_sum += std::min(static_cast<double>(load(key_ns_[d])) / 1e9, r.elapsed_s);
    std::uint64_t b = load(busy_ns_[d]);
    if (active_[d].load(std::memory_order_relaxed) > 0) {
      const std::uint64_t since = std::max(load(busy_since_[d]), start);
      b += now > since ? now - since : 0;
    }
    const double fraction = r.elapsed_s > 0 ? std::min(1.0, static_cast<double>(b) / 1e9 / r.elapsed_s) : 0.0;
    r.gpu_busy_fraction_per_device.push_back(fraction);
    busy_sum += fraction;
    metrics_->gpu_busy[d]->set(fraction);
  }
  r.gpu_busy_fraction = devices > 0 ? busy_sum / static_cast<double>(devices) : 0.0;
  r.key_residency_s = devices > 0 ? key_sum / static_cast<double>(devices) : 0.0;
  const std::uint64_t h2d_ns = load(h2d_ns_);
  r.h2d_gb_per_s = h2d_ns > 0 ? static_cast<double>(load(h2d_bytes_)) / static_cast<double>(h2d_ns) : 0.0;
  metrics_->partitions_per_second->set(r.throughput_partitions_per_s);
  metrics_->h2d_gb_per_s->set(r.h2d_gb_per_s);
  metrics_->pool_reuses->set(static_cast<double>(r.pinned_pool.reuses));
  metrics_->pool_allocations->set(static_cast<double>(r.pinned_pool.allocations));
  r.stages.clear();
  for (const auto& [name, h] : stage_ms_)
    r.stages[name] = stage_summary{h->count(), h->mean(), h->percentile(0.5), h->percentile(0.99), h->max()};
}

void partition_observer::reset() {
  const std::uint64_t now = now_ns();
  window_start_ns_.store(in_flight_.current() > 0 ? now : 0, std::memory_order_relaxed);
  last_end_ns_.store(0, std::memory_order_relaxed);
  for (counter* c : {&verified_, &failed_, &cancelled_, &jobs_done_, &jobs_failed_, &jobs_cancelled_, &pce_hits_,
                     &pce_slow_, &configured_, &spmv_on_backend_, &late_abc_, &pinned_partitions_, &starved_depth_,
                     &starved_synthesis_, &h2d_bytes_, &h2d_ns_})
    c->store(0, std::memory_order_relaxed);
  max_gpu_queue_.store(gpu_queue_.current(), std::memory_order_relaxed);
  for (std::size_t d = 0; d < cfg_.device_names.size(); ++d) {
    busy_ns_[d].store(0, std::memory_order_relaxed);
    key_ns_[d].store(0, std::memory_order_relaxed);
    if (active_[d].load(std::memory_order_relaxed) > 0) busy_since_[d].store(now, std::memory_order_relaxed);
  }
  for (auto& [name, h] : stage_ms_) h->reset();
  in_flight_.reset_maximum();
  synthesizing_.reset_maximum();
}

}  // namespace coprove::engine::detail
