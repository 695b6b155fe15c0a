// The R1CS constraint system a circuit synthesizes into. The base class owns the assignment
// (inputs, then auxiliaries, sized from the circuit's declared shape) so that allocation is a
// store, not a virtual call; what happens on enforce is up to the concrete system: evaluate a/b/c
// (the slow path), record the matrices (the PCE), ignore it (witness-only), or keep every
// constraint for checking (checking_system, the reference used by the tests).
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/r1cs/linear_combination.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace coprove::r1cs {
using field::fr;


/// The sizes a circuit declares before it is synthesized; the systems size their storage from it
/// and check that synthesis matches it exactly.
struct circuit_shape {
  std::size_t num_inputs = 1;        ///< public inputs, the constant one included
  std::size_t num_aux = 0;           ///< auxiliary (private) variables
  std::size_t num_constraints = 0;   ///< the circuit's own constraints (input rows excluded)
  std::size_t num_nonzeros = 0;      ///< terms in A, B and C together, input rows included
  std::size_t max_coefficients = 2;  ///< an upper bound on the distinct coefficients

  /// Variables in the assignment.
  std::size_t num_variables() const noexcept { return num_inputs + num_aux; }
  /// Rows of A, B, C: the circuit's constraints, then one row per public input.
  std::size_t num_rows() const noexcept { return num_constraints + num_inputs; }
};

/// Base of every constraint system: variable allocation into the assignment, and enforce.
class constraint_system {
 public:
  /// Sizes the assignment from shape; column 0 holds one. `storage` lends a vector whose memory
  /// is reused for the assignment (its contents are overwritten as variables are allocated).
  explicit constraint_system(const circuit_shape& shape, std::vector<fr> storage = {});
  /// The assignment is written into `external` (its first shape.num_variables() elements), which
  /// must outlive the system; throws std::invalid_argument when it is shorter. release_assignment
  /// then returns an empty vector.
  constraint_system(const circuit_shape& shape, std::span<fr> external);
  virtual ~constraint_system();
  constraint_system(const constraint_system&) = delete;
  constraint_system& operator=(const constraint_system&) = delete;

  /// The constant one (input 0).
  static constexpr variable one() noexcept { return variable{0}; }

  /// A new auxiliary variable holding value; throws std::logic_error beyond the declared shape.
  variable alloc(const fr& value) {
    if (next_aux_ == assignment_.size()) throw_over_shape("auxiliary variables", shape_.num_aux);
    assignment_[next_aux_] = value;
    return variable{static_cast<std::uint32_t>(next_aux_++)};
  }
  /// A new public input holding value; throws std::logic_error beyond the declared shape.
  variable alloc_input(const fr& value) {
    if (next_input_ == shape_.num_inputs) throw_over_shape("public inputs", shape_.num_inputs);
    assignment_[next_input_] = value;
    return variable{static_cast<std::uint32_t>(next_input_++)};
  }

  /// Adds the constraint a * b = c; throws std::logic_error beyond the declared shape.
  void enforce(lc_builder a, lc_builder b, lc_builder c) {
    if (num_constraints_ == shape_.num_constraints) {
      throw_over_shape("constraints", shape_.num_constraints);
    }
    on_enforce(a, b, c);
    ++num_constraints_;
  }

  /// The value assigned to v.
  const fr& value(variable v) const noexcept { return assignment_[v.index]; }
  /// The whole assignment (inputs, then auxiliaries).
  std::span<const fr> assignment() const noexcept { return assignment_; }
  const circuit_shape& shape() const noexcept { return shape_; }
  std::size_t num_constraints() const noexcept { return num_constraints_; }
  std::size_t num_inputs_allocated() const noexcept { return next_input_; }
  std::size_t num_aux_allocated() const noexcept { return next_aux_ - shape_.num_inputs; }

  /// Checks that synthesis allocated and enforced exactly the declared shape; throws
  /// std::logic_error naming the first count that differs.
  void check_complete() const;

 protected:
  /// Called for every constraint, in order; num_constraints() is its row.
  virtual void on_enforce(lc_builder a, lc_builder b, lc_builder c) = 0;
public:
  /// Hands the assignment over, e.g. to reuse its memory (the system is spent afterwards).
  std::vector<fr> release_assignment() noexcept {
    assignment_ = {};
    return std::move(owned_);
  }

 protected:
  std::span<fr> mutable_assignment() noexcept { return assignment_; }

 private:
  [[noreturn]] void throw_over_shape(const char* what, std::size_t declared) const;

  circuit_shape shape_;
  std::vector<fr> owned_;     // the assignment's memory, unless it is external
  std::span<fr> assignment_;  // the assignment: owned_ or the external span
  std::size_t next_input_ = 1;
  std::size_t next_aux_;
  std::size_t num_constraints_ = 0;
};

/// Keeps every constraint and the assignment, so a test can check them and tamper with values
/// (bellman's TestConstraintSystem). Slow and memory hungry: for small circuits.
class checking_system final : public constraint_system {
 public:
  explicit checking_system(const circuit_shape& shape);

  /// The first row (circuit constraints, then the input rows) whose a * b != c under the current
  /// assignment; nullopt when all are satisfied.
  std::optional<std::size_t> first_unsatisfied() const;
  /// Replaces the value of v (to model a cheating prover).
  void set_value(variable v, const fr& value);
  /// <A_row, w>, <B_row, w>, <C_row, w> for one row of the full domain layout.
  std::array<fr, 3> evaluate_row(std::size_t row) const;
  /// All rows' <A_i, w>, <B_i, w>, <C_i, w> (circuit constraints, input rows, zero padding to n).
  void evaluate(std::span<fr> a, std::span<fr> b, std::span<fr> c) const;

 private:
  void on_enforce(lc_builder a, lc_builder b, lc_builder c) override;

  struct row {
    linear_combination a, b, c;
  };
  std::vector<row> rows_;
};

}  // namespace coprove::r1cs
