// Seeded keys and proofs of MiMC at 2^10 (three partitions) and of the five-input products
// circuit (two witnesses), made once per test process and shared by the prover tests and the
// cross-checks with noble and snarkjs.
#pragma once

#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/prover.hpp>
#include <coprove/groth16/verifier.hpp>

#include "groth16/groth16_test_circuits.hpp"

#include <coprove/r1cs/mimc.hpp>

#include <memory>
#include <vector>

namespace coprove::groth16::testing {

struct proved_circuit {
  r1cs::pce_matrices matrices;
  proving_key pk;
  prepared_verifying_key pvk;
  std::vector<witness> witnesses;
  std::vector<proof> proofs;
};

/// Keys for a circuit family member and proofs of `count` witnesses (circuit made per index).
template <class MakeCircuit>
inline proved_circuit prove_all(MakeCircuit make, std::size_t count, std::uint64_t key_seed) {
  proved_circuit out;
  out.matrices = record_matrices(*make(0));
  auto key_secrets = secret_source::insecure_seeded(key_seed, "the prover tests' setup");
  out.pk = setup(out.matrices, key_secrets);
  out.pvk = prepared_verifying_key::from(out.pk.vk);
  auto blinding = secret_source::insecure_seeded(key_seed + 1, "the prover tests' proofs");
  for (std::size_t i = 0; i < count; ++i) {
    out.witnesses.push_back(compute_witness(*make(i), out.matrices));
    out.proofs.push_back(prove(out.pk, out.witnesses.back().assignment, out.witnesses.back().h, blinding));
  }
  return out;
}

inline const proved_circuit& mimc_proofs() {
  static const proved_circuit p = prove_all(
      [](std::size_t i) { return std::make_unique<r1cs::mimc_circuit>(10, r1cs::mimc_circuit::preimage_for(3, i)); },
      3, 21);
  return p;
}

inline const proved_circuit& products_proofs() {
  static const proved_circuit p = prove_all(
      [](std::size_t i) { return std::make_unique<public_products_circuit>(5, 6, 100 + i); }, 2, 31);
  return p;
}

}  // namespace coprove::groth16::testing
