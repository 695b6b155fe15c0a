// The engine on the CUDA backend: every partition verifies and is pinned, the records are
// bit-identical to the host backend's, the semaphore bounds hold, and cancellation and failures
// give everything back, as on the host backend; proofs made from the GPU's quotient verify and, in
// the deterministic mode, equal the host backend's bit for bit.
#include <coprove/cuda/cuda_backend.hpp>

#include <coprove/engine/engine.hpp>
#include <coprove/engine/host_backend.hpp>
#include <coprove/engine/memory_plan.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_witness.hpp>
#include <coprove/runtime/spin_runner.hpp>
#include <support/test_keys.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include "circom_test_support.hpp"
#include "engine_test_support.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <tuple>

namespace {

namespace cuda = coprove::cuda;
namespace runtime = coprove::runtime;
namespace test = coprove::test;
using namespace coprove::field;
using namespace coprove::r1cs;
using namespace coprove::engine;

using test::prove;
using test::require_at_baseline;
using test::running_io;

engine_config gpu_config() {
  engine_config cfg;
  cfg.results = result_kind::evaluation_record;
  cfg.max_log_constraints = 14;
  cfg.memory_budget_bytes = std::size_t{2} << 30;
  return cfg;
}

prove_request request(std::size_t partitions, unsigned log_constraints, std::uint64_t seed) {
  return test::mimc_request(partitions, log_constraints, seed);
}

}  // namespace

TEST_CASE("proofs from the CUDA backend's quotient verify and equal the host backend's", "[cuda][engine][gpu][proof]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  running_io rt;
  auto config = [] {
    engine_config cfg;
    cfg.max_log_constraints = 12;
    cfg.memory_budget_bytes = std::size_t{2} << 30;
    cfg.keys = test::test_keys({{"mimc", 12}});
    cfg.insecure_proof_seed = 9;
    return cfg;
  };
  const prove_request r = request(4, 12, 3);
  prove_result on_host;
  {
    engine e(rt.io.get_executor(), config(), make_host_backend(1, 2));
    CHECK(e.status_json().at("device_keys").at("copies").to_number<std::size_t>() == 1);
    auto [ec, result] = prove(e, r);
    REQUIRE_FALSE(ec);
    on_host = std::move(result);
  }
  const auto pvk = coprove::groth16::prepared_verifying_key::from(test::test_key("mimc", 12)->vk);
  // One copy of the key's points, and msm_copies auto: 13 copies, as a 2^12 key fits many times over.
  for (const unsigned copies : {1u, 0u}) {
    INFO("msm_copies " << copies);
    engine e(rt.io.get_executor(), config(), cuda::make_cuda_backend({}, 2, {}, 0, copies));
    const auto keys = e.status_json().at("device_keys").as_object();
    CHECK(keys.at("copies").to_number<std::size_t>() == (copies == 0 ? 13 : 1));
    CHECK(keys.at("source") == (copies == 0 ? "auto" : "configured"));
    auto [ec, on_gpu] = prove(e, r);
    REQUIRE_FALSE(ec);
    require_at_baseline(e);
    REQUIRE(on_gpu.partitions.size() == r.partitions);
    for (std::size_t p = 0; p < r.partitions; ++p) {
      INFO("partition " << p);
      REQUIRE(on_gpu.partitions[p].proof);
      CHECK(on_gpu.partitions[p].is_pinned);
      CHECK(coprove::groth16::verify(pvk, *on_gpu.partitions[p].proof, on_gpu.partitions[p].public_inputs).accepted);
      CHECK(*on_gpu.partitions[p].proof == *on_host.partitions[p].proof);
    }
  }
}

TEST_CASE("a CUDA backend with msm_copies auto settles once, before any key, at 1, 13 or 12", "[cuda][backend][gpu][proof]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  auto backend = cuda::make_cuda_backend({}, 2, {}, 0, 0);
  CHECK(backend->device_key_copies() == 1);  // until settled
  CHECK(backend->device_key_copies_wanted() == std::vector<std::size_t>{13, 12});
  CHECK_THROWS_AS(backend->settle_device_key_copies(5), std::logic_error);
  // The MSMs' workspace over 13 copies (20-bit windows) is not one copy's (16-bit windows).
  const std::size_t n = std::size_t{1} << 20;
  CHECK(backend->device_working_bytes(n, n, 13) != backend->device_working_bytes(n, n, 1));
  backend->settle_device_key_copies(13);
  CHECK(backend->device_key_copies() == 13);
  backend->prepare_key(0, test::test_key("mimc", 10), "mimc/10");
  CHECK(backend->resident_key_bytes() == 13 * device_key_bytes(*test::test_key("mimc", 10)));
  CHECK_THROWS_AS(backend->settle_device_key_copies(1), std::logic_error);
  CHECK_THROWS_AS(cuda::make_cuda_backend({}, 2, {}, 0, 4)->settle_device_key_copies(4), std::logic_error);
  CHECK_THROWS_AS(cuda::make_cuda_backend({}, 2, {}, 0, 0, 20), std::invalid_argument);
  // The second count, where 13 do not fit: the key is charged and held 12 times.
  auto second = cuda::make_cuda_backend({}, 2, {}, 0, 0);
  second->settle_device_key_copies(12);
  CHECK(second->device_key_copies() == 12);
  second->prepare_key(0, test::test_key("mimc", 10), "mimc/10");
  CHECK(second->resident_key_bytes() == 12 * device_key_bytes(*test::test_key("mimc", 10)));
}

TEST_CASE("proofs from a zkey and circom witnesses on the CUDA backend verify and equal the host backend's",
          "[cuda][engine][gpu][proof][zkey]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  running_io rt;
  const auto dir = coprove::circom_fixtures::circom_data_dir();
  const auto key = std::make_shared<const coprove::groth16::zkey>(coprove::groth16::read_zkey(dir / "poseidon_chain.zkey"));
  auto config = [&] {
    engine_config cfg;
    cfg.max_log_constraints = 12;
    cfg.memory_budget_bytes = std::size_t{2} << 30;
    cfg.zkey_circuits = {{"poseidon", key}};
    cfg.insecure_proof_seed = 9;
    return cfg;
  };
  prove_request r;
  r.circuit = "poseidon";
  r.witnesses = std::make_shared<const std::vector<std::vector<fr>>>(std::vector<std::vector<fr>>{
      read_wtns(dir / "poseidon_chain_1.wtns"), read_wtns(dir / "poseidon_chain_2.wtns")});
  prove_result on_gpu, on_host;
  {
    engine e(rt.io.get_executor(), config(), cuda::make_cuda_backend({}, 2));
    auto [ec, result] = prove(e, r);
    REQUIRE_FALSE(ec);
    on_gpu = std::move(result);
    require_at_baseline(e);
  }
  {
    engine e(rt.io.get_executor(), config(), make_host_backend(1, 2));
    auto [ec, result] = prove(e, r);
    REQUIRE_FALSE(ec);
    on_host = std::move(result);
  }
  const auto pvk = coprove::groth16::prepared_verifying_key::from(key->pk.vk);
  REQUIRE(on_gpu.partitions.size() == 2);
  for (std::size_t p = 0; p < 2; ++p) {
    INFO("partition " << p);
    REQUIRE(on_gpu.partitions[p].proof);
    CHECK(on_gpu.partitions[p].spmv_on_backend);
    CHECK(coprove::groth16::verify(pvk, *on_gpu.partitions[p].proof, on_gpu.partitions[p].public_inputs).accepted);
    CHECK(*on_gpu.partitions[p].proof == *on_host.partitions[p].proof);
  }
}

TEST_CASE("the CUDA backend proves pinned partitions bit-identical to the host backend", "[cuda][engine][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  running_io rt;
  prove_result on_gpu, on_host;
  {
    engine e(rt.io.get_executor(), gpu_config(), cuda::make_cuda_backend({}, 2));
    CHECK(e.backend().name() == "cuda");
    auto [ec, r] = prove(e, request(6, 14, 11));
    REQUIRE_FALSE(ec);
    on_gpu = std::move(r);
    std::size_t slow = 0;
    for (const auto& p : on_gpu.partitions) {
      CHECK(p.verified);
      CHECK(p.is_pinned);
      CHECK(p.timings.h2d_ns > 0);
      CHECK(p.timings.gpu_compute_ns > 0);
      CHECK(p.timings.d2h_ns > 0);
      CHECK(p.timings.evaluation_ns > 0);  // device time of the evaluation at zeta
      // Except for the partition that built the PCE, only the assignment is copied; the GPU does the SpMV.
      CHECK(p.spmv_on_backend == p.pce_used);
      CHECK((p.timings.spmv_ns > 0) == p.pce_used);
      slow += p.pce_used ? 0 : 1;
    }
    CHECK(slow == 1);
    const auto report = e.report_json();
    CHECK(report.at("pinned_pool").at("fallbacks").to_number<std::uint64_t>() == 0);
    CHECK(report.at("pinned_pool").at("allocator").as_string() != "pageable");
    // The measured depth may have fallen below what was in flight earlier; never above its limit.
    CHECK(report.at("dispatch").at("max_in_flight").to_number<std::size_t>() <=
          report.at("dispatch").at("depth_max").to_number<std::size_t>() * e.backend().device_count());
    CHECK(report.at("h2d_gb_per_s").to_number<double>() > 0);
    require_at_baseline(e);
  }
  {
    engine e(rt.io.get_executor(), gpu_config(), make_host_backend(1, 2));
    auto [ec, r] = prove(e, request(6, 14, 11));
    REQUIRE_FALSE(ec);
    on_host = std::move(r);
  }
  prove_result host_spmv;
  {
    // The SpMV on the synthesis threads and a, b, c copied: the same records.
    auto cfg = gpu_config();
    cfg.backend_spmv = false;
    engine e(rt.io.get_executor(), cfg, cuda::make_cuda_backend({}, 2));
    auto [ec, r] = prove(e, request(6, 14, 11));
    REQUIRE_FALSE(ec);
    host_spmv = std::move(r);
    for (const auto& p : host_spmv.partitions) CHECK_FALSE(p.spmv_on_backend);
    require_at_baseline(e);
  }
  REQUIRE(on_gpu.partitions.size() == on_host.partitions.size());
  for (std::size_t i = 0; i < on_gpu.partitions.size(); ++i) {
    CHECK(on_gpu.partitions[i].record == on_host.partitions[i].record);
    CHECK(host_spmv.partitions[i].record == on_host.partitions[i].record);
  }
}

TEST_CASE("on the CUDA backend cancellation and a failing synthesis give everything back", "[cuda][engine][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  running_io rt;
  auto cfg = gpu_config();
  std::atomic<std::uint64_t> doomed{0};
  cfg.synthesis_hook = [&](std::uint64_t job, std::size_t partition) {
    if (job == doomed.load() && partition == 3) throw std::runtime_error("injected synthesis failure");
  };
  engine e(rt.io.get_executor(), cfg, cuda::make_cuda_backend({}, 2));
  const auto cancelled = e.submit(request(16, 14, 1));
  doomed = e.submit(request(8, 14, 2));
  const auto fine = e.submit(request(4, 14, 3));
  e.cancel(cancelled);
  auto [ec1, r1] = e.async_await(cancelled, boost::asio::use_future).get();
  auto [ec2, r2] = e.async_await(doomed.load(), boost::asio::use_future).get();
  auto [ec3, r3] = e.async_await(fine, boost::asio::use_future).get();
  CHECK(ec1 == std::errc::operation_canceled);
  CHECK(ec2 == make_error_code(engine_errc::synthesis_failed));
  REQUIRE_FALSE(ec3);
  for (const auto& p : r3.partitions) {
    CHECK(p.verified);
    CHECK(p.is_pinned);
  }
  require_at_baseline(e);
}

TEST_CASE("the CUDA backend rejects bad device lists", "[cuda][engine][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  CHECK_THROWS_AS(cuda::make_cuda_backend({0}, 1), std::invalid_argument);
  CHECK_THROWS_AS(cuda::make_cuda_backend({0, 0}, 2), std::invalid_argument);
  CHECK_THROWS_AS(cuda::make_cuda_backend({static_cast<int>(cuda::cuda_device_count())}, 2), std::invalid_argument);
}

TEST_CASE("an io thread that polls the CUDA backend's bridges finishes GPU completions itself", "[cuda][engine][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  CHECK_THROWS_AS(cuda::make_cuda_backend({}, 2, "carrier_pigeon"), std::invalid_argument);
  for (const char* strategy : {"stream_write", "event_poller"}) {
    INFO(strategy);
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    runtime::spin_stats stats;
    std::unique_ptr<engine> e = std::make_unique<engine>(io.get_executor(), gpu_config(),
                                                         cuda::make_cuda_backend({}, 2, strategy));
    runtime::spin_source* source = e->backend().completion_source();
    REQUIRE(source != nullptr);
    // A long spin window, so that the io thread is still spinning when the GPU finishes.
    std::thread thread([&] { runtime::run_spinning(io, std::chrono::milliseconds(50), stats, source); });
    auto [ec, r] = prove(*e, request(6, 14, 11));
    REQUIRE_FALSE(ec);
    for (const auto& p : r.partitions) CHECK(p.verified);
    require_at_baseline(*e);
    e->async_shutdown(true, boost::asio::use_future).get();
    work.reset();
    thread.join();  // as in the app: the io thread returns, then the engine goes
    e.reset();
    CHECK(stats.source_completions > 0);
  }
  CHECK(make_host_backend(1, 2)->completion_source() == nullptr);
}
