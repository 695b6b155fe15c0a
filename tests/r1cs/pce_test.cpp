// Tests of the PCE cache: bit-for-bit agreement with the slow path, the wait and eager policies,
// build hand-over, capacity, and the checked file format.
#include <coprove/r1cs/pce.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/mimc.hpp>

#include <catch2/catch.hpp>

#include "largest_allocation.hpp"
#include "pce_test_circuits.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <stdexcept>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace coprove::field;
using namespace coprove::r1cs;
using Catch::Matchers::Contains;
using coprove::testing::refusal_with_largest_allocation;

namespace {

struct vectors {
  explicit vectors(std::size_t n) : a(n), b(n), c(n) {}
  std::vector<fr> a, b, c;
  bool operator==(const vectors&) const = default;
};

vectors slow(const circuit& c) {
  vectors v(c.domain_size());
  synthesize_slow(c, v.a, v.b, v.c);
  return v;
}

// Polls until pred holds (up to 20 s, so that a broken cache fails instead of hanging).
bool eventually(const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Shares its id, shape and digest with `inner`; the first synthesize call (the PCE build) holds
// until `release` says so, and may then throw, so tests control who arrives during a build.
class gated_circuit final : public circuit {
 public:
  gated_circuit(std::unique_ptr<circuit> inner, std::atomic<bool>& first_taken,
                std::function<bool()> release, bool first_throws = false)
      : inner_(std::move(inner)), first_taken_(first_taken), release_(std::move(release)),
        first_throws_(first_throws) {}
  std::string_view family() const noexcept override { return inner_->family(); }
  unsigned log_constraints() const noexcept override { return inner_->log_constraints(); }
  circuit_shape shape() const noexcept override { return inner_->shape(); }
  std::uint64_t structure_digest() const noexcept override { return inner_->structure_digest(); }
  void synthesize(constraint_system& cs) const override {
    if (!first_taken_.exchange(true)) {
      released_ = eventually(release_);
      if (first_throws_) throw std::runtime_error("synthesis failed on purpose");
    }
    inner_->synthesize(cs);
  }
  mutable bool released_ = true;

 private:
  std::unique_ptr<circuit> inner_;
  std::atomic<bool>& first_taken_;
  std::function<bool()> release_;
  bool first_throws_;
};

// The MiMC structure of mimc/10 but with other round constants: same id, digest and shape.
class impostor_circuit final : public circuit {
 public:
  impostor_circuit() : real_(10, fr::one()) {}
  std::string_view family() const noexcept override { return "mimc"; }
  unsigned log_constraints() const noexcept override { return 10; }
  circuit_shape shape() const noexcept override { return real_.shape(); }
  std::uint64_t structure_digest() const noexcept override { return real_.structure_digest(); }
  void synthesize(constraint_system& cs) const override {
    const fr preimage = fr::from_uint64(5);
    const variable x0 = cs.alloc(preimage);
    enforce_mimc_rounds(cs, [&](linear_combination& lc) { lc.add(x0); }, preimage, real_.rounds(),
                        /*tag=*/12345, 0, mimc_output::public_input);
  }

 private:
  mimc_circuit real_;
};

// Same as mimc/10 but claims another digest.
class redigested_circuit final : public circuit {
 public:
  redigested_circuit() : real_(10, fr::one()) {}
  std::string_view family() const noexcept override { return "mimc"; }
  unsigned log_constraints() const noexcept override { return 10; }
  circuit_shape shape() const noexcept override { return real_.shape(); }
  std::uint64_t structure_digest() const noexcept override { return real_.structure_digest() + 1; }
  void synthesize(constraint_system& cs) const override { real_.synthesize(cs); }

 private:
  mimc_circuit real_;
};

struct temp_file {
  temp_file()
      : path((std::filesystem::temp_directory_path() /
              ("coprove_pce_test_" + std::to_string(::getpid()) + "_" +
               std::to_string(counter++) + ".bin"))
                 .string()) {}
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  std::vector<char> read() const {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write(const std::vector<char>& bytes) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::string path;
  static inline int counter = 0;
};

/// Saves the PCE of mimc/10 to `file` and returns the file's bytes.
std::vector<char> save_mimc_pce(const temp_file& file) {
  pce_cache cache;
  const auto c = make_circuit("mimc", 10, 2, 0);
  vectors v(c->domain_size());
  cache.synthesize(*c, v.a, v.b, v.c);
  cache.save(file.path);
  return file.read();
}

std::string load_error(pce_cache& cache, const std::string& path) {
  try {
    cache.load(path);
  } catch (const pce_error& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("a, b, c from the PCE equal the slow path's bit for bit", "[prover][pce][cpu]") {
  for (const char* name : {"mimc", "merkle", "bits"}) {
    for (unsigned log : {10u, 12u, 13u}) {
      pce_cache cache;
      const auto first = make_circuit(name, log, 11, 0);
      vectors built(first->domain_size());
      const synthesis_output out0 = cache.synthesize(*first, built.a, built.b, built.c);
      CHECK_FALSE(out0.pce_used);
      CHECK(built == slow(*first));
      for (std::size_t p = 1; p < 3; ++p) {
        const auto c = make_circuit(name, log, 11, p);
        vectors fast(c->domain_size());
        std::fill(fast.a.begin(), fast.a.end(), fr::one());  // padding must be overwritten
        const synthesis_output out = cache.synthesize(*c, fast.a, fast.b, fast.c);
        CHECK(out.pce_used);
        const vectors reference = slow(*c);
        CHECK(fast == reference);
        CHECK_FALSE(first_unsatisfied_row(fast.a, fast.b, fast.c).has_value());
        CHECK(out.public_inputs == public_inputs_of(c->shape(), synthesize_witness(*c)));
      }
      const pce_stats s = cache.stats();
      CHECK(s.builds == 1);
      CHECK(s.hits == 2);
      CHECK(s.slow_path == 1);
    }
  }
}

TEST_CASE("a deferred synthesis leaves the SpMV to the caller, with the same a, b, c", "[prover][pce][cpu]") {
  for (const char* name : {"mimc", "merkle", "bits"}) {
    for (unsigned log : {10u, 12u}) {
      pce_cache cache;
      const auto first = make_circuit(name, log, 5, 0);
      vectors built(first->domain_size());
      const deferred_synthesis d0 = cache.synthesize_deferred(*first, built.a, built.b, built.c);
      CHECK_FALSE(d0.output.pce_used);  // the build: a, b, c on the host
      CHECK_FALSE(d0.matrices);
      CHECK(built == slow(*first));
      const std::size_t variables = first->shape().num_variables();
      const bool fits = variables <= first->domain_size();
      for (std::size_t p = 1; p < 3; ++p) {
        const auto c = make_circuit(name, log, 5, p);
        vectors v(c->domain_size());
        std::fill(v.b.begin(), v.b.end(), fr::one());
        const deferred_synthesis d = cache.synthesize_deferred(*c, v.a, v.b, v.c);
        CHECK(d.output.pce_used);
        const std::vector<fr> w = synthesize_witness(*c);
        CHECK(d.output.public_inputs == public_inputs_of(c->shape(), w));
        if (fits) {
          REQUIRE(d.matrices);
          CHECK(d.assignment_size == variables);
          CHECK(std::equal(w.begin(), w.end(), v.a.begin()));
          CHECK(v.b.front() == fr::one());  // b and c are left alone
          vectors evaluated(c->domain_size());
          d.matrices->evaluate(std::span<const fr>(v.a.data(), d.assignment_size), evaluated.a, evaluated.b,
                               evaluated.c);
          CHECK(evaluated == slow(*c));
        } else {
          CHECK_FALSE(d.matrices);
          CHECK(v == slow(*c));
        }
      }
      const pce_stats s = cache.stats();
      CHECK(s.hits == 2);
      CHECK(s.deferred == (fits ? 2u : 0u));
      CHECK(s.host_spmv == (fits ? 0u : 2u));
    }
  }
}

TEST_CASE("a deferred synthesis given only a says when it needs b and c, and does nothing else",
          "[prover][pce][cpu]") {
  for (pce_policy policy : {pce_policy::wait, pce_policy::eager}) {
    pce_cache cache(policy);
    const auto first = make_circuit("mimc", 10, 6, 0);
    const std::string id(first->id());
    CHECK_FALSE(cache.expects_deferral(id));
    vectors v(first->domain_size());
    const deferred_synthesis none = cache.synthesize_deferred(*first, v.a, {}, {});
    CHECK(none.needs_abc);
    CHECK_FALSE(none.matrices);
    CHECK_FALSE(cache.contains(id));
    const pce_stats s0 = cache.stats();
    CHECK(s0.builds + s0.slow_path + s0.hits == 0);
    // The build, with a, b and c; then a alone is enough.
    CHECK_FALSE(cache.synthesize_deferred(*first, v.a, v.b, v.c).needs_abc);
    CHECK(cache.expects_deferral(id));
    const auto next = make_circuit("mimc", 10, 6, 1);
    vectors w(next->domain_size());
    const deferred_synthesis d = cache.synthesize_deferred(*next, w.a, {}, {});
    CHECK_FALSE(d.needs_abc);
    REQUIRE(d.matrices);
    vectors evaluated(next->domain_size());
    d.matrices->evaluate(std::span<const fr>(w.a.data(), d.assignment_size), evaluated.a, evaluated.b, evaluated.c);
    CHECK(evaluated == slow(*next));
  }
}

TEST_CASE("a PCE being built is expected to serve deferrals only under wait", "[prover][pce][cpu]") {
  for (pce_policy policy : {pce_policy::wait, pce_policy::eager}) {
    pce_cache cache(policy);
    std::atomic<bool> release{false}, taken{false};
    const std::string id(make_circuit("mimc", 10, 2, 0)->id());
    std::thread builder([&] {
      const gated_circuit gated(make_circuit("mimc", 10, 2, 0), taken, [&] { return release.load(); });
      vectors v(gated.domain_size());
      cache.synthesize(gated, v.a, v.b, v.c);
    });
    // The builder holds inside its synthesis: the entry is being built.
    REQUIRE(eventually([&] { return taken.load(); }));
    CHECK(cache.stats().builds == 1);
    CHECK(cache.expects_deferral(id) == (policy == pce_policy::wait));
    release = true;
    builder.join();
    CHECK(cache.expects_deferral(id));
  }
}

TEST_CASE("an assignment into a span too short for the circuit is refused", "[prover][pce][cpu]") {
  const auto c = make_circuit("mimc", 10, 1, 0);
  std::vector<fr> out(c->shape().num_variables() - 1, fr::one());
  CHECK_THROWS_AS(synthesize_witness_into(*c, out), std::invalid_argument);
  CHECK(out.front() == fr::one());
  out.resize(c->shape().num_variables() + 3, fr::one());
  synthesize_witness_into(*c, out);
  const std::vector<fr> w = synthesize_witness(*c);
  CHECK(std::equal(w.begin(), w.end(), out.begin()));
  CHECK(out.back() == fr::one());  // past the assignment: untouched
}

TEST_CASE("the SpMV gives the slow path's a, b, c for every kind of term in every position",
          "[prover][pce][cpu]") {
  pce_cache cache;
  const coprove::test::mixed_terms_circuit first(1);
  vectors built(first.domain_size());
  CHECK_FALSE(cache.synthesize(first, built.a, built.b, built.c).pce_used);
  CHECK(built == slow(first));
  for (std::uint64_t seed = 2; seed < 6; ++seed) {
    const coprove::test::mixed_terms_circuit c(seed);
    vectors fast(c.domain_size());
    std::fill(fast.b.begin(), fast.b.end(), fr::one());  // empty rows must be written as zero
    CHECK(cache.synthesize(c, fast.a, fast.b, fast.c).pce_used);
    const vectors reference = slow(c);
    CHECK(fast == reference);
    CHECK(fast.a[1] == fr::zero());
    CHECK(fast.c[1] == fr::from_uint64(3));
  }
}

TEST_CASE("cached and streaming SpMV stores write the same a, b, c", "[prover][pce][cpu]") {
  for (const char* name : {"mimc", "merkle", "bits"}) {
    pce_cache cache;
    const auto first = make_circuit(name, 12, 5, 0);
    vectors built(first->domain_size());
    cache.synthesize(*first, built.a, built.b, built.c);
    const auto pce = cache.find(first->id());
    REQUIRE(pce);
    const auto other = make_circuit(name, 12, 5, 1);
    const std::vector<fr> w = synthesize_witness(*other);
    const vectors reference = slow(*other);
    for (spmv_stores stores : {spmv_stores::automatic, spmv_stores::cached, spmv_stores::streaming}) {
      vectors out(other->domain_size());
      std::fill(out.a.begin(), out.a.end(), fr::one());
      std::fill(out.b.begin(), out.b.end(), fr::one());
      std::fill(out.c.begin(), out.c.end(), fr::one());
      pce->evaluate(w, out.a, out.b, out.c, stores);
      CHECK(out == reference);
    }
  }
}

TEST_CASE("the recorded PCE has the declared size and fits its estimate", "[prover][pce][cpu]") {
  for (const char* name : {"mimc", "merkle", "bits"}) {
    pce_cache cache;
    const auto c = make_circuit(name, 12, 1, 0);
    vectors v(c->domain_size());
    cache.synthesize(*c, v.a, v.b, v.c);
    const auto m = cache.find(c->id());
    REQUIRE(m);
    CHECK(m->nonzeros() == c->shape().num_nonzeros);
    CHECK(m->num_rows == c->shape().num_rows());
    CHECK(m->coefficient_table.size() <= c->shape().max_coefficients);
    CHECK_NOTHROW(m->validate());
    CHECK(cache.bytes() == m->bytes());
    CHECK(cache.bytes() <= estimate_pce_bytes(c->shape()));
    CHECK(cache.circuit_ids() == std::vector<std::string>{c->id()});
  }
}

TEST_CASE("under wait, partitions that arrive during the build wait for the PCE",
          "[prover][pce][cpu]") {
  constexpr std::size_t partitions = 6;
  pce_cache cache(pce_policy::wait);
  std::atomic<bool> first_taken{false};
  // The build holds until every other partition is waiting for it.
  auto release = [&] { return cache.stats().waits == partitions - 1; };
  std::vector<std::unique_ptr<gated_circuit>> circuits;
  std::vector<vectors> outputs;
  for (std::size_t p = 0; p < partitions; ++p) {
    circuits.push_back(std::make_unique<gated_circuit>(make_circuit("mimc", 12, 3, p), first_taken, release));
    outputs.emplace_back(std::size_t{1} << 12);
  }
  std::vector<synthesis_output> results(partitions);
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < partitions; ++p) {
    threads.emplace_back([&, p] {
      results[p] = cache.synthesize(*circuits[p], outputs[p].a, outputs[p].b, outputs[p].c);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& c : circuits) REQUIRE(c->released_);
  const pce_stats s = cache.stats();
  CHECK(s.builds == 1);
  CHECK(s.slow_path == 1);
  CHECK(s.waits == partitions - 1);
  CHECK(s.hits == partitions - 1);
  std::size_t slow_count = 0;
  for (std::size_t p = 0; p < partitions; ++p) {
    slow_count += results[p].pce_used ? 0 : 1;
    CHECK(outputs[p] == slow(*make_circuit("mimc", 12, 3, p)));
  }
  CHECK(slow_count == 1);
}

TEST_CASE("under eager, partitions that arrive during the build take the slow path",
          "[prover][pce][cpu]") {
  constexpr std::size_t partitions = 4;
  pce_cache cache(pce_policy::eager);
  std::atomic<bool> first_taken{false};
  // The build holds until every other partition has gone down the slow path.
  auto release = [&] { return cache.stats().slow_path == partitions; };
  std::vector<std::unique_ptr<gated_circuit>> circuits;
  std::vector<vectors> outputs;
  for (std::size_t p = 0; p < partitions; ++p) {
    circuits.push_back(std::make_unique<gated_circuit>(make_circuit("mimc", 11, 3, p), first_taken, release));
    outputs.emplace_back(std::size_t{1} << 11);
  }
  std::vector<std::thread> threads;
  const auto start = [&](std::size_t p) {
    threads.emplace_back([&, p] { cache.synthesize(*circuits[p], outputs[p].a, outputs[p].b, outputs[p].c); });
  };
  // The builder first, the others once it holds the build: a slow-path partition that reached the
  // circuit before the builder would be the one held, and partitions after the unheld build hits.
  start(0);
  REQUIRE(eventually([&] { return first_taken.load(); }));
  for (std::size_t p = 1; p < partitions; ++p) start(p);
  for (auto& t : threads) t.join();
  for (const auto& c : circuits) REQUIRE(c->released_);
  pce_stats s = cache.stats();
  CHECK(s.builds == 1);
  CHECK(s.slow_path == partitions);
  CHECK(s.waits == 0);
  CHECK(s.hits == 0);
  for (std::size_t p = 0; p < partitions; ++p) CHECK(outputs[p] == slow(*make_circuit("mimc", 11, 3, p)));
  // Once built, the PCE serves later partitions.
  vectors later(std::size_t{1} << 11);
  CHECK(cache.synthesize(*make_circuit("mimc", 11, 3, 9), later.a, later.b, later.c).pce_used);
  CHECK(cache.stats().hits == 1);
}

TEST_CASE("a failed build is taken over by a waiting partition", "[prover][pce][cpu]") {
  pce_cache cache(pce_policy::wait);
  std::atomic<bool> first_taken{false};
  auto release = [&] { return cache.stats().waits == 1; };
  gated_circuit failing(make_circuit("mimc", 10, 1, 0), first_taken, release, /*first_throws=*/true);
  gated_circuit waiting(make_circuit("mimc", 10, 1, 1), first_taken, release);
  vectors v0(1024), v1(1024);
  std::thread builder([&] {
    CHECK_THROWS_AS(cache.synthesize(failing, v0.a, v0.b, v0.c), std::runtime_error);
  });
  // Start the waiter only once the builder holds the build.
  REQUIRE(eventually([&] { return first_taken.load(); }));
  const synthesis_output out = cache.synthesize(waiting, v1.a, v1.b, v1.c);
  builder.join();
  CHECK_FALSE(out.pce_used);  // it built the PCE itself
  CHECK(v1 == slow(*make_circuit("mimc", 10, 1, 1)));
  const pce_stats s = cache.stats();
  CHECK(s.builds == 2);
  CHECK(s.waits == 1);
  CHECK(cache.contains("mimc/10"));
}

TEST_CASE("a synthesis that must not block returns while the PCE is built and is told when it ends",
          "[prover][pce][cpu]") {
  pce_cache cache(pce_policy::wait);
  std::atomic<bool> first_taken{false}, release{false};
  gated_circuit builder_circuit(make_circuit("mimc", 10, 4, 0), first_taken, [&] { return release.load(); });
  vectors v0(1024), v1(1024);
  CHECK_FALSE(cache.notify_when_built("mimc/10", [] {}));  // nothing is being built yet
  std::thread builder([&] { cache.synthesize(builder_circuit, v0.a, v0.b, v0.c); });
  REQUIRE(eventually([&] { return first_taken.load(); }));

  const auto later = make_circuit("mimc", 10, 4, 1);
  const deferred_synthesis early = cache.synthesize_unless_building(*later, v1.a, v1.b, v1.c, true);
  CHECK(early.pce_building);
  CHECK_FALSE(early.output.pce_used);
  CHECK(cache.stats().waits == 1);
  CHECK(cache.stats().hits == 0);

  std::atomic<int> notified{0};
  std::atomic<bool> ready_when_notified{false};
  REQUIRE(cache.notify_when_built("mimc/10", [&] {
    ready_when_notified = cache.contains("mimc/10");
    ++notified;
  }));
  CHECK(notified == 0);
  release = true;
  builder.join();
  CHECK(notified == 1);
  CHECK(ready_when_notified);
  CHECK_FALSE(cache.notify_when_built("mimc/10", [] {}));  // built: nothing to wait for

  const deferred_synthesis again = cache.synthesize_unless_building(*later, v1.a, v1.b, v1.c, false);
  CHECK_FALSE(again.pce_building);
  CHECK(again.output.pce_used);
  CHECK(v1 == slow(*later));
}

TEST_CASE("a failed build tells the ones waiting for it", "[prover][pce][cpu]") {
  pce_cache cache(pce_policy::wait);
  std::atomic<bool> first_taken{false}, release{false};
  gated_circuit failing(make_circuit("mimc", 10, 5, 0), first_taken, [&] { return release.load(); },
                        /*first_throws=*/true);
  vectors v0(1024);
  std::thread builder([&] { CHECK_THROWS_AS(cache.synthesize(failing, v0.a, v0.b, v0.c), std::runtime_error); });
  REQUIRE(eventually([&] { return first_taken.load(); }));
  std::atomic<bool> entry_gone{false};
  REQUIRE(cache.notify_when_built("mimc/10", [&] { entry_gone = !cache.expects_deferral("mimc/10"); }));
  release = true;
  builder.join();
  CHECK(entry_gone);
  CHECK_FALSE(cache.contains("mimc/10"));
}

TEST_CASE("a PCE over the capacity is not kept and its circuit stays on the slow path",
          "[prover][pce][cpu]") {
  pce_cache cache(pce_policy::wait, 1024);
  for (std::size_t p = 0; p < 3; ++p) {
    const auto c = make_circuit("mimc", 10, 1, p);
    vectors v(1024);
    CHECK_FALSE(cache.synthesize(*c, v.a, v.b, v.c).pce_used);
    CHECK(v == slow(*c));
  }
  const pce_stats s = cache.stats();
  CHECK(s.over_capacity == 1);
  CHECK(s.builds == 1);
  CHECK(s.slow_path == 3);
  CHECK(cache.bytes() == 0);
  CHECK_FALSE(cache.contains("mimc/10"));
}

TEST_CASE("wrong output sizes are rejected by the cache", "[prover][pce][cpu]") {
  pce_cache cache;
  const auto c = make_circuit("mimc", 10, 1, 0);
  vectors v(1024);
  v.c.resize(2048);
  CHECK_THROWS_AS(cache.synthesize(*c, v.a, v.b, v.c), std::invalid_argument);
  CHECK(cache.stats().builds == 0);
  CHECK(cache.stats().slow_path == 0);
}

TEST_CASE("a saved PCE loads and serves partitions without a build", "[prover][pce][cpu]") {
  temp_file file;
  {
    pce_cache cache;
    for (const char* name : {"mimc", "merkle", "bits"}) {
      const auto c = make_circuit(name, 11, 2, 0);
      vectors v(c->domain_size());
      cache.synthesize(*c, v.a, v.b, v.c);
    }
    cache.save(file.path);
  }
  pce_cache loaded;
  CHECK(loaded.load(file.path) == 3);
  CHECK(loaded.contains("mimc/11"));
  CHECK(loaded.contains("merkle/11"));
  CHECK(loaded.bytes() > 0);
  for (const char* name : {"mimc", "merkle", "bits"}) {
    const auto c = make_circuit(name, 11, 2, 5);
    vectors v(c->domain_size());
    // A loaded PCE's first use is checked on a, b, c, so even a deferred synthesis does its SpMV.
    const deferred_synthesis d = loaded.synthesize_deferred(*c, v.a, v.b, v.c);
    CHECK(d.output.pce_used);
    CHECK_FALSE(d.matrices);
    CHECK(v == slow(*c));
  }
  const pce_stats s = loaded.stats();
  CHECK(s.loaded == 3);
  CHECK(s.builds == 0);
  CHECK(s.hits == 3);
  CHECK(s.rejected == 0);
  // Loading again adds nothing: the ids are cached already.
  CHECK(loaded.load(file.path) == 0);
}

TEST_CASE("corrupt, truncated and foreign PCE files are rejected and change nothing",
          "[prover][pce][cpu]") {
  temp_file file;
  const std::vector<char> good = save_mimc_pce(file);
  REQUIRE(good.size() > 1000);
  pce_cache cache;

  SECTION("a flipped byte fails the checksum") {
    std::vector<char> bad = good;
    bad[bad.size() / 2] ^= 0x10;
    file.write(bad);
    CHECK(load_error(cache, file.path).find("checksum") != std::string::npos);
  }
  SECTION("a truncated file") {
    file.write(std::vector<char>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() - 100)));
    CHECK(load_error(cache, file.path).find("truncated") != std::string::npos);
  }
  SECTION("a file cut inside its header") {
    file.write(std::vector<char>(good.begin(), good.begin() + 12));
    CHECK(load_error(cache, file.path).find("truncated") != std::string::npos);
  }
  SECTION("another file type") {
    std::vector<char> bad = good;
    bad[0] = 'X';
    file.write(bad);
    CHECK(load_error(cache, file.path).find("magic") != std::string::npos);
  }
  SECTION("another format version") {
    std::vector<char> bad = good;
    bad[8] = 2;
    file.write(bad);
    CHECK(load_error(cache, file.path).find("version 2") != std::string::npos);
  }
  SECTION("trailing bytes") {
    std::vector<char> bad = good;
    bad.push_back(0);
    file.write(bad);
    CHECK_FALSE(load_error(cache, file.path).empty());
  }
  SECTION("a missing file") {
    CHECK(load_error(cache, file.path + ".missing").find("cannot open") != std::string::npos);
  }
  CHECK(cache.bytes() == 0);
  CHECK(cache.circuit_ids().empty());
  CHECK(cache.stats().loaded == 0);
}

TEST_CASE("a PCE file's counts are held to its remaining bytes, and only a regular file is read",
          "[prover][pce][cpu]") {
  temp_file file;
  const std::vector<char> good = save_mimc_pce(file);
  pce_cache cache;
  // The first entry's row count: after the 24-byte file header, the id (u32 length, its bytes),
  // the digest, the input and the auxiliary counts.
  std::uint32_t id_size = 0;
  std::memcpy(&id_size, good.data() + 24, 4);
  const std::size_t rows_at = 24 + 4 + id_size + 3 * 8;
  std::vector<char> bad = good;
  const std::uint64_t huge = std::uint64_t{1} << 40;
  std::memcpy(bad.data() + rows_at, &huge, 8);
  file.write(bad);
  const auto [error, largest] =
      refusal_with_largest_allocation<pce_error>([&] { cache.load(file.path); });
  CHECK_THAT(error, Contains(file.path) && Contains("its row count 1099511627776 needs 12 bytes each, more than the") &&
                        Contains("bytes that remain"));
  CHECK(largest < (std::size_t{1} << 20));

  // A directory and a pipe are refused by their kind, before anything is read (a pipe would block).
  const std::filesystem::path dir = file.path + ".dir";
  std::filesystem::create_directory(dir);
  CHECK_THAT(load_error(cache, dir.string()), Contains(dir.string()) && Contains("is a directory, not a regular file"));
  std::filesystem::remove(dir);
  const std::string fifo = file.path + ".fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(load_error(cache, fifo), Contains(fifo) && Contains("is a pipe, not a regular file"));
  std::filesystem::remove(fifo);
  CHECK_THAT(load_error(cache, "/dev/zero"), Contains("/dev/zero") && Contains("character device"));
  CHECK(cache.circuit_ids().empty());
}

TEST_CASE("a loaded PCE whose digest does not match is dropped and rebuilt", "[prover][pce][cpu]") {
  temp_file file;
  {
    pce_cache cache;
    const redigested_circuit other;
    vectors v(1024);
    cache.synthesize(other, v.a, v.b, v.c);
    cache.save(file.path);
  }
  pce_cache cache;
  REQUIRE(cache.load(file.path) == 1);
  const auto c = make_circuit("mimc", 10, 4, 0);
  vectors v(1024);
  CHECK_FALSE(cache.synthesize(*c, v.a, v.b, v.c).pce_used);
  CHECK(v == slow(*c));
  const pce_stats s = cache.stats();
  CHECK(s.rejected == 1);
  CHECK(s.builds == 1);
  CHECK(cache.find("mimc/10")->structure_digest == c->structure_digest());
}

TEST_CASE("a loaded PCE with wrong matrices fails its first-use check and is rebuilt",
          "[prover][pce][cpu]") {
  temp_file file;
  {
    pce_cache cache;
    const impostor_circuit impostor;
    vectors v(1024);
    cache.synthesize(impostor, v.a, v.b, v.c);
    cache.save(file.path);
  }
  pce_cache cache;
  REQUIRE(cache.load(file.path) == 1);
  const auto c = make_circuit("mimc", 10, 4, 0);
  vectors v(1024);
  CHECK_FALSE(cache.synthesize(*c, v.a, v.b, v.c).pce_used);
  CHECK(v == slow(*c));
  pce_stats s = cache.stats();
  CHECK(s.rejected == 1);
  CHECK(s.builds == 1);
  CHECK(s.hits == 0);
  // The rebuilt PCE is trusted and serves the next partition.
  const auto next = make_circuit("mimc", 10, 4, 1);
  CHECK(cache.synthesize(*next, v.a, v.b, v.c).pce_used);
  CHECK(v == slow(*next));
}

TEST_CASE("PCE policies parse and print", "[prover][pce][cpu]") {
  CHECK(parse_pce_policy("wait") == pce_policy::wait);
  CHECK(parse_pce_policy("eager") == pce_policy::eager);
  CHECK_FALSE(parse_pce_policy("lazy").has_value());
  CHECK(to_string(pce_policy::eager) == "eager");
}
