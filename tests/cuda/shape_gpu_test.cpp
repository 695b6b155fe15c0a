// Circuit shapes on the CUDA backend: circom circuits keyed by snarkjs (tests/data/gpu/shapes, made
// by scripts/gpu_shape_fixtures.sh, where snarkjs proves and verifies each) with one constraint, no
// public signal, more wires than the domain, hundreds of public signals, a domain exactly full and
// one just past a power of two. Each proves on the CUDA backend, with one copy of the key's points
// and with msm_copies auto (13 copies, each query's windows as wide as the plan picks for its
// count), and every proof verifies and equals the host backend's bit for bit.
#include <coprove/cuda/cuda_backend.hpp>

#include <coprove/engine/engine.hpp>
#include <coprove/engine/host_backend.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_witness.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace cuda = coprove::cuda;
namespace groth16 = coprove::groth16;
namespace test = coprove::test;
using namespace coprove::engine;

/// tests/data/gpu/shapes, or $COPROVE_SHAPES_DATA where the tests run on a copy elsewhere.
std::filesystem::path shapes_dir() {
  if (const char* dir = std::getenv("COPROVE_SHAPES_DATA"); dir != nullptr && *dir != '\0') return dir;
  return std::filesystem::path(COPROVE_SOURCE_DIR) / "tests" / "data" / "gpu" / "shapes";
}

struct shape {
  const char* name;
  std::size_t constraints, wires, public_signals, domain;
};

// As snarkjs r1cs info reads them; the domain holds constraints + public + 1 rows.
constexpr shape shapes[] = {
    {"one_constraint", 1, 4, 1, 4},   {"no_public", 2, 5, 0, 4},     {"wide_wires", 61, 122, 1, 64},
    {"many_public", 384, 513, 256, 1024}, {"domain_full", 61, 63, 2, 64}, {"past_power", 62, 64, 2, 128},
};

prove_result prove_on(test::running_io& rt, const std::string& name, const std::shared_ptr<const groth16::zkey>& key,
                      const prove_request& r, std::unique_ptr<compute_backend> backend) {
  engine_config cfg;
  cfg.max_log_constraints = 12;
  cfg.memory_budget_bytes = std::size_t{2} << 30;
  cfg.zkey_circuits = {{name, key}};
  cfg.insecure_proof_seed = 9;
  engine e(rt.io.get_executor(), cfg, std::move(backend));
  auto [ec, result] = test::prove(e, r);
  INFO(name << " on the " << e.backend().name() << " backend: " << ec.message());
  REQUIRE_FALSE(ec);
  test::require_at_baseline(e);
  return result;
}

}  // namespace

TEST_CASE("circom circuits of every shape prove on the CUDA backend, with and without copies, as on the host",
          "[cuda][engine][gpu][proof][zkey][shapes]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  test::running_io rt;
  for (const shape& s : shapes) {
    INFO(s.name);
    const auto dir = shapes_dir();
    const auto key = std::make_shared<const groth16::zkey>(groth16::read_zkey(dir / (std::string(s.name) + ".zkey")));
    // The fixture is the shape it is named for.
    REQUIRE(key->num_public == s.public_signals);
    REQUIRE(key->num_variables() == s.wires);
    REQUIRE(key->domain_size() == s.domain);
    REQUIRE(key->pk.num_inputs() == s.public_signals + 1);
    REQUIRE(s.constraints + s.public_signals + 1 <= s.domain);
    REQUIRE(2 * (s.constraints + s.public_signals + 1) > s.domain);
    prove_request r;
    r.circuit = s.name;
    r.witnesses = std::make_shared<const std::vector<std::vector<coprove::field::fr>>>(
        std::vector<std::vector<coprove::field::fr>>{
            coprove::r1cs::read_wtns(dir / (std::string(s.name) + "_1.wtns")),
            coprove::r1cs::read_wtns(dir / (std::string(s.name) + "_2.wtns"))});
    const prove_result on_host = prove_on(rt, s.name, key, r, make_host_backend(1, 2));
    const auto pvk = groth16::prepared_verifying_key::from(key->pk.vk);
    for (const unsigned copies : {1u, 0u}) {
      INFO("msm_copies " << copies);
      const prove_result on_gpu = prove_on(rt, s.name, key, r, cuda::make_cuda_backend({}, 2, {}, 0, copies));
      REQUIRE(on_gpu.partitions.size() == 2);
      for (std::size_t p = 0; p < 2; ++p) {
        INFO("witness " << p + 1);
        REQUIRE(on_gpu.partitions[p].proof);
        CHECK(on_gpu.partitions[p].spmv_on_backend);
        CHECK(on_gpu.partitions[p].public_inputs.size() == s.public_signals);
        CHECK(groth16::verify(pvk, *on_gpu.partitions[p].proof, on_gpu.partitions[p].public_inputs).accepted);
        CHECK(*on_gpu.partitions[p].proof == *on_host.partitions[p].proof);
      }
    }
  }
}
