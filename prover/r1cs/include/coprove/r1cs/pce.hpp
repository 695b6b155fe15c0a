// The PCE (pre-compiled constraint evaluator) cache. The first slow synthesis of a circuit id
// records A, B and C as CSR matrices; later partitions of that circuit run a witness-only
// synthesis and a multi-threaded CSR SpMV that writes a, b, c directly into the caller's spans
// (pinned buffers in the engine). Under policy `wait` (the default) partitions that arrive while
// the PCE is being built wait for it rather than taking the slow path; `eager` sends them down the
// slow path (the behaviour this design replaced, kept for comparison).
//
// A PCE can be saved to and loaded from a file: versioned, with the circuit id, digest, sizes and
// a checksum; a corrupt or mismatched file is rejected (pce_error) and changes nothing. A loaded
// PCE is not trusted: it is used only for a circuit with the same digest and shape, and its first
// use checks a * b == c on every row; a failure drops it (logged, counted) and the slow path
// rebuilds it.
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/constraint_matrices.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::r1cs {
using field::fr;

/// What partitions do while their circuit's PCE is being built.
enum class pce_policy {
  wait,   ///< wait for the PCE (only the first partition takes the slow path)
  eager,  ///< take the slow path
};

/// "wait" or "eager".
std::string_view to_string(pce_policy p) noexcept;
/// Parses "wait" / "eager"; nullopt otherwise.
std::optional<pce_policy> parse_pce_policy(std::string_view name) noexcept;

/// The PCE bytes a circuit of this shape needs (an upper bound).
std::size_t estimate_pce_bytes(const circuit_shape& shape) noexcept;

/// Counters of the cache (monotonic).
struct pce_stats {
  std::uint64_t hits = 0;           ///< syntheses served by the PCE (SpMV)
  std::uint64_t slow_path = 0;      ///< syntheses that took the slow path (builds included)
  std::uint64_t builds = 0;         ///< slow syntheses that recorded a PCE
  std::uint64_t waits = 0;          ///< syntheses that waited for a PCE being built
  std::uint64_t loaded = 0;         ///< entries loaded from files
  std::uint64_t rejected = 0;       ///< loaded entries dropped (digest, shape or check failed)
  std::uint64_t over_capacity = 0;  ///< recorded PCEs not kept because they exceed the capacity
  std::uint64_t deferred = 0;       ///< hits whose SpMV was left to the caller (synthesize_deferred)
  std::uint64_t host_spmv = 0;      ///< deferred hits done on the host: the assignment exceeds a
};

/// What synthesize_deferred produced: a, b, c on the host (matrices null), or only the assignment,
/// in a's first assignment_size elements, for the caller to evaluate with `matrices`
/// (pce_matrices::evaluate, or the compute backend on the device).
struct deferred_synthesis {
  synthesis_output output;
  std::shared_ptr<const pce_matrices> matrices;
  std::size_t assignment_size = 0;
  /// Called with b and c empty, this partition needs them after all (no PCE to defer to): nothing
  /// was computed or counted; call again with a, b and c.
  bool needs_abc = false;
  /// Called through synthesize_unless_building while the circuit's PCE is being built under
  /// `wait`: nothing was computed (the wait is counted); call again once notify_when_built fires.
  bool pce_building = false;
  /// The assignment (one, inputs, auxiliaries) where it is not in `a` (matrices null) and the
  /// caller asked to keep it; empty otherwise. With matrices set it is the first assignment_size
  /// elements of `a`.
  std::vector<fr> assignment;
};

/// The cache of PCEs by circuit id. Thread-safe; synthesize blocks (call it on a CPU thread).
class pce_cache {
 public:
  /// capacity_bytes bounds bytes(): a PCE that would exceed it is not kept (logged once at
  /// warning, counted in over_capacity) and its circuit stays on the slow path.
  explicit pce_cache(pce_policy policy = pce_policy::wait,
                     std::size_t capacity_bytes = std::numeric_limits<std::size_t>::max());
  ~pce_cache();
  pce_cache(const pce_cache&) = delete;
  pce_cache& operator=(const pce_cache&) = delete;

  /// Fills a, b, c (each exactly c.domain_size() long, zero padded) for this partition: the first
  /// synthesis of a circuit id records the PCE on the slow path; later ones (and, under `wait`,
  /// the ones that arrive meanwhile) use the SpMV. Throws std::invalid_argument on wrong span
  /// sizes (nothing written). If the recording synthesis throws, one waiter takes over the build.
  synthesis_output synthesize(const circuit& c, std::span<fr> a, std::span<fr> b,
                              std::span<fr> c_out);

  /// synthesize, except that a PCE hit computes only the assignment, into `a`, and leaves the SpMV
  /// to the caller (b and c are not written). The SpMV is done here as by synthesize, and the
  /// matrices are null, on the slow path, for a loaded PCE's first (checked) use, and when the
  /// assignment has more variables than the domain has rows (warned once a circuit, counted in
  /// host_spmv). b and c may be empty when the caller expects a deferral (expects_deferral): when
  /// the partition needs them after all, the result says so (needs_abc) and nothing else happened.
  deferred_synthesis synthesize_deferred(const circuit& c, std::span<fr> a, std::span<fr> b,
                                         std::span<fr> c_out);

  /// synthesize_deferred (defer_spmv) or synthesize (not), except that it never blocks on a build
  /// in progress: while the circuit's PCE is being built under `wait`, it returns at once with
  /// pce_building set. For callers that wait asynchronously (notify_when_built) instead of parking
  /// a thread. keep_assignment: where the assignment does not end up in `a`, it is returned in the
  /// result's `assignment` (a prover needs it after the quotient).
  deferred_synthesis synthesize_unless_building(const circuit& c, std::span<fr> a, std::span<fr> b,
                                                std::span<fr> c_out, bool defer_spmv, bool keep_assignment = false);

  /// While the PCE of circuit_id is being built: keeps `ended` and returns true; it is called
  /// once, on the thread that ends the build (recorded, not kept, or failed), after the entry has
  /// changed and outside the cache's lock. Otherwise returns false and never calls it.
  bool notify_when_built(std::string_view circuit_id, std::function<void()> ended);

  /// True when a deferred synthesis of this circuit id will most likely need only a: its PCE is
  /// ready and checked, or is being built under `wait`. A guess for leasing buffers, not a promise.
  bool expects_deferral(std::string_view circuit_id) const;

  pce_policy policy() const noexcept { return policy_; }

 private:
  deferred_synthesis synthesize_impl(const circuit& c, std::span<fr> a, std::span<fr> b, std::span<fr> c_out,
                                     bool defer, bool block_on_build, bool keep_assignment);

 public:
  std::size_t capacity_bytes() const noexcept { return capacity_bytes_; }
  /// Bytes held by the cached PCEs.
  std::size_t bytes() const;
  pce_stats stats() const;
  /// True when a PCE for this id is ready.
  bool contains(std::string_view circuit_id) const;
  /// Ids of the ready PCEs, sorted.
  std::vector<std::string> circuit_ids() const;
  /// The ready PCE of this id (shared, immutable), or null.
  std::shared_ptr<const pce_matrices> find(std::string_view circuit_id) const;

  /// Writes every ready PCE to path (temporary file, then rename); throws pce_error on I/O errors.
  void save(const std::string& path) const;
  /// As save, with only the PCE of circuit_id (none, when it is not ready); every PCE when nullopt.
  void save(const std::string& path, std::optional<std::string_view> circuit_id) const;
  /// Reads a file written by save; entries whose id is already cached are skipped. Returns the
  /// number added. Throws pce_error (bad magic, version, checksum, truncation, invalid matrices,
  /// or over capacity) and then adds nothing.
  std::size_t load(const std::string& path);
  /// Drops every ready PCE (builds in progress finish and are kept).
  void clear();

 private:
  struct entry;
  struct state;

  pce_policy policy_;
  std::size_t capacity_bytes_;
  std::unique_ptr<state> state_;
};

}  // namespace coprove::r1cs
