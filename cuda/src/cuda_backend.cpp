// The CUDA compute backend: the compute_backend interface over its parts. Each worker slot
// (backend_slot.hpp) owns a stream, device buffers for a, b, c, the assignment, evaluation scratch,
// an NTT plan and an MSM arena on its device; the resident store (backend_resident.hpp) keeps each
// circuit's matrices and proving key on each device while the host's objects are in use; the
// device proof pipeline (backend_pipeline.hpp) enqueues a task's stages on its slot's stream: H2D
// a/b/c from the pinned leases (or H2D of the assignment w and A w, B w, C w on the device from the
// resident matrices) -> a, b, c at zeta -> the quotient -> h at zeta -> the proof's five MSMs (H over
// h where the quotient left it, A, B_G1, B_G2 and L over the witness, against the resident key)
// -> D2H, timed with events and marked with NVTX ranges; the result staging (backend_staging.hpp)
// is where the values and the MSMs' window sums land, page-locked, and what the completion reads
// off them. Completion goes through the device's completion bridge, whose callback reads the
// result and submits the caller's handler to its executor; the engine combines the window sums on
// its CPU executor (the serial chain of doublings takes milliseconds on one device thread, a
// fraction of one on the host).
#include <coprove/cuda/cuda_backend.hpp>

#include "backend_pipeline.hpp"
#include "backend_resident.hpp"
#include "backend_slot.hpp"
#include "backend_staging.hpp"

#include <coprove/cuda/completion_bridge.hpp>
#include <coprove/cuda/device.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/event.hpp>
#include <coprove/cuda/host_allocator.hpp>
#include <coprove/cuda/msm.hpp>
#include <coprove/cuda/ntt.hpp>
#include <coprove/cuda/stream.hpp>
#include <coprove/engine/memory_plan.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/spin_runner.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace coprove::cuda {

namespace {

class cuda_backend_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "coprove.cuda_backend"; }
  std::string message(int value) const override {
    switch (static_cast<cuda_backend_errc>(value)) {
      case cuda_backend_errc::no_such_worker_slot: return "cuda backend: no such worker slot";
      case cuda_backend_errc::invalid_task: return "cuda backend: the quotient task does not fit its domain or stages";
      case cuda_backend_errc::unsupported_domain: return "cuda backend: the domain is outside the NTT's sizes";
      case cuda_backend_errc::enqueue_failed: return "cuda backend: enqueuing the task failed on the host";
    }
    return "unknown coprove.cuda_backend error " + std::to_string(value);
  }
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (static_cast<cuda_backend_errc>(value)) {
      case cuda_backend_errc::no_such_worker_slot:
      case cuda_backend_errc::invalid_task:
      case cuda_backend_errc::unsupported_domain: return std::errc::invalid_argument;
      default: return {value, *this};
    }
  }
};

}  // namespace

const std::error_category& cuda_backend_category() noexcept {
  static const cuda_backend_category_impl category;
  return category;
}

std::error_code make_error_code(cuda_backend_errc e) noexcept { return {static_cast<int>(e), cuda_backend_category()}; }

namespace {

using detail::device_key;
using detail::device_pce;
using detail::device_slot;
using detail::resident_store;
using detail::stage_events;

class cuda_backend final : public engine::compute_backend {
 public:
  // `wanted_copies` empty: the copies are `key_copies`; else they are 1 until the engine settles them
  // (1 or one of wanted_copies, the windows the plan's).
  cuda_backend(std::vector<int> devices, std::size_t slots_per_device, completion_bridge::strategy bridge,
               std::size_t msm_workspace_max_bytes, const msm_precompute& key_copies,
               std::vector<std::size_t> wanted_copies)
      : devices_(std::move(devices)),
        slots_per_device_(slots_per_device),
        msm_workspace_max_bytes_(msm_workspace_max_bytes),
        store_(devices_, key_copies, std::move(wanted_copies)),
        source_(bridges_) {
    for (int d : devices_) {
      names_.push_back(device_name(d));
      scoped_device on(d);
      for (std::size_t s = 0; s < slots_per_device_; ++s) slots_.push_back(std::make_unique<device_slot>(d, s));
      bridges_.push_back(std::make_unique<completion_bridge>(bridge));
      // What the device holds before any buffer, plan or key of ours: the context this thread's
      // first calls made (a few hundred MiB on an H200) and other processes' memory.
      std::size_t free = 0, total = 0;
      COPROVE_CUDA_TRY(cudaMemGetInfo(&free, &total));
      in_use_at_start_.push_back(total - free);
    }
    COPROVE_LOG(info, "cuda") << "CUDA backend on " << devices_.size() << " device(s), " << slots_per_device_
                              << " worker slots each, completion bridge " << to_string(bridges_.front()->get_strategy())
                              << ", "
                              << (!store_.wanted_copies().empty()
                                      ? "copies of each proving key's points left to the device memory plan (" +
                                            detail::counts_text(store_.wanted_copies()) + ", the first that fits, else 1)"
                                      : std::to_string(store_.copies()) +
                                            " copies of each proving key's points (windows of " +
                                            std::to_string(store_.window_bits()) + " bits; 0: the MSM plan's)");
  }

  ~cuda_backend() override {
    // The bridges finish every task in flight (completing its operation); every finish() that
    // reads our events must have returned before the slots go away.
    bridges_.clear();
    std::unique_lock lock(outstanding_mutex_);
    outstanding_done_.wait(lock, [&] { return outstanding_ == 0; });
  }

  std::string_view name() const noexcept override { return "cuda"; }
  std::size_t device_count() const noexcept override { return devices_.size(); }
  std::size_t worker_slots_per_device() const noexcept override { return slots_per_device_; }
  std::vector<std::string> device_names() const override { return names_; }
  bool copies_to_device() const noexcept override { return true; }
  std::unique_ptr<pinned::host_allocator> make_host_allocator() const override {
    return make_cuda_host_allocator(host_allocator_kind::host_register);
  }

  void start_quotient(engine::worker_slot worker, engine::quotient_task task,
                      engine::quotient_completion done) noexcept override {
    try {
      if (worker.device >= devices_.size() || worker.slot >= slots_per_device_) {
        COPROVE_LOG(error, "cuda") << "cuda backend: worker slot " << worker.slot << " of device " << worker.device
                                   << " out of range (" << devices_.size() << " devices, " << slots_per_device_
                                   << " slots each)";
        done.complete(make_error_code(cuda_backend_errc::no_such_worker_slot), {});
        return;
      }
      try {
        engine::check_quotient_task("cuda", task);
      } catch (const std::invalid_argument& e) {
        COPROVE_LOG(error, "cuda") << "refused a quotient task: " << e.what();
        done.complete(make_error_code(cuda_backend_errc::invalid_task), {});
        return;
      }
      const unsigned log_n = task.domain->log_size();
      if (log_n < ntt_plan::min_log_size || log_n > ntt_plan::max_log_size) {
        COPROVE_LOG(error, "cuda") << "cuda backend: domain size 2^" << log_n << " outside the NTT's range (2^"
                                   << ntt_plan::min_log_size << " to 2^" << ntt_plan::max_log_size << ")";
        done.complete(make_error_code(cuda_backend_errc::unsupported_domain), {});
        return;
      }
      enqueue(worker, task, done);
    } catch (const cuda_error& e) {
      log_failed_enqueue(worker, e.what());
      done.complete(e.code(), {});
    } catch (const std::exception& e) {
      log_failed_enqueue(worker, e.what());
      done.complete(make_error_code(cuda_backend_errc::enqueue_failed), {});
    } catch (...) {
      done.complete(make_error_code(cuda_backend_errc::enqueue_failed), {});
    }
  }

  static void log_failed_enqueue(engine::worker_slot worker, const char* what) noexcept {
    try {
      runtime::log_fields fields;
      fields.device = static_cast<int>(worker.device);
      COPROVE_LOG_F(error, "cuda", fields) << "enqueuing a quotient on slot " << worker.slot << " failed: " << what;
    } catch (...) {
    }
  }

  // Makes room on the device, enqueues the task's stages on the slot's stream and hands `done`,
  // with the task's events, to the device's completion bridge. Throws (leaving `done` to the
  // caller) when the work could not be enqueued; whatever part of it was is finished first, since
  // it may read the caller's buffers.
  void enqueue(engine::worker_slot worker, const engine::quotient_task& task, engine::quotient_completion& done) {
    const unsigned log_n = task.domain->log_size();
    device_slot& w = *slots_[worker.device * slots_per_device_ + worker.slot];
    scoped_device on(w.device);
    if (!w.prepared_for(log_n, task.domain->roots())) {
      // A size this device has not seen: buffers and plans for every slot of the device at once
      // (blocking, once per size), so that later partitions never wait for a plan.
      // One set of NTT tables a device: the first slot's plan builds them, the others share them
      // (each with its own pool for its scratch).
      const ntt_plan* tables = nullptr;
      for (std::size_t s = 0; s < slots_per_device_ && tables == nullptr; ++s)
        tables = slots_[worker.device * slots_per_device_ + s]->plan_for(log_n, task.domain->roots());
      for (std::size_t s = 0; s < slots_per_device_; ++s) {
        device_slot& slot = *slots_[worker.device * slots_per_device_ + s];
        slot.prepare(log_n, task.domain->roots(), tables);
        if (tables == nullptr) tables = slot.plan_for(log_n, task.domain->roots());
      }
    }
    const device_pce* pce = nullptr;
    if (task.stages.contains(engine::quotient_stage::spmv)) pce = &store_.matrices(worker.device, task.matrices, true);
    const device_key* key = nullptr;
    if (task.stages.contains(engine::quotient_stage::proof_msms))
      key = &store_.key(worker.device, task.key, "a circuit not prepared", true);
    if (!task.witness.empty()) w.prepare_witness(task.witness.size());
    if (key != nullptr) w.prepare_msm(key->msm_bytes, msm_workspace_max_bytes_);
    const std::size_t bytes = task.domain->size() * sizeof(field::fr);
    auto events = w.take_events();
    try {
      detail::enqueue_stages(w, task, pce, key, bytes, *events);
    } catch (...) {
      // Part of the work may be queued and reading the caller's buffers, which the caller frees
      // once it hears of the failure: let it finish first.
      COPROVE_CUDA_ASSERT_OK(cudaStreamSynchronize(w.work.get()));
      w.return_events(std::move(events));
      throw;
    }
    // From here on the bridge owns the completion: it calls finish() once the stream is done.
    events->owner = this;
    events->slot = &w;
    events->stages = task.stages;
    events->h2d_bytes =
        task.witness.size_bytes() + (pce != nullptr ? 0 : (task.c.empty() ? 2 : 3) * bytes);
    events->matrices = task.matrices;
    events->key = task.key;
    events->done = std::move(done);
    {
      std::lock_guard lock(outstanding_mutex_);
      ++outstanding_;
    }
    bridges_[worker.device]->call_when_done(w.work.get(), completion_callback{&finish, events.release()});
  }

  // The bridge's callback: reads the timings and the values, gives the events back and submits the
  // caller's handler to its executor, on whichever thread found the stream done.
  static void finish(void* context, std::error_code ec) noexcept {
    std::unique_ptr<stage_events> events(static_cast<stage_events*>(context));
    cuda_backend& self = *static_cast<cuda_backend*>(events->owner);
    engine::quotient_result result = detail::staged_result(*events, ec);
    engine::quotient_completion done = std::move(events->done);
    // The task held its matrices (and key) until its work was done, so their device copy is never freed
    // under a running SpMV; let go before the caller hears of it, so that a caller who drops its
    // own reference then finds them unused at its next call.
    events->matrices.reset();
    events->key.reset();
    events->slot->return_events(std::move(events));
    done.complete(ec, std::move(result));
    std::lock_guard lock(self.outstanding_mutex_);
    if (--self.outstanding_ == 0) self.outstanding_done_.notify_all();
  }

  void prepare_matrices(std::size_t device, const std::shared_ptr<const r1cs::pce_matrices>& matrices) override {
    check_device(device);
    if (!matrices) throw std::invalid_argument("cuda backend: prepare_matrices without matrices");
    store_.matrices(device, matrices, false);
  }

  bool matrices_resident(std::size_t device, const r1cs::pce_matrices& matrices) const override {
    check_device(device);
    return store_.matrices_resident(device, matrices);
  }

  std::size_t resident_matrices_bytes() const noexcept override { return store_.matrices_bytes(); }

  void prepare_key(std::size_t device, const std::shared_ptr<const groth16::proving_key>& key,
                   std::string_view circuit) override {
    check_device(device);
    if (!key) throw std::invalid_argument("cuda backend: prepare_key without a key");
    store_.key(device, key, circuit, false);
  }

  bool key_resident(std::size_t device, const groth16::proving_key& key) const override {
    check_device(device);
    return store_.key_resident(device, key);
  }

  std::size_t resident_key_bytes() const noexcept override { return store_.key_bytes(); }
  std::size_t device_key_copies() const noexcept override { return store_.copies(); }
  std::vector<std::size_t> device_key_copies_wanted() const override { return store_.wanted_copies(); }
  void settle_device_key_copies(std::size_t copies) override {
    if (store_.wanted_copies().empty()) engine::compute_backend::settle_device_key_copies(copies);
    store_.settle_copies(copies);
  }

  std::optional<engine::device_memory> device_memory_of(std::size_t device) const override {
    check_device(device);
    scoped_device on(devices_[device]);
    engine::device_memory m;
    COPROVE_CUDA_TRY(cudaMemGetInfo(&m.free_bytes, &m.total_bytes));
    m.in_use_at_start_bytes = in_use_at_start_[device];
    return m;
  }

  std::size_t device_working_bytes(std::size_t n, std::size_t variables, std::size_t key_copies) const noexcept override {
    // a, b, c and the witness, the evaluation's scratch, the quotient's scratch that the slot's NTT
    // plan's pool keeps (the tables are the device's, device_shared_bytes), and the slot's MSM arena
    // (the proof's MSMs run one after another on its stream, each in the same arena). A slot that
    // serves circuits of several sizes or domain roots keeps an NTT plan for each; this charges one,
    // of the size planned for.
    const std::size_t log_n = static_cast<std::size_t>(std::countr_zero(n));
    std::size_t msm = 0, ntt = 0;
    try {
      // The slot's MSM arena for a key of this size: H over up to n points, the witness's MSMs over
      // `variables` (L's over fewer, charged as many).
      msm = msm_proof_workspace_bytes(n, variables, variables,
                                      msm_precompute{store_.window_bits(), static_cast<unsigned>(key_copies)});
      ntt = ntt_plan_scratch_bytes(static_cast<unsigned>(log_n));
    } catch (const std::exception&) {
      return ~std::size_t{0};  // beyond the MSM's or the NTT's sizes: nothing fits
    }
    return (3 * n + variables) * sizeof(field::fr) + 4 * sizeof(field::fr) +
           evaluation_scratch_bytes(static_cast<unsigned>(log_n)) + ntt + msm;
  }

  std::size_t device_shared_bytes(std::size_t n) const noexcept override {
    // The NTT tables for n, one set a device that its slots' plans share (share_tables).
    try {
      return ntt_plan_table_bytes(static_cast<unsigned>(std::countr_zero(n)));
    } catch (const std::exception&) {
      return ~std::size_t{0};
    }
  }

  runtime::spin_source* completion_source() const noexcept override { return &source_; }

 private:
  void check_device(std::size_t device) const {
    if (device >= devices_.size())
      throw std::invalid_argument("cuda backend: device " + std::to_string(device) + " out of range (" +
                                  std::to_string(devices_.size()) + " devices)");
  }

  // Every device's bridge as one spin source for the io thread.
  class bridges_source final : public runtime::spin_source {
   public:
    explicit bridges_source(const std::vector<std::unique_ptr<completion_bridge>>& bridges) : bridges_(bridges) {}
    bool busy() const noexcept override {
      for (const auto& b : bridges_)
        if (b->as_spin_source().busy()) return true;
      return false;
    }
    std::size_t poll_ready() noexcept override {
      std::size_t done = 0;
      for (const auto& b : bridges_) done += b->as_spin_source().poll_ready();
      return done;
    }

   private:
    const std::vector<std::unique_ptr<completion_bridge>>& bridges_;
  };

  std::vector<int> devices_;
  std::size_t slots_per_device_;
  std::size_t msm_workspace_max_bytes_;  // a slot's MSM arena at most (0: no cap)
  std::vector<std::size_t> in_use_at_start_;  // by device index: device memory in use before ours
  resident_store store_;                       // the matrices and keys on each device
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<device_slot>> slots_;  // device * slots_per_device + slot
  std::vector<std::unique_ptr<completion_bridge>> bridges_;
  mutable bridges_source source_;
  std::mutex outstanding_mutex_;
  std::condition_variable outstanding_done_;
  std::size_t outstanding_ = 0;
};

}  // namespace

std::size_t cuda_device_count() noexcept {
  const int n = device_count();
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

std::string_view default_bridge_strategy() noexcept { return to_string(completion_bridge::default_strategy); }

std::unique_ptr<engine::compute_backend> make_cuda_backend(std::vector<int> devices, std::size_t slots_per_device,
                                                           std::string_view bridge, std::size_t msm_workspace_max_bytes,
                                                           unsigned msm_copies, unsigned msm_window_bits) {
  completion_bridge::strategy strategy = completion_bridge::default_strategy;
  if (!bridge.empty()) {
    bool known = false;
    for (auto s : {completion_bridge::strategy::host_func, completion_bridge::strategy::event_poller,
                   completion_bridge::strategy::mapped_flag, completion_bridge::strategy::stream_write}) {
      if (to_string(s) == bridge) {
        strategy = s;
        known = true;
      }
    }
    if (!known)
      throw std::invalid_argument("cuda backend: unknown completion bridge strategy '" + std::string(bridge) +
                                  "' (expected host_func, event_poller, mapped_flag or stream_write)");
  }
  const int visible = device_count();
  if (visible <= 0) throw std::runtime_error("cuda backend: no CUDA device is visible");
  if (slots_per_device < 2)
    throw std::invalid_argument("cuda backend: slots_per_device must be at least 2 (copies overlap kernels), got " +
                                std::to_string(slots_per_device));
  if (devices.empty())
    for (int d = 0; d < visible; ++d) devices.push_back(d);
  std::set<int> seen;
  for (int d : devices) {
    if (d < 0 || d >= visible)
      throw std::invalid_argument("cuda backend: device " + std::to_string(d) + " does not exist (" +
                                  std::to_string(visible) + " visible)");
    if (!seen.insert(d).second)
      throw std::invalid_argument("cuda backend: device " + std::to_string(d) + " is listed twice");
  }
  if (msm_copies > msm_max_copies)
    throw std::invalid_argument("cuda backend: msm_copies must be 0 (auto) or 1.." + std::to_string(msm_max_copies) +
                                ", got " + std::to_string(msm_copies));
  if (msm_copies == 0) {
    if (msm_window_bits != 0)
      throw std::invalid_argument("cuda backend: msm_window_bits applies to a fixed msm_copies, not to auto (0)");
    return std::make_unique<cuda_backend>(std::move(devices), slots_per_device, strategy, msm_workspace_max_bytes,
                                          msm_precompute{0, 1},
                                          std::vector<std::size_t>{msm_auto_copies, msm_auto_copies_second});
  }
  if (msm_window_bits > msm_max_window_bits || (msm_window_bits != 0 && msm_copies > msm_window_count(msm_window_bits)))
    throw std::invalid_argument("cuda backend: " + std::to_string(msm_copies) + " copies for windows of " +
                                std::to_string(msm_window_bits) + " bits (at most " +
                                std::to_string(msm_max_window_bits) + " bits, and no more copies than windows)");
  if (msm_copies == 1 && msm_window_bits != 0)
    throw std::invalid_argument("cuda backend: msm_window_bits applies to copied bases; with one copy each MSM "
                                "chooses its width");
  return std::make_unique<cuda_backend>(std::move(devices), slots_per_device, strategy, msm_workspace_max_bytes,
                                        msm_precompute{msm_window_bits, msm_copies}, std::vector<std::size_t>{});
}

}  // namespace coprove::cuda
