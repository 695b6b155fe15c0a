// libFuzzer target for snarkjs's public.json reader (groth16::public_inputs_from_snarkjs_json, as
// `coprove verify --public` uses it): any JSON is a list of inputs below r that writes back to the
// same values, or a proof_format_error.
#include "fuzz_support.hpp"
#include "json_input.hpp"

#include <coprove/groth16/proof.hpp>

using namespace coprove;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto document = fuzz::json_input(data, size);
  if (!document) return 0;
  try {
    const auto inputs = groth16::public_inputs_from_snarkjs_json(*document);
    fuzz::check(document->is_array() && inputs.size() == document->get_array().size(),
                "accepted public inputs are not one per array entry");
    fuzz::check(groth16::public_inputs_from_snarkjs_json(groth16::public_inputs_to_snarkjs_json(inputs)) == inputs,
                "accepted public inputs do not survive writing them back");
  } catch (const groth16::proof_format_error&) {
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
