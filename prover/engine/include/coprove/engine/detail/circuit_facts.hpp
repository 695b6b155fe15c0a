// What admission needs to know of a circuit and size without building the circuit again: its
// synthesis working set, its constraint-cache id and whether its assignment fits one vector of its
// domain (then a partition may send the assignment alone).
#pragma once

#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

namespace coprove::engine::detail {

struct circuit_facts {
  std::size_t working_set = 0;
  std::string id;
  bool witness_fits = false;
};

/// The facts of a built-in circuit, from its shape.
inline circuit_facts facts_of(const r1cs::circuit& c) {
  const r1cs::circuit_shape shape = c.shape();
  return {std::max<std::size_t>(r1cs::estimate_synthesis_working_set(shape), 1), c.id(),
          shape.num_variables() <= c.domain_size()};
}

}  // namespace coprove::engine::detail
