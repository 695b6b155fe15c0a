// The CUDA compute backend. Each worker slot owns a stream, device buffers for a, b, c, the
// assignment, evaluation scratch and an NTT plan on its device; a quotient is H2D a/b/c from the
// pinned leases (or H2D of the assignment w and A w, B w, C w on the device, from the circuit's
// matrices, uploaded once a device and kept while the host's pce_matrices object is in use) -> a, b,
// c at zeta (while the buffers still hold the evaluations) -> quotient_async -> h at zeta -> D2H h
// into a pinned lease and the four values into a small pinned area, timed with events, marked with
// NVTX ranges, and completed through the device's completion bridge, whose callback reads the
// timings and the values and submits the caller's handler to its executor (h stays on the device
// when the task does not ask for its host copy). A task that proves runs the proof's five MSMs
// after the quotient on the same stream (H over h where the quotient left it, A, B_G1, B_G2 and L
// over the witness on the device) against the circuit's proving key, resident on the device like
// the matrices; each one's window sums come back into a page-locked area, the completion copies
// them out and the engine combines them on its CPU executor (the serial chain of doublings takes
// milliseconds on one device thread, a fraction of one on the host).
#include <coprove/cuda/cuda_backend.hpp>

#include <coprove/cuda/completion_bridge.hpp>
#include <coprove/cuda/device.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/evaluation.hpp>
#include <coprove/cuda/event.hpp>
#include <coprove/cuda/host_allocator.hpp>
#include <coprove/cuda/msm.hpp>
#include <coprove/cuda/ntt.hpp>
#include <coprove/cuda/spmv.hpp>
#include <coprove/cuda/stream.hpp>
#include <coprove/engine/memory_plan.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/spin_runner.hpp>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
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

// NVTX range over the host-side enqueue of one stage; the profiler correlates it with the
// device work it launched.
class nvtx_range {
 public:
  explicit nvtx_range(const char* name) noexcept { nvtxRangePushA(name); }
  ~nvtx_range() { nvtxRangePop(); }
  nvtx_range(const nvtx_range&) = delete;
  nvtx_range& operator=(const nvtx_range&) = delete;
};

// A small page-locked host area: the evaluation's four values come back into it.
struct pinned_values {
  field::fr* data = nullptr;
  pinned_values() {
    COPROVE_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&data), 4 * sizeof(field::fr), cudaHostAllocPortable));
  }
  pinned_values(const pinned_values&) = delete;
  pinned_values& operator=(const pinned_values&) = delete;
  ~pinned_values() { COPROVE_CUDA_ASSERT_OK(cudaFreeHost(data)); }
};

// The proof's five MSMs leave their window sums here (page-locked, written by each run's last copy);
// they are combined on the host, where the serial chain of doublings is fast.
struct pinned_sums {
  struct windows {
    msm_window_sums_g1 a, b_g1, l, h;
    msm_window_sums_g2 b_g2;
  };
  windows* data = nullptr;
  pinned_sums() {
    void* p = nullptr;
    COPROVE_CUDA_TRY(cudaHostAlloc(&p, sizeof(windows), cudaHostAllocPortable));
    data = static_cast<windows*>(p);
  }
  pinned_sums(const pinned_sums&) = delete;
  pinned_sums& operator=(const pinned_sums&) = delete;
  ~pinned_sums() { COPROVE_CUDA_ASSERT_OK(cudaFreeHost(data)); }
  // The bytes that come back: each run's windows and its ones' group.
  std::size_t copied_bytes() const noexcept {
    std::size_t bytes = 0;
    for (const msm_window_sums_g1* w : {&data->a, &data->b_g1, &data->l, &data->h})
      bytes += (w->windows + 1) * sizeof(field::g1_xyzz);
    return bytes + (data->b_g2.windows + 1) * sizeof(field::g2_xyzz);
  }
};

// The window sums copied off the page-locked area (only what each run wrote, a few KiB), for the
// engine to combine on its CPU executor: the completion, often on the engine's io thread, only
// copies them.
struct copied_sums {
  template <class Xyzz>
  struct run {
    std::vector<Xyzz> sums;
    std::uint32_t window_bits = 0;
    template <class Windows>
    explicit run(const Windows& w) : sums(w.used().begin(), w.used().end()), window_bits(w.window_bits) {}
    template <class Jacobian>
    Jacobian combine() const noexcept {
      return combine_windows<Jacobian>(std::span<const Xyzz>(sums), window_bits);
    }
  };
  run<field::g1_xyzz> a, b_g1, l, h;
  run<field::g2_xyzz> b_g2;

  explicit copied_sums(const pinned_sums::windows& w) : a(w.a), b_g1(w.b_g1), l(w.l), h(w.h), b_g2(w.b_g2) {}
  groth16::msm_sums combine() const noexcept {
    using field::g1_jacobian;
    return groth16::msm_sums{a.combine<g1_jacobian>(), b_g1.combine<g1_jacobian>(),
                             l.combine<g1_jacobian>() + h.combine<g1_jacobian>(), b_g2.combine<field::g2_jacobian>()};
  }
};

class cuda_backend;
struct device_slot;

// One task in flight, kept by its slot for the next one: the timing events (start, after H2D,
// after the SpMV (at once without it), after a/b/c at zeta, after the quotient kernels, after h at
// zeta, after the MSMs (at once without them), after D2H), where the values at zeta land on the host, and, while the bridge holds it,
// what the completion needs.
struct stage_events {
  event start{cudaEventDefault}, h2d{cudaEventDefault}, spmv{cudaEventDefault}, evaluated{cudaEventDefault},
      compute{cudaEventDefault}, h_evaluated{cudaEventDefault}, msm{cudaEventDefault}, d2h{cudaEventDefault};
  pinned_values values;
  pinned_sums sums;

  cuda_backend* owner = nullptr;
  device_slot* slot = nullptr;
  engine::quotient_stages stages;
  std::uint64_t h2d_bytes = 0, d2h_bytes = 0;
  std::shared_ptr<const r1cs::pce_matrices> matrices;
  std::shared_ptr<const groth16::proving_key> key;
  engine::quotient_completion done;
};

struct device_buffer {
  field::fr* data = nullptr;
  int device = 0;
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() {
    if (data != nullptr) {
      scoped_device on(device);
      COPROVE_CUDA_ASSERT_OK(cudaFree(data));
    }
  }
};

// The host arrays of a circuit's matrices in the order they live on a device: offsets, columns,
// coefficients of A, B, C; then the coefficient table.
std::array<std::span<const std::byte>, 10> matrices_arrays(const r1cs::pce_matrices& m) {
  std::array<std::span<const std::byte>, 10> parts;
  std::size_t i = 0;
  for (const r1cs::csr_matrix* x : {&m.a, &m.b, &m.c})
    for (const std::vector<std::uint32_t>* part : {&x->row_offsets, &x->columns, &x->coefficients})
      parts[i++] = std::as_bytes(std::span(*part));
  parts[9] = std::as_bytes(std::span(m.coefficient_table));
  return parts;
}

// One circuit's matrices on one device: its nine CSR arrays and coefficient table, copied once
// (blocking). It holds nothing of the host matrices, so that they die with their last user; the
// cache entry that owns it watches them instead.
struct device_pce {
  std::string circuit_id;  // for the logs, when the host matrices may be gone
  std::size_t bytes = 0;
  int device = 0;
  void* arrays[10] = {};  // as matrices_arrays orders them
  csr_device csr[3];

  device_pce(const r1cs::pce_matrices& m, int dev) : circuit_id(m.circuit_id), device(dev) {
    const auto parts = matrices_arrays(m);
    for (const auto& part : parts) bytes += part.size();
    try {
      for (std::size_t i = 0; i < parts.size(); ++i) arrays[i] = upload(parts[i]);
    } catch (const cuda_error& e) {
      release();
      if (e.status() != cudaErrorMemoryAllocation) throw;
      throw cuda_error(cudaErrorMemoryAllocation, "cuda backend: device " + std::to_string(dev) +
                                                      " has no room for the matrices of " + circuit_id + " (" +
                                                      std::to_string(bytes) + " bytes): " + e.what());
    } catch (...) {
      release();
      throw;
    }
    for (int k = 0; k < 3; ++k)
      csr[k] = csr_device{static_cast<const std::uint32_t*>(arrays[3 * k]),
                          static_cast<const std::uint32_t*>(arrays[3 * k + 1]),
                          static_cast<const std::uint32_t*>(arrays[3 * k + 2])};
  }
  device_pce(const device_pce&) = delete;
  device_pce& operator=(const device_pce&) = delete;
  ~device_pce() { release(); }

 private:
  static void* upload(std::span<const std::byte> from) {
    void* to = nullptr;
    COPROVE_CUDA_TRY(cudaMalloc(&to, from.empty() ? 1 : from.size()));
    if (!from.empty()) COPROVE_CUDA_TRY(cudaMemcpy(to, from.data(), from.size(), cudaMemcpyHostToDevice));
    return to;
  }
  void release() noexcept {
    scoped_device on(device);
    for (void*& p : arrays) {
      if (p != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFree(p));
      p = nullptr;
    }
  }
};

// One circuit's proving key on one device: the A, B_G1, L and H queries in G1 and B_G2, uploaded
// once (blocking) through page-locked staging. Like device_pce it holds nothing of the host key.
struct device_key {
  std::string circuit_id;
  std::size_t bytes = 0;
  int device = 0;
  msm_precompute precompute;  // the copies of each query's points (msm.hpp)
  msm_bases_g1 a, b_g1, l, h;
  msm_bases_g2 b_g2;

  // The workspace a proof's MSMs over this key take on a slot (msm_proof_workspace_bytes).
  std::size_t msm_bytes = 0;

  device_key(const groth16::proving_key& k, std::string circuit, int dev, const msm_precompute& copies)
      : circuit_id(std::move(circuit)),
        bytes(engine::device_key_bytes(k) * copies.copies),
        device(dev),
        precompute(copies),
        a(upload<field::g1_affine>(k.a)),
        b_g1(upload<field::g1_affine>(k.b_g1)),
        l(upload<field::g1_affine>(k.l)),
        h(upload<field::g1_affine>(k.h)),
        b_g2(upload<field::g2_affine>(k.b_g2)),
        msm_bytes(msm_proof_workspace_bytes(k.h.size(), k.num_variables(), k.num_aux(), copies)) {
    // The workspace is sized for the plans the runs make over these bases; a query whose bases kept
    // another width than that sizing planned would run out of its arena.
    const msm_proof_plans plans = plan_proof_msms(k.h.size(), k.num_variables(), k.num_aux(), copies);
    const auto same = [](const auto& bases, const msm_plan& plan) {
      return bases.copies() == plan.copies && (plan.copies == 1 || bases.window_bits() == plan.window_bits);
    };
    if (!same(h, plans.h) || !same(a, plans.a) || !same(b_g1, plans.b_g1) || !same(b_g2, plans.b_g2) ||
        !same(l, plans.l))
      throw std::logic_error("cuda backend: the proving key of " + circuit_id +
                             " keeps bases of other widths than its MSM workspace was sized for");
  }

 private:
  // One query's points (and their copies); no room names the device, the circuit and the key's bytes.
  template <class Affine>
  msm_bases<Affine> upload(std::span<const Affine> points) const {
    try {
      return msm_bases<Affine>(points, device, precompute);
    } catch (const cuda_error& e) {
      if (e.status() != cudaErrorMemoryAllocation) throw;
      throw cuda_error(cudaErrorMemoryAllocation, "cuda backend: device " + std::to_string(device) +
                                                      " has no room for the proving key of " + circuit_id + " (" +
                                                      std::to_string(bytes) + " bytes): " + e.what());
    }
  }
};

// The device copies of host objects (a circuit's matrices, a proving key), by (device index, host
// object). An entry watches its host object rather than holding it, so the copy can go once nobody
// uses the object and a new object at the same address is never taken for the dead one; the
// copy is null while a thread uploads it. Every task holds its objects until it completes, so a
// copy whose host object is gone is read by no task in flight.
template <class Host, class Copy>
class resident_cache {
 public:
  explicit resident_cache(const char* what) : what_(what) {}

  // The copy of `host` on `device`, made by `upload()` (blocking, on this thread, into the
  // returned unique_ptr) unless the device holds it or another thread is uploading it, which
  // this one then waits for. The mutex is not held during the upload: a thread whose copy is
  // resident never waits for another object's upload. The copies of objects nobody uses any more
  // are freed, after the mutex is released, before an upload (their room may be needed) and on
  // every call that is not `enqueuing`; never when the enqueuing thread finds its copy resident,
  // since cudaFree waits for the device and that thread is the engine's io thread.
  template <class Upload>
  const Copy& get(std::size_t device, const std::shared_ptr<const Host>& host, bool enqueuing, Upload upload) {
    std::vector<std::unique_ptr<Copy>> unused;  // declared first: freed after the lock goes
    std::unique_lock lock(mutex_);
    const std::pair key{device, host.get()};
    for (;;) {
      if (!enqueuing) take_unused(unused);
      const auto it = entries_.find(key);
      if (it == entries_.end()) break;
      if (!it->second.on_device) {
        uploaded_.wait(lock);  // another thread is uploading this object, which it holds
        continue;
      }
      if (it->second.host.lock().get() == host.get()) return *it->second.on_device;
      take(it, unused);  // a dead object's copy at this address
      break;
    }
    take_unused(unused);
    entry& e = entries_[key];  // stays put in the map while unlocked; only this thread erases it
    e.host = host;
    lock.unlock();
    unused.clear();  // their room may be needed now
    std::unique_ptr<Copy> copy;
    try {
      copy = upload();
    } catch (...) {
      lock.lock();
      entries_.erase(key);
      uploaded_.notify_all();
      throw;
    }
    COPROVE_LOG(info, "cuda") << what_ << " of " << copy->circuit_id << " (" << copy->bytes << " bytes) now on device "
                              << copy->device
                              << (enqueuing ? " (uploaded while enqueuing: they were not prepared)" : "");
    lock.lock();
    bytes_ += copy->bytes;
    e.on_device = std::move(copy);
    uploaded_.notify_all();
    return *e.on_device;
  }

  bool resident(std::size_t device, const Host& host) const {
    std::lock_guard lock(mutex_);
    const auto it = entries_.find({device, &host});
    return it != entries_.end() && it->second.on_device && it->second.host.lock().get() == &host;
  }

  std::size_t bytes() const noexcept { return bytes_.load(); }

 private:
  struct entry {
    std::weak_ptr<const Host> host;
    std::unique_ptr<Copy> on_device;
  };
  using map = std::map<std::pair<std::size_t, const Host*>, entry>;

  // Moves the copies whose host objects are gone out of the cache (the caller frees them outside
  // the mutex). Called with mutex_ held.
  void take_unused(std::vector<std::unique_ptr<Copy>>& unused) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.on_device && it->second.host.expired())
        it = take(it, unused);
      else
        ++it;
    }
  }

  // Moves one resident entry's copy into `unused` and erases the entry; returns the next. Called
  // with mutex_ held.
  typename map::iterator take(typename map::iterator it, std::vector<std::unique_ptr<Copy>>& unused) {
    unused.push_back(std::move(it->second.on_device));
    const Copy& gone = *unused.back();
    COPROVE_LOG(info, "cuda") << what_ << " of " << gone.circuit_id << " (" << gone.bytes << " bytes) leave device "
                              << gone.device << ": no one uses them any more";
    bytes_ -= gone.bytes;
    return entries_.erase(it);
  }

  const char* what_;
  mutable std::mutex mutex_;
  std::condition_variable uploaded_;  // an upload ended (resident or failed)
  map entries_;
  std::atomic<std::size_t> bytes_{0};  // of the resident copies
};

struct device_slot {
  int device = 0;
  std::size_t index = 0;
  stream work;
  // By log size and roots (a zkey's domain is on ffjavascript's), kept once built.
  std::map<std::pair<unsigned, field::domain_roots>, std::unique_ptr<ntt_plan>> plans;
  std::size_t capacity = 0;  // elements of each buffer
  device_buffer a, b, c;
  std::size_t witness_capacity = 0;
  device_buffer witness;  // a task's assignment, when it comes with matrices
  device_buffer evaluation;  // the values at zeta (4 elements), then the evaluation's scratch
  // The proof MSMs' workspace: an arena as large as the largest key's proof has needed, so that the
  // slot holds exactly what the device memory plan charges it (a pool shared by the slots kept
  // blocks of every size asked for, and a 2^24 proof ran out of device memory beside its plan).
  std::unique_ptr<msm_context> msm;
  std::mutex events_mutex;
  std::vector<std::unique_ptr<stage_events>> free_events;

  device_slot(int dev, std::size_t i) : device(dev), index(i), work(dev) {
    a.device = b.device = c.device = evaluation.device = witness.device = dev;
  }

  // Room for an assignment of `count` elements; grown (blocking) when a larger one arrives.
  void prepare_witness(std::size_t count) {
    if (witness_capacity >= count) return;
    work.synchronize();  // the stream may still read the old buffer
    if (witness.data != nullptr) {
      COPROVE_CUDA_TRY(cudaFree(witness.data));
      witness.data = nullptr;
      witness_capacity = 0;
    }
    COPROVE_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&witness.data), count * sizeof(field::fr)));
    witness_capacity = count;
  }

  // An MSM arena of at least `bytes` (at most `max_bytes`, 0: no cap); grown (blocking) when a key
  // needs more. Throws cuda_error (cudaErrorMemoryAllocation) above the cap or without room.
  void prepare_msm(std::size_t bytes, std::size_t max_bytes) {
    if (msm != nullptr && msm->arena_bytes() >= bytes) return;
    if (max_bytes != 0 && bytes > max_bytes)
      throw cuda_error(cudaErrorMemoryAllocation, "cuda backend: a proof's MSMs on device " + std::to_string(device) +
                                                      " slot " + std::to_string(index) + " need " +
                                                      std::to_string(bytes) + " bytes of workspace, above the cap of " +
                                                      std::to_string(max_bytes) + " (msm_workspace_max_bytes)");
    work.synchronize();  // the stream may still use the old arena
    msm.reset();
    msm = std::make_unique<msm_context>(device, msm_arena{bytes});
  }

  // This slot's plan for (log_n, roots), or null.
  const ntt_plan* plan_for(unsigned log_n, field::domain_roots roots) const noexcept {
    const auto it = plans.find(std::make_pair(log_n, roots));
    return it == plans.end() ? nullptr : it->second.get();
  }

  // Buffers of at least n elements and a plan for n; grown (blocking) the first time a size is seen.
  // The plan shares `tables_from`'s tables (another slot's plan of the device) when there is one.
  void prepare(unsigned log_n, field::domain_roots roots, const ntt_plan* tables_from) {
    const std::size_t n = std::size_t{1} << log_n;
    if (capacity < n) {
      // The stream may still read the old buffers: finish it before freeing them.
      work.synchronize();
      for (device_buffer* buf : {&a, &b, &c}) {
        if (buf->data != nullptr) {
          COPROVE_CUDA_TRY(cudaFree(buf->data));
          buf->data = nullptr;
        }
        COPROVE_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&buf->data), n * sizeof(field::fr)));
      }
      capacity = n;
    }
    if (evaluation.data == nullptr) {
      COPROVE_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&evaluation.data),
                                  4 * sizeof(field::fr) + evaluation_scratch_bytes(log_n)));
    }
    const auto key = std::make_pair(log_n, roots);
    if (plans.find(key) == plans.end()) {
      plans.emplace(key, tables_from != nullptr ? std::make_unique<ntt_plan>(tables_from->share_tables())
                                                : std::make_unique<ntt_plan>(log_n, device, roots));
    }
  }

  bool prepared_for(unsigned log_n, field::domain_roots roots) const noexcept {
    return capacity >= (std::size_t{1} << log_n) && evaluation.data != nullptr &&
           plans.find(std::make_pair(log_n, roots)) != plans.end();
  }

  std::unique_ptr<stage_events> take_events() {
    std::lock_guard lock(events_mutex);
    if (free_events.empty()) return std::make_unique<stage_events>();
    auto e = std::move(free_events.back());
    free_events.pop_back();
    return e;
  }
  void return_events(std::unique_ptr<stage_events> e) noexcept {
    try {
      std::lock_guard lock(events_mutex);
      free_events.push_back(std::move(e));
    } catch (...) {
      // No room to keep them: they are destroyed, and made anew for a later task.
    }
  }
};

/// "13 or 12": counts for a message.
std::string counts_text(const std::vector<std::size_t>& counts) {
  std::string out;
  for (std::size_t i = 0; i < counts.size(); ++i)
    out += (i == 0 ? "" : i + 1 == counts.size() ? " or " : ", ") + std::to_string(counts[i]);
  return out;
}

std::uint64_t elapsed_ns(const event& from, const event& to) {
  return static_cast<std::uint64_t>(static_cast<double>(to.elapsed_ms_since(from)) * 1e6);
}

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
        window_bits_(key_copies.window_bits),
        copies_(key_copies.copies),
        wanted_copies_(std::move(wanted_copies)),
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
                              << (!wanted_copies_.empty()
                                      ? "copies of each proving key's points left to the device memory plan (" +
                                            counts_text(wanted_copies_) + ", the first that fits, else 1)"
                                      : std::to_string(copies_.load()) + " copies of each proving key's points (windows of " +
                                            std::to_string(window_bits_) + " bits; 0: the MSM plan's)");
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
    if (task.stages.contains(engine::quotient_stage::spmv)) pce = &device_matrices(worker.device, task.matrices, true);
    const device_key* key = nullptr;
    if (task.stages.contains(engine::quotient_stage::proof_msms))
      key = &device_proving_key(worker.device, task.key, "a circuit not prepared", true);
    if (!task.witness.empty()) w.prepare_witness(task.witness.size());
    if (key != nullptr) w.prepare_msm(key->msm_bytes, msm_workspace_max_bytes_);
    const std::size_t bytes = task.domain->size() * sizeof(field::fr);
    auto events = w.take_events();
    try {
      enqueue_stages(w, task, pce, key, bytes, *events);
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
    cuda_backend& self = *events->owner;
    engine::quotient_result result;
    if (!ec) {
      const bool evaluated = events->stages.contains(engine::quotient_stage::evaluate_at_zeta);
      if (evaluated)
        result.values = engine::evaluation_values{events->values.data[0], events->values.data[1],
                                                  events->values.data[2], events->values.data[3]};
      try {
        engine::quotient_timings& t = result.timings;
        t.h2d_ns = elapsed_ns(events->start, events->h2d);
        t.h2d_bytes = events->h2d_bytes;
        t.d2h_bytes = events->d2h_bytes;
        t.spmv_ns = events->stages.contains(engine::quotient_stage::spmv) ? elapsed_ns(events->h2d, events->spmv) : 0;
        t.compute_ns = elapsed_ns(events->evaluated, events->compute);
        t.msm_ns = elapsed_ns(events->h_evaluated, events->msm);
        t.d2h_ns = elapsed_ns(events->msm, events->d2h);
        t.evaluation_ns =
            evaluated ? elapsed_ns(events->spmv, events->evaluated) + elapsed_ns(events->compute, events->h_evaluated) : 0;
      } catch (const std::exception& e) {
        COPROVE_LOG(warning, "cuda") << "reading the stage timings failed: " << e.what();
      }
      result.h_copied = events->stages.contains(engine::quotient_stage::copy_h_to_host);
      if (events->stages.contains(engine::quotient_stage::proof_msms)) {
        try {
          auto parts = std::make_shared<const copied_sums>(*events->sums.data);
          result.combine_sums = [parts] { return parts->combine(); };
        } catch (const std::bad_alloc&) {
          ec = std::make_error_code(std::errc::not_enough_memory);
        }
      }
    }
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

  // The task's stages on the slot's stream, with timing events: H2D a, b, c (or H2D w and the
  // SpMV) -> a, b, c at zeta -> the quotient kernels -> h at zeta -> D2H of h and the values, as
  // listed. The quotient overwrites all three buffers, so a, b and c are evaluated before it; h
  // stays in the first of them until the slot's next task.
  static void enqueue_stages(device_slot& w, const engine::quotient_task& task, const device_pce* pce,
                             const device_key* key, std::size_t bytes, stage_events& events) {
    const bool evaluate = task.stages.contains(engine::quotient_stage::evaluate_at_zeta);
    const bool copy_h = task.stages.contains(engine::quotient_stage::copy_h_to_host);
    events.d2h_bytes = 0;  // the events are reused from task to task
    const cudaStream_t s = w.work.get();
    const unsigned log_n = task.domain->log_size();
    field::fr* const d_values = w.evaluation.data;
    void* const d_scratch = w.evaluation.data + 4;
    const field_words zeta = to_field_words(task.zeta);
    {
      nvtx_range range("coprove h2d");
      events.start.record(s);
      if (!task.witness.empty())  // for the SpMV, or the proof's MSMs
        COPROVE_CUDA_TRY(cudaMemcpyAsync(w.witness.data, task.witness.data(), task.witness.size_bytes(),
                                         cudaMemcpyHostToDevice, s));
      if (pce == nullptr) {
        COPROVE_CUDA_TRY(cudaMemcpyAsync(w.a.data, task.a.data(), bytes, cudaMemcpyHostToDevice, s));
        COPROVE_CUDA_TRY(cudaMemcpyAsync(w.b.data, task.b.data(), bytes, cudaMemcpyHostToDevice, s));
        if (!task.c.empty())  // the odd-coset form forms c from a and b
          COPROVE_CUDA_TRY(cudaMemcpyAsync(w.c.data, task.c.data(), bytes, cudaMemcpyHostToDevice, s));
      }
      events.h2d.record(s);
    }
    if (pce != nullptr) {
      nvtx_range range("coprove spmv");
      void* const outputs[3] = {w.a.data, w.b.data, w.c.data};
      spmv_abc_async(pce->csr, pce->arrays[9], w.witness.data, task.matrices->num_rows, task.domain->size(), outputs,
                     s);
    }
    events.spmv.record(s);
    if (evaluate) {
      nvtx_range range("coprove evaluation abc");
      const void* const polys[] = {w.a.data, w.b.data, w.c.data};
      evaluate_lagrange_async(polys, 3, log_n, to_field_words(task.domain->omega()),
                              to_field_words(task.domain->size_inv()), zeta, d_values, d_scratch, s);
    }
    events.evaluated.record(s);
    {
      nvtx_range range("coprove quotient");
      const ntt_plan& plan = *w.plans.at(std::make_pair(log_n, task.domain->roots()));
      if (task.form == field::quotient_form::odd_coset_evaluations) {
        quotient_odd_coset_async(plan, w.a.data, w.b.data, w.c.data, s);
      } else {
        quotient_async(plan, w.a.data, w.b.data, w.c.data, s);
      }
      events.compute.record(s);
    }
    if (evaluate) {
      nvtx_range range("coprove evaluation h");
      evaluate_coefficients_async(w.a.data, log_n, zeta, d_values + 3, d_scratch, s);
    }
    events.h_evaluated.record(s);
    if (key != nullptr) {
      // h where the quotient left it (as many values as the key has H points), the witness where
      // the upload put it; the sums go straight to the page-locked area.
      nvtx_range range("coprove msm");
      const groth16::proving_key& pk = *task.key;
      const field::fr* witness = w.witness.data;
      pinned_sums::windows& out = *events.sums.data;
      msm_windows_async(*w.msm, key->h, w.a.data, pk.h.size(), &out.h, s);
      // A, B in G1 and B in G2 are sums over the same witness: its digits are sorted into buckets
      // once for the three where their plans place them alike (the same widths and copies).
      const bool shared = msm_windows_same_scalars_async(*w.msm, key->a, key->b_g1, key->b_g2, witness,
                                                         pk.num_variables(), &out.a, &out.b_g1, &out.b_g2, s);
      static std::atomic<bool> said_apart{false};  // once a process
      if (!shared && !said_apart.exchange(true)) {
        COPROVE_LOG(info, "cuda") << "the proof's MSMs over the witness place its entries once each for "
                                  << key->circuit_id << ": the plans of A, B_G1 and B_G2 differ (widths or copies)";
      }
      msm_windows_async(*w.msm, key->l, witness + pk.num_inputs(), pk.num_aux(), &out.l, s);
      events.d2h_bytes += events.sums.copied_bytes();
    }
    events.msm.record(s);
    {
      nvtx_range range("coprove d2h");
      if (copy_h) {
        COPROVE_CUDA_TRY(cudaMemcpyAsync(task.h.data(), w.a.data, bytes, cudaMemcpyDeviceToHost, s));
        events.d2h_bytes += bytes;
      }
      if (evaluate) {
        COPROVE_CUDA_TRY(cudaMemcpyAsync(events.values.data, d_values, 4 * sizeof(field::fr),
                                         cudaMemcpyDeviceToHost, s));
        events.d2h_bytes += 4 * sizeof(field::fr);
      }
      events.d2h.record(s);
    }
  }

  void prepare_matrices(std::size_t device, const std::shared_ptr<const r1cs::pce_matrices>& matrices) override {
    check_device(device);
    if (!matrices) throw std::invalid_argument("cuda backend: prepare_matrices without matrices");
    device_matrices(device, matrices, false);
  }

  bool matrices_resident(std::size_t device, const r1cs::pce_matrices& matrices) const override {
    check_device(device);
    return pces_.resident(device, matrices);
  }

  std::size_t resident_matrices_bytes() const noexcept override { return pces_.bytes(); }

  void prepare_key(std::size_t device, const std::shared_ptr<const groth16::proving_key>& key,
                   std::string_view circuit) override {
    check_device(device);
    if (!key) throw std::invalid_argument("cuda backend: prepare_key without a key");
    device_proving_key(device, key, circuit, false);
  }

  bool key_resident(std::size_t device, const groth16::proving_key& key) const override {
    check_device(device);
    return keys_.resident(device, key);
  }

  std::size_t resident_key_bytes() const noexcept override { return keys_.bytes(); }
  std::size_t device_key_copies() const noexcept override { return copies_.load(); }
  std::vector<std::size_t> device_key_copies_wanted() const override { return wanted_copies_; }
  void settle_device_key_copies(std::size_t copies) override {
    if (wanted_copies_.empty()) engine::compute_backend::settle_device_key_copies(copies);
    if (copies != 1 && std::find(wanted_copies_.begin(), wanted_copies_.end(), copies) == wanted_copies_.end())
      throw std::logic_error("cuda backend: copies of a key's points settle at 1 or " + counts_text(wanted_copies_) +
                             ", not " + std::to_string(copies));
    if (keys_made_.load())
      throw std::logic_error("cuda backend: the copies of a key's points settle before the first key is made resident");
    copies_.store(static_cast<unsigned>(copies));
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
      msm = msm_proof_workspace_bytes(n, variables, variables, msm_precompute{window_bits_, static_cast<unsigned>(key_copies)});
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

  const device_pce& device_matrices(std::size_t device, const std::shared_ptr<const r1cs::pce_matrices>& m,
                                    bool enqueuing) {
    return pces_.get(device, m, enqueuing, [&] {
      scoped_device on(devices_[device]);
      return std::make_unique<device_pce>(*m, devices_[device]);
    });
  }

  const device_key& device_proving_key(std::size_t device, const std::shared_ptr<const groth16::proving_key>& k,
                                       std::string_view circuit, bool enqueuing) {
    return keys_.get(device, k, enqueuing, [&] {
      keys_made_.store(true);
      scoped_device on(devices_[device]);
      return std::make_unique<device_key>(*k, std::string(circuit), devices_[device],
                                          msm_precompute{window_bits_, copies_.load()});
    });
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
  unsigned window_bits_;              // of the keys' copies (0: the MSM plan's)
  std::atomic<unsigned> copies_;      // of each key's points; settled once, before any key is made
  std::vector<std::size_t> wanted_copies_;  // empty: copies_ is fixed
  std::atomic<bool> keys_made_{false};
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<device_slot>> slots_;  // device * slots_per_device + slot
  resident_cache<r1cs::pce_matrices, device_pce> pces_{"matrices"};
  resident_cache<groth16::proving_key, device_key> keys_{"proving key"};
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
