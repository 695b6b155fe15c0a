// libFuzzer target for the constraint-cache file reader (r1cs::pce_cache::load, as `coprove run`
// and `serve` read <circuit>_<log>.pce from engine.pce_cache_dir): any bytes are entries whose
// matrices pass their own invariants, or a pce_error naming the file, and a refused file adds
// nothing. Sizes that the file cannot hold must be refused before anything is allocated from them.
#include "fuzz_support.hpp"

#include <coprove/r1cs/constraint_matrices.hpp>
#include <coprove/r1cs/pce.hpp>

using namespace coprove;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = fuzz::write_scratch("cache.pce", {data, size});
  r1cs::pce_cache cache;
  try {
    const std::size_t added = cache.load(path.string());
    fuzz::check(added == cache.circuit_ids().size(), "load's count is not the entries it added");
    for (const auto& id : cache.circuit_ids()) {
      const auto matrices = cache.find(id);
      fuzz::check(matrices != nullptr, "a loaded entry cannot be found");
      matrices->validate();
      fuzz::check(matrices->num_rows <= matrices->domain_size, "a loaded entry uses rows outside its domain");
    }
  } catch (const r1cs::pce_error& e) {
    fuzz::expect_named(e, path.string());
    fuzz::check(cache.circuit_ids().empty(), "a refused file added entries");
  } catch (const std::exception& e) {
    fuzz::unexpected(e);
  }
  return 0;
}
