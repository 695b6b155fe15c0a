// A key root for the key endpoints' tests: a scratch folder holding a mimc/10 key directory (its
// bellman params written from the test key), a folder outside it that a symlink inside points to,
// and the loader a composition root would give the service (it reads `params` with every check).
#pragma once

#include <coprove/engine/engine.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/r1cs/circuits.hpp>

#include <catch2/catch.hpp>

#include <support/test_keys.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

namespace coprove::test {

inline groth16::key_shape mimc10_shape() {
  const auto circuit = r1cs::make_circuit("mimc", 10, 1, 0);
  return groth16::key_shape::of(groth16::record_matrices(*circuit));
}

struct key_root {
  std::filesystem::path base, root, outside;

  key_root() {
    char pattern[] = "/tmp/coprove-keys-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    base = pattern;
    root = base / "keys";
    outside = base / "elsewhere";
    std::filesystem::create_directories(root / "mimc10");
    std::filesystem::create_directories(outside / "mimc10");
    const auto key = test_keys({{"mimc", 10}}).front();
    groth16::write_params(*key.pk, mimc10_shape(), root / "mimc10" / "params");
    groth16::write_params(*key.pk, mimc10_shape(), outside / "mimc10" / "params");
    std::filesystem::create_directory_symlink(outside / "mimc10", root / "escape");
  }
  ~key_root() {
    std::error_code ignored;
    std::filesystem::remove_all(base, ignored);
  }

  /// Reads a mimc/10 key directory's params, every point checked, on the engine's CPU thread.
  static engine::key_source loader(const std::filesystem::path& dir) {
    return {dir.string(), [dir] {
              auto pk = std::make_shared<const groth16::proving_key>(
                  groth16::read_params(dir / "params", mimc10_shape()));
              return engine::loaded_key(engine::circuit_keys{"mimc", 10, std::move(pk), dir.string()});
            }};
  }
};

/// Proofs with keys loaded at run time from `root` (none at start), one partition admitted at a
/// time; `ServiceConfig` is job_api_config or http_service_config.
template <class ServiceConfig>
void keys_at_run_time(const key_root& root, engine::engine_config& e, ServiceConfig& c) {
  e.results = engine::result_kind::proof;
  e.key_memory_bytes = std::size_t{64} << 20;
  e.insecure_proof_seed = 1;
  e.depth_per_device = 1;
  c.key_roots = {root.root};
  c.key_loader = key_root::loader;
}

}  // namespace coprove::test
