// libFuzzer target for bellman's VerifyingKey reader (groth16::decode_verifying_key, which
// read_verifying_key and `coprove verify --vk FILE` use): any bytes are a usable key that encodes
// back to the same bytes, or a key_file_error naming the file. An IC count that the file cannot
// hold must be refused before anything is allocated from it.
#include "fuzz_support.hpp"
#include "verifying_key_checks.hpp"

#include <coprove/groth16/key_files.hpp>

using namespace coprove;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string name = "fuzz.vk";
  try {
    const groth16::verifying_key vk = groth16::decode_verifying_key({data, size}, name);
    fuzz::check_verifying_key(vk);
    const auto encoded = groth16::encode_verifying_key(vk);
    fuzz::check(encoded == fuzz::bytes_of(data, size), "an accepted vk does not encode back to its bytes");
  } catch (const groth16::key_file_error& e) {
    fuzz::expect_named(e, name);
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
