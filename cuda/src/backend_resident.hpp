// The CUDA backend's per-device resident store: each circuit's matrices and proving key (with the
// shifted copies of its points) on each device, uploaded once and kept while the host objects are in
// use, and the count of copies settled before the first key is made. Internal to cuda/src.
#pragma once

#include <coprove/cuda/msm.hpp>
#include <coprove/cuda/spmv.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/r1cs/pce.hpp>
#include <coprove/runtime/log.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coprove::cuda::detail {

// One circuit's matrices on one device: its nine CSR arrays and coefficient table, copied once
// (blocking). It holds nothing of the host matrices, so that they die with their last user; the
// cache entry that owns it watches them instead.
struct device_pce {
  std::string circuit_id;  // for the logs, when the host matrices may be gone
  std::size_t bytes = 0;
  int device = 0;
  void* arrays[10] = {};  // offsets, columns, coefficients of A, B, C; then the coefficient table
  csr_device csr[3];

  /// Uploads `m` to device `dev` (blocking); cuda_error naming the device, the circuit and the bytes
  /// when it has no room.
  device_pce(const r1cs::pce_matrices& m, int dev);
  device_pce(const device_pce&) = delete;
  device_pce& operator=(const device_pce&) = delete;
  ~device_pce() { release(); }

 private:
  void release() noexcept;
};

// One circuit's proving key on one device: the A, B_G1, L and H queries in G1 and B_G2, uploaded
// once (blocking) through page-locked staging. Like device_pce it holds nothing of the host key.
struct device_key {
  std::string circuit_id;
  std::size_t bytes = 0;
  int device = 0;
  msm_precompute precompute;  // the copies of each query's points, as asked (msm_plan.hpp)
  msm_bases_g1 a, b_g1, l, h;
  msm_bases_g2 b_g2;

  // The workspace a proof's MSMs over this key take on a slot (msm_proof_workspace_bytes).
  std::size_t msm_bytes = 0;

  /// Uploads `k`'s queries to device `dev` with `copies` (blocking); cuda_error naming the device,
  /// the circuit and the bytes when it has no room.
  device_key(const groth16::proving_key& k, std::string circuit, int dev, const msm_precompute& copies);

 private:
  // One query's points (and their copies); no room names the device, the circuit and the key's bytes.
  template <class Affine>
  msm_bases<Affine> upload(std::span<const Affine> points) const;
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


/// "13 or 12": counts for a message.
std::string counts_text(const std::vector<std::size_t>& counts);

/// The resident store of a backend over `devices` (device ids, by device index): the matrices and
/// keys on each device, and the copies of a key's points, fixed or settled once by the engine.
class resident_store {
 public:
  /// `wanted_copies` empty: the copies are `key_copies`; else they are 1 until settled (1 or one of
  /// wanted_copies, the windows the plan's).
  resident_store(std::vector<int> devices, const msm_precompute& key_copies, std::vector<std::size_t> wanted_copies)
      : devices_(std::move(devices)),
        window_bits_(key_copies.window_bits),
        copies_(key_copies.copies),
        wanted_copies_(std::move(wanted_copies)) {}

  /// The matrices' copy on the device of index `device`, uploaded now (blocking) unless resident.
  const device_pce& matrices(std::size_t device, const std::shared_ptr<const r1cs::pce_matrices>& m, bool enqueuing);
  /// The key's copy on the device of index `device`, uploaded now (blocking) unless resident.
  const device_key& key(std::size_t device, const std::shared_ptr<const groth16::proving_key>& k,
                        std::string_view circuit, bool enqueuing);
  bool matrices_resident(std::size_t device, const r1cs::pce_matrices& m) const {
    return matrices_.resident(device, m);
  }
  bool key_resident(std::size_t device, const groth16::proving_key& k) const { return keys_.resident(device, k); }
  std::size_t matrices_bytes() const noexcept { return matrices_.bytes(); }
  std::size_t key_bytes() const noexcept { return keys_.bytes(); }

  unsigned window_bits() const noexcept { return window_bits_; }
  unsigned copies() const noexcept { return copies_.load(); }
  const std::vector<std::size_t>& wanted_copies() const noexcept { return wanted_copies_; }
  /// Settles the copies at 1 or one of wanted_copies, before any key is made (std::logic_error
  /// otherwise).
  void settle_copies(std::size_t copies);

 private:
  std::vector<int> devices_;
  unsigned window_bits_;                    // of the keys' copies (0: the MSM plan's)
  std::atomic<unsigned> copies_;            // of each key's points; settled once, before any key is made
  std::vector<std::size_t> wanted_copies_;  // empty: copies_ is fixed
  std::atomic<bool> keys_made_{false};
  resident_cache<r1cs::pce_matrices, device_pce> matrices_{"matrices"};
  resident_cache<groth16::proving_key, device_key> keys_{"proving key"};
};

}  // namespace coprove::cuda::detail
