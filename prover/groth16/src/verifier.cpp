// The pairing checks of verifier.hpp.
#include <coprove/groth16/verifier.hpp>

#include <coprove/groth16/msm.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace coprove::groth16 {

namespace {

using field::fr;

/// ic_0 + sum x_i ic_{i+1}; the caller has checked the count.
field::g1_jacobian input_point(const verifying_key& vk, std::span<const fr> inputs) {
  return msm(std::span<const field::g1_affine>(vk.ic).subspan(1), inputs) + vk.ic[0];
}

std::string count_reason(const verifying_key& vk, std::size_t given) {
  return "the key takes " + std::to_string(vk.num_public_inputs()) + " public inputs, the proof came with " +
         std::to_string(given);
}

}  // namespace

prepared_verifying_key prepared_verifying_key::from(const verifying_key& vk) {
  if (vk.ic.empty()) throw std::invalid_argument("verifying key: ic is empty");
  if (const auto bad = find_degenerate_point(vk))
    throw std::invalid_argument(std::string("verifying key: ") + bad->name +
                                (bad->index ? " point " + std::to_string(*bad->index) : std::string()) +
                                " is the point at infinity (such a key accepts forged proofs)");
  prepared_verifying_key out;
  out.vk = vk;
  out.alpha_beta = field::pairing(vk.alpha_g1, vk.beta_g2);
  out.beta = field::g2_prepared::from(vk.beta_g2);
  out.minus_gamma = field::g2_prepared::from(-vk.gamma_g2);
  out.minus_delta = field::g2_prepared::from(-vk.delta_g2);
  return out;
}

verification verify(const prepared_verifying_key& pvk, const proof& p, std::span<const fr> public_inputs) {
  if (public_inputs.size() != pvk.vk.num_public_inputs()) return {false, count_reason(pvk.vk, public_inputs.size())};
  const std::array<field::g1_affine, 2> g1{input_point(pvk.vk, public_inputs).to_affine(), p.c};
  const std::array<const field::g2_prepared*, 2> g2{&pvk.minus_gamma, &pvk.minus_delta};
  const field::fq12 f = field::multi_miller_loop(g1, g2) * field::miller_loop(p.a, p.b);
  if (field::final_exponentiation(f) != pvk.alpha_beta)
    return {false, "the pairing equation does not hold (wrong proof, inputs or key)"};
  return {true, ""};
}

batch_verification verify_batch(const prepared_verifying_key& pvk, std::span<const proof> proofs,
                                std::span<const std::vector<fr>> inputs, secret_source& randomness) {
  if (proofs.size() != inputs.size())
    throw std::invalid_argument("verify_batch: " + std::to_string(proofs.size()) + " proofs but " +
                                std::to_string(inputs.size()) + " input lists");
  batch_verification out;
  out.verdicts.resize(proofs.size());
  std::vector<std::pair<field::g1_affine, field::g2_affine>> pairs;
  field::g1_jacobian input_sum = field::g1_jacobian::identity();
  field::g1_jacobian c_sum = field::g1_jacobian::identity();
  fr z_sum = fr::zero();
  bool counts_ok = true;
  for (std::size_t k = 0; k < proofs.size(); ++k) {
    if (inputs[k].size() != pvk.vk.num_public_inputs()) {
      out.verdicts[k] = {false, count_reason(pvk.vk, inputs[k].size())};
      counts_ok = false;
      continue;
    }
    std::array<std::byte, 16> bytes;
    randomness.fill(bytes);
    field::scalar_limbs z{0, 0, 0, 0};
    for (int i = 0; i < 16; ++i) z[i / 8] |= std::to_integer<std::uint64_t>(bytes[i]) << (8 * (i % 8));
    if ((z[0] | z[1]) == 0) z[0] = 1;
    const fr z_fr = fr::from_canonical(z);
    z_sum += z_fr;
    pairs.emplace_back(proofs[k].a.mul(z).to_affine(), proofs[k].b);
    input_sum += input_point(pvk.vk, inputs[k]).mul(z);
    c_sum += proofs[k].c.mul(z);
  }
  bool combined_ok = true;
  if (!pairs.empty()) {
    const std::array<field::g1_affine, 3> g1{(-pvk.vk.alpha_g1).mul(z_sum.to_canonical()).to_affine(),
                                             input_sum.to_affine(), c_sum.to_affine()};
    const std::array<const field::g2_prepared*, 3> g2{&pvk.beta, &pvk.minus_gamma, &pvk.minus_delta};
    const field::fq12 f = field::multi_miller_loop(pairs) * field::multi_miller_loop(g1, g2);
    combined_ok = field::final_exponentiation(f).is_one();
  }
  if (combined_ok) {
    for (std::size_t k = 0; k < proofs.size(); ++k)
      if (inputs[k].size() == pvk.vk.num_public_inputs()) out.verdicts[k] = {true, ""};
    out.all_accepted = counts_ok;
    return out;
  }
  out.checked_one_by_one = true;
  out.all_accepted = counts_ok;
  for (std::size_t k = 0; k < proofs.size(); ++k) {
    if (inputs[k].size() != pvk.vk.num_public_inputs()) continue;
    out.verdicts[k] = verify(pvk, proofs[k], inputs[k]);
    if (!out.verdicts[k].accepted) out.all_accepted = false;
  }
  return out;
}

}  // namespace coprove::groth16
