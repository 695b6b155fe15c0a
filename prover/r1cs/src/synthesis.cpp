// The slow path (evaluate each constraint into a/b/c as it is enforced, optionally recording the
// matrices) and the witness-only synthesis.
#include <coprove/r1cs/synthesis.hpp>

#include <coprove/field/parallel.hpp>
#include <coprove/r1cs/pce.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace coprove::r1cs {
using field::fr;
using field::parallel_for;


namespace {

// Appends rows to the CSR matrices of a pce_matrices, deduplicating coefficients.
class matrix_recorder {
 public:
  explicit matrix_recorder(pce_matrices& out, const circuit_shape& shape)
      : out_(out), coefficients_(out_.coefficient_table) {
    for (csr_matrix* m : {&out_.a, &out_.b, &out_.c}) {
      m->row_offsets.clear();
      m->columns.clear();
      m->coefficients.clear();
      m->row_offsets.reserve(shape.num_rows() + 1);
      m->row_offsets.push_back(0);
    }
    // The split of the nonzeros between the matrices is circuit specific; a third each is a
    // reasonable first reservation.
    for (csr_matrix* m : {&out_.a, &out_.b, &out_.c}) {
      m->columns.reserve(shape.num_nonzeros / 3 + 1);
      m->coefficients.reserve(shape.num_nonzeros / 3 + 1);
    }
  }

  void append_row(csr_matrix& m, const linear_combination& lc) {
    for (const lc_term& t : lc.terms()) {
      m.columns.push_back(t.var.index);
      m.coefficients.push_back(coefficient_index(t.coefficient));
    }
    if (m.columns.size() > std::numeric_limits<std::uint32_t>::max()) {
      throw std::length_error("PCE recording: more than 2^32 - 1 nonzeros in one matrix");
    }
    m.row_offsets.push_back(static_cast<std::uint32_t>(m.columns.size()));
  }

  // An input row: A = input_i, B = C = 0.
  void append_input_row(std::uint32_t input) {
    out_.a.columns.push_back(input);
    out_.a.coefficients.push_back(pce_coefficient_one);
    out_.a.row_offsets.push_back(static_cast<std::uint32_t>(out_.a.columns.size()));
    out_.b.row_offsets.push_back(static_cast<std::uint32_t>(out_.b.columns.size()));
    out_.c.row_offsets.push_back(static_cast<std::uint32_t>(out_.c.columns.size()));
  }

  pce_matrices& out() noexcept { return out_; }

 private:
  std::uint32_t coefficient_index(const fr& c) {
    if (c == fr::one()) return pce_coefficient_one;
    return coefficients_.index(c);
  }

  pce_matrices& out_;
  coefficient_table_builder coefficients_;
};

// The slow path's system: evaluates <A_i, w>, <B_i, w>, <C_i, w> into the output spans as each
// constraint is enforced, and records the rows when a recorder is attached.
class evaluating_system final : public constraint_system {
 public:
  evaluating_system(const circuit_shape& shape, std::span<fr> a, std::span<fr> b, std::span<fr> c,
                    matrix_recorder* recorder, std::vector<fr> storage)
      : constraint_system(shape, std::move(storage)), a_(a), b_(b), c_(c), recorder_(recorder) {}

  // Adds the input rows and the zero padding; the assignment is complete by now.
  void finish_rows() {
    const std::size_t m = num_constraints();
    const auto w = assignment();
    for (std::size_t i = 0; i < shape().num_inputs; ++i) {
      a_[m + i] = w[i];
      b_[m + i] = fr::zero();
      c_[m + i] = fr::zero();
      if (recorder_ != nullptr) recorder_->append_input_row(static_cast<std::uint32_t>(i));
    }
    const std::size_t used = m + shape().num_inputs;
    const std::size_t pad = a_.size() - used;
    std::memset(static_cast<void*>(a_.data() + used), 0, pad * sizeof(fr));
    std::memset(static_cast<void*>(b_.data() + used), 0, pad * sizeof(fr));
    std::memset(static_cast<void*>(c_.data() + used), 0, pad * sizeof(fr));
  }

 private:
  void on_enforce(lc_builder a, lc_builder b, lc_builder c) override {
    const std::size_t row = num_constraints();
    const auto w = assignment();
    scratch_.clear();
    a(scratch_);
    a_[row] = scratch_.evaluate(w);
    if (recorder_ != nullptr) recorder_->append_row(recorder_->out().a, scratch_);
    scratch_.clear();
    b(scratch_);
    b_[row] = scratch_.evaluate(w);
    if (recorder_ != nullptr) recorder_->append_row(recorder_->out().b, scratch_);
    scratch_.clear();
    c(scratch_);
    c_[row] = scratch_.evaluate(w);
    if (recorder_ != nullptr) recorder_->append_row(recorder_->out().c, scratch_);
  }

  std::span<fr> a_, b_, c_;
  matrix_recorder* recorder_;
  linear_combination scratch_;
};

void check_spans(const circuit& c, std::size_t a, std::size_t b, std::size_t c_size) {
  const std::size_t n = c.domain_size();
  if (a != n || b != n || c_size != n) {
    throw std::invalid_argument("synthesis of " + c.id() + ": a, b and c must each hold exactly " +
                                std::to_string(n) + " elements (got " + std::to_string(a) + ", " +
                                std::to_string(b) + ", " + std::to_string(c_size) + ")");
  }
  if (c.shape().num_rows() > n) {
    throw std::logic_error("circuit " + c.id() + " needs " + std::to_string(c.shape().num_rows()) +
                           " rows but its domain has " + std::to_string(n));
  }
}

}  // namespace

synthesis_output synthesize_slow(const circuit& c, std::span<fr> a, std::span<fr> b,
                                 std::span<fr> c_out, pce_matrices* record,
                                 std::vector<fr>* scratch) {
  check_spans(c, a.size(), b.size(), c_out.size());
  const circuit_shape shape = c.shape();
  std::optional<matrix_recorder> recorder;
  if (record != nullptr) recorder.emplace(*record, shape);
  evaluating_system cs(shape, a, b, c_out, recorder ? &*recorder : nullptr,
                       scratch != nullptr ? std::move(*scratch) : std::vector<fr>{});
  c.synthesize(cs);
  cs.check_complete();
  cs.finish_rows();
  if (record != nullptr) {
    record->circuit_id = c.id();
    record->structure_digest = c.structure_digest();
    record->num_inputs = shape.num_inputs;
    record->num_aux = shape.num_aux;
    record->num_rows = shape.num_rows();
    record->domain_size = c.domain_size();
    // Growth slack would otherwise stay charged for the cache's life.
    for (csr_matrix* m : {&record->a, &record->b, &record->c}) {
      m->row_offsets.shrink_to_fit();
      m->columns.shrink_to_fit();
      m->coefficients.shrink_to_fit();
    }
    record->coefficient_table.shrink_to_fit();
  }
  synthesis_output out;
  out.num_constraints = shape.num_rows();
  out.num_inputs = shape.num_inputs;
  out.public_inputs = public_inputs_of(shape, cs.assignment());
  out.pce_used = false;
  if (scratch != nullptr) *scratch = cs.release_assignment();
  return out;
}

std::vector<fr> synthesize_witness(const circuit& c, std::vector<fr> storage) {
  witness_system cs(c.shape(), std::move(storage));
  c.synthesize(cs);
  cs.check_complete();
  return cs.take_assignment();
}

void synthesize_witness_into(const circuit& c, std::span<fr> out) {
  witness_system cs(c.shape(), out);
  c.synthesize(cs);
  cs.check_complete();
}

std::vector<fr> public_inputs_of(const circuit_shape& shape, std::span<const fr> assignment) {
  return {assignment.begin() + 1, assignment.begin() + static_cast<std::ptrdiff_t>(shape.num_inputs)};
}

std::optional<std::size_t> first_unsatisfied_row(std::span<const fr> a, std::span<const fr> b,
                                                 std::span<const fr> c) {
  if (a.size() != b.size() || a.size() != c.size()) {
    throw std::invalid_argument("first_unsatisfied_row: a, b and c differ in length");
  }
  std::atomic<std::size_t> first{std::numeric_limits<std::size_t>::max()};
  parallel_for(
      0, a.size(),
      [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) {
          if (a[i] * b[i] != c[i]) {
            std::size_t seen = first.load(std::memory_order_relaxed);
            while (i < seen && !first.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {
            }
            return;
          }
        }
      },
      4096);
  const std::size_t row = first.load();
  if (row == std::numeric_limits<std::size_t>::max()) return std::nullopt;
  return row;
}

std::size_t estimate_synthesis_working_set(const circuit_shape& shape) noexcept {
  // The assignment, plus a few kilobytes of scratch combinations.
  return shape.num_variables() * sizeof(fr) + (std::size_t{64} << 10);
}

}  // namespace coprove::r1cs
