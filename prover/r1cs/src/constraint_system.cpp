// The constraint-system base (assignment storage and shape checks) and the checking system.
#include <coprove/r1cs/constraint_system.hpp>

#include <stdexcept>
#include <string>

namespace coprove::r1cs {
using field::fr;


constraint_system::constraint_system(const circuit_shape& shape, std::vector<fr> storage)
    : shape_(shape), owned_(std::move(storage)), next_aux_(shape.num_inputs) {
  if (shape.num_inputs == 0) {
    throw std::invalid_argument("circuit_shape.num_inputs must count the constant one (>= 1)");
  }
  owned_.resize(shape.num_variables());
  assignment_ = owned_;
  assignment_[0] = fr::one();
}

constraint_system::constraint_system(const circuit_shape& shape, std::span<fr> external)
    : shape_(shape), next_aux_(shape.num_inputs) {
  if (shape.num_inputs == 0) {
    throw std::invalid_argument("circuit_shape.num_inputs must count the constant one (>= 1)");
  }
  if (external.size() < shape.num_variables()) {
    throw std::invalid_argument("constraint_system: the external assignment holds " + std::to_string(external.size()) +
                                " elements, the circuit has " + std::to_string(shape.num_variables()) + " variables");
  }
  assignment_ = external.first(shape.num_variables());
  assignment_[0] = fr::one();
}

constraint_system::~constraint_system() = default;

void constraint_system::throw_over_shape(const char* what, std::size_t declared) const {
  throw std::logic_error(std::string("circuit synthesis exceeds its declared shape: more than ") +
                         std::to_string(declared) + " " + what);
}

void constraint_system::check_complete() const {
  auto check = [](const char* what, std::size_t got, std::size_t declared) {
    if (got != declared) {
      throw std::logic_error(std::string("circuit synthesis does not match its declared shape: ") +
                             std::to_string(got) + " " + what + ", declared " +
                             std::to_string(declared));
    }
  };
  check("public inputs", num_inputs_allocated(), shape_.num_inputs);
  check("auxiliary variables", num_aux_allocated(), shape_.num_aux);
  check("constraints", num_constraints_, shape_.num_constraints);
}

checking_system::checking_system(const circuit_shape& shape) : constraint_system(shape) {
  rows_.reserve(shape.num_constraints);
}

void checking_system::on_enforce(lc_builder a, lc_builder b, lc_builder c) {
  row r;
  a(r.a);
  b(r.b);
  c(r.c);
  rows_.push_back(std::move(r));
}

std::array<fr, 3> checking_system::evaluate_row(std::size_t index) const {
  const auto w = assignment();
  if (index < rows_.size()) {
    const row& r = rows_[index];
    return {r.a.evaluate(w), r.b.evaluate(w), r.c.evaluate(w)};
  }
  // Input rows: input_i * 0 = 0; beyond them the domain is zero padding.
  const std::size_t input = index - rows_.size();
  if (input < shape().num_inputs) return {w[input], fr::zero(), fr::zero()};
  return {fr::zero(), fr::zero(), fr::zero()};
}

std::optional<std::size_t> checking_system::first_unsatisfied() const {
  const std::size_t rows = rows_.size() + shape().num_inputs;
  for (std::size_t i = 0; i < rows; ++i) {
    const auto [a, b, c] = evaluate_row(i);
    if (a * b != c) return i;
  }
  return std::nullopt;
}

void checking_system::set_value(variable v, const fr& value) {
  if (v.index == 0) throw std::invalid_argument("set_value: the constant one cannot change");
  if (v.index >= assignment().size()) {
    throw std::invalid_argument("set_value: variable " + std::to_string(v.index) +
                                " is not allocated");
  }
  mutable_assignment()[v.index] = value;
}

void checking_system::evaluate(std::span<fr> a, std::span<fr> b, std::span<fr> c) const {
  if (a.size() != b.size() || a.size() != c.size() || a.size() < rows_.size() + shape().num_inputs) {
    throw std::invalid_argument("checking_system::evaluate: a, b, c must be equal and hold every row");
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto v = evaluate_row(i);
    a[i] = v[0];
    b[i] = v[1];
    c[i] = v[2];
  }
}

}  // namespace coprove::r1cs
