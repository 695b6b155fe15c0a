// A small circuit with every kind of term the SpMV treats specially, shared by the CPU PCE tests
// and the GPU SpMV test.
#pragma once

#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/constraint_system.hpp>
#include <coprove/field/fr.hpp>

#include <cstdint>
#include <random>
#include <string_view>

namespace coprove::test {

using r1cs::circuit;
using r1cs::circuit_shape;
using r1cs::constraint_system;
using field::fr;
using r1cs::linear_combination;
using r1cs::variable;

// Rows whose first term is -1 times a variable, a general coefficient, a constant (the one
// column with coefficients one, -1 and others), empty rows and repeated variables: every kind of
// term the SpMV treats specially, in every position.
class mixed_terms_circuit final : public circuit {
 public:
  explicit mixed_terms_circuit(std::uint64_t seed) : seed_(seed) {}
  std::string_view family() const noexcept override { return "mixed"; }
  unsigned log_constraints() const noexcept override { return 3; }
  circuit_shape shape() const noexcept override {
    circuit_shape s;
    s.num_inputs = 1;
    s.num_aux = 4;
    s.num_constraints = 4;
    s.num_nonzeros = 18;
    s.max_coefficients = 8;
    return s;
  }
  std::uint64_t structure_digest() const noexcept override { return 0x6d69786564; }
  void synthesize(constraint_system& cs) const override {
    std::mt19937_64 gen(seed_);
    const variable x1 = cs.alloc(fr::random(gen)), x2 = cs.alloc(fr::random(gen)),
                   x3 = cs.alloc(fr::random(gen)), x4 = cs.alloc(fr::random(gen));
    const variable one = constraint_system::one();
    const fr k = fr::from_hex("0x1234567890abcdef");
    cs.enforce([&](linear_combination& lc) { lc.sub(x1).add(x2); },
               [&](linear_combination& lc) { lc.add(fr::from_uint64(7), x3); },
               [&](linear_combination& lc) { lc.add(k, one).sub(x4); });
    cs.enforce([](linear_combination&) {}, [&](linear_combination& lc) { lc.add(x1); },
               [&](linear_combination& lc) { lc.add(fr::from_uint64(3), one); });
    cs.enforce([&](linear_combination& lc) { lc.sub(x1); },
               [&](linear_combination& lc) { lc.sub(x2).add(x2); },
               [&](linear_combination& lc) {
                 lc.add(fr::from_uint64(5), x3).add(fr::from_uint64(5), x4).sub(one);
               });
    cs.enforce([&](linear_combination& lc) { lc.add(one); },
               [&](linear_combination& lc) { lc.add(one); },
               [&](linear_combination& lc) { lc.add(one).sub(x3); });
  }

 private:
  std::uint64_t seed_;
};

}  // namespace coprove::test
