// Proof assembly (see prover.hpp).
#include <coprove/groth16/prover.hpp>

#include <coprove/field/quotient.hpp>
#include <coprove/groth16/msm.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace coprove::groth16 {

namespace {

using field::fr;

field::g1_jacobian secret_multiple(const field::g1_affine& p, const fr& k) {
  wiped<field::scalar_limbs> limbs(k.to_canonical());
  return p.mul_secret(*limbs);
}

field::g2_jacobian secret_multiple(const field::g2_affine& p, const fr& k) {
  wiped<field::scalar_limbs> limbs(k.to_canonical());
  return p.mul_secret(*limbs);
}

}  // namespace

msm_sums compute_msm_sums(const proving_key& pk, std::span<const fr> assignment, std::span<const fr> h) {
  pk.check_consistent();
  const std::size_t variables = pk.num_variables();
  const std::size_t n = pk.domain_size();
  if (assignment.size() != variables)
    throw std::invalid_argument("prove: the assignment has " + std::to_string(assignment.size()) +
                                " values, the key " + std::to_string(variables) + " variables");
  if (assignment.empty() || assignment[0] != fr::one())
    throw std::invalid_argument("prove: the assignment does not start with the constant one");
  if (pk.h_form == field::quotient_form::odd_coset_evaluations) {
    // snarkjs's H: n values, none of which need be zero; satisfaction shows only in verification.
    if (h.size() != n)
      throw std::invalid_argument("prove: h has " + std::to_string(h.size()) + " values, the key's odd-coset form needs " +
                                  std::to_string(n));
  } else if (h.size() == n) {
    if (!h[n - 1].is_zero())
      throw std::invalid_argument("prove: h[n-1] is not zero: the assignment does not satisfy the circuit");
    h = h.first(n - 1);
  } else if (h.size() != n - 1) {
    throw std::invalid_argument("prove: h has " + std::to_string(h.size()) + " coefficients, the key's domain needs " +
                                std::to_string(n - 1) + " (or " + std::to_string(n) + " with the last zero)");
  }

  const std::span<const fr> aux = assignment.subspan(pk.num_inputs());
  msm_sums sums;
  sums.a = msm(pk.a, assignment);
  sums.b_g1 = msm(pk.b_g1, assignment);
  sums.b_g2 = msm(pk.b_g2, assignment);
  sums.c = msm(pk.l, aux) + msm(pk.h, h);
  return sums;
}

proof assemble_proof_with_blinding(const proving_key& pk, const msm_sums& sums, const fr& r, const fr& s) {
  const auto& vk = pk.vk;
  const field::g1_jacobian a = (sums.a + vk.alpha_g1) + secret_multiple(vk.delta_g1, r);
  const field::g2_jacobian b = (sums.b_g2 + vk.beta_g2) + secret_multiple(vk.delta_g2, s);
  const field::g1_jacobian b1 = (sums.b_g1 + vk.beta_g1) + secret_multiple(vk.delta_g1, s);
  const field::g1_affine a_affine = a.to_affine();
  const wiped<fr> rs(r * s);
  field::g1_jacobian c = sums.c;
  c += secret_multiple(a_affine, s);
  c += secret_multiple(b1.to_affine(), r);
  c = c - secret_multiple(vk.delta_g1, *rs);
  return proof{a_affine, b.to_affine(), c.to_affine()};
}

proof assemble_proof(const proving_key& pk, const msm_sums& sums, secret_source& secrets) {
  const wiped<fr> r(secrets.uniform());
  const wiped<fr> s(secrets.uniform());
  return assemble_proof_with_blinding(pk, sums, *r, *s);
}

proof prove_with_blinding(const proving_key& pk, std::span<const fr> assignment, std::span<const fr> h,
                          const fr& r, const fr& s) {
  return assemble_proof_with_blinding(pk, compute_msm_sums(pk, assignment, h), r, s);
}

proof prove(const proving_key& pk, std::span<const fr> assignment, std::span<const fr> h, secret_source& secrets) {
  return assemble_proof(pk, compute_msm_sums(pk, assignment, h), secrets);
}

std::size_t estimate_prove_working_set(std::size_t num_variables, std::size_t domain_size) noexcept {
  // One MSM at a time over at most max(V, n) terms: 32 bytes of canonical scalar, 4 of index and
  // up to 2 x 32 of signed digits a term, doubled for headroom, plus the buckets of every window
  // on every thread (bounded here by 16 MiB).
  const std::size_t terms = std::max(num_variables, domain_size);
  return terms * 2 * (32 + 4 + 64) + (std::size_t{16} << 20);
}

std::vector<fr> quotient_coefficients(std::span<const fr> a, std::span<const fr> b, std::span<const fr> c) {
  const field::evaluation_domain domain(a.size());
  std::vector<fr> h(a.size());
  field::compute_quotient(a, b, c, h, domain);
  return h;
}

witness compute_witness(const r1cs::circuit& circuit, const r1cs::pce_matrices& matrices) {
  if (!matrices.matches(circuit))
    throw std::invalid_argument("compute_witness: the matrices are not those of " + circuit.id());
  witness out;
  out.assignment = r1cs::synthesize_witness(circuit);
  out.public_inputs = r1cs::public_inputs_of(circuit.shape(), out.assignment);
  const std::size_t n = matrices.domain_size;
  std::vector<fr> a(n), b(n), c(n);
  matrices.evaluate(out.assignment, a, b, c);
  out.h = quotient_coefficients(a, b, c);
  return out;
}

}  // namespace coprove::groth16
