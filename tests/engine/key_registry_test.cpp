// The key registry on its own: keys checked when added and found by id, the host bytes accounted,
// a removed key kept for the jobs that hold it and counted until the last lets go, and the
// configuration's refusals naming the field and the key.
#include <coprove/engine/detail/key_registry.hpp>

#include <coprove/groth16/keys.hpp>

#include <catch2/catch.hpp>

#include <support/test_keys.hpp>

#include <memory>
#include <stdexcept>

namespace {

using namespace coprove::engine;
using detail::key_registry;

engine_config proof_config() {
  engine_config cfg;
  cfg.max_log_constraints = 11;
  cfg.keys = coprove::test::test_keys({{"mimc", 10}, {"mimc", 11}});
  return cfg;
}

}  // namespace

TEST_CASE("keys are found by circuit and size, their bytes accounted, and a removed key freed after its last job",
          "[engine][key_registry][cpu]") {
  key_registry keys(proof_config());
  auto mimc10 = keys.find("mimc", 10);
  REQUIRE(mimc10);
  CHECK(mimc10->vk_sha256.size() == 64);
  CHECK(mimc10->host_bytes == mimc10->keys.pk->bytes());
  CHECK_FALSE(keys.find("mimc", 12));
  CHECK_FALSE(keys.find_zkey("mimc"));
  CHECK(keys.names() == "mimc/10, mimc/11");
  CHECK(keys.ids().size() == 2);
  const std::size_t both = keys.host_bytes();
  CHECK(both == mimc10->host_bytes + keys.find("mimc", 11)->host_bytes);
  CHECK(keys.held_bytes() == both);
  const auto sizes = keys.sizes();
  CHECK(sizes.host_bytes == both);
  REQUIRE(sizes.device.size() == 2);
  CHECK(sizes.device[0].name == "mimc/10");
  CHECK(sizes.device[0].bytes == device_key_bytes(*mimc10->keys.pk));

  // A job holds mimc/10 (as `mimc10` does here): removed, it is gone for new jobs but still held.
  CHECK(keys.remove("mimc", 10));
  CHECK_FALSE(keys.remove("mimc", 10));
  CHECK_FALSE(keys.find("mimc", 10));
  CHECK(keys.host_bytes() == both - mimc10->host_bytes);
  CHECK(keys.held_bytes() == both);
  const std::size_t freed = mimc10->host_bytes;
  std::weak_ptr<const detail::key_entry> weak = mimc10;
  mimc10.reset();  // the last job that held it ends
  CHECK(weak.expired());
  CHECK(keys.held_bytes() == both - freed);

  // Added again at run time, checked as at construction.
  keys.add(coprove::test::test_keys({{"mimc", 10}}).front(), "load (mimc/10): ");
  CHECK(keys.find("mimc", 10));
  CHECK_THROWS_WITH(keys.add(coprove::test::test_keys({{"mimc", 10}}).front(), "load (mimc/10): "),
                    Catch::Equals("load (mimc/10): given twice"));
}

TEST_CASE("a key that is not its circuit's, or given where none is proved, is refused naming it",
          "[engine][key_registry][cpu]") {
  engine_config cfg = proof_config();
  cfg.keys.push_back(cfg.keys.front());
  CHECK_THROWS_WITH(key_registry(cfg), Catch::Contains("engine_config.keys (mimc/10") && Catch::Contains("given twice"));

  cfg = proof_config();
  cfg.keys[1].log_constraints = 12;  // mimc/11's key offered for mimc/12
  CHECK_THROWS_WITH(key_registry(cfg), Catch::Contains("engine_config.keys (mimc/12") &&
                                           Catch::Contains("the key is for a domain of 2048 rows"));

  cfg = proof_config();
  cfg.keys[0].pk = nullptr;
  CHECK_THROWS_WITH(key_registry(cfg), Catch::Contains("the proving key is null"));

  cfg = proof_config();
  cfg.results = result_kind::evaluation_record;
  CHECK_THROWS_WITH(key_registry(cfg), Catch::Contains("results = evaluation_record makes no proofs"));

  cfg = proof_config();
  cfg.keys.clear();
  CHECK_THROWS_WITH(key_registry(cfg), Catch::Contains("engine_config.keys: results = proof needs the proving key"));
}

TEST_CASE("planned keys are charged by their shape on the host and on each device", "[engine][key_registry][cpu]") {
  engine_config cfg;
  cfg.max_log_constraints = 12;
  cfg.planned_keys = {{"mimc", 12}};
  const key_registry keys(cfg);
  CHECK(keys.ids().empty());
  CHECK(keys.host_bytes() > 0);
  const auto sizes = keys.sizes();
  REQUIRE(sizes.device.size() == 1);
  CHECK(sizes.device[0].name == "mimc/12");
  CHECK(sizes.device[0].domain_size == 4096);
  cfg.planned_keys = {{"mimc", 40}};
  CHECK_THROWS_WITH(key_registry(cfg), Catch::Contains("engine_config.planned_keys (mimc/40)"));
}
