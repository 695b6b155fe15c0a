// One partition's synthesis step: it returns at once while its circuit's PCE is being built
// instead of parking the thread, and it checks what a configured synthesizer answers.
#include <coprove/engine/detail/partition_synthesis.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/constraint_system.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

namespace {

using namespace coprove::engine;
using namespace coprove::engine::detail;
using namespace coprove::r1cs;
using coprove::field::fr;

// mimc/10 whose synthesis holds until it is let go.
class held_circuit final : public circuit {
 public:
  held_circuit(std::atomic<bool>& started, std::atomic<bool>& go) : inner_(make_circuit("mimc", 10, 3, 0)), started_(started), go_(go) {}
  std::string_view family() const noexcept override { return inner_->family(); }
  unsigned log_constraints() const noexcept override { return inner_->log_constraints(); }
  circuit_shape shape() const noexcept override { return inner_->shape(); }
  std::uint64_t structure_digest() const noexcept override { return inner_->structure_digest(); }
  void synthesize(constraint_system& cs) const override {
    started_ = true;
    while (!go_) std::this_thread::yield();
    inner_->synthesize(cs);
  }

 private:
  std::unique_ptr<circuit> inner_;
  std::atomic<bool>& started_;
  std::atomic<bool>& go_;
};

prove_request mimc10() {
  prove_request r;
  r.circuit = "mimc";
  r.log_constraints = 10;
  r.partitions = 4;
  r.seed = 3;
  return r;
}

}  // namespace

TEST_CASE("a synthesis whose PCE is being built returns at once and runs once the build is done",
          "[engine][synthesis][cpu]") {
  pce_cache cache(pce_policy::wait);
  engine_config cfg;
  std::size_t hook_calls = 0;
  cfg.synthesis_hook = [&](std::uint64_t, std::size_t) { ++hook_calls; };
  std::atomic<bool> started{false}, go{false};
  const held_circuit builder_circuit(started, go);
  std::vector<fr> a0(1024), b0(1024), c0(1024), a(1024);
  std::thread builder([&] { cache.synthesize(builder_circuit, a0, b0, c0); });
  while (!started) std::this_thread::yield();

  const auto early = synthesize_partition(cfg, cache, 1, mimc10(), 1, a, {}, {}, 7, true);
  CHECK(early.pce_building);
  CHECK(early.error.empty());
  CHECK(early.lane == 7);
  CHECK(hook_calls == 1);

  go = true;
  builder.join();
  const auto done = synthesize_partition(cfg, cache, 1, mimc10(), 1, a, {}, {}, 7, false);
  CHECK_FALSE(done.pce_building);
  CHECK(done.output.pce_used);
  CHECK(done.matrices != nullptr);  // only the assignment, in a: the backend does the SpMV
  CHECK(done.end >= done.start);
  CHECK(hook_calls == 1);  // not again for the same partition
}

TEST_CASE("a configured synthesizer's impossible answers are errors of the step", "[engine][synthesis][cpu]") {
  pce_cache cache(pce_policy::wait);
  engine_config cfg;
  cfg.synthesizer_name = "recorder";
  std::vector<fr> a(1024), b(1024), c(1024);
  cfg.synthesizer = [](const prove_request&, std::size_t, std::span<fr>, std::span<fr>, std::span<fr>) {
    deferred_synthesis d;
    d.needs_abc = true;
    return d;
  };
  const auto given_abc = synthesize_partition(cfg, cache, 1, mimc10(), 0, a, b, c, 0, true);
  CHECK(given_abc.error.find("recorder") != std::string::npos);
  CHECK(given_abc.error.find("asked for b and c") != std::string::npos);

  cfg.synthesizer = [](const prove_request&, std::size_t, std::span<fr>, std::span<fr>, std::span<fr>) {
    return deferred_synthesis{};
  };
  const auto nothing = synthesize_partition(cfg, cache, 1, mimc10(), 0, a, {}, {}, 0, true);
  CHECK(nothing.error.find("neither matrices nor needs_abc") != std::string::npos);

  cfg.synthesis_hook = [](std::uint64_t, std::size_t) { throw std::runtime_error("hook says no"); };
  CHECK(synthesize_partition(cfg, cache, 1, mimc10(), 0, a, b, c, 0, true).error == "hook says no");
  CHECK(cache.stats().slow_path == 0);  // the cache was never asked
}
