// Tests of the slow path and the witness-only synthesis.
#include <coprove/r1cs/synthesis.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/mimc.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

using namespace coprove::field;
using namespace coprove::r1cs;

namespace {

// Declares one constraint but enforces two.
class oversized_circuit final : public circuit {
 public:
  std::string_view family() const noexcept override { return "oversized"; }
  unsigned log_constraints() const noexcept override { return 10; }
  circuit_shape shape() const noexcept override {
    circuit_shape s;
    s.num_inputs = 1;
    s.num_aux = 1;
    s.num_constraints = 1;
    return s;
  }
  std::uint64_t structure_digest() const noexcept override { return 1; }
  void synthesize(constraint_system& cs) const override {
    const variable x = cs.alloc(fr::one());
    for (int i = 0; i < 2; ++i) {
      cs.enforce([&](linear_combination& lc) { lc.add(x); },
                 [&](linear_combination& lc) { lc.add(x); },
                 [&](linear_combination& lc) { lc.add(x); });
    }
  }
};

}  // namespace

TEST_CASE("the slow path lays out constraints, input rows and zero padding",
          "[prover][synthesis][cpu]") {
  const auto c = make_circuit("mimc", 10, 2, 4);
  const circuit_shape s = c->shape();
  const std::size_t n = c->domain_size();
  std::vector<fr> a(n, fr::one()), b(n, fr::one()), cv(n, fr::one());
  const synthesis_output out = synthesize_slow(*c, a, b, cv);
  CHECK_FALSE(out.pce_used);
  CHECK(out.num_inputs == 2);
  // Input rows after the constraints: a = input_i, b = c = 0.
  CHECK(a[s.num_constraints] == fr::one());
  CHECK(a[s.num_constraints + 1] == out.public_inputs.at(0));
  CHECK(b[s.num_constraints] == fr::zero());
  CHECK(cv[s.num_constraints + 1] == fr::zero());
  for (std::size_t i = s.num_rows(); i < n; ++i) {
    CHECK(a[i] == fr::zero());
    CHECK(b[i] == fr::zero());
    CHECK(cv[i] == fr::zero());
  }
  CHECK_FALSE(first_unsatisfied_row(a, b, cv).has_value());
}

TEST_CASE("the slow path agrees with the checking system row by row", "[prover][synthesis][cpu]") {
  for (const char* name : {"mimc", "merkle", "bits"}) {
    const auto c = make_circuit(name, 11, 9, 1);
    const std::size_t n = c->domain_size();
    std::vector<fr> a(n), b(n), cv(n);
    synthesize_slow(*c, a, b, cv);
    checking_system cs(c->shape());
    c->synthesize(cs);
    std::vector<fr> ra(n), rb(n), rc(n);
    cs.evaluate(ra, rb, rc);
    CHECK(a == ra);
    CHECK(b == rb);
    CHECK(cv == rc);
  }
}

TEST_CASE("the witness-only synthesis computes the same assignment", "[prover][synthesis][cpu]") {
  const auto c = make_circuit("merkle", 10, 3, 3);
  checking_system cs(c->shape());
  c->synthesize(cs);
  const std::vector<fr> w = synthesize_witness(*c);
  CHECK(std::vector<fr>(cs.assignment().begin(), cs.assignment().end()) == w);
  CHECK(public_inputs_of(c->shape(), w).size() == 1);
}

TEST_CASE("wrong output sizes are rejected before anything is written",
          "[prover][synthesis][cpu]") {
  const auto c = make_circuit("mimc", 10, 1, 0);
  std::vector<fr> a(1024, fr::one()), b(1023, fr::one()), cv(1024, fr::one());
  try {
    synthesize_slow(*c, a, b, cv);
    FAIL("accepted a short b");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("1024") != std::string::npos);
    CHECK(std::string(e.what()).find("1023") != std::string::npos);
  }
  for (const fr& x : a) REQUIRE(x == fr::one());
}

TEST_CASE("a circuit that exceeds its declared shape is refused", "[prover][synthesis][cpu]") {
  const oversized_circuit c;
  std::vector<fr> a(1024), b(1024), cv(1024);
  CHECK_THROWS_AS(synthesize_slow(c, a, b, cv), std::logic_error);
  CHECK_THROWS_AS(synthesize_witness(c), std::logic_error);
}

TEST_CASE("the working-set estimate covers the assignment", "[prover][synthesis][cpu]") {
  const auto c = make_circuit("mimc", 16, 1, 0);
  CHECK(estimate_synthesis_working_set(c->shape()) >= c->shape().num_variables() * sizeof(fr));
}
