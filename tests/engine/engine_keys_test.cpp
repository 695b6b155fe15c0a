// Keys while the engine runs, with its control and synthesis executors driven by hand: a key is
// read on the CPU executor and registered on the strand, proved with, evicted (refused while its
// jobs wait unless they are cancelled) and its bytes given back; every refusal names the key and
// changes nothing.
#include <coprove/engine/engine.hpp>

#include <coprove/engine/host_backend.hpp>
#include <coprove/runtime/error.hpp>
#include <coprove/runtime/metrics.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <support/test_keys.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

namespace {

using namespace coprove::engine;
namespace test = coprove::test;

double gauge(const std::string& name) { return coprove::runtime::registry::global().get_gauge(name, "").value(); }

std::uint64_t counter(const std::string& name, const std::string& label, const std::string& value) {
  return coprove::runtime::registry::global().get_counter(name, "", {{label, value}}).value();
}

struct key_engine {
  boost::asio::io_context control, cpu;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> control_work{control.get_executor()},
      cpu_work{cpu.get_executor()};
  std::optional<engine> e;

  explicit key_engine(std::size_t key_memory_bytes, key_eviction eviction = key_eviction::never,
                      std::vector<std::pair<std::string, key_source>> known = {},
                      enum key_loading loading = key_loading::on_demand) {
    engine_config cfg;
    cfg.max_log_constraints = 11;  // a key labelled 2^11 reaches its check against the circuit
    cfg.memory_budget_bytes = std::size_t{1} << 30;
    cfg.synthesis_threads = 1;
    cfg.depth_per_device = 1;
    cfg.insecure_proof_seed = 7;
    cfg.key_memory_bytes = key_memory_bytes;  // no key at construction
    cfg.key_eviction = eviction;
    cfg.known_keys = std::move(known);
    cfg.key_loading = loading;
    cfg.synthesis_executor = cpu.get_executor();
    e.emplace(control.get_executor(), cfg, make_host_backend(1, 1));
    e->wait_for_prewarm();
  }
  ~key_engine() {
    e.reset();
    while (control.poll() != 0) {
    }
  }
  void settle() {
    while (control.poll() + cpu.poll() != 0) {
    }
  }
  std::pair<std::error_code, key_info> load(key_source source) {
    std::optional<std::pair<std::error_code, key_info>> done;
    e->async_load_key(std::move(source), [&](std::error_code ec, key_info info) { done.emplace(ec, info); });
    settle();
    REQUIRE(done);
    return *done;
  }
  std::pair<std::error_code, key_info> evict(const std::string& id, bool cancel_jobs) {
    std::optional<std::pair<std::error_code, key_info>> done;
    auto done_here = std::make_shared<std::optional<std::pair<std::error_code, key_info>>>();
    e->async_evict_key(id, cancel_jobs, [done_here](std::error_code ec, key_info info) { done_here->emplace(ec, info); });
    // All of it on the strand: the CPU executor does not run. The completion may wait for a strand
    // step another thread posted (a pinned lease), so the control executor runs until it comes.
    for (int i = 0; i < 100 && !*done_here; ++i) control.run_one_for(std::chrono::milliseconds(100));
    REQUIRE(*done_here);
    done = *done_here;
    return *done;
  }
  // Until the job completes; the device's completions arrive from the host backend's threads.
  std::pair<std::error_code, prove_result> await(std::uint64_t id) {
    std::optional<std::pair<std::error_code, prove_result>> done;
    e->async_await(id, [&](std::error_code ec, prove_result r) { done.emplace(ec, std::move(r)); });
    while (!done) {
      control.poll();
      cpu.poll();
      std::this_thread::yield();
    }
    return *done;
  }
};

circuit_keys mimc10() { return test::test_keys({{"mimc", 10}}).front(); }

}  // namespace

TEST_CASE("a key loaded at run time is read on the CPU executor, registered on the strand and proved with",
          "[engine][keys][cpu]") {
  key_engine m(std::size_t{64} << 20);
  CHECK(m.e->keys().empty());
  CHECK_THROWS_WITH(m.e->submit(test::mimc_request(1, 10, 1)), Catch::Contains("mimc"));

  const circuit_keys key = mimc10();
  bool loaded_on_cpu = false;
  std::optional<std::pair<std::error_code, key_info>> done;
  m.e->async_load_key(key_source{"test key", [&] {
                                   loaded_on_cpu = m.cpu.get_executor().running_in_this_thread();
                                   return loaded_key(key);
                                 }},
                      [&](std::error_code ec, key_info info) { done.emplace(ec, info); });
  // The control executor alone neither reads nor registers it.
  while (m.control.poll() != 0) {
  }
  CHECK_FALSE(loaded_on_cpu);
  CHECK(m.e->keys().empty());
  REQUIRE(m.cpu.poll_one() == 1);  // read and checked here
  CHECK(loaded_on_cpu);
  CHECK(m.e->keys().empty());  // not yet registered: that is the strand's
  CHECK_FALSE(done);
  m.settle();
  REQUIRE(done);
  CHECK_FALSE(done->first);
  CHECK(done->second.id == "mimc/10");
  CHECK(done->second.state == "loaded");
  CHECK(done->second.host_bytes == key.pk->bytes());
  CHECK(done->second.message.find("mimc/10 loaded") != std::string::npos);
  CHECK(gauge("coprove_engine_key_host_bytes") == static_cast<double>(key.pk->bytes()));

  const auto listed = m.e->keys();
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].circuit == "mimc");
  CHECK(listed[0].log_constraints == 10);
  CHECK_FALSE(listed[0].last_use);
  CHECK(listed[0].device_bytes == 0);  // the host backend holds keys in host memory
  const auto json = listed[0].to_json();
  CHECK(json.at("size").as_uint64() == 1024);
  CHECK(json.at("last_use").is_null());

  const auto [ec, result] = m.await(m.e->submit(test::mimc_request(2, 10, 3)));
  REQUIRE_FALSE(ec);
  REQUIRE(result.partitions.size() == 2);
  CHECK(result.partitions[0].verified);
  CHECK(m.e->verifying_key("mimc", 10));
  CHECK(m.e->keys().at(0).last_use);
  CHECK(m.e->keys().at(0).state == "loaded");  // the finished job let go of it

  const auto evictions = counter("coprove_engine_key_evictions_total", "reason", "requested");
  const auto [evicted, info] = m.evict("mimc/10", false);
  CHECK_FALSE(evicted);
  CHECK(info.state == "evicted");
  CHECK(info.last_use);  // the job's
  CHECK(info.host_bytes == key.pk->bytes());
  CHECK(m.e->keys().empty());
  CHECK_FALSE(m.e->verifying_key("mimc", 10));
  CHECK(gauge("coprove_engine_key_host_bytes") == 0);
  CHECK(counter("coprove_engine_key_evictions_total", "reason", "requested") == evictions + 1);
  CHECK_THROWS(m.e->submit(test::mimc_request(1, 10, 1)));

  // Loaded again after its eviction.
  CHECK_FALSE(m.load(key_source::ready(key, "again")).first);
}

TEST_CASE("a key refused at load names the key and the limit and changes nothing", "[engine][keys][cpu]") {
  const circuit_keys key = mimc10();
  SECTION("beyond the plan's key bytes") {
    key_engine m(key.pk->bytes() - 1);
    const auto [ec, info] = m.load(key_source::ready(key, "dir/k"));
    CHECK(ec == engine_errc::key_does_not_fit);
    CHECK(info.message.find("load key (dir/k): mimc/10 takes " + std::to_string(key.pk->bytes())) == 0);
    CHECK(info.message.find("engine_config.key_memory_bytes") != std::string::npos);
    CHECK(m.e->keys().empty());
  }
  SECTION("twice, a loader that throws, a key for another size") {
    key_engine m(std::size_t{64} << 20);
    REQUIRE_FALSE(m.load(key_source::ready(key, "first")).first);
    const auto refused = counter("coprove_engine_key_loads_total", "outcome", "refused");
    auto [ec, info] = m.load(key_source::ready(key, "second"));
    CHECK(ec == engine_errc::key_exists);
    CHECK(info.message.find("load key (second): ") == 0);
    std::tie(ec, info) = m.load(key_source{"bad/dir", []() -> loaded_key {
                                             throw std::runtime_error("bad/dir/params: the point A[3] is not on the curve");
                                           }});
    CHECK(ec == engine_errc::key_refused);
    CHECK(info.message == "load key (bad/dir): bad/dir/params: the point A[3] is not on the curve");
    circuit_keys other = key;
    other.log_constraints = 11;
    std::tie(ec, info) = m.load(key_source::ready(other, "mislabelled"));
    CHECK(ec == engine_errc::key_refused);
    CHECK(info.message.find("the key is for a domain of 1024 rows") != std::string::npos);
    CHECK(counter("coprove_engine_key_loads_total", "outcome", "refused") == refused + 3);
    REQUIRE(m.e->keys().size() == 1);
    CHECK(m.e->keys()[0].source == key.source);
  }
}

TEST_CASE("a key is not evicted while its jobs wait unless they are cancelled, then its bytes come back",
          "[engine][keys][cpu]") {
  key_engine m(std::size_t{64} << 20);
  const circuit_keys key = mimc10();
  REQUIRE_FALSE(m.load(key_source::ready(key, "k")).first);
  const std::uint64_t id = m.e->submit(test::mimc_request(3, 10, 1));
  while (m.control.poll() != 0) {
  }  // queued, its first partition admitted, none synthesized (the CPU executor has not run)

  auto [ec, info] = m.evict("mimc/10", false);
  CHECK(ec == engine_errc::key_in_use);
  CHECK(info.message == "evict key (mimc/10): 1 job(s) of it are queued or running (" + std::to_string(id) +
                            "); evict with cancel_jobs to cancel them");
  CHECK(m.e->keys().size() == 1);
  CHECK(m.e->keys()[0].state == "in_use");

  std::tie(ec, info) = m.evict("mimc/9", false);
  CHECK(ec == engine_errc::unknown_key);
  CHECK(info.message == "evict key (mimc/9): no key of this id is held (held: mimc/10)");

  std::tie(ec, info) = m.evict("mimc/10", true);
  CHECK_FALSE(ec);
  CHECK(m.e->keys().empty());
  const auto [job_ec, result] = m.await(id);
  CHECK(job_ec == std::errc::operation_canceled);
  CHECK(m.e->status(id)->error == "cancelled: its key mimc/10 was evicted");
  CHECK(gauge("coprove_engine_key_host_bytes") == 0);  // the last partition let go of it
  CHECK(gauge("coprove_engine_keys_held") == 0);
}

TEST_CASE("with key_eviction = lru a key that does not fit evicts the least recently used idle key, counted",
          "[engine][keys][cpu]") {
  const auto both = test::test_keys({{"mimc", 10}, {"mimc", 11}});
  const std::size_t room = both[0].pk->bytes() + both[1].pk->bytes() - 1;  // one or the other
  SECTION("never: refused") {
    key_engine m(room);
    REQUIRE_FALSE(m.load(key_source::ready(both[0], "k10")).first);
    const auto [ec, info] = m.load(key_source::ready(both[1], "k11"));
    CHECK(ec == engine_errc::key_does_not_fit);
    CHECK(info.message.find("key_eviction = never") != std::string::npos);
  }
  SECTION("lru: the idle key goes, not one a job holds") {
    key_engine m(room, key_eviction::lru);
    REQUIRE_FALSE(m.load(key_source::ready(both[0], "k10")).first);
    // A queued job holds mimc/10: it cannot be evicted for mimc/11.
    const std::uint64_t id = m.e->submit(test::mimc_request(1, 10, 1));
    std::optional<std::pair<std::error_code, key_info>> refused;
    m.e->async_load_key(key_source::ready(both[1], "k11"),
                        [&](std::error_code ec, key_info info) { refused.emplace(ec, info); });
    m.cpu.poll();  // the loader alone: the job is not admitted yet, its synthesis not posted
    while (!refused) m.control.run_one();  // the job queued first, then the key registered
    auto [ec, info] = *refused;
    CHECK(ec == engine_errc::key_does_not_fit);
    CHECK(info.message.find("the keys that jobs hold cannot be evicted") != std::string::npos);
    CHECK_FALSE(m.await(id).first);  // the job ends and lets go of it
    const auto lru = counter("coprove_engine_key_evictions_total", "reason", "lru");
    std::tie(ec, info) = m.load(key_source::ready(both[1], "k11"));
    CHECK_FALSE(ec);
    CHECK(counter("coprove_engine_key_evictions_total", "reason", "lru") == lru + 1);
    REQUIRE(m.e->keys().size() == 1);
    CHECK(m.e->keys()[0].id == "mimc/11");
    CHECK(gauge("coprove_engine_key_host_bytes") == static_cast<double>(both[1].pk->bytes()));
  }
}

TEST_CASE("known keys are loaded at start with key_loading = preload, or only when asked for",
          "[engine][keys][cpu]") {
  const circuit_keys key = mimc10();
  const std::vector<std::pair<std::string, key_source>> known{{"mimc/10", key_source::ready(key, "known")}};
  SECTION("preload") {
    key_engine m(std::size_t{64} << 20, key_eviction::never, known, key_loading::preload);
    CHECK(m.e->keys().empty());  // being read on the CPU executor: the engine did not wait for it
    m.settle();
    REQUIRE(m.e->keys().size() == 1);
    CHECK_FALSE(m.e->known_key("mimc/10"));  // held
  }
  SECTION("on demand") {
    key_engine m(std::size_t{64} << 20, key_eviction::never, known, key_loading::on_demand);
    m.settle();
    CHECK(m.e->keys().empty());
    CHECK_FALSE(m.e->known_key("mimc/11"));
    auto source = m.e->known_key("mimc/10");
    REQUIRE(source);
    CHECK_FALSE(m.load(*source).first);
    CHECK(m.e->keys().size() == 1);
    CHECK_FALSE(m.evict("mimc/10", false).first);
    CHECK(m.e->known_key("mimc/10"));  // known again once evicted
  }
}
