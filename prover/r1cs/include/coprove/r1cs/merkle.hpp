// The Merkle-path circuit: proves that a private leaf lies under a public root along a path of
// private siblings and boolean direction bits. The 2-to-1 compression is MiMC based:
// H(l, r) = P(P(l) + r) with P the MiMC permutation of merkle_hash_rounds rounds.
//
// Per level: d (1 - d) = 0 (d is a bit), d (sib - cur) = t (the swap), then P on left = cur + t
// and P on P(left) + right with right = sib - t: 2 + 6 * merkle_hash_rounds constraints. Domain
// layout: the levels, then the public-input rows (one, root), then zero padding; the depth is
// floor((n - 2) / (2 + 6 * merkle_hash_rounds)).
#pragma once

#include <coprove/r1cs/circuit.hpp>
#include <coprove/field/fr.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace coprove::r1cs {
using field::fr;


/// MiMC rounds in each permutation of the compression function.
inline constexpr std::size_t merkle_hash_rounds = 20;

/// The constant stream of the Merkle compression function.
inline constexpr std::uint64_t merkle_hash_tag = 0x6d696d632d6d6b31ULL;  // "mimc-mk1"

/// H(left, right) computed natively.
fr merkle_compress(const fr& left, const fr& right) noexcept;

/// The Merkle-path circuit.
class merkle_path_circuit final : public circuit {
 public:
  /// The leaf, siblings and direction bits (true: the current node is the right child) are
  /// derived from (seed, partition); the root is computed during synthesis.
  merkle_path_circuit(unsigned log_constraints, std::uint64_t seed, std::size_t partition);

  /// The number of levels that fit in 2^log_constraints rows.
  static std::size_t depth_for(unsigned log_constraints) noexcept;

  std::string_view family() const noexcept override { return "merkle"; }
  unsigned log_constraints() const noexcept override { return log_constraints_; }
  circuit_shape shape() const noexcept override;
  std::uint64_t structure_digest() const noexcept override;
  void synthesize(constraint_system& cs) const override;

  std::size_t depth() const noexcept { return depth_; }
  /// The leaf (derived from seed and partition).
  fr leaf() const noexcept;
  /// The root of the path (computed natively: O(depth)).
  fr root() const noexcept;
  /// Level i's sibling and direction bit (true: the current node is the right child).
  fr sibling(std::size_t level) const noexcept;
  bool direction(std::size_t level) const noexcept;

 private:
  unsigned log_constraints_;
  std::size_t depth_;
  std::uint64_t seed_;
  std::size_t partition_;
  std::uint64_t key_;  // the witness stream, from (seed, partition)
};

}  // namespace coprove::r1cs
