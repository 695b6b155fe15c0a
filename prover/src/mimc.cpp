// MiMC round constants, the native permutation, the round gadget and the hash chain circuit.
#include <coprove/prover/mimc.hpp>

#include <coprove/prover/circuits.hpp>
#include <coprove/prover/sha256.hpp>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

namespace coprove::prover {

namespace {

std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a over 64-bit words: the structure digests (not a security boundary).
std::uint64_t digest_words(std::initializer_list<std::uint64_t> words) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::uint64_t w : words) {
    for (int i = 0; i < 8; ++i) {
      h ^= (w >> (8 * i)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

// t^2, t^4 and t^5, the values one round computes, on the multiplication path chosen at start-up.
// A MiMC chain's witness is one long dependent chain of these (the serial part of a partition's
// synthesis), so the path is looked up once a round rather than once a multiplication: 13% less
// time a round on the x86-64 MULX/ADX path (bench_synthesis, witness ns/constraint 28.2 -> 24.5).
struct round_powers {
  fr s, q, y;
};

round_powers round_powers_of(const fr& t) noexcept {
#if defined(COPROVE_FR_HAVE_ADX_SQUARE)
  if (detail::fr_use_adx.load(std::memory_order_relaxed)) {
    round_powers p;
    p.s.limbs = detail::mont_square_adx(t.limbs);
    p.q.limbs = detail::mont_square_adx(p.s.limbs);
    p.y.limbs = detail::mont_mul_adx(p.q.limbs, t.limbs);
    return p;
  }
#endif
  const fr s = t.square();
  const fr q = s.square();
  return {s, q, q * t};
}

}  // namespace

fr mimc_round_constant(std::uint64_t tag, std::uint64_t i) noexcept {
  const std::uint64_t base = splitmix64(tag ^ splitmix64(i));
  // Four words taken as Montgomery limbs; 62 bits on top keep the value below r (r > 2^254).
  return fr{{splitmix64(base), splitmix64(base + 1), splitmix64(base + 2),
             splitmix64(base + 3) >> 2}};
}

fr mimc_permute(const fr& x, std::size_t rounds, std::uint64_t tag, std::uint64_t first) noexcept {
  fr v = x;
  for (std::size_t r = 0; r < rounds; ++r) {
    v = round_powers_of(v + mimc_round_constant(tag, first + r)).y;
  }
  return v;
}

variable enforce_mimc_rounds(constraint_system& cs, lc_builder input, const fr& input_value,
                             std::size_t rounds, std::uint64_t tag, std::uint64_t first,
                             mimc_output output, std::optional<fr> claimed_output) {
  if (rounds == 0) throw std::invalid_argument("enforce_mimc_rounds: rounds must be at least 1");
  fr x = input_value;
  variable previous{};
  for (std::size_t r = 0; r < rounds; ++r) {
    const fr k = mimc_round_constant(tag, first + r);
    const fr t = x + k;
    const auto [s, q, y] = round_powers_of(t);
    const variable s_var = cs.alloc(s);
    const variable q_var = cs.alloc(q);
    const bool last = r + 1 == rounds;
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
    x = y;
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
  sha256 h;
  h.update(std::string_view("coprove/mimc/preimage"));
  std::array<std::byte, 16> words{};
  const std::uint64_t p = partition;
  std::memcpy(words.data(), &seed, 8);
  std::memcpy(words.data() + 8, &p, 8);
  h.update(words);
  const sha256::digest d = h.finish();
  fr out;
  std::memcpy(out.limbs.data(), d.data(), 32);
  out.limbs[3] >>= 2;  // below r
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
  return digest_words({0x6d696d63 /* "mimc" */, 1 /* layout version */, log_constraints_, rounds_,
                       mimc_chain_tag});
}

void mimc_circuit::synthesize(constraint_system& cs) const {
  const variable x0 = cs.alloc(preimage_);
  enforce_mimc_rounds(cs, [&](linear_combination& lc) { lc.add(x0); }, preimage_, rounds_,
                      mimc_chain_tag, 0, mimc_output::public_input, claimed_output_);
}

}  // namespace coprove::prover
