// libFuzzer target for the circom witness reader (r1cs::decode_wtns): any bytes are a witness
// that encodes back to the same bytes, or a circom_file_error naming the file. A value count that
// the file cannot hold must be refused before anything is allocated from it.
#include "fuzz_support.hpp"

#include <coprove/r1cs/binfile.hpp>
#include <coprove/r1cs/circom_witness.hpp>

using namespace coprove;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string name = "fuzz.wtns";
  try {
    const auto values = r1cs::decode_wtns(fuzz::bytes_of(data, size), name);
    fuzz::check(!values.empty() && values.front() == field::fr::one(), "an accepted witness does not start with one");
    fuzz::check(r1cs::wtns_file_bytes(values.size()) <= size, "an accepted witness holds more values than its bytes");
  } catch (const r1cs::circom_file_error& e) {
    fuzz::expect_named(e, name);
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
