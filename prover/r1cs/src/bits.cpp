// The bit-rotation circuit (bits.hpp).
#include <coprove/r1cs/bits.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/constraint_system.hpp>

#include <array>
#include <bit>

namespace coprove::r1cs {
using field::fr;

namespace {

constexpr std::array<unsigned, 3> rotations{13, 7, 17};
constexpr std::size_t fixed_rows = bits_circuit::width + 1;  // the first state's checks, the packing

}  // namespace

bits_circuit::bits_circuit(unsigned log_constraints, std::uint64_t state)
    : log_constraints_(log_constraints), rounds_(0), state_(state) {
  validate_circuit_parameters("bits", log_constraints);
  rounds_ = rounds_for(log_constraints);
}

std::uint64_t bits_circuit::state_for(std::uint64_t seed, std::size_t partition) {
  const auto d = partition_digest("coprove/bits/state", seed, partition);
  std::uint64_t state = 0;
  for (int i = 7; i >= 0; --i) state = (state << 8) | static_cast<std::uint64_t>(d[static_cast<std::size_t>(i)]);
  return state;
}

std::size_t bits_circuit::rounds_for(unsigned log_constraints) noexcept {
  const std::size_t n = std::size_t{1} << log_constraints;
  return (n - fixed_rows - 2) / width;  // two input rows: one, output
}

unsigned bits_circuit::rotation(std::size_t round) noexcept { return rotations[round % rotations.size()]; }

std::uint64_t bits_circuit::output() const noexcept {
  std::uint64_t x = state_;
  for (std::size_t r = 0; r < rounds_; ++r) x ^= std::rotl(x, static_cast<int>(rotation(r)));
  return x;
}

circuit_shape bits_circuit::shape() const noexcept {
  circuit_shape s;
  s.num_inputs = 2;                            // one, output
  s.num_aux = width * (rounds_ + 1);           // the first state and every round's
  s.num_constraints = width * rounds_ + fixed_rows;
  // A bit check a, a, a (3); a XOR 2a, b, a + b - c (5); the packing 64 terms, one, output (66);
  // an input row 1.
  s.num_nonzeros = 3 * width + 5 * width * rounds_ + (width + 2) + s.num_inputs;
  s.max_coefficients = width + 3;              // 2^0..2^63, 2, -1
  return s;
}

std::uint64_t bits_circuit::structure_digest() const noexcept {
  return circuit_structure_digest({0x62697473 /* "bits" */, 1 /* layout version */, log_constraints_, rounds_,
                                   rotations[0], rotations[1], rotations[2]});
}

void bits_circuit::synthesize(constraint_system& cs) const {
  const fr two = fr::from_uint64(2);
  std::array<variable, width> x{};
  for (std::size_t i = 0; i < width; ++i) {
    x[i] = cs.alloc(((state_ >> i) & 1) != 0 ? fr::one() : fr::zero());
    const variable b = x[i];
    cs.enforce([&](linear_combination& lc) { lc.add(b); }, [&](linear_combination& lc) { lc.add(b); },
               [&](linear_combination& lc) { lc.add(b); });
  }
  std::uint64_t value = state_;
  for (std::size_t r = 0; r < rounds_; ++r) {
    const unsigned k = rotation(r);
    const std::uint64_t next = value ^ std::rotl(value, static_cast<int>(k));
    std::array<variable, width> y{};
    for (std::size_t i = 0; i < width; ++i) {
      // Bit i of rotl(x, k) is bit (i - k) mod 64 of x.
      const variable a = x[i], b = x[(i + width - k) % width];
      const variable c = cs.alloc(((next >> i) & 1) != 0 ? fr::one() : fr::zero());
      cs.enforce([&](linear_combination& lc) { lc.add(two, a); }, [&](linear_combination& lc) { lc.add(b); },
                 [&](linear_combination& lc) { lc.add(a).add(b).sub(c); });
      y[i] = c;
    }
    x = y;
    value = next;
  }
  const variable out = cs.alloc_input(fr::from_uint64(value));
  cs.enforce(
      [&](linear_combination& lc) {
        fr weight = fr::one();
        for (std::size_t i = 0; i < width; ++i) {
          lc.add(weight, x[i]);
          weight = weight + weight;
        }
      },
      [&](linear_combination& lc) { lc.add(constraint_system::one()); },
      [&](linear_combination& lc) { lc.add(out); });
}

}  // namespace coprove::r1cs
