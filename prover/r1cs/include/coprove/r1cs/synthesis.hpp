// Synthesis of a circuit into the a, b, c vectors of its domain. The slow path runs the circuit
// into an evaluating system that computes each constraint's <A_i, w>, <B_i, w>, <C_i, w> straight
// into the caller's spans as it goes (and, for the first synthesis of a circuit, records A, B, C
// for the PCE); the witness-only system computes just the assignment, for the PCE's SpMV.
//
// Layout of a, b, c (each exactly n = 2^log_constraints long): rows 0..m-1 are the circuit's
// constraints in order; rows m..m+k-1 are one per public input i (the constant one included), as
// bellman adds them: input_i * 0 = 0, i.e. a = input_i, b = c = 0; the rest is zero padding.
#pragma once

#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/constraint_system.hpp>
#include <coprove/field/fr.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace coprove::r1cs {
using field::fr;


struct pce_matrices;

/// What a synthesis produced besides a, b, c.
struct synthesis_output {
  std::size_t num_constraints = 0;  ///< rows used: the circuit's constraints plus the input rows
  std::size_t num_inputs = 0;       ///< public inputs, the constant one included
  std::vector<fr> public_inputs;    ///< their values, without the constant one
  bool pce_used = false;            ///< a, b, c came from the PCE (SpMV) rather than the slow path
};

/// Computes only the assignment; enforce is ignored.
class witness_system final : public constraint_system {
 public:
  using constraint_system::constraint_system;
  /// The assignment (after check_complete); the system is spent afterwards.
  std::vector<fr> take_assignment() noexcept { return release_assignment(); }

 private:
  void on_enforce(lc_builder, lc_builder, lc_builder) override {}
};

/// The slow path: synthesizes `c` into a, b, c (each exactly circuit.domain_size() long, zero
/// padded) and, when record is not null, records A, B, C into it. `scratch`, when given, lends
/// its memory for the assignment and gets it back (so repeated syntheses do not fault in fresh
/// pages). Throws std::invalid_argument on wrong span sizes (writing nothing) and
/// std::logic_error when the circuit breaks its shape.
synthesis_output synthesize_slow(const circuit& c, std::span<fr> a, std::span<fr> b,
                                 std::span<fr> c_out, pce_matrices* record = nullptr,
                                 std::vector<fr>* scratch = nullptr);

/// The assignment of the circuit (inputs, then auxiliaries), from a witness-only synthesis;
/// `storage` lends memory to reuse.
std::vector<fr> synthesize_witness(const circuit& c, std::vector<fr> storage = {});

/// The assignment written into `out` (its first c.shape().num_variables() elements, e.g. a pinned
/// buffer); throws std::invalid_argument when out is shorter, before computing anything.
void synthesize_witness_into(const circuit& c, std::span<fr> out);

/// The public inputs of an assignment (without the constant one).
std::vector<fr> public_inputs_of(const circuit_shape& shape, std::span<const fr> assignment);

/// The first row i with a[i] * b[i] != c[i]; nullopt when every row is satisfied.
std::optional<std::size_t> first_unsatisfied_row(std::span<const fr> a, std::span<const fr> b,
                                                 std::span<const fr> c);

/// Bytes one synthesis holds besides a, b, c: the assignment and the evaluation scratch.
std::size_t estimate_synthesis_working_set(const circuit_shape& shape) noexcept;

}  // namespace coprove::r1cs
