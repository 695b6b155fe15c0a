// What the key tests share: a proof made with a loaded key, written in snarkjs's form and checked
// by snarkjs against the key directory's vk.json.
#pragma once

#include "keys.hpp"
#include "proof_report_support.hpp"

#include <string>

namespace coprove::test {

/// Proves mimc at the key's size with input `input`, writes proof.json and public.json into
/// `dir`, and returns what `snarkjs groth16 verify` says of them against the key's vk.json.
inline process_result snarkjs_verify_a_proof(const app::key_set& keys, std::uint64_t input, const scratch_dir& dir) {
  auto blinding = groth16::secret_source::system();
  const auto circuit = r1cs::make_circuit(keys.circuit, keys.log_constraints, input, 0);
  const auto w = groth16::compute_witness(*circuit, *keys.matrices);
  const auto proof = groth16::prove(*keys.pk, w.assignment, w.h, blinding);
  write_file(dir.file("proof.json"), boost::json::serialize(groth16::proof_to_snarkjs_json(proof)));
  write_file(dir.file("public.json"), boost::json::serialize(groth16::public_inputs_to_snarkjs_json(w.public_inputs)));
  return run_process({require_node(dir), snarkjs_cli, "groth16", "verify", (keys.dir / "vk.json").string(),
                      dir.file("public.json"), dir.file("proof.json")},
                     dir);
}

}  // namespace coprove::test
