// MiMC round constants, the native permutation, the round gadget and the hash chain circuit.
#include <coprove/r1cs/mimc.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/field/sha256.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

namespace coprove::r1cs {
using field::fr;
using field::sha256;


namespace {

std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// One round's values: s = t^2, q = t^4, y = t^5, and the next round's input t' = y + k' (k' the
// next round's constant). A MiMC chain's witness is one long dependent chain of these (the serial
// part of a partition's synthesis), so the round is written for latency. On the x86-64 MULX/ADX
// path the chain runs on lazy (not fully reduced) values held in registers:
//   s~ = lazy(t^2) < 1.46r (t < r);  q~ = lazy(s~^2) < 2r;  y~ = lazy(q~ * t) < 2r;
//   t' = (y~ + k') mod r, from three candidates at once;
// while the canonical s, q, y that go into the witness are reduced beside the chain, not on it.
// The path is looked up once a round rather than once a multiplication. On the 2-core development
// machine (AMD EPYC) this took bench_synthesis's witness from 25.0 to 20.8 ns a constraint (2^20).
struct round_values {
  fr s, q, y, next;
};

[[gnu::always_inline]] inline round_values round_values_of(const fr& t,
                                                           const fr& next_constant) noexcept {
#if defined(COPROVE_FR_HAVE_ADX_LATENCY)
  if (field::detail::fr_use_adx.load(std::memory_order_relaxed)) {
    const field::detail::lazy_addend k = field::detail::make_lazy_addend(next_constant.limbs);
    const field::detail::limbs4 s = field::detail::mont_square_lazy_adx(t.limbs);
    const field::detail::limbs4 q = field::detail::mont_square_lazy_adx(s);
    const field::detail::limbs4 y = field::detail::mont_mul_lazy_adx(q, t.limbs);
    round_values v;
    v.next.limbs = field::detail::add_reduce_x86_64(y, k);
    v.s.limbs = field::detail::reduce_once_x86_64(s);
    v.q.limbs = field::detail::reduce_once_x86_64(q);
    v.y.limbs = field::detail::reduce_once_x86_64(y);
    return v;
  }
#endif
  const fr s = t.square();
  const fr q = s.square();
  const fr y = q * t;
  return {s, q, y, y + next_constant};
}

}  // namespace

fr mimc_round_constant(std::uint64_t tag, std::uint64_t i) noexcept {
  const std::uint64_t base = splitmix64(tag ^ splitmix64(i));
  // Four words taken as Montgomery limbs; 62 bits on top keep the value below r (r > 2^254).
  return fr{{splitmix64(base), splitmix64(base + 1), splitmix64(base + 2),
             splitmix64(base + 3) >> 2}};
}

fr mimc_permute(const fr& x, std::size_t rounds, std::uint64_t tag, std::uint64_t first) noexcept {
  if (rounds == 0) return x;
  fr t = x + mimc_round_constant(tag, first);
  fr y = x;
  for (std::size_t r = 0; r < rounds; ++r) {
    // The last round's "next" input is never used: any constant will do.
    const fr next_constant = r + 1 < rounds ? mimc_round_constant(tag, first + r + 1) : fr::zero();
    const round_values v = round_values_of(t, next_constant);
    y = v.y;
    t = v.next;
  }
  return y;
}

variable enforce_mimc_rounds(constraint_system& cs, lc_builder input, const fr& input_value,
                             std::size_t rounds, std::uint64_t tag, std::uint64_t first,
                             mimc_output output, std::optional<fr> claimed_output) {
  if (rounds == 0) throw std::invalid_argument("enforce_mimc_rounds: rounds must be at least 1");
  // The chain runs a block of rounds at a time with nothing else in the loop (no calls, so its
  // values stay in registers); the allocations and constraints of the block follow.
  constexpr std::size_t block = 64;
  std::array<fr, block + 1> constants;
  std::array<std::array<fr, 3>, block> values;  // s, q, y of each round
  constants[block] = mimc_round_constant(tag, first);
  fr t = input_value + constants[block];
  variable previous{};
  for (std::size_t begin = 0; begin < rounds; begin += block) {
    const std::size_t count = std::min(block, rounds - begin);
    constants[0] = constants[block];  // this block's first constant, computed by the previous one
    for (std::size_t i = 1; i <= count; ++i) {
      // The last round's "next" constant is never used.
      constants[i] = begin + i < rounds ? mimc_round_constant(tag, first + begin + i) : fr::zero();
    }
    constants[block] = constants[count];
    for (std::size_t i = 0; i < count; ++i) {
      const round_values v = round_values_of(t, constants[i + 1]);
      values[i] = {v.s, v.q, v.y};
      t = v.next;
    }
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t r = begin + i;
      const fr& k = constants[i];
      const auto& [s, q, y] = values[i];
      const bool last = r + 1 == rounds;
      const variable s_var = cs.alloc(s);
      const variable q_var = cs.alloc(q);
      variable y_var;
      if (last && output == mimc_output::public_input) {
        y_var = cs.alloc_input(claimed_output ? *claimed_output : y);
      } else {
        y_var = cs.alloc(y);
      }
      // x + k: the input combination in round 0, the previous round's output afterwards.
      auto x_plus_k = [&](linear_combination& lc) {
        if (r == 0) {
          input(lc);
        } else {
          lc.add(previous);
        }
        lc.add(k, constraint_system::one());
      };
      cs.enforce(x_plus_k, x_plus_k, [&](linear_combination& lc) { lc.add(s_var); });
      cs.enforce([&](linear_combination& lc) { lc.add(s_var); },
                 [&](linear_combination& lc) { lc.add(s_var); },
                 [&](linear_combination& lc) { lc.add(q_var); });
      cs.enforce([&](linear_combination& lc) { lc.add(q_var); }, x_plus_k,
                 [&](linear_combination& lc) { lc.add(y_var); });
      previous = y_var;
    }
  }
  return previous;
}

std::size_t mimc_circuit::rounds_for(unsigned log_constraints) noexcept {
  const std::size_t n = std::size_t{1} << log_constraints;
  return (n - 2) / mimc_constraints_per_round;  // two input rows: one, output
}

mimc_circuit::mimc_circuit(unsigned log_constraints, const fr& preimage,
                           std::optional<fr> claimed_output)
    : log_constraints_(log_constraints),
      rounds_(0),
      preimage_(preimage),
      claimed_output_(claimed_output) {
  validate_circuit_parameters("mimc", log_constraints);
  rounds_ = rounds_for(log_constraints);
}

fr mimc_circuit::preimage_for(std::uint64_t seed, std::size_t partition) {
  const auto d = partition_digest("coprove/mimc/preimage", seed, partition);
  // The digest becomes the Montgomery limbs directly (see the header): a valid representation once
  // below r, and no conversion on this path.
  fr out;
  std::memcpy(out.limbs.data(), d.data(), 32);
  out.limbs[3] >>= 2;  // < 2^254 < r
  return out;
}

fr mimc_circuit::output() const noexcept { return mimc_permute(preimage_, rounds_, mimc_chain_tag); }

circuit_shape mimc_circuit::shape() const noexcept {
  circuit_shape s;
  s.num_inputs = 2;                                    // one, output
  s.num_aux = mimc_constraints_per_round * rounds_;    // preimage, s and q each round, y but the last
  s.num_constraints = mimc_constraints_per_round * rounds_;
  s.num_nonzeros = 12 * rounds_ + s.num_inputs;        // A 4, B 5, C 3 a round; A 1 an input row
  s.max_coefficients = rounds_ + 2;                    // one, -one, the round constants
  return s;
}

std::uint64_t mimc_circuit::structure_digest() const noexcept {
  return circuit_structure_digest({0x6d696d63 /* "mimc" */, 1 /* layout version */, log_constraints_, rounds_,
                       mimc_chain_tag});
}

void mimc_circuit::synthesize(constraint_system& cs) const {
  const variable x0 = cs.alloc(preimage_);
  enforce_mimc_rounds(cs, [&](linear_combination& lc) { lc.add(x0); }, preimage_, rounds_,
                      mimc_chain_tag, 0, mimc_output::public_input, claimed_output_);
}

}  // namespace coprove::r1cs
