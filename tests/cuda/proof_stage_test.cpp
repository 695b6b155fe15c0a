// The proof's MSMs as a stage of the CUDA backend: their sums equal the host backend's (from the
// assignment with the matrices, and from a, b and c); a proving key goes to a device once and
// leaves it, with its memory, once nobody holds it; an MSM that cannot get its device memory
// fails its partition with the CUDA error and the engine goes on with the next job.
#include <coprove/cuda/cuda_backend.hpp>

#include <coprove/cuda/error.hpp>
#include <coprove/cuda/msm.hpp>
#include <coprove/engine/engine.hpp>
#include <coprove/engine/host_backend.hpp>
#include <coprove/engine/memory_plan.hpp>
#include <coprove/field/quotient.hpp>
#include <coprove/groth16/prover.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/pce.hpp>
#include <support/test_keys.hpp>

#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace cuda = coprove::cuda;
namespace groth16 = coprove::groth16;
namespace test = coprove::test;
using namespace coprove::field;
using namespace coprove::r1cs;
using namespace coprove::engine;

std::size_t device_free_bytes() {
  std::size_t free = 0, total = 0;
  COPROVE_CUDA_TRY(cudaMemGetInfo(&free, &total));
  return free;
}

// A MiMC partition's assignment (its circuit's PCE recorded first) and the matrices.
struct mimc_partition {
  explicit mimc_partition(unsigned log_n)
      : n(std::size_t{1} << log_n), domain(n), a(n), b(n), c(n), ea(n), eb(n), ec(n) {
    cache.synthesize(*make_circuit("mimc", log_n, 1, 0), a, b, c);
    const deferred_synthesis d = cache.synthesize_deferred(*make_circuit("mimc", log_n, 1, 1), a, b, c);
    REQUIRE(d.matrices);
    matrices = d.matrices;
    w.assign(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(d.assignment_size));
    matrices->evaluate(w, ea, eb, ec);
  }
  std::size_t n;
  evaluation_domain domain;
  pce_cache cache;
  std::vector<fr> a, b, c, ea, eb, ec, w;
  std::shared_ptr<const pce_matrices> matrices;
};

groth16::msm_sums run_sums(compute_backend& backend, const quotient_task& task) {
  auto [ec, result] = backend.async_quotient(worker_slot{0, 1}, task, boost::asio::use_future).get();
  INFO(ec.message());
  REQUIRE_FALSE(ec);
  CHECK(result.timings.msm_ns > 0);
  // The device's window sums come back in parts, combined by whoever takes them; the host
  // backend's whole.
  if (backend.name() == std::string_view("cuda")) {
    CHECK_FALSE(result.sums);
    REQUIRE(result.combine_sums);
  } else {
    CHECK_FALSE(result.combine_sums);
  }
  const std::optional<groth16::msm_sums> sums = result.take_sums();
  REQUIRE(sums);
  CHECK_FALSE(result.combine_sums);
  return *sums;
}

void check_equal(const groth16::msm_sums& x, const groth16::msm_sums& y) {
  CHECK(x.a.to_affine() == y.a.to_affine());
  CHECK(x.b_g1.to_affine() == y.b_g1.to_affine());
  CHECK(x.b_g2.to_affine() == y.b_g2.to_affine());
  CHECK(x.c.to_affine() == y.c.to_affine());
}

}  // namespace

TEST_CASE("the proof's MSMs on the CUDA backend give the host backend's sums", "[cuda][backend][proof][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  const unsigned log_n = GENERATE(10u, 13u);
  INFO("mimc/" << log_n);
  const auto key = test::test_key("mimc", log_n);
  mimc_partition p(log_n);
  auto gpu = cuda::make_cuda_backend({}, 2);
  host_backend host(1, 2);
  gpu->prepare_key(0, key, "mimc");
  REQUIRE(gpu->key_resident(0, *key));

  auto from_w = quotient_task::from_assignment(p.w, p.matrices, p.domain);
  from_w.evaluate_at(fr::from_uint64(5)).prove_with(key, p.w);
  auto from_abc = quotient_task::from_evaluations(p.ea, p.eb, p.ec, p.domain);
  from_abc.prove_with(key, p.w);
  const groth16::msm_sums expected = run_sums(host, from_w);
  check_equal(run_sums(*gpu, from_w), expected);
  check_equal(run_sums(*gpu, from_abc), expected);
  // The sums make the proof groth16::prove makes, which verifies.
  std::vector<fr> h(p.n);
  compute_quotient(p.ea, p.eb, p.ec, h, p.domain);
  const fr r = fr::from_uint64(3), s = fr::from_uint64(4);
  const groth16::proof proof = groth16::assemble_proof_with_blinding(*key, run_sums(*gpu, from_w), r, s);
  CHECK(proof == groth16::prove_with_blinding(*key, p.w, h, r, s));
  CHECK(groth16::verify(groth16::prepared_verifying_key::from(key->vk), proof,
                        public_inputs_of(make_circuit("mimc", log_n, 1, 1)->shape(), p.w))
            .accepted);
}

TEST_CASE("the proof's MSMs over shifted copies of the key's points give the host backend's sums",
          "[cuda][backend][proof][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  const unsigned log_n = 12;
  const auto key = test::test_key("mimc", log_n);
  mimc_partition p(log_n);
  host_backend host(1, 2);
  auto from_w = quotient_task::from_assignment(p.w, p.matrices, p.domain);
  from_w.prove_with(key, p.w);
  const groth16::msm_sums expected = run_sums(host, from_w);
  // Four copies for 12-bit windows (22 digits, 6 windows a copy), and thirteen at the plan's width.
  for (const auto& [copies, bits] : {std::pair{4u, 12u}, std::pair{13u, 0u}}) {
    INFO(copies << " copies, window " << bits);
    auto gpu = cuda::make_cuda_backend({}, 2, {}, 0, copies, bits);
    CHECK(gpu->device_key_copies() == copies);
    gpu->prepare_key(0, key, "mimc");
    CHECK(gpu->resident_key_bytes() == copies * device_key_bytes(*key));
    check_equal(run_sums(*gpu, from_w), expected);
  }
  // Copies the plan cannot use are refused when the backend is made.
  CHECK_THROWS_AS(cuda::make_cuda_backend({}, 2, {}, 0, 17, 0), std::invalid_argument);
  CHECK_THROWS_AS(cuda::make_cuda_backend({}, 2, {}, 0, 12, 24), std::invalid_argument);
  CHECK_THROWS_AS(cuda::make_cuda_backend({}, 2, {}, 0, 1, 16), std::invalid_argument);
}

TEST_CASE("a proving key goes to the device once and leaves it, with its memory, once nobody holds it",
          "[cuda][backend][proof][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  const std::size_t baseline = device_free_bytes();
  {
    auto backend = cuda::make_cuda_backend({}, 2);
    auto key = std::make_shared<const groth16::proving_key>(*test::test_key("mimc", 14));
    const auto other = test::test_key("mimc", 10);
    const std::size_t before = device_free_bytes();
    backend->prepare_key(0, key, "mimc/14");
    CHECK(backend->key_resident(0, *key));
    CHECK_FALSE(backend->key_resident(0, *other));
    CHECK(backend->resident_key_bytes() == device_key_bytes(*key));
    CHECK(before - device_free_bytes() >= device_key_bytes(*key));
    backend->prepare_key(0, key, "mimc/14");  // resident: nothing more
    CHECK(backend->resident_key_bytes() == device_key_bytes(*key));
    CHECK_THROWS_AS(backend->prepare_key(1 + cuda::cuda_device_count(), key, "mimc/14"), std::invalid_argument);
    CHECK_THROWS_AS(backend->prepare_key(0, nullptr, "none"), std::invalid_argument);

    key.reset();  // nobody holds it: the next prepare frees it
    backend->prepare_key(0, other, "mimc/10");
    CHECK(backend->resident_key_bytes() == device_key_bytes(*other));
  }
  // The backend's keys, pools and buffers are gone: the device's memory is back within a few MiB.
  const std::size_t after = device_free_bytes();
  CHECK(after + (std::size_t{8} << 20) >= baseline);
}

TEST_CASE("an MSM without device memory fails its partition with the CUDA error and the engine goes on",
          "[cuda][engine][proof][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  // A cap on a slot's MSM workspace that holds mimc/10's but not mimc/17's.
  const auto workspace = [](std::size_t count) { return cuda::msm_proof_workspace_bytes(count, count, count, {0, 1}); };
  const std::size_t limit = std::size_t{40} << 20;
  REQUIRE(workspace(std::size_t{1} << 10) * 4 < limit);
  REQUIRE(workspace(std::size_t{1} << 17) > 2 * limit);
  test::running_io rt;
  engine_config cfg;
  cfg.max_log_constraints = 17;
  cfg.memory_budget_bytes = std::size_t{4} << 30;
  cfg.depth_per_device = 2;
  cfg.keys = test::test_keys({{"mimc", 10}, {"mimc", 17}});
  engine e(rt.io.get_executor(), cfg, cuda::make_cuda_backend({}, 2, {}, limit));

  const auto id = e.submit(test::mimc_request(1, 17, 5));
  auto [big_ec, partial] = e.async_await(id, boost::asio::use_future).get();
  CHECK(big_ec == make_error_code(engine_errc::backend_failed));
  const auto status = e.status(id);
  REQUIRE(status);
  INFO(status->error);
  CHECK(status->error.find("out of memory") != std::string::npos);

  auto [ec, small] = test::prove(e, test::mimc_request(3, 10, 6));
  REQUIRE_FALSE(ec);
  const auto pvk = groth16::prepared_verifying_key::from(test::test_key("mimc", 10)->vk);
  for (const auto& part : small.partitions) {
    REQUIRE(part.proof);
    CHECK(groth16::verify(pvk, *part.proof, part.public_inputs).accepted);
  }
  test::require_at_baseline(e);
}
