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

#include <coprove/prover/circuit.hpp>
#include <coprove/prover/fr.hpp>
#include <coprove/prover/synthesis.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::prover {

/// What partitions do while their circuit's PCE is being built.
enum class pce_policy {
  wait,   ///< wait for the PCE (only the first partition takes the slow path)
  eager,  ///< take the slow path
};

/// "wait" or "eager".
std::string_view to_string(pce_policy p) noexcept;
/// Parses "wait" / "eager"; nullopt otherwise.
std::optional<pce_policy> parse_pce_policy(std::string_view name) noexcept;

/// Coefficient-table indices with a meaning of their own: no multiplication in the SpMV.
inline constexpr std::uint32_t pce_coefficient_one = 0;
inline constexpr std::uint32_t pce_coefficient_minus_one = 1;

/// One matrix in compressed sparse rows; entries point into the shared coefficient table.
struct csr_matrix {
  std::vector<std::uint32_t> row_offsets;   ///< rows + 1 offsets into columns
  std::vector<std::uint32_t> columns;       ///< assignment column of each entry
  std::vector<std::uint32_t> coefficients;  ///< coefficient-table index of each entry

  std::size_t nonzeros() const noexcept { return columns.size(); }
  std::size_t bytes() const noexcept;
};

/// How the SpMV writes a, b and c. `automatic`: non-temporal (streaming) stores when the three
/// outputs together exceed 24 MiB and are 16-byte aligned (they bypass the caches, saving the read
/// of each line before it is overwritten), ordinary stores otherwise. `streaming` asks for them at
/// any size (outputs that are not 16-byte aligned still get ordinary stores).
enum class spmv_stores { automatic, cached, streaming };

/// A, B and C of one circuit, recorded from a slow synthesis.
struct pce_matrices {
  std::string circuit_id;
  std::uint64_t structure_digest = 0;
  std::size_t num_inputs = 0;
  std::size_t num_aux = 0;
  std::size_t num_rows = 0;  ///< constraints plus input rows (the rest of the domain is zero)
  std::size_t domain_size = 0;
  csr_matrix a, b, c;
  std::vector<fr> coefficient_table;  ///< [0] = one, [1] = -one, then the others, distinct

  std::size_t nonzeros() const noexcept { return a.nonzeros() + b.nonzeros() + c.nonzeros(); }
  /// Heap bytes held (what the memory plan charges).
  std::size_t bytes() const noexcept;
  /// True when these matrices were recorded from (or fit) circuit c: same id, digest and shape.
  bool matches(const circuit& c) const;
  /// The SpMV: a, b, c (each domain_size long) = A w, B w, C w, zero padded; multi-threaded.
  /// `stores` picks how the outputs are written (the values are the same either way).
  void evaluate(std::span<const fr> assignment, std::span<fr> a_out, std::span<fr> b_out,
                std::span<fr> c_out,
                spmv_stores stores = spmv_stores::automatic) const;
  /// Checks the internal invariants (offsets, columns, coefficient indices); throws pce_error.
  void validate() const;
};

/// The PCE bytes a circuit of this shape needs (an upper bound).
std::size_t estimate_pce_bytes(const circuit_shape& shape) noexcept;

/// A PCE file or entry that cannot be used: the message says why.
class pce_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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

  /// True when a deferred synthesis of this circuit id will most likely need only a: its PCE is
  /// ready and checked, or is being built under `wait`. A guess for leasing buffers, not a promise.
  bool expects_deferral(std::string_view circuit_id) const;

  pce_policy policy() const noexcept { return policy_; }

 private:
  deferred_synthesis synthesize_impl(const circuit& c, std::span<fr> a, std::span<fr> b, std::span<fr> c_out,
                                     bool defer);

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

}  // namespace coprove::prover
