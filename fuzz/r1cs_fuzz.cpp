// libFuzzer target for the circom constraint-file reader (r1cs::circom_r1cs::decode), then the
// matrices snarkjs proves on (circom_r1cs::matrices, as `coprove setup --r1cs` and `coprove prove
// --r1cs` use it): any bytes are a circuit whose wires and constraints the file holds, or a
// circom_file_error naming the file.
#include "fuzz_support.hpp"

#include <coprove/r1cs/binfile.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>

#include <stdexcept>

using namespace coprove;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string name = "fuzz.r1cs";
  try {
    const auto circuit = r1cs::circom_r1cs::decode(fuzz::bytes_of(data, size), name);
    fuzz::check(circuit.num_public() < circuit.num_wires(), "an accepted circuit has more public signals than wires");
    // Each constraint takes at least three counts (12 bytes) of the file.
    fuzz::check(circuit.num_constraints() <= size / 12, "an accepted circuit has more constraints than its bytes hold");
    try {
      const auto matrices = circuit.matrices();
      fuzz::check(matrices.num_rows <= matrices.domain_size, "the matrices use rows outside their domain");
      matrices.validate();
    } catch (const std::length_error&) {
      // documented: a domain past 2^31 rows
    }
  } catch (const r1cs::circom_file_error& e) {
    fuzz::expect_named(e, name);
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
