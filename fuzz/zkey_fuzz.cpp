// libFuzzer target for the snarkjs zkey reader (groth16::decode_zkey): any bytes are a key whose
// counts agree with its sections and whose verifying key is usable, or a circom_file_error naming
// the file. A header that claims more than the file holds must be refused before anything is
// allocated from it (-malloc_limit_mb).
#include "fuzz_support.hpp"
#include "verifying_key_checks.hpp"

#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/binfile.hpp>

using namespace coprove;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string name = "fuzz.zkey";
  try {
    const groth16::zkey key = groth16::decode_zkey(fuzz::bytes_of(data, size), name);
    fuzz::check_verifying_key(key.pk.vk);
    fuzz::check(key.pk.vk.ic.size() == key.num_public + 1, "an accepted zkey's IC count is not nPublic + 1");
    fuzz::check(key.pk.a.size() == key.num_variables() && key.pk.b_g1.size() == key.num_variables() &&
                    key.pk.b_g2.size() == key.num_variables(),
                "an accepted zkey's A, B1, B2 are not one point per variable");
    fuzz::check(key.pk.h.size() == key.domain_size(), "an accepted zkey's H is not one point per domain row");
    fuzz::check(key.matrices && key.matrices->num_rows <= key.domain_size(),
                "an accepted zkey's coefficients use rows outside its domain");
  } catch (const r1cs::circom_file_error& e) {
    fuzz::expect_named(e, name);
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
