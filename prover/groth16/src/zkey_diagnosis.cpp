// Why a proof made with a zkey did not verify (see zkey.hpp, explain_failed_zkey_proof). A zkey
// stores A and B but not C (snarkjs forms c = a * b on the domain), so a proof can be made from any
// witness, and whether the witness satisfies the circuit is known only from the circuit's .r1cs;
// what the key alone can show is a B1 section that disagrees with its B2 section.
#include <coprove/groth16/zkey.hpp>

#include <coprove/field/pairing.hpp>
#include <coprove/groth16/msm.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>

#include <optional>
#include <string>
#include <vector>

namespace coprove::groth16 {

namespace {

using field::fr;

constexpr const char* corrupt_key = "the zkey's points do not match its constraints (the key is corrupt)";

/// The first row in which the key's A or B differs from the r1cs's ("row N of A"), compared by
/// evaluating both at one random assignment; "its domain" when the domains differ.
std::optional<std::string> first_differing_row(const zkey& key, const r1cs::circom_r1cs& constraints) {
  const r1cs::pce_matrices theirs = constraints.matrices();
  if (theirs.domain_size != key.domain_size() || theirs.num_inputs + theirs.num_aux != key.num_variables())
    return "its domain of " + std::to_string(key.domain_size()) + " rows and " + std::to_string(key.num_variables()) +
           " signals against " + std::to_string(theirs.domain_size) + " and " +
           std::to_string(theirs.num_inputs + theirs.num_aux);
  secret_source randomness = secret_source::system();
  std::vector<fr> x(key.num_variables());
  for (fr& v : x) v = randomness.nonzero();
  const std::size_t n = key.domain_size();
  std::vector<fr> a_key(n), b_key(n), c_key(n), a_r1cs(n), b_r1cs(n), c_r1cs(n);
  key.matrices->evaluate(x, a_key, b_key, c_key);
  theirs.evaluate(x, a_r1cs, b_r1cs, c_r1cs);
  for (std::size_t row = 0; row < n; ++row) {
    if (a_key[row] != a_r1cs[row]) return "row " + std::to_string(row) + " of A";
    if (b_key[row] != b_r1cs[row]) return "row " + std::to_string(row) + " of B";
  }
  return std::nullopt;
}

/// Whether B1 and B2 hold the same scalars, e(B1_i, g2) = e(g1, B2_i) for every i, tested at once
/// by a random combination: e(sum r_i B1_i, g2) = e(g1, sum r_i B2_i).
bool b_sections_agree(const zkey& key) {
  secret_source randomness = secret_source::system();
  std::vector<fr> r(key.num_variables());
  for (fr& v : r) v = randomness.nonzero();
  const field::g1_affine b1 = msm(std::span<const field::g1_affine>(key.pk.b_g1), r).to_affine();
  const field::g2_affine b2 = msm(std::span<const field::g2_affine>(key.pk.b_g2), r).to_affine();
  return field::pairing(b1, field::g2_affine::generator()) == field::pairing(field::g1_affine::generator(), b2);
}

}  // namespace

std::string explain_failed_zkey_proof(const zkey& key, std::span<const fr> witness,
                                      const r1cs::circom_r1cs* constraints) {
  if (constraints != nullptr) {
    if (witness.size() != constraints->num_wires())
      return "the witness has " + std::to_string(witness.size()) + " values, " + constraints->name() + " has " +
             std::to_string(constraints->num_wires()) + " wires";
    if (const auto c = constraints->first_unsatisfied(witness))
      return "the witness does not satisfy the circuit (constraint " + std::to_string(*c) + " of " +
             constraints->name() + ")";
    if (const auto row = first_differing_row(key, *constraints))
      return key.name + " is not a key of " + constraints->name() + " (" + *row +
             " differs): the witness satisfies every constraint of " + constraints->name();
    return std::string(corrupt_key) + ": the witness satisfies every constraint of " + constraints->name() +
           ", whose A and B are the key's, yet its proof does not verify with " + key.name + "'s verifying key";
  }
  if (!b_sections_agree(key))
    return std::string(corrupt_key) +
           ": its B1 and B2 sections do not hold the same points (e(B1_i, g2) != e(g1, B2_i))";
  return "the witness does not satisfy the circuit (its proof does not verify with " + key.name +
         "'s verifying key), or " + corrupt_key + "; a zkey holds no C to tell which: check the witness against the "
         "circuit's .r1cs";
}

}  // namespace coprove::groth16
