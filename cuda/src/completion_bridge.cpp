// The completion bridge's four strategies. Each only calls completion callbacks (short functions
// that hand the completion on; a signal_when_done signal is set by one); none runs user code on
// its own threads or blocks the caller.
//
// - host_func: cudaLaunchHostFunc per call; the driver's callback thread calls the callback. The
//   driver never calls a host function after a context error, so a watchdog thread probes the
//   devices with pending calls every few milliseconds and fails those calls instead of hanging.
// - event_poller: an event recorded per call (events are recycled per device); one poller thread
//   queries the head event of each stream (so the calls of a stream finish in order) with an
//   adaptive back-off: spin, then yield, then short timed sleeps; with nothing in flight it spins
//   and yields for a further 300 us (a burst's next signal finds it awake), then blocks (no CPU
//   while idle).
// - mapped_flag: a one-thread kernel per call writes a per-stream sequence number into mapped
//   pinned memory; the same poller reads the flags (a plain memory read) and probes the devices
//   for context errors, since a flag is never written after one.
// - stream_write: as mapped_flag, but the stream writes the sequence number itself
//   (cuStreamWriteValue64, found through cudaGetDriverEntryPointByVersion): no kernel launch.
//
// The polling strategies can also be polled by another thread (poll(), as a runtime::spin_source
// for run_spinning): whoever holds the state finishes the calls, in order per stream; the poller
// thread stands back (10 us naps) while such a thread has polled within the last 20 us.
#include "coprove/cuda/completion_bridge.hpp"

#include "coprove/cuda/error.hpp"
#include "coprove/runtime/error.hpp"
#include "coprove/runtime/log.hpp"
#include "coprove/runtime/spin_runner.hpp"

#include <cuda.h>  // driver API types only: its functions are found at run time

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace coprove::cuda {

std::string_view to_string(completion_bridge::strategy s) noexcept {
  switch (s) {
    case completion_bridge::strategy::host_func: return "host_func";
    case completion_bridge::strategy::event_poller: return "event_poller";
    case completion_bridge::strategy::mapped_flag: return "mapped_flag";
    case completion_bridge::strategy::stream_write: return "stream_write";
  }
  return "unknown";
}

namespace detail {
namespace {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// How long the poller spins, then yields, after its last progress before it sleeps; and how
// often it probes devices for a context error while signals wait.
constexpr auto spin_for = 30us;
constexpr auto yield_for = 300us;
constexpr auto max_sleep = 1ms;
constexpr auto probe_every = 5ms;

void cpu_relax() noexcept {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

void name_this_thread(const char* name) noexcept {
  pthread_setname_np(pthread_self(), name);
  prctl(PR_SET_TIMERSLACK, 1000UL);  // 1 us: short sleeps stay short
}

std::error_code as_error(cudaError_t e) { return e == cudaSuccess ? std::error_code{} : make_error_code(e); }

cudaError_t stream_device(cudaStream_t s, int* device) noexcept {
  COPROVE_CUDA_TRY_STATUS(cudaStreamGetDevice(s, device));
  return cudaSuccess;
}

// Detects a context error (sticky: every later call returns it) on a device, through an empty
// stream the bridge owns, so that no user stream is touched from the bridge's thread.
class device_probe {
 public:
  ~device_probe() {
    for (auto& [device, s] : streams_) {
      int previous = 0;
      if (cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess) {
        (void)cudaStreamDestroy(s);
        (void)cudaSetDevice(previous);
      }
    }
    (void)cudaGetLastError();
  }

  /// cudaSuccess while the device's context is healthy, else its error.
  cudaError_t check(int device) noexcept {
    auto it = streams_.find(device);
    if (it == streams_.end()) {
      int previous = 0;
      COPROVE_CUDA_TRY_STATUS(cudaGetDevice(&previous));
      COPROVE_CUDA_TRY_STATUS(cudaSetDevice(device));
      cudaStream_t s = nullptr;
      const cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      (void)cudaSetDevice(previous);
      if (e != cudaSuccess) return e;
      it = streams_.emplace(device, s).first;
    }
    (void)cudaGetLastError();
    const cudaError_t e = cudaStreamQuery(it->second);
    (void)cudaGetLastError();
    return e == cudaErrorNotReady ? cudaSuccess : e;
  }

 private:
  std::unordered_map<int, cudaStream_t> streams_;
};

}  // namespace

class bridge_impl : public runtime::spin_source {
 public:
  // Queues `done` for the stream's work so far, or calls it at once with the error that stopped
  // that. May throw std::bad_alloc, having neither queued nor called it.
  virtual void call_when_done(cudaStream_t s, completion_callback done) = 0;
  virtual std::size_t in_flight() const noexcept = 0;
  // spin_source: nothing to poll unless a strategy says otherwise.
  bool busy() const noexcept override { return false; }
  std::size_t poll_ready() noexcept override { return 0; }
};

namespace {

// ---------------------------------------------------------------------------------------------
// host_func

class host_func_bridge final : public bridge_impl {
 public:
  host_func_bridge() : state_(std::make_shared<shared_state>()) {
    watchdog_ = std::thread([state = state_] { watch(*state); });
  }

  // Waits for the calls in flight (their host functions, or a context error found by the
  // watchdog), then stops the watchdog.
  ~host_func_bridge() override {
    {
      std::unique_lock lock(state_->mutex);
      state_->drained.wait(lock, [this] { return state_->pending.empty(); });
      state_->stopping = true;
    }
    state_->wake.notify_all();
    watchdog_.join();
  }

  void call_when_done(cudaStream_t s, completion_callback done) override {
    int device = 0;
    if (const cudaError_t e = stream_device(s, &device); e != cudaSuccess) {
      done(as_error(e));
      return;
    }
    auto call = std::make_unique<payload>(done, state_, device);
    bool was_idle = false;
    {
      std::lock_guard lock(state_->mutex);
      was_idle = state_->pending.empty();
      state_->pending.insert(call.get());
    }
    if (was_idle) state_->wake.notify_all();
    (void)cudaGetLastError();
    const cudaError_t e = cudaLaunchHostFunc(s, &on_host_func, call.get());
    if (e != cudaSuccess) {
      {
        std::lock_guard lock(state_->mutex);
        state_->pending.erase(call.get());
      }
      state_->drained.notify_all();
      call.reset();
      done(as_error(e));
      return;
    }
    (void)call.release();  // the host function (or a late one after the watchdog) frees it
  }

  std::size_t in_flight() const noexcept override {
    std::lock_guard lock(state_->mutex);
    return state_->pending.size();
  }

 private:
  struct payload;
  struct shared_state {
    mutable std::mutex mutex;
    std::condition_variable wake;     // the watchdog: something is pending, or stop
    std::condition_variable drained;  // the destructor: nothing is pending
    std::unordered_set<payload*> pending;
    bool stopping = false;
  };
  struct payload {
    payload(completion_callback d, std::shared_ptr<shared_state> s, int dev) noexcept
        : done(d), state(std::move(s)), device(dev) {}
    completion_callback done;
    std::shared_ptr<shared_state> state;  // keeps the bookkeeping alive for a late host function
    int device;
    std::atomic<bool> claimed{false};  // set by whoever calls `done`: the host function or the watchdog
  };

  // The host function: only calls the callback (which hands the completion on) and frees its payload.
  static void CUDART_CB on_host_func(void* p) {
    auto* call = static_cast<payload*>(p);
    auto state = call->state;
    if (!call->claimed.exchange(true)) call->done({});
    {
      std::lock_guard lock(state->mutex);
      state->pending.erase(call);
    }
    state->drained.notify_all();
    delete call;
  }

  // Probes the devices with pending calls every few milliseconds; a context error fails their
  // signals (the driver will never run those host functions).
  static void watch(shared_state& state) {
    name_this_thread("coprove-bridge");
    device_probe probe;
    std::unique_lock lock(state.mutex);
    for (;;) {
      state.wake.wait(lock, [&] { return state.stopping || !state.pending.empty(); });
      if (state.stopping) return;
      if (state.wake.wait_for(lock, probe_every, [&] { return state.stopping; })) return;
      std::vector<int> devices;
      for (payload* call : state.pending)
        if (std::find(devices.begin(), devices.end(), call->device) == devices.end()) devices.push_back(call->device);
      lock.unlock();
      std::vector<std::pair<int, cudaError_t>> failed;
      for (int d : devices)
        if (const cudaError_t e = probe.check(d); e != cudaSuccess) failed.emplace_back(d, e);
      lock.lock();
      for (auto [d, e] : failed) {
        COPROVE_LOG(error, "cuda") << "completion bridge: device " << d << " failed (" << cudaGetErrorName(e)
                                   << "); failing its pending signals";
        for (auto it = state.pending.begin(); it != state.pending.end();) {
          payload* call = *it;
          if (call->device != d) {
            ++it;
            continue;
          }
          // The payload stays allocated: a host function that still ran would use it.
          if (!call->claimed.exchange(true)) call->done(as_error(e));
          it = state.pending.erase(it);
        }
      }
      if (!failed.empty()) state.drained.notify_all();
    }
  }

  std::shared_ptr<shared_state> state_;
  std::thread watchdog_;
};

// ---------------------------------------------------------------------------------------------
// event_poller, mapped_flag, stream_write: one poller thread, and any thread that polls

class polling_bridge : public bridge_impl {
 public:
  std::size_t in_flight() const noexcept override { return pending_.load(std::memory_order_relaxed); }
  bool busy() const noexcept override { return pending_.load(std::memory_order_relaxed) != 0; }

  // Another thread (a spinning io thread) polls: it finishes what is ready unless the poller
  // thread or a caller holds the state, and tells the poller thread to stand back meanwhile.
  std::size_t poll_ready() noexcept override {
    if (!busy()) return 0;
    external_poll_ns_.store(now_ns(), std::memory_order_relaxed);
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return 0;
    return scan_locked();
  }

 protected:
  struct entry {
    completion_callback done;
    int device = 0;
    cudaEvent_t event = nullptr;   // event_poller
    unsigned slot = 0;             // flags
    unsigned long long seq = 0;    // flags
  };

  /// cudaSuccess when the entry's work is done, cudaErrorNotReady while it runs, else the error.
  /// Called with mutex_ held, on any thread that polls.
  virtual cudaError_t poll(const entry& e) noexcept = 0;
  /// Gives back what the entry held (its event); called with mutex_ held.
  virtual void recycle(entry&) noexcept {}
  /// True when poll() cannot see context errors by itself (the device must be probed).
  virtual bool needs_probe() const noexcept = 0;

  void start() { thread_ = std::thread([this] { loop(); }); }

  // Lets the poller finish the signals in flight (work done or failed), then joins it. Called by
  // the derived destructor while its members still exist.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  /// Queues an entry; mutex_ must be held (so that the entries of a stream keep call order).
  void push_locked(cudaStream_t s, entry e) {
    auto& q = queues_[s];
    q.push_back(std::move(e));
    pending_.fetch_add(1, std::memory_order_release);
    submitted_.fetch_add(1, std::memory_order_relaxed);
    if (sleeping_) wake_.notify_one();
  }

  /// Guards the queues and what derived classes enqueue with them.
  std::mutex mutex_;

 private:
  static std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now().time_since_epoch()).count());
  }

  void finish(entry& e, cudaError_t result) noexcept {
    e.done(as_error(result));
    recycle(e);
    pending_.fetch_sub(1, std::memory_order_release);
  }

  // Calls the callbacks whose work is done, in order per stream; mutex_ held. Calling under the
  // lock keeps the order even when two threads poll one after the other.
  std::size_t scan_locked() noexcept {
    std::size_t done = 0;
    for (auto it = queues_.begin(); it != queues_.end();) {
      auto& q = it->second;
      while (!q.empty()) {
        const cudaError_t r = poll(q.front());
        if (r == cudaErrorNotReady) break;
        finish(q.front(), r);
        q.pop_front();
        ++done;
      }
      // Empty queues stay (no allocation per signal) unless many streams have come and gone.
      it = q.empty() && queues_.size() > max_idle_queues ? queues_.erase(it) : std::next(it);
    }
    return done;
  }

  // Fails every pending signal of a device whose context failed; mutex_ held.
  void fail_device_locked(int d, cudaError_t err) noexcept {
    COPROVE_LOG(error, "cuda") << "completion bridge: device " << d << " failed (" << cudaGetErrorName(err)
                               << "); failing its pending signals";
    for (auto& [s, q] : queues_) {
      for (auto e = q.begin(); e != q.end();) {
        if (e->device == d) {
          finish(*e, err);
          e = q.erase(e);
        } else {
          ++e;
        }
      }
    }
  }

  // Probes the devices with pending signals, outside the lock (a CUDA call must not hold up the
  // threads that enqueue or poll), and fails the signals of a device whose context failed.
  void probe_devices(device_probe& probe) noexcept {
    std::vector<int> devices;
    {
      std::lock_guard lock(mutex_);
      for (auto& [s, q] : queues_)
        for (auto& e : q)
          if (std::find(devices.begin(), devices.end(), e.device) == devices.end()) devices.push_back(e.device);
    }
    for (int d : devices) {
      if (const cudaError_t err = probe.check(d); err != cudaSuccess) {
        std::lock_guard lock(mutex_);
        fail_device_locked(d, err);
      }
    }
  }

  void loop() {
    name_this_thread("coprove-bridge");
    device_probe probe;
    auto last_progress = clock::now();
    auto last_probe = last_progress;
    std::uint64_t seen_submitted = 0;
    for (;;) {
      auto now = clock::now();
      if (const auto submitted = submitted_.load(std::memory_order_relaxed); submitted != seen_submitted) {
        seen_submitted = submitted;
        last_progress = now;  // new work: poll eagerly again
      }
      if (pending_.load(std::memory_order_acquire) == 0) {
        // Stay hot for a moment after the last completion: the next signal of a burst then needs no
        // wake-up (a futex wake costs the caller a system call and this thread tens of us).
        const auto idle = now - last_progress;
        if (idle < spin_for) {
          for (int i = 0; i < 64; ++i) cpu_relax();
          continue;
        }
        if (idle < yield_for) {
          sched_yield();
          continue;
        }
        std::unique_lock lock(mutex_);
        if (pending_.load(std::memory_order_relaxed) != 0) continue;
        if (stopping_) return;
        sleeping_ = true;
        wake_.wait(lock, [&] { return stopping_ || pending_.load(std::memory_order_relaxed) != 0; });
        sleeping_ = false;
        continue;
      }

      if (needs_probe() && now - last_probe >= probe_every) {
        last_probe = now;
        probe_devices(probe);
      }
      // A spinning thread polled moments ago: let it find the completions (its waiters then resume
      // without a cross-thread post), and check back shortly to take over once it stops. A plain
      // sleep: nobody needs to wake this thread meanwhile.
      const auto external = external_poll_ns_.load(std::memory_order_relaxed);
      if (external != 0 && now_ns() - external < defer_to_external_ns) {
        std::this_thread::sleep_for(defer_nap);
        last_progress = clock::now();
        continue;
      }
      bool progress = false;
      {
        std::lock_guard lock(mutex_);
        progress = scan_locked() != 0;
      }
      now = clock::now();
      if (progress) last_progress = now;
      if (pending_.load(std::memory_order_acquire) == 0) continue;

      // Back off: spin, then yield, then timed sleeps that a new signal cuts short.
      const auto idle = now - last_progress;
      if (idle < spin_for) {
        for (int i = 0; i < 64; ++i) cpu_relax();
      } else if (idle < yield_for) {
        sched_yield();
      } else {
        const auto nap = std::min<clock::duration>(max_sleep, idle / 8);
        const auto submitted = submitted_.load(std::memory_order_relaxed);
        std::unique_lock lock(mutex_);
        sleeping_ = true;
        wake_.wait_for(lock, nap, [&] { return submitted_.load(std::memory_order_relaxed) != submitted; });
        sleeping_ = false;
      }
    }
  }

  static constexpr std::size_t max_idle_queues = 64;
  static constexpr std::uint64_t defer_to_external_ns = 20'000;
  static constexpr auto defer_nap = std::chrono::microseconds(10);

  std::condition_variable wake_;
  std::unordered_map<cudaStream_t, std::deque<entry>> queues_;  // under mutex_
  bool sleeping_ = false;                                        // under mutex_
  bool stopping_ = false;                                        // under mutex_
  std::atomic<std::size_t> pending_{0};
  std::atomic<std::uint64_t> submitted_{0};
  std::atomic<std::uint64_t> external_poll_ns_{0};
  std::thread thread_;
};

class event_poller_bridge final : public polling_bridge {
 public:
  event_poller_bridge() { start(); }

  ~event_poller_bridge() override {
    stop();
    for (auto& [device, events] : free_events_) {
      for (cudaEvent_t e : events) COPROVE_CUDA_ASSERT_OK(cudaEventDestroy(e));
    }
  }

  void call_when_done(cudaStream_t s, completion_callback done) override {
    int device = 0;
    cudaEvent_t ev = nullptr;
    cudaError_t e = stream_device(s, &device);
    if (e == cudaSuccess) e = take_event(device, &ev);
    if (e == cudaSuccess) {
      std::lock_guard lock(mutex_);
      (void)cudaGetLastError();
      e = cudaEventRecord(ev, s);
      if (e == cudaSuccess) push_locked(s, entry{done, device, ev, 0, 0});
    }
    if (e != cudaSuccess) {
      if (ev != nullptr) give_event(device, ev);
      done(as_error(e));
    }
  }

 protected:
  cudaError_t poll(const entry& x) noexcept override {
    const cudaError_t r = cudaEventQuery(x.event);
    if (r == cudaErrorNotReady) (void)cudaGetLastError();
    return r;
  }
  void recycle(entry& x) noexcept override {
    give_event(x.device, x.event);
    x.event = nullptr;
  }
  bool needs_probe() const noexcept override { return false; }

 private:
  cudaError_t take_event(int device, cudaEvent_t* ev) noexcept {
    {
      std::lock_guard lock(events_mutex_);
      auto& events = free_events_[device];
      if (!events.empty()) {
        *ev = events.back();
        events.pop_back();
        return cudaSuccess;
      }
    }
    int previous = 0;
    COPROVE_CUDA_TRY_STATUS(cudaGetDevice(&previous));
    if (previous != device) COPROVE_CUDA_TRY_STATUS(cudaSetDevice(device));
    const cudaError_t e = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
    if (previous != device) (void)cudaSetDevice(previous);
    return e;
  }

  void give_event(int device, cudaEvent_t ev) noexcept {
    try {
      std::lock_guard lock(events_mutex_);
      free_events_[device].push_back(ev);
    } catch (...) {
      (void)cudaEventDestroy(ev);
    }
  }

  std::mutex events_mutex_;
  std::unordered_map<int, std::vector<cudaEvent_t>> free_events_;
};

// The driver's stream memory operations, found at run time (nothing links libcuda at build time).
struct stream_memops {
  using write_value64_fn = CUresult(CUDAAPI*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
  using device_get_fn = CUresult(CUDAAPI*)(CUdevice*, int);
  using device_get_attribute_fn = CUresult(CUDAAPI*)(int*, CUdevice_attribute, CUdevice);

  write_value64_fn write_value64 = nullptr;
  device_get_fn device_get = nullptr;
  device_get_attribute_fn device_get_attribute = nullptr;

  /// cudaSuccess with every entry point found, else why not (cudaErrorNotSupported when the driver
  /// has no such symbol).
  static cudaError_t load(stream_memops* out) noexcept {
    auto find = [](const char* name, void** fn) noexcept {
      cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
      (void)cudaGetLastError();
      const cudaError_t e = cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &found);
      if (e != cudaSuccess) return e;
      return found == cudaDriverEntryPointSuccess && *fn != nullptr ? cudaSuccess : cudaErrorNotSupported;
    };
    void* fn = nullptr;
    COPROVE_CUDA_TRY_STATUS(find("cuStreamWriteValue64", &fn));
    out->write_value64 = reinterpret_cast<write_value64_fn>(fn);
    COPROVE_CUDA_TRY_STATUS(find("cuDeviceGet", &fn));
    out->device_get = reinterpret_cast<device_get_fn>(fn);
    COPROVE_CUDA_TRY_STATUS(find("cuDeviceGetAttribute", &fn));
    out->device_get_attribute = reinterpret_cast<device_get_attribute_fn>(fn);
    return cudaSuccess;
  }

  /// cudaSuccess when `device` (a runtime ordinal) runs 64-bit stream memory operations,
  /// cudaErrorNotSupported when it does not, else the error that stopped the query.
  cudaError_t check(int device) const noexcept {
    CUdevice d{};
    if (const CUresult r = device_get(&d, device); r != CUDA_SUCCESS) return driver_error(r);
    int can = 0;
    if (const CUresult r = device_get_attribute(&can, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, d);
        r != CUDA_SUCCESS)
      return driver_error(r);
    return can != 0 ? cudaSuccess : cudaErrorNotSupported;
  }

  /// The driver API's CUresult values share their numbers with cudaError_t.
  static cudaError_t driver_error(CUresult r) noexcept { return static_cast<cudaError_t>(r); }
};

// mapped_flag and stream_write: a per-stream sequence number written into mapped pinned memory
// after the stream's earlier work (by a one-thread kernel, or by the stream itself), read here
// with a plain load. A flag is never written after a context error: the devices are probed.
class flag_bridge final : public polling_bridge {
 public:
  static constexpr unsigned max_streams = 4096;
  enum class writer { kernel, stream_memop };

  explicit flag_bridge(writer w) : writer_(w) {
    if (w == writer::stream_memop) {
      COPROVE_CUDA_TRY(stream_memops::load(&memops_));
      int count = 0;
      COPROVE_CUDA_TRY(cudaGetDeviceCount(&count));
      for (int d = 0; d < count; ++d) {
        if (const cudaError_t e = memops_.check(d); e != cudaSuccess) {
          throw cuda_error(e, "completion bridge stream_write: device " + std::to_string(d) +
                                  " cannot run 64-bit stream memory operations (cuStreamWriteValue64)");
        }
      }
    }
    COPROVE_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&flags_host_), max_streams * sizeof(unsigned long long),
                                   cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(flags_host_, 0, max_streams * sizeof(unsigned long long));
    const cudaError_t e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&flags_device_), flags_host_, 0);
    if (e != cudaSuccess) {
      COPROVE_CUDA_ASSERT_OK(cudaFreeHost(flags_host_));
      detail::throw_cuda_error(e, "cudaHostGetDevicePointer", __FILE__, __LINE__);
    }
    start();
  }

  ~flag_bridge() override {
    stop();
    COPROVE_CUDA_ASSERT_OK(cudaFreeHost(flags_host_));
  }

  void call_when_done(cudaStream_t s, completion_callback done) override {
    int device = 0;
    cudaError_t e = stream_device(s, &device);
    if (e == cudaSuccess) {
      std::lock_guard lock(mutex_);
      auto it = slots_.find(s);
      if (it == slots_.end() && slots_.size() >= max_streams) {
        e = cudaErrorMemoryAllocation;  // more distinct streams than flags
      } else {
        if (it == slots_.end()) it = slots_.emplace(s, stream_slot{static_cast<unsigned>(slots_.size()), 0}).first;
        const unsigned long long seq = it->second.next_seq + 1;
        e = enqueue_write(device, s, flags_device_ + it->second.index, seq);
        if (e == cudaSuccess) {
          it->second.next_seq = seq;
          push_locked(s, entry{done, device, nullptr, it->second.index, seq});
        }
      }
    }
    if (e != cudaSuccess) done(as_error(e));
  }

 protected:
  cudaError_t poll(const entry& x) noexcept override {
    const unsigned long long seen = reinterpret_cast<volatile unsigned long long*>(flags_host_)[x.slot];
    if (seen < x.seq) return cudaErrorNotReady;
    std::atomic_thread_fence(std::memory_order_acquire);
    return cudaSuccess;
  }
  bool needs_probe() const noexcept override { return true; }

 private:
  struct stream_slot {
    unsigned index;
    unsigned long long next_seq;
  };

  // Work goes to a stream of the current device: switch for the enqueue if needed.
  cudaError_t enqueue_write(int device, cudaStream_t s, unsigned long long* flag, unsigned long long seq) noexcept {
    int previous = 0;
    COPROVE_CUDA_TRY_STATUS(cudaGetDevice(&previous));
    if (previous != device) COPROVE_CUDA_TRY_STATUS(cudaSetDevice(device));
    cudaError_t e = cudaSuccess;
    if (writer_ == writer::kernel) {
      e = launch_write_flag(s, flag, seq);
    } else {
      // The default flags keep the memory barrier: the stream's earlier writes are visible first.
      const CUresult r = memops_.write_value64(s, reinterpret_cast<CUdeviceptr>(flag), seq, CU_STREAM_WRITE_VALUE_DEFAULT);
      e = r == CUDA_SUCCESS ? cudaSuccess : stream_memops::driver_error(r);
    }
    if (previous != device) (void)cudaSetDevice(previous);
    return e;
  }

  writer writer_;
  stream_memops memops_;
  unsigned long long* flags_host_ = nullptr;
  unsigned long long* flags_device_ = nullptr;
  std::unordered_map<cudaStream_t, stream_slot> slots_;  // under mutex_
};

bool stream_write_supported() noexcept {
  stream_memops m;
  if (stream_memops::load(&m) != cudaSuccess) return false;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  for (int d = 0; d < count; ++d)
    if (m.check(d) != cudaSuccess) return false;
  return count > 0;
}

}  // namespace
}  // namespace detail

completion_bridge::completion_bridge(strategy s) : strategy_(s) {
  switch (s) {
    case strategy::host_func: impl_ = std::make_unique<detail::host_func_bridge>(); break;
    case strategy::event_poller: impl_ = std::make_unique<detail::event_poller_bridge>(); break;
    case strategy::mapped_flag:
      impl_ = std::make_unique<detail::flag_bridge>(detail::flag_bridge::writer::kernel);
      break;
    case strategy::stream_write:
      impl_ = std::make_unique<detail::flag_bridge>(detail::flag_bridge::writer::stream_memop);
      break;
  }
  if (!impl_) throw std::invalid_argument("completion_bridge: unknown strategy");
}

completion_bridge::~completion_bridge() = default;

void completion_bridge::call_when_done(cudaStream_t stream, completion_callback callback) noexcept {
  // On a stream being captured into a graph, a host function, event or kernel would become a
  // graph node and the callback would never run: refuse instead.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  (void)cudaGetLastError();
  cudaError_t e = cudaStreamIsCapturing(stream, &capture);
  if (e == cudaSuccess && capture != cudaStreamCaptureStatusNone) e = cudaErrorStreamCaptureUnsupported;
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    callback(make_error_code(e));
    return;
  }
  try {
    impl_->call_when_done(stream, callback);
  } catch (...) {
    // Out of memory for the bookkeeping: the callback was neither queued nor called.
    callback(make_error_code(cudaErrorMemoryAllocation));
  }
}

void completion_bridge::signal_when_done(cudaStream_t stream, runtime::completion_signal done) {
  auto held = std::make_unique<runtime::completion_signal>(std::move(done));
  const completion_callback set_it{[](void* context, std::error_code result) noexcept {
                                     const std::unique_ptr<runtime::completion_signal> signal(
                                         static_cast<runtime::completion_signal*>(context));
                                     signal->set(result);
                                   },
                                   held.release()};
  call_when_done(stream, set_it);
}

std::size_t completion_bridge::in_flight() const noexcept { return impl_->in_flight(); }

std::size_t completion_bridge::poll() noexcept { return impl_->poll_ready(); }

runtime::spin_source& completion_bridge::as_spin_source() noexcept { return *impl_; }

bool completion_bridge::supported(strategy s) noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    return false;
  }
  return s != strategy::stream_write || detail::stream_write_supported();
}

}  // namespace coprove::cuda
