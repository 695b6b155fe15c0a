// What every reader of a verifying key promises about a key it accepts, checked by the targets
// that read one (vk, vk.json, params, zkey): every point on its curve and in the subgroup, and
// none of alpha, beta, gamma, delta or an IC point the identity (with gamma and delta at infinity
// a forged proof verifies for any inputs).
#pragma once

#include "fuzz_support.hpp"

#include <coprove/groth16/keys.hpp>

#include <string>

namespace coprove::fuzz {

template <class Point>
void check_key_point(const Point& p, const std::string& name) {
  check(p.is_on_curve() && p.is_torsion_free(), "an accepted verifying key's " + name + " is not in the subgroup");
  check(!p.is_identity(), "an accepted verifying key's " + name + " is the identity");
}

/// Fails unless `vk` is one a verifier may use. beta_g1 and delta_g1 are checked only when
/// `with_g1_copies` (verification_key.json does not carry them).
inline void check_verifying_key(const groth16::verifying_key& vk, bool with_g1_copies = true) {
  check_key_point(vk.alpha_g1, "alpha_g1");
  check_key_point(vk.beta_g2, "beta_g2");
  check_key_point(vk.gamma_g2, "gamma_g2");
  check_key_point(vk.delta_g2, "delta_g2");
  if (with_g1_copies) {
    check_key_point(vk.beta_g1, "beta_g1");
    check_key_point(vk.delta_g1, "delta_g1");
  }
  check(!vk.ic.empty(), "an accepted verifying key has no IC point");
  for (std::size_t i = 0; i < vk.ic.size(); ++i) check_key_point(vk.ic[i], "ic[" + std::to_string(i) + "]");
}

}  // namespace coprove::fuzz
