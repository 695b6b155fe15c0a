// libFuzzer target for bellman's params reader (groth16::read_params), for the shape of circom's
// cube circuit (tests/data/circom/cube.r1cs: small enough for thousands of runs a second): any
// bytes are a proving key of that shape with a usable verifying key, or a key_file_error naming
// the file. A section count that the file cannot hold must be refused before anything is
// allocated from it.
//
// COPROVE_FUZZ_WRITE_SEED=DIR params_fuzz writes the seed inputs (DIR/params and DIR/vk: a key of
// that shape from an insecure seed) and exits: how fuzz/corpus/params_fuzz and vk_fuzz got theirs.
#include "fuzz_support.hpp"
#include "verifying_key_checks.hpp"

#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>

#include <cstdlib>
#include <filesystem>

using namespace coprove;

namespace {

const r1cs::pce_matrices& cube_matrices() {
  static const r1cs::pce_matrices matrices =
      r1cs::circom_r1cs::read(fuzz::fixture("tests/data/circom/cube.r1cs")).matrices();
  return matrices;
}

const groth16::key_shape& cube_shape() {
  static const groth16::key_shape shape = groth16::key_shape::of(cube_matrices());
  return shape;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("COPROVE_FUZZ_WRITE_SEED")) {
    auto secrets = groth16::secret_source::insecure_seeded(11, "the params_fuzz seed");
    const groth16::proving_key pk = groth16::setup(cube_matrices(), secrets);
    std::filesystem::create_directories(dir);
    groth16::write_params(pk, cube_shape(), std::filesystem::path(dir) / "params");
    groth16::write_verifying_key(pk.vk, std::filesystem::path(dir) / "vk");
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& shape = cube_shape();
  const auto path = fuzz::write_scratch("params", {data, size});
  try {
    const groth16::proving_key pk = groth16::read_params(path, shape);
    fuzz::check_verifying_key(pk.vk);
    fuzz::check(pk.vk.ic.size() == shape.num_inputs, "accepted params have an IC count other than the shape's");
    fuzz::check(pk.a.size() == shape.num_variables() && pk.b_g1.size() == shape.num_variables() &&
                    pk.b_g2.size() == shape.num_variables() && pk.l.size() == shape.num_aux,
                "accepted params' queries are not the shape's sizes");
  } catch (const groth16::key_file_error& e) {
    fuzz::expect_named(e, path.string());
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
