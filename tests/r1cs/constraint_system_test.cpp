// Tests of the constraint-system base, linear combinations and the checking system.
#include <coprove/r1cs/constraint_system.hpp>

#include <coprove/r1cs/linear_combination.hpp>
#include <coprove/r1cs/mimc.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

using namespace coprove::field;
using namespace coprove::r1cs;

namespace {

circuit_shape small_shape() {
  circuit_shape s;
  s.num_inputs = 2;
  s.num_aux = 2;
  s.num_constraints = 1;
  s.num_nonzeros = 3 + 2;
  return s;
}

}  // namespace

TEST_CASE("a linear combination evaluates every term with its coefficient",
          "[prover][constraint_system][cpu]") {
  const std::vector<fr> w{fr::one(), fr::from_uint64(3), fr::from_uint64(5)};
  linear_combination lc;
  lc.add(variable{1}).add(fr::from_uint64(7), variable{2}).sub(variable{0}).sub(fr::from_uint64(2), variable{1});
  // 3 + 35 - 1 - 6 = 31
  CHECK(lc.evaluate(w) == fr::from_uint64(31));
  CHECK(lc.size() == 4);
  lc.clear();
  CHECK(lc.evaluate(w) == fr::zero());
}

TEST_CASE("a checking system finds the constraint a wrong witness breaks",
          "[prover][constraint_system][cpu]") {
  checking_system cs(small_shape());
  const variable x = cs.alloc(fr::from_uint64(6));
  const variable y = cs.alloc(fr::from_uint64(7));
  const variable out = cs.alloc_input(fr::from_uint64(42));
  cs.enforce([&](linear_combination& lc) { lc.add(x); }, [&](linear_combination& lc) { lc.add(y); },
             [&](linear_combination& lc) { lc.add(out); });
  REQUIRE_NOTHROW(cs.check_complete());
  CHECK_FALSE(cs.first_unsatisfied().has_value());
  // The input rows: input_i * 0 = 0.
  CHECK(cs.evaluate_row(1) == std::array<fr, 3>{fr::one(), fr::zero(), fr::zero()});
  CHECK(cs.evaluate_row(2) == std::array<fr, 3>{fr::from_uint64(42), fr::zero(), fr::zero()});

  cs.set_value(y, fr::from_uint64(8));
  REQUIRE(cs.first_unsatisfied().has_value());
  CHECK(*cs.first_unsatisfied() == 0);
  CHECK_THROWS_AS(cs.set_value(constraint_system::one(), fr::zero()), std::invalid_argument);
}

TEST_CASE("synthesis beyond the declared shape is refused", "[prover][constraint_system][cpu]") {
  checking_system cs(small_shape());
  cs.alloc(fr::one());
  cs.alloc(fr::one());
  CHECK_THROWS_AS(cs.alloc(fr::one()), std::logic_error);
  cs.alloc_input(fr::one());
  CHECK_THROWS_AS(cs.alloc_input(fr::one()), std::logic_error);
  cs.enforce(linear_combination{}, linear_combination{}, linear_combination{});
  CHECK_THROWS_AS(cs.enforce(linear_combination{}, linear_combination{}, linear_combination{}),
                  std::logic_error);
}

TEST_CASE("a synthesis that falls short of its declared shape is reported",
          "[prover][constraint_system][cpu]") {
  checking_system cs(small_shape());
  cs.alloc(fr::one());
  try {
    cs.check_complete();
    FAIL("check_complete accepted an incomplete synthesis");
  } catch (const std::logic_error& e) {
    CHECK(std::string(e.what()).find("public inputs") != std::string::npos);
  }
}

TEST_CASE("an honest MiMC witness satisfies every constraint of the checking system",
          "[prover][constraint_system][mimc][cpu]") {
  const mimc_circuit c(10, mimc_circuit::preimage_for(1, 0));
  checking_system cs(c.shape());
  c.synthesize(cs);
  REQUIRE_NOTHROW(cs.check_complete());
  CHECK_FALSE(cs.first_unsatisfied().has_value());
  CHECK(cs.value(variable{1}) == c.output());

  SECTION("changing one intermediate value breaks a constraint") {
    const variable some_aux{static_cast<std::uint32_t>(c.shape().num_inputs + 100)};
    cs.set_value(some_aux, cs.value(some_aux) + fr::one());
    CHECK(cs.first_unsatisfied().has_value());
  }
  SECTION("changing the preimage breaks the first round") {
    const variable preimage{static_cast<std::uint32_t>(c.shape().num_inputs)};
    cs.set_value(preimage, cs.value(preimage) + fr::one());
    REQUIRE(cs.first_unsatisfied().has_value());
    CHECK(*cs.first_unsatisfied() == 0);
  }
}
