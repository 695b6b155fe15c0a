// The MiMC hash chain circuit: x -> (x + k_i)^5 over Fr for as many rounds as fit in the domain,
// three constraints a round ((x + k)^2 = s, s^2 = q, q (x + k) = y). It proves knowledge of a
// preimage whose chain ends in the public output; each partition of a job proves a different
// preimage derived from (seed, partition). The round gadget is shared with the Merkle circuit.
//
// Domain layout (n = 2^log_constraints rows): rows 0..3R-1 are the rounds, rows 3R and 3R+1 are
// the public-input rows (one, output), the rest is zero padding; R = floor((n - 2) / 3).
#pragma once

#include <coprove/r1cs/circuit.hpp>
#include <coprove/r1cs/constraint_system.hpp>
#include <coprove/field/fr.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace coprove::r1cs {
using field::fr;


/// Constraints per MiMC round.
inline constexpr std::size_t mimc_constraints_per_round = 3;

/// The i-th round constant of the constant stream `tag`: four splitmix64 words taken directly as
/// the Montgomery limbs (top limb cut to 62 bits, so the value is below r). Deterministic, random
/// access, no field multiplication.
fr mimc_round_constant(std::uint64_t tag, std::uint64_t i) noexcept;

/// The constant stream of the MiMC hash chain circuit.
inline constexpr std::uint64_t mimc_chain_tag = 0x6d696d632d636831ULL;  // "mimc-ch1"

/// (x + k_first)^5 ... over `rounds` rounds of stream `tag`, starting with constant `first`.
fr mimc_permute(const fr& x, std::size_t rounds, std::uint64_t tag, std::uint64_t first = 0) noexcept;

/// Where the last round's output goes.
enum class mimc_output { auxiliary, public_input };

/// Enforces `rounds` MiMC rounds on the input combination (whose value is input_value), using
/// constants first.. of stream tag; returns the last round's output variable: a new auxiliary or
/// a new public input (holding claimed_output when given, to model a false claim). Allocates
/// 3 * rounds variables: 3 * rounds auxiliaries, or one fewer and a public input.
variable enforce_mimc_rounds(constraint_system& cs, lc_builder input, const fr& input_value,
                             std::size_t rounds, std::uint64_t tag, std::uint64_t first,
                             mimc_output output = mimc_output::auxiliary,
                             std::optional<fr> claimed_output = std::nullopt);

/// The MiMC hash chain circuit.
class mimc_circuit final : public circuit {
 public:
  /// Proves knowledge of `preimage`; the public output is its chain value, computed during
  /// synthesis (construction is cheap, so a circuit can be built just for its shape).
  /// `claimed_output`, when given, is claimed instead (a wrong one makes the witness unsatisfiable).
  mimc_circuit(unsigned log_constraints, const fr& preimage,
               std::optional<fr> claimed_output = std::nullopt);

  /// The partition's preimage, from d = SHA-256("coprove/mimc/preimage", seed, partition) (seed and
  /// partition as little-endian u64): d read as four little-endian limbs, the top two bits cleared
  /// (< 2^254 < r), taken as the Montgomery form. The value is that number times R^-1 mod r, not
  /// the number itself; records and saved PCEs depend on this exact map.
  static fr preimage_for(std::uint64_t seed, std::size_t partition);
  /// The number of rounds that fit in 2^log_constraints rows.
  static std::size_t rounds_for(unsigned log_constraints) noexcept;

  std::string_view family() const noexcept override { return "mimc"; }
  unsigned log_constraints() const noexcept override { return log_constraints_; }
  circuit_shape shape() const noexcept override;
  std::uint64_t structure_digest() const noexcept override;
  void synthesize(constraint_system& cs) const override;

  std::size_t rounds() const noexcept { return rounds_; }
  const fr& preimage() const noexcept { return preimage_; }
  /// The chain value of the preimage (computed natively: O(rounds)).
  fr output() const noexcept;

 private:
  unsigned log_constraints_;
  std::size_t rounds_;
  fr preimage_;
  std::optional<fr> claimed_output_;
};

}  // namespace coprove::r1cs
