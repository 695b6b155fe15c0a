// Tests of the CPU NTTs against a naive O(n^2) evaluation, round trips at large sizes, and the
// shared pool the transforms run on.
#include <coprove/field/ntt.hpp>

#include <coprove/field/parallel.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <random>
#include <thread>
#include <stdexcept>
#include <vector>

namespace {

using namespace coprove::field;

std::vector<fr> random_vector(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<fr> v(n);
  for (auto& x : v) x = fr::random(gen);
  return v;
}

/// sum_j coeffs[j] * (shift * omega^i)^j for every i.
std::vector<fr> naive_evaluate(const std::vector<fr>& coeffs, const evaluation_domain& domain,
                               const fr& shift) {
  const std::size_t n = coeffs.size();
  std::vector<fr> out(n);
  fr point = shift;
  for (std::size_t i = 0; i < n; ++i) {
    fr acc = fr::zero();
    for (std::size_t j = n; j-- > 0;) acc = acc * point + coeffs[j];
    out[i] = acc;
    point *= domain.omega();
  }
  return out;
}

}  // namespace

TEST_CASE("ntt agrees with naive evaluation at the roots of unity for n up to 64",
          "[prover][ntt][cpu]") {
  for (std::size_t n = 1; n <= 64; n *= 2) {
    const evaluation_domain domain(n);
    const auto coeffs = random_vector(n, n);
    auto values = coeffs;
    ntt(values, domain);
    CHECK(values == naive_evaluate(coeffs, domain, fr::one()));
    intt(values, domain);
    CHECK(values == coeffs);
  }
}

TEST_CASE("coset_ntt agrees with naive evaluation on the coset 7H for n up to 64",
          "[prover][ntt][cpu]") {
  for (std::size_t n = 1; n <= 64; n *= 2) {
    const evaluation_domain domain(n);
    const auto coeffs = random_vector(n, 100 + n);
    auto values = coeffs;
    coset_ntt(values, domain);
    CHECK(values == naive_evaluate(coeffs, domain, fr::from_uint64(7)));
    coset_intt(values, domain);
    CHECK(values == coeffs);
  }
}

TEST_CASE("transforms larger than a cache block agree with naive evaluation at sampled points",
          "[prover][ntt][cpu]") {
  // 2^15 exercises the single and double global levels of both DIF and DIT.
  for (std::size_t n : {std::size_t{1} << 13, std::size_t{1} << 14, std::size_t{1} << 15}) {
    const evaluation_domain domain(n);
    const auto coeffs = random_vector(n, n);
    auto values = coeffs;
    auto coset_values = coeffs;
    ntt(values, domain);
    coset_ntt(coset_values, domain);
    for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{77}, n / 2 + 3, n - 1}) {
      const fr point = domain.omega().pow(static_cast<std::uint64_t>(i));
      const fr coset_point = point * fr::from_uint64(7);
      fr acc = fr::zero(), coset_acc = fr::zero();
      for (std::size_t j = n; j-- > 0;) {
        acc = acc * point + coeffs[j];
        coset_acc = coset_acc * coset_point + coeffs[j];
      }
      CHECK(values[i] == acc);
      CHECK(coset_values[i] == coset_acc);
    }
  }
}

TEST_CASE("ntt and coset_ntt round trip at 2^16", "[prover][ntt][cpu]") {
  const evaluation_domain domain(1 << 16);
  const auto original = random_vector(domain.size(), 16);
  auto values = original;
  ntt(values, domain);
  CHECK(values != original);
  intt(values, domain);
  CHECK(values == original);
  coset_ntt(values, domain);
  coset_intt(values, domain);
  CHECK(values == original);
  // Evaluations -> coefficients -> evaluations also round trips.
  intt(values, domain);
  ntt(values, domain);
  CHECK(values == original);
}

TEST_CASE("ntt and coset_ntt round trip at 2^20", "[prover][ntt][cpu][slow]") {
  const evaluation_domain domain(1 << 20);
  const auto original = random_vector(domain.size(), 20);
  auto values = original;
  ntt(values, domain);
  intt(values, domain);
  CHECK(values == original);
  coset_ntt(values, domain);
  coset_intt(values, domain);
  CHECK(values == original);
}

TEST_CASE("a transform of the wrong length is refused and leaves the data alone",
          "[prover][ntt][cpu]") {
  const evaluation_domain domain(16);
  auto values = random_vector(8, 1);
  const auto before = values;
  CHECK_THROWS_AS(ntt(values, domain), std::invalid_argument);
  CHECK_THROWS_AS(intt(values, domain), std::invalid_argument);
  CHECK_THROWS_AS(coset_ntt(values, domain), std::invalid_argument);
  CHECK_THROWS_AS(coset_intt(values, domain), std::invalid_argument);
  CHECK(values == before);
}

TEST_CASE("transforms give the same result with one thread and with many",
          "[prover][ntt][parallel][cpu]") {
  const evaluation_domain domain(1 << 15);
  const auto original = random_vector(domain.size(), 3);
  auto many = original;
  coset_ntt(many, domain);
  const std::size_t before = parallelism();
  set_parallelism(1);
  auto one = original;
  coset_ntt(one, domain);
  set_parallelism(4);
  auto four = original;
  coset_ntt(four, domain);
  set_parallelism(before);
  CHECK(one == many);
  CHECK(four == many);
}

TEST_CASE("parallel_for covers every index exactly once in chunks of at least min_chunk",
          "[prover][parallel][cpu]") {
  const std::size_t before = parallelism();
  set_parallelism(4);
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000},
                            std::size_t{100003}}) {
    std::vector<std::atomic<int>> hits(count + 10);
    std::atomic<bool> short_chunk{false};
    std::atomic<int> chunks{0};
    parallel_for(10, 10 + count, [&](std::size_t lo, std::size_t hi) {
      ++chunks;
      if (hi - lo < 100 && hi != 10 + count) short_chunk = true;
      for (std::size_t i = lo; i < hi; ++i) ++hits[i];
    }, 100);
    for (std::size_t i = 0; i < hits.size(); ++i) CHECK(hits[i] == (i >= 10 ? 1 : 0));
    CHECK_FALSE(short_chunk);
    if (count >= 100003) CHECK(chunks > 1);
  }
  set_parallelism(before);
}

TEST_CASE("parallel_for rethrows the first exception of a chunk", "[prover][parallel][cpu]") {
  const std::size_t before = parallelism();
  set_parallelism(3);
  CHECK_THROWS_WITH(parallel_for(0, 1000, [](std::size_t lo, std::size_t hi) {
    if (lo <= 500 && 500 < hi) throw std::runtime_error("chunk failed");
  }), "chunk failed");
  // The pool is still usable afterwards.
  std::atomic<std::size_t> sum{0};
  parallel_for(0, 1000, [&](std::size_t lo, std::size_t hi) { sum += hi - lo; });
  CHECK(sum == 1000);
  set_parallelism(before);
}

TEST_CASE("parallel_for called from inside a body runs inline instead of deadlocking",
          "[prover][parallel][cpu]") {
  const std::size_t before = parallelism();
  set_parallelism(2);
  std::atomic<std::size_t> total{0};
  parallel_for(0, 64, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      parallel_for(0, 100, [&](std::size_t l, std::size_t h) { total += h - l; });
    }
  });
  CHECK(total == 6400);
  set_parallelism(before);
}

TEST_CASE("parallel_for calls from several threads at once all complete",
          "[prover][parallel][cpu]") {
  const std::size_t before = parallelism();
  set_parallelism(3);
  std::atomic<std::size_t> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        parallel_for(0, 1000, [&](std::size_t lo, std::size_t hi) { total += hi - lo; }, 10);
      }
    });
  }
  for (auto& c : callers) c.join();
  CHECK(total == 4 * 50 * 1000);
  set_parallelism(before);
}
