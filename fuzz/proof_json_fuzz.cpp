// libFuzzer target for snarkjs's proof.json reader (groth16::proof_from_snarkjs_json, as `coprove
// verify --proof` uses it): any JSON is a proof whose points are in their groups and not the
// identity and that writes back to the same proof, or a proof_format_error.
#include "fuzz_support.hpp"
#include "json_input.hpp"

#include <coprove/groth16/proof.hpp>

using namespace coprove;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto document = fuzz::json_input(data, size);
  if (!document) return 0;
  try {
    const groth16::proof p = groth16::proof_from_snarkjs_json(*document);
    for (const auto* point : {&p.a, &p.c}) {
      fuzz::check(!point->is_identity() && point->is_on_curve() && point->is_torsion_free(),
                  "an accepted proof's A or C is not a point of G1 other than the identity");
    }
    fuzz::check(!p.b.is_identity() && p.b.is_on_curve() && p.b.is_torsion_free(),
                "an accepted proof's B is not a point of G2 other than the identity");
    fuzz::check(groth16::proof_from_snarkjs_json(groth16::proof_to_snarkjs_json(p)) == p,
                "an accepted proof does not survive writing it back");
  } catch (const groth16::proof_format_error&) {
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
