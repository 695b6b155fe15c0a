// The engine's defaults on the host backend: the depth measured from stage times (up and down,
// within the CPU's and the memory plan's limits, said in the report and the status), the
// constraint cache kept in files across engines (written, loaded, rebuilt when corrupt) and the
// bottleneck named.
#include <coprove/engine/engine.hpp>

#include <coprove/engine/host_backend.hpp>
#include <coprove/runtime/metrics.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

namespace test = coprove::test;
using namespace coprove::engine;
using namespace std::chrono_literals;
using test::prove;
using test::require_at_baseline;
using test::running_io;

// 8 synthesis threads: the CPU's limit on the depth (8 + 2 x 2 slots) is well above the estimate.
engine_config records_config() { return test::records_config(10, 8); }

using coprove::test::temp_dir;

}  // namespace

TEST_CASE("with the depth unset the engine measures it and says what it came from", "[prover][engine][depth][cpu]") {
  running_io rt;
  engine e(rt.io.get_executor(), records_config(), make_host_backend(1, 2));
  // 8 threads, 2 slots: the CPU can use 3 x 8 + 4 a device, and the plan is sized for it.
  const depth_basis before = e.status_snapshot().dispatch.basis;
  CHECK(before.source == "measured");
  CHECK(before.max == 28);
  CHECK(before.max_reason == "cpu");
  CHECK(e.plan().pinned_slots == 28);
  CHECK(e.depth_per_device() == 28);  // it starts at its most
  auto [ec, result] = prove(e, test::mimc_request(12, 10, 3));
  REQUIRE_FALSE(ec);
  const engine_report report = e.report();
  CHECK(report.dispatch.basis.source == "measured");
  CHECK(report.dispatch.basis.samples == 12);
  CHECK(report.dispatch.basis.device_ms > 0);
  CHECK(report.dispatch.depth == e.depth_per_device());
  CHECK(report.dispatch.depth <= 20);
  CHECK(report.dispatch.max_in_flight <= 28);
  CHECK_FALSE(report.bottleneck.message.empty());
  const engine_status status = e.status_snapshot();
  CHECK(status.bottleneck.kind == report.bottleneck.kind);
  // The host backend keeps its keys in host memory: one copy, configured, in both.
  CHECK(report.device_keys.copies == 1);
  CHECK(report.device_keys.source == "configured");
  CHECK(status.device_keys.copies == 1);
  CHECK(status.device_keys.source == "configured");
  require_at_baseline(e);
}

TEST_CASE("a configured depth stays fixed and is said to be configured", "[prover][engine][depth][cpu]") {
  running_io rt;
  auto cfg = records_config();
  cfg.depth_per_device = 3;
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  auto [ec, result] = prove(e, test::mimc_request(8, 10, 3));
  REQUIRE_FALSE(ec);
  const engine_report::dispatch_figures dispatch = e.report().dispatch;
  CHECK(dispatch.basis.source == "configured");
  CHECK(dispatch.depth == 3);
  CHECK(dispatch.basis.max == 3);
  CHECK(dispatch.basis.changes == 0);
  CHECK(dispatch.max_in_flight <= 3);
  CHECK(e.plan().pinned_slots == 3);
}

TEST_CASE("the measured depth follows injected synthesis times up and back down", "[prover][engine][depth][cpu]") {
  running_io rt;
  auto cfg = records_config();
  // Synthesis takes 300 ms while `slow` is set: many times a 2^10 quotient on a worker slot, even
  // under a sanitizer.
  std::atomic<bool> slow{false};
  cfg.synthesis_hook = [&slow](std::uint64_t, std::size_t) {
    if (slow.load()) std::this_thread::sleep_for(300ms);
  };
  engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
  // It starts at its most (3 x 8 threads + 2 x 2 slots) ...
  const std::size_t start = e.depth_per_device();
  CHECK(start == 28);
  // ... and comes down when synthesis is as fast as it is: the device's time dominates.
  auto [ec0, first] = prove(e, test::mimc_request(64, 10, 1));
  REQUIRE_FALSE(ec0);
  const std::size_t low = e.depth_per_device();
  CHECK(low < start);
  CHECK(low >= 2);
  CHECK(e.status_snapshot().gpu_slots.capacity == low);
  require_at_baseline(e);

  // Up to what the formula asks when synthesis slows, within what a fall waits for (at 28 it falls
  // only by seven or more), never beyond the CPU's limit.
  slow.store(true);
  auto [ec, result] = prove(e, test::mimc_request(24, 10, 2));
  REQUIRE_FALSE(ec);
  const std::size_t up = e.depth_per_device();
  engine_report report = e.report();
  const std::size_t wanted = std::min<std::size_t>(28, report.dispatch.basis.wanted);
  CHECK(up > low);
  CHECK(up >= wanted);
  CHECK(up <= wanted + 6);
  CHECK(up <= 28);
  CHECK(report.dispatch.max_in_flight <= 28);
  CHECK(e.status_snapshot().gpu_slots.capacity == up);
  require_at_baseline(e);

  // And back down.
  slow.store(false);
  auto [ec2, second] = prove(e, test::mimc_request(64, 10, 3));
  REQUIRE_FALSE(ec2);
  CHECK(e.depth_per_device() < up);
  CHECK(e.depth_per_device() >= 2);
  report = e.report();
  CHECK(report.dispatch.basis.changes >= 3);
  CHECK(e.status_snapshot().gpu_slots.capacity == e.depth_per_device());
  require_at_baseline(e);
}

TEST_CASE("a measured depth is held to the largest the memory budget allows", "[prover][engine][depth][cpu]") {
  boost::asio::io_context io;
  auto cfg = records_config();
  cfg.max_log_constraints = 16;
  // The plan of 28 partitions in flight a device, and a budget a little short of it.
  const engine full(io.get_executor(), cfg, make_host_backend(1, 2));
  REQUIRE(full.plan().pinned_slots == 28);
  cfg.memory_budget_bytes = full.plan().total_bytes - 1;
  const engine held(io.get_executor(), cfg, make_host_backend(1, 2));
  CHECK(held.plan().pinned_slots == 27);
  CHECK(held.plan().fits());
  const depth_basis basis = held.status_snapshot().dispatch.basis;
  CHECK(basis.max == 27);
  CHECK(basis.max_reason == "memory");
  CHECK(held.depth_per_device() <= 27);
  // A budget that does not hold one partition is still refused.
  cfg.memory_budget_bytes = 1 << 20;
  CHECK_THROWS_AS(engine(io.get_executor(), cfg, make_host_backend(1, 2)), memory_plan_error);
}

TEST_CASE("the constraint cache is written, loaded by the next engine, and rebuilt when corrupt",
          "[prover][engine][pce][cpu]") {
  temp_dir dir;
  auto cfg = records_config();
  cfg.pce_cache_dir = dir.path.string();
  const std::filesystem::path file = dir.path / "mimc_10.pce";
  auto run = [&](std::uint64_t seed) {
    running_io rt;
    engine e(rt.io.get_executor(), cfg, make_host_backend(1, 2));
    auto [ec, result] = prove(e, test::mimc_request(4, 10, seed));
    REQUIRE_FALSE(ec);
    for (const auto& p : result.partitions) CHECK(p.verified);
    return e.report();
  };

  auto first = run(1);
  CHECK(first.pce_cache.at("mimc/10").state == "built");
  CHECK(first.pce_cache.at("mimc/10").seconds > 0);
  CHECK(first.pce.builds == 1);
  // Saved on the engine's synthesis pool after the build; the engine's destruction joined it.
  CHECK(std::filesystem::exists(file));

  auto second = run(2);
  CHECK(second.pce_cache.at("mimc/10").state == "loaded");
  CHECK(second.pce.builds == 0);
  CHECK(second.pce.slow_path == 0);

  // Corrupt: a byte flipped in the middle fails the file's checksum; the engine builds it again
  // and saves it anew.
  {
    const auto middle = static_cast<std::streamoff>(std::filesystem::file_size(file) / 2);
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(middle);
    const char byte = static_cast<char>(f.get());
    f.seekp(middle);
    f.put(static_cast<char>(~byte));
    REQUIRE(f.good());
  }
  auto files_counted = [](const char* outcome) {
    return coprove::runtime::registry::global()
        .get_counter("coprove_engine_pce_cache_files_total",
                     "Constraint-cache files by outcome (loaded, rejected and rebuilt, saved, save_failed)",
                     {{"outcome", outcome}})
        .value();
  };
  const std::uint64_t rejected_before = files_counted("rejected");
  auto third = run(3);
  CHECK(third.pce_cache.at("mimc/10").state == "built");
  CHECK(files_counted("rejected") == rejected_before + 1);  // the rebuild is counted, not only logged
  CHECK(third.pce.builds == 1);
  auto fourth = run(4);
  CHECK(fourth.pce_cache.at("mimc/10").state == "loaded");

  // Off: nothing read or written, and the report says so.
  cfg.pce_cache_dir.clear();
  std::filesystem::remove(file);
  auto off = run(5);
  CHECK(off.pce_cache.at("mimc/10").state == "off");
  CHECK(off.pce_cache_dir.empty());
  CHECK_FALSE(std::filesystem::exists(file));
}
