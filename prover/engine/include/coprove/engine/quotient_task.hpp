// What a compute backend is asked to do for one partition, and what it hands back: the task names
// its stages (upload, SpMV, quotient, evaluation at zeta, the host copy of h) with each stage's
// inputs, so that later stages (the proof's MSMs) join the list without changing how the engine
// drives a backend; the result carries the values at zeta and the time each stage took.
#pragma once

#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/field/quotient.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/prover.hpp>
#include <coprove/r1cs/constraint_matrices.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace coprove::engine {
using field::evaluation_domain;
using field::fr;
using r1cs::pce_matrices;

/// One worker slot of a backend: a device and one of its slots (its own stream and buffers).
struct worker_slot {
  std::size_t device = 0;
  std::size_t slot = 0;

  bool operator==(const worker_slot&) const = default;
};

/// The stages of a quotient task, in the order a backend runs them.
enum class quotient_stage : unsigned {
  upload_evaluations,  ///< a, b, c (evaluations over the domain) from host buffers
  upload_assignment,   ///< the assignment w from a host buffer
  spmv,                ///< a, b, c = A w, B w, C w from the task's matrices (zero padded)
  quotient,            ///< h in the task's form (coefficients of (A*B - C) / Z, or snarkjs's), kept by the backend
  evaluate_at_zeta,    ///< a, b, c (barycentric) and h (its coefficients) at the task's zeta
  copy_h_to_host,      ///< h's coefficients into the task's host buffer
  proof_msms,          ///< the proof's MSMs over the witness and h with the task's key (groth16::msm_sums)
};

/// "upload_evaluations", "upload_assignment", "spmv", "quotient", "evaluate_at_zeta",
/// "copy_h_to_host" or "proof_msms".
std::string_view to_string(quotient_stage stage) noexcept;

/// A set of stages.
class quotient_stages {
 public:
  constexpr quotient_stages() noexcept = default;
  constexpr quotient_stages(std::initializer_list<quotient_stage> stages) noexcept {
    for (const quotient_stage s : stages) add(s);
  }

  constexpr bool contains(quotient_stage s) const noexcept { return (bits_ & bit(s)) != 0; }
  constexpr quotient_stages& add(quotient_stage s) noexcept {
    bits_ |= bit(s);
    return *this;
  }
  constexpr quotient_stages& remove(quotient_stage s) noexcept {
    bits_ &= ~bit(s);
    return *this;
  }
  constexpr bool empty() const noexcept { return bits_ == 0; }

  constexpr bool operator==(const quotient_stages&) const = default;

 private:
  static constexpr std::uint32_t bit(quotient_stage s) noexcept { return std::uint32_t{1} << static_cast<unsigned>(s); }
  std::uint32_t bits_ = 0;
};

/// One partition's work. A task arrives either as its evaluations (upload_evaluations: a, b, c)
/// or as its assignment (upload_assignment and spmv: witness and matrices); then the quotient;
/// then, as asked, the evaluation at zeta, the host copy of h and the proof's MSMs (on a device,
/// h and the witness stay there and only the sums come back). Every span and the domain belong
/// to the caller and must stay valid until the operation completes; the task holds its matrices
/// until then (a GPU backend keeps a circuit's matrices on a device while that object lives).
/// A stage's inputs are set only when the stage is listed (check_quotient_task says what fits).
struct quotient_task {
  quotient_stages stages;
  const evaluation_domain* domain = nullptr;
  /// upload_evaluations: a, b, c over the domain, natural order, domain->size() elements each.
  std::span<const fr> a, b, c;
  /// upload_assignment and proof_msms: w, matrices->num_inputs + num_aux elements (the key's
  /// variables for proof_msms).
  std::span<const fr> witness{};
  /// spmv: the circuit's matrices, of this domain.
  std::shared_ptr<const pce_matrices> matrices{};
  /// evaluate_at_zeta: the point.
  fr zeta = fr::zero();
  /// copy_h_to_host: receives h, natural order, domain->size() elements.
  std::span<fr> h{};
  /// What the quotient stage computes: the coefficients of (A*B - C) / Z (bellman keys), or
  /// snarkjs's A*B - C on the odd coset with C formed as a*b on the domain (zkeys; the task then
  /// has no c and its matrices no C, its domain is on ffjavascript's roots, and it cannot be
  /// evaluated at zeta: the key's proof, verified after, is the check).
  field::quotient_form form = field::quotient_form::coefficients;
  /// proof_msms: the circuit's proving key, of this domain and form (a GPU backend keeps its points
  /// on a device while that object lives, as with the matrices).
  std::shared_ptr<const groth16::proving_key> key{};

  /// upload_evaluations and quotient: a partition synthesized into its a, b and c.
  static quotient_task from_evaluations(std::span<const fr> a, std::span<const fr> b, std::span<const fr> c,
                                        const evaluation_domain& domain) {
    quotient_task t;
    t.stages = {quotient_stage::upload_evaluations, quotient_stage::quotient};
    t.domain = &domain;
    t.a = a;
    t.b = b;
    t.c = c;
    return t;
  }
  /// upload_assignment, spmv and quotient: a partition that sends only its assignment; the backend
  /// evaluates the matrices (a third or less of a, b, c crosses to a device).
  static quotient_task from_assignment(std::span<const fr> witness, std::shared_ptr<const pce_matrices> matrices,
                                       const evaluation_domain& domain) {
    quotient_task t;
    t.stages = {quotient_stage::upload_assignment, quotient_stage::spmv, quotient_stage::quotient};
    t.domain = &domain;
    t.witness = witness;
    t.matrices = std::move(matrices);
    return t;
  }
  /// snarkjs's quotient form (see `form`).
  quotient_task& in_odd_coset_form() {
    form = field::quotient_form::odd_coset_evaluations;
    return *this;
  }
  /// Adds evaluate_at_zeta at `point`.
  quotient_task& evaluate_at(fr point) {
    stages.add(quotient_stage::evaluate_at_zeta);
    zeta = point;
    return *this;
  }
  /// Adds proof_msms with `proving_key` over `w` (the task's witness when it has one already).
  quotient_task& prove_with(std::shared_ptr<const groth16::proving_key> proving_key, std::span<const fr> w) {
    stages.add(quotient_stage::proof_msms);
    key = std::move(proving_key);
    witness = w;
    return *this;
  }
  /// Adds copy_h_to_host into `to`. Without it h stays with the backend (on the device for a GPU
  /// backend) and no host buffer is written.
  quotient_task& copy_h_to_host(std::span<fr> to) {
    stages.add(quotient_stage::copy_h_to_host);
    h = to;
    return *this;
  }
};

/// Throws std::invalid_argument (naming `backend` and what does not fit) unless the task is one a
/// backend can run: a domain; exactly one of upload_evaluations and upload_assignment; spmv exactly
/// with upload_assignment; the quotient; the inputs of each listed stage, of the domain's size
/// (the witness of the matrices' width, matrices of this domain), and no inputs of stages not
/// listed; in the odd-coset form no c, no C matrix and no evaluate_at_zeta; with proof_msms a key
/// of the domain's size and the task's form whose variables are the witness's.
void check_quotient_task(std::string_view backend, const quotient_task& task);

/// The partition's polynomials at zeta: a, b, c from their evaluations over the domain
/// (barycentric), h from its coefficients. Equal bit for bit to what make_evaluation_record gives.
struct evaluation_values {
  fr a, b, c, h;

  bool operator==(const evaluation_values&) const = default;
};

/// Where a backend spent the time of one task. A backend without copies reports 0 for them;
/// spmv_ns is 0 without the spmv stage, evaluation_ns without evaluate_at_zeta, msm_ns without
/// proof_msms; compute_ns is the quotient's; d2h_ns covers what came back (h, the values, the
/// sums); h2d_bytes and d2h_bytes are what was copied in and out.
struct quotient_timings {
  std::uint64_t h2d_ns = 0, spmv_ns = 0, compute_ns = 0, evaluation_ns = 0, d2h_ns = 0, msm_ns = 0;
  std::uint64_t h2d_bytes = 0, d2h_bytes = 0;
};

/// What a completed task hands back.
struct quotient_result {
  /// With evaluate_at_zeta: a, b, c and h at the task's zeta; zero otherwise.
  evaluation_values values{fr::zero(), fr::zero(), fr::zero(), fr::zero()};
  quotient_timings timings;
  /// True when the task's h holds h (copy_h_to_host ran).
  bool h_copied = false;
  /// With proof_msms: the proof's sums, for groth16::assemble_proof, or, from a backend whose sums
  /// come back in parts (a device's window sums), `combine_sums`, which makes them: the caller runs
  /// it on its CPU executor, so that the completion that hands the result over stays short.
  std::optional<groth16::msm_sums> sums;
  std::function<groth16::msm_sums()> combine_sums;

  /// The sums, made now if they came in parts; none without proof_msms.
  std::optional<groth16::msm_sums> take_sums() {
    if (sums) return std::exchange(sums, std::nullopt);
    if (combine_sums) return std::exchange(combine_sums, nullptr)();
    return std::nullopt;
  }
};

}  // namespace coprove::engine
