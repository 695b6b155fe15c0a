// The compute-backend interface: what the engine needs from a device to turn a partition's a, b, c
// evaluations into its quotient h. The CUDA backend (cuda/) and the host backend (CPU NTT) both
// implement it and compute the same math; only composition roots (the coprove binary, tests,
// benchmarks) choose one.
#pragma once

#include <coprove/pinned/host_allocator.hpp>
#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/r1cs/constraint_matrices.hpp>
#include <coprove/runtime/completion_signal.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::runtime {
class spin_source;  // spin_runner.hpp
}

namespace coprove::engine {
using field::evaluation_domain;
using field::fr;
using r1cs::pce_matrices;


/// The partition's polynomials at zeta: a, b, c from their evaluations over the domain
/// (barycentric), h from its coefficients. Equal bit for bit to what make_evaluation_record gives.
struct evaluation_values {
  fr a, b, c, h;

  bool operator==(const evaluation_values&) const = default;
};

/// One partition's quotient: a, b, c are evaluations over `domain` (natural order, each exactly
/// domain->size() elements); h receives the coefficients of (A*B - C) / Z (natural order). The
/// spans point into host buffers that stay valid until the completion signal is set. When
/// `values` is set, the backend also evaluates a, b, c and h at `zeta` and writes them there
/// before it sets the signal (it must stay valid until then); null skips the evaluation.
///
/// With `matrices` set, the partition arrives as its assignment instead: a, b and c are empty and
/// the backend first evaluates them as A w, B w, C w (pce_matrices::evaluate's values, zero padded
/// to the domain) from `witness` (matrices->num_inputs + num_aux elements, in a host buffer valid
/// until the signal). A GPU backend copies only w (a third or less of a, b, c) and keeps each
/// circuit's matrices on the device after their first use, for as long as that pce_matrices
/// object lives (a task in flight holds it).
struct quotient_task {
  std::span<const fr> a, b, c;
  std::span<fr> h;
  const evaluation_domain* domain = nullptr;
  fr zeta = fr::zero();
  evaluation_values* values = nullptr;
  std::span<const fr> witness{};
  std::shared_ptr<const pce_matrices> matrices{};
};

/// Throws std::invalid_argument (naming `backend`) unless the task's spans fit its domain: a, b,
/// c and h of the domain's size, or, with matrices, h of that size, a, b, c empty, the witness the
/// matrices' width and matrices of this domain.
void check_quotient_task(std::string_view backend, const quotient_task& task);

/// Where a device spent the time of one quotient. A backend without copies reports 0 for them;
/// evaluation_ns is the time of the evaluation at zeta (0 when the task asked for none); spmv_ns
/// the time of evaluating the matrices (0 for a task without them); h2d_bytes what was copied.
struct gpu_stage_timings {
  std::uint64_t h2d_ns = 0, compute_ns = 0, d2h_ns = 0, evaluation_ns = 0, spmv_ns = 0;
  std::uint64_t h2d_bytes = 0;
};

/// A set of devices, each with a fixed number of worker slots (own stream and device buffers),
/// that compute quotients asynchronously and report completion through a completion_signal.
class compute_backend {
 public:
  virtual ~compute_backend();

  /// "cuda" or "host".
  virtual std::string_view name() const noexcept = 0;
  virtual std::size_t device_count() const noexcept = 0;
  /// Worker slots per device; work on one slot runs in order, slots of a device overlap.
  virtual std::size_t worker_slots_per_device() const noexcept = 0;
  virtual std::vector<std::string> device_names() const = 0;
  /// The allocator the pinned pool should use for host buffers this backend reads and writes.
  virtual std::unique_ptr<pinned::host_allocator> make_host_allocator() const = 0;
  /// True when the backend copies the host buffers to a device (DMA), so that they should be
  /// page-locked; false when it computes on them in place (the host backend).
  virtual bool copies_to_device() const noexcept = 0;

  /// Enqueues the quotient on (device, slot), and the evaluation at task.zeta when task.values is
  /// set, as one piece of work; sets `done` when h (and *task.values) are written, or with the
  /// error; fills *timings (may be null) before setting done. Throws std::invalid_argument for a
  /// device or slot out of range or a task whose spans do not match its domain; never blocks on
  /// the computation.
  virtual void enqueue_quotient(std::size_t device, std::size_t slot, const quotient_task& task,
                                gpu_stage_timings* timings, runtime::completion_signal done) = 0;

  /// Makes these matrices resident for `device` (the CUDA backend uploads them, blocking, if this
  /// device does not hold them yet): call it from a CPU thread before enqueue_quotient, so the
  /// copy does not block the caller of enqueue_quotient. Safe from any thread. Default: nothing.
  /// Throws as enqueue_quotient would on a device error (out of memory: std::runtime_error naming
  /// the device, the circuit and the bytes).
  virtual void prepare_matrices(std::size_t device, const std::shared_ptr<const pce_matrices>& matrices);
  /// True when enqueue_quotient with these matrices on `device` would not upload them first.
  /// Default: true.
  virtual bool matrices_resident(std::size_t device, const pce_matrices& matrices) const;
  /// Bytes of matrices held for tasks across all devices (device memory for CUDA; 0 by default).
  virtual std::size_t resident_matrices_bytes() const noexcept;

  /// Completions the thread running the engine's io_context may finish itself within its spin
  /// windows (pass it to runtime::run_spinning): the CUDA backend's completion bridges, so a GPU
  /// completion resumes its coroutine with no cross-thread hop. Null when the backend has none
  /// (the host backend). Valid while the backend lives.
  virtual runtime::spin_source* completion_source() const noexcept { return nullptr; }

  /// Host memory the backend holds for its work at domain size n, all slots of all devices
  /// together (the memory plan charges it): the host backend's per-slot a, b, c for tasks that
  /// arrive with matrices; 0 for a GPU backend.
  virtual std::size_t host_working_bytes(std::size_t /*n*/) const noexcept { return 0; }
};

/// The host (CPU) backend: `devices` x `slots_per_device` worker slots computing
/// field::compute_quotient (and the evaluation at zeta with prover/evaluation.hpp); `threads`
/// worker threads in all (0 = one per slot).
std::unique_ptr<compute_backend> make_host_backend(std::size_t devices = 1,
                                                   std::size_t slots_per_device = 2,
                                                   std::size_t threads = 0);

}  // namespace coprove::engine
