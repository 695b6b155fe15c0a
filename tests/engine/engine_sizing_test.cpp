// The engine's sizing as a pure function: the depth's limit and its reason, the plan it is sized
// for, lean inputs, the pool's pre-warm, the device key copies and the refusals, with no engine.
#include <coprove/engine/detail/engine_sizing.hpp>

#include <coprove/engine/compute_backend.hpp>
#include <coprove/engine/host_backend.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <stdexcept>

namespace {

using namespace coprove::engine;
using detail::key_sizes;
using detail::size_engine;
constexpr std::size_t mib = std::size_t{1} << 20;
constexpr std::size_t gib = std::size_t{1} << 30;

engine_config records(std::size_t budget) {
  engine_config cfg;
  cfg.results = result_kind::evaluation_record;
  cfg.max_log_constraints = 12;
  cfg.synthesis_threads = 4;
  cfg.memory_budget_bytes = budget;
  return cfg;
}

// A backend with device memory of its own and msm_copies auto, that never runs a quotient.
class device_backend final : public compute_backend {
 public:
  device_backend(std::size_t total, std::vector<std::size_t> wanted) : total_(total), wanted_(std::move(wanted)) {}
  std::string_view name() const noexcept override { return "sized"; }
  std::size_t device_count() const noexcept override { return 2; }
  std::size_t worker_slots_per_device() const noexcept override { return 2; }
  std::vector<std::string> device_names() const override { return {"first", "second"}; }
  std::unique_ptr<coprove::pinned::host_allocator> make_host_allocator() const override {
    return make_host_backend()->make_host_allocator();
  }
  bool copies_to_device() const noexcept override { return true; }
  void start_quotient(worker_slot, quotient_task, quotient_completion) noexcept override {}
  std::vector<std::size_t> device_key_copies_wanted() const override { return wanted_; }
  std::optional<device_memory> device_memory_of(std::size_t) const override {
    return device_memory{total_, total_, 0};
  }
  std::size_t device_working_bytes(std::size_t, std::size_t, std::size_t copies) const noexcept override {
    return copies * 10 * mib;
  }
  std::size_t device_shared_bytes(std::size_t) const noexcept override { return 0; }

 private:
  std::size_t total_;
  std::vector<std::size_t> wanted_;
};

}  // namespace

TEST_CASE("a configured depth sizes the plan for it and says so", "[engine][sizing][cpu]") {
  engine_config cfg = records(gib);
  cfg.depth_per_device = 3;
  const auto backend = make_host_backend(2, 2);
  const auto s = size_engine(cfg, *backend, {});
  CHECK(s.depth == 3);
  CHECK(s.depth_max == 3);
  CHECK(s.depth_max_reason == "configured");
  CHECK_FALSE(s.measured);
  CHECK(s.plan.pinned_slots == 6);
  CHECK(s.most_in_flight() == 6);
  CHECK(s.synthesis_threads == 4);
}

TEST_CASE("a measured depth starts at what the CPU can use, or at what the budget holds", "[engine][sizing][cpu]") {
  const auto backend = make_host_backend(1, 2);
  const auto roomy = size_engine(records(gib), *backend, {});
  REQUIRE(roomy.measured);
  CHECK(roomy.depth_max_reason == "cpu");
  CHECK(roomy.depth_max == 3 * 4 + 2 * 2);  // 3 x threads a device + 2 x slots
  CHECK(roomy.depth == roomy.depth_max);
  CHECK(roomy.measured->plan_limit == roomy.depth_max);

  // A budget a little above the plan for 4 partitions: the largest depth that fits, and why.
  engine_config tight = records(0);
  tight.depth_per_device = 4;
  const std::size_t four = size_engine(tight, *backend, {}).plan.total_bytes;
  tight = records(four + mib);
  const auto held = size_engine(tight, *backend, {});
  CHECK(held.depth_max_reason == "memory");
  CHECK(held.depth_max >= 4);
  CHECK(held.depth_max < roomy.depth_max);
  CHECK(held.plan.total_bytes <= four + mib);
  CHECK_THROWS_AS(size_engine(records(mib), *backend, {}), memory_plan_error);
}

TEST_CASE("the keys' bytes are charged once on the host", "[engine][sizing][cpu]") {
  engine_config cfg = records(gib);
  cfg.depth_per_device = 2;
  const auto backend = make_host_backend(1, 2);
  const auto without = size_engine(cfg, *backend, {});
  key_sizes keys;
  keys.host_bytes = 7 * mib;
  const auto with = size_engine(cfg, *backend, keys);
  CHECK(with.plan.total_bytes == without.plan.total_bytes + 7 * mib);
}

TEST_CASE("lean inputs follow the PCE policy and the SpMV's place; the pool pre-warms what the plan holds",
          "[engine][sizing][cpu]") {
  engine_config cfg = records(gib);
  cfg.depth_per_device = 2;
  const auto backend = make_host_backend(1, 2);
  const auto lean = size_engine(cfg, *backend, {});
  CHECK(lean.lean_inputs);
  CHECK(lean.plan.input_vectors_per_slot == 1);
  CHECK(lean.plan.full_input_slots == 2);
  // Two partitions of (assignment, h), and the slow path's two full sets.
  CHECK(lean.pool.prewarm_count == 2 * 2 + 2 * 2);
  CHECK(lean.pool.prewarm_bytes == lean.plan.vector_bytes);

  cfg.backend_spmv = false;
  const auto full = size_engine(cfg, *backend, {});
  CHECK_FALSE(full.lean_inputs);
  CHECK(full.pool.prewarm_count == 2 * 4);

  cfg.backend_spmv = true;
  cfg.pce = coprove::r1cs::pce_policy::eager;
  CHECK_FALSE(size_engine(cfg, *backend, {}).lean_inputs);

  cfg.pce = coprove::r1cs::pce_policy::wait;
  cfg.prewarm_partitions = 1;
  CHECK(size_engine(cfg, *backend, {}).pool.prewarm_count == 2);  // fewer than all: no slow-path sets
  cfg.prewarm_partitions = 3;
  CHECK_THROWS_WITH(size_engine(cfg, *backend, {}), Catch::Contains("engine_config.prewarm_partitions"));
}

TEST_CASE("device key copies auto take the fastest that every device holds, else fewer, said as a fallback",
          "[engine][sizing][cpu]") {
  engine_config cfg = records(gib);
  cfg.results = result_kind::proof;
  cfg.backend_spmv = false;
  cfg.depth_per_device = 1;
  key_sizes keys;
  keys.device.push_back({"mimc/12", 100 * mib, 4096, 4096});
  // Beside a margin of 1 GiB: 13 copies need 1300 MiB of keys and 2 x 130 MiB of slots; 1 copy 120 MiB.
  const auto roomy = size_engine(cfg, device_backend(4 * gib, {13, 1}), keys);
  CHECK(roomy.key_copies_auto);
  CHECK(roomy.key_copies.copies == 13);
  CHECK_FALSE(roomy.key_copies_fallback);
  REQUIRE(roomy.device_plans.size() == 2);
  CHECK(roomy.device_plans[1].input.device_name == "second");
  CHECK(roomy.device_plans[0].input.key_bytes == 1300 * mib);

  const auto tight = size_engine(cfg, device_backend(2 * gib, {13, 1}), keys);
  CHECK(tight.key_copies.copies == 1);
  CHECK(tight.key_copies_fallback);
  CHECK(tight.key_copies.reason.find("13") != std::string::npos);

  // Not even one copy beside the slots: the device's refusal names the key.
  CHECK_THROWS_WITH(size_engine(cfg, device_backend(gib, {13, 1}), keys), Catch::Contains("mimc/12"));

  // Records send no key to a device: no device plan, nothing to settle.
  cfg.results = result_kind::evaluation_record;
  const auto records_only = size_engine(cfg, device_backend(64 * mib, {13, 1}), keys);
  CHECK_FALSE(records_only.key_copies_auto);
  CHECK(records_only.device_plans.empty());
  CHECK(records_only.key_copies.source == "auto");
}

TEST_CASE("a configuration no engine runs with is refused naming its field", "[engine][sizing][cpu]") {
  const auto backend = make_host_backend(1, 2);
  engine_config cfg = records(gib);
  CHECK_THROWS_WITH(detail::check_config(cfg, nullptr), Catch::Contains("backend must not be null"));
  cfg.first_job_id = 0;
  CHECK_THROWS_WITH(size_engine(cfg, *backend, {}), Catch::Contains("engine_config.first_job_id"));
  cfg = records(gib);
  cfg.synthesizer_sends_assignment = true;
  CHECK_THROWS_WITH(size_engine(cfg, *backend, {}), Catch::Contains("no synthesizer is configured"));
  cfg = records(gib);
  cfg.plan_circuit = "no such circuit";
  CHECK_THROWS_WITH(size_engine(cfg, *backend, {}), Catch::Contains("engine_config (plan_circuit"));
}
