// A small satisfiable circuit with several public inputs, for the tests that need more than the
// one public output of MiMC and Merkle: inputs p_1..p_k, private q_i, and the constraints
// p_i * q_i = t_i and (3 + sum_i i p_i) * 1 = s. q_i appears only in B, t_i and s only in C, so
// the A and B densities both have holes.
#pragma once

#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/constraint_system.hpp>
#include <coprove/field/fr.hpp>

#include <cstdint>
#include <random>
#include <string_view>

namespace coprove::groth16::testing {

class public_products_circuit final : public r1cs::circuit {
 public:
  public_products_circuit(std::size_t inputs, unsigned log_constraints, std::uint64_t seed)
      : inputs_(inputs), log_(log_constraints), seed_(seed) {}
  std::string_view family() const noexcept override { return "public-products"; }
  unsigned log_constraints() const noexcept override { return log_; }
  r1cs::circuit_shape shape() const noexcept override {
    r1cs::circuit_shape s;
    s.num_inputs = 1 + inputs_;
    s.num_aux = 2 * inputs_ + 1;
    s.num_constraints = inputs_ + 1;
    s.num_nonzeros = 5 * inputs_ + 4;
    s.max_coefficients = inputs_ + 3;
    return s;
  }
  std::uint64_t structure_digest() const noexcept override { return 0x7075626c6963 ^ (inputs_ << 8) ^ log_; }
  void synthesize(r1cs::constraint_system& cs) const override {
    using r1cs::linear_combination;
    using r1cs::variable;
    std::mt19937_64 gen(seed_);
    std::vector<variable> p;
    std::vector<field::fr> pv;
    for (std::size_t i = 0; i < inputs_; ++i) {
      pv.push_back(field::fr::random(gen));
      p.push_back(cs.alloc_input(pv.back()));
    }
    field::fr sum = field::fr::from_uint64(3);
    for (std::size_t i = 0; i < inputs_; ++i) {
      const field::fr qv = field::fr::random(gen);
      const variable q = cs.alloc(qv);
      const variable t = cs.alloc(pv[i] * qv);
      cs.enforce([&](linear_combination& lc) { lc.add(p[i]); }, [&](linear_combination& lc) { lc.add(q); },
                 [&](linear_combination& lc) { lc.add(t); });
      sum += field::fr::from_uint64(i + 1) * pv[i];
    }
    const variable s = cs.alloc(sum);
    cs.enforce(
        [&](linear_combination& lc) {
          lc.add(field::fr::from_uint64(3), r1cs::constraint_system::one());
          for (std::size_t i = 0; i < inputs_; ++i) lc.add(field::fr::from_uint64(i + 1), p[i]);
        },
        [&](linear_combination& lc) { lc.add(r1cs::constraint_system::one()); },
        [&](linear_combination& lc) { lc.add(s); });
  }

 private:
  std::size_t inputs_;
  unsigned log_;
  std::uint64_t seed_;
};

}  // namespace coprove::groth16::testing
