// libFuzzer target for snarkjs's verification_key.json reader (groth16::read_verifying_key_json,
// which `coprove verify --vk` and key directories use): any bytes are a usable key whose IC count
// is its nPublic + 1, or a key_file_error naming the file.
#include "fuzz_support.hpp"
#include "verifying_key_checks.hpp"

#include <coprove/groth16/key_files.hpp>

using namespace coprove;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::write_scratch("vk.json", {data, size});
  try {
    const groth16::verifying_key vk = groth16::read_verifying_key_json(path);
    fuzz::check_verifying_key(vk, false);
  } catch (const groth16::key_file_error& e) {
    fuzz::expect_named(e, path.string());
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
