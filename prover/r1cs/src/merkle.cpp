// The Merkle-path circuit over the MiMC-based compression H(l, r) = P(P(l) + r).
#include <coprove/r1cs/merkle.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/mimc.hpp>
#include <coprove/field/sha256.hpp>

#include <array>
#include <cstring>

namespace coprove::r1cs {
using field::fr;
using field::sha256;


namespace {

constexpr std::size_t constraints_per_level = 2 + 2 * mimc_constraints_per_round * merkle_hash_rounds;

std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The witness stream of one partition: SHA-256 of the label, seed and partition.
std::uint64_t witness_key(std::uint64_t seed, std::size_t partition) {
  const auto d = partition_digest("coprove/merkle/witness", seed, partition);
  std::uint64_t key = 0;
  std::memcpy(&key, d.data(), 8);
  return key;
}

}  // namespace

fr merkle_compress(const fr& left, const fr& right) noexcept {
  const fr inner = mimc_permute(left, merkle_hash_rounds, merkle_hash_tag);
  return mimc_permute(inner + right, merkle_hash_rounds, merkle_hash_tag);
}

std::size_t merkle_path_circuit::depth_for(unsigned log_constraints) noexcept {
  const std::size_t n = std::size_t{1} << log_constraints;
  return (n - 2) / constraints_per_level;  // two input rows: one, root
}

merkle_path_circuit::merkle_path_circuit(unsigned log_constraints, std::uint64_t seed,
                                         std::size_t partition)
    : log_constraints_(log_constraints), depth_(0), seed_(seed), partition_(partition) {
  validate_circuit_parameters("merkle", log_constraints);
  depth_ = depth_for(log_constraints);
  key_ = witness_key(seed, partition);
}

fr merkle_path_circuit::leaf() const noexcept { return mimc_round_constant(key_, 0); }

fr merkle_path_circuit::sibling(std::size_t level) const noexcept {
  return mimc_round_constant(key_, 1 + level);
}

bool merkle_path_circuit::direction(std::size_t level) const noexcept {
  return (splitmix64(key_ ^ splitmix64(~static_cast<std::uint64_t>(level))) & 1) != 0;
}

fr merkle_path_circuit::root() const noexcept {
  fr node = leaf();
  for (std::size_t level = 0; level < depth_; ++level) {
    const fr sib = sibling(level);
    node = direction(level) ? merkle_compress(sib, node) : merkle_compress(node, sib);
  }
  return node;
}

circuit_shape merkle_path_circuit::shape() const noexcept {
  constexpr std::size_t rounds = merkle_hash_rounds;
  circuit_shape s;
  s.num_inputs = 2;  // one, root
  // Each level: sibling, bit, t, and 3 per round in both permutations; plus the leaf, minus the
  // root (a public input).
  s.num_aux = depth_ * (3 + 2 * mimc_constraints_per_round * rounds);
  s.num_constraints = depth_ * constraints_per_level;
  // Each level: bit 3, swap 4, P(cur + t) 15 + 12 (R - 1), P(y + sib - t) 18 + 12 (R - 1).
  s.num_nonzeros = depth_ * (40 + 24 * (rounds - 1)) + s.num_inputs;
  s.max_coefficients = rounds + 2;
  return s;
}

std::uint64_t merkle_path_circuit::structure_digest() const noexcept {
  return circuit_structure_digest({std::uint64_t{0x6d65726b6c65} /* "merkle" */, std::uint64_t{1},
                                   std::uint64_t{log_constraints_}, std::uint64_t{depth_},
                                   std::uint64_t{merkle_hash_rounds}, merkle_hash_tag});
}

void merkle_path_circuit::synthesize(constraint_system& cs) const {
  const variable one = constraint_system::one();
  variable cur = cs.alloc(leaf());
  for (std::size_t level = 0; level < depth_; ++level) {
    const fr cur_value = cs.value(cur);
    const fr sib_value = sibling(level);
    const bool right_child = direction(level);
    const fr bit_value = right_child ? fr::one() : fr::zero();
    const variable sib = cs.alloc(sib_value);
    const variable bit = cs.alloc(bit_value);
    // bit * (1 - bit) = 0
    cs.enforce([&](linear_combination& lc) { lc.add(bit); },
               [&](linear_combination& lc) { lc.add(one).sub(bit); },
               [](linear_combination&) {});
    // bit * (sib - cur) = t; left = cur + t, right = sib - t
    const fr t_value = right_child ? sib_value - cur_value : fr::zero();
    const variable t = cs.alloc(t_value);
    cs.enforce([&](linear_combination& lc) { lc.add(bit); },
               [&](linear_combination& lc) { lc.add(sib).sub(cur); },
               [&](linear_combination& lc) { lc.add(t); });
    const fr left_value = cur_value + t_value;
    const fr right_value = sib_value - t_value;
    const variable inner = enforce_mimc_rounds(
        cs, [&](linear_combination& lc) { lc.add(cur).add(t); }, left_value, merkle_hash_rounds,
        merkle_hash_tag, 0);
    const fr outer_input = cs.value(inner) + right_value;
    const bool last = level + 1 == depth_;
    cur = enforce_mimc_rounds(
        cs, [&](linear_combination& lc) { lc.add(inner).add(sib).sub(t); }, outer_input,
        merkle_hash_rounds, merkle_hash_tag, 0,
        last ? mimc_output::public_input : mimc_output::auxiliary);
  }
}

}  // namespace coprove::r1cs
