// CPU field and NTT throughput: Fr multiplications per second on one thread, and the forward,
// inverse and coset NTTs and the full Groth16 quotient from 2^16 to 2^22 on all cores (medians).
// Prints a table and, with --json PATH, writes [{"case","n","ms","mul_per_s"}].
//
// mul_per_s counts the multiplications the algorithm is charged with: one per butterfly
// (n/2 log2 n per transform) for the NTTs; for the quotient 7 transforms plus 2n pointwise.
#include <coprove/prover/domain.hpp>
#include <coprove/prover/fr.hpp>
#include <coprove/prover/ntt.hpp>
#include <coprove/prover/parallel.hpp>
#include <coprove/prover/quotient.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace coprove::prover;
using clock_type = std::chrono::steady_clock;

struct result {
  std::string name;
  std::size_t n;
  double ms;
  double mul_per_s;
};

double median_ms(int reps, const std::function<void()>& setup, const std::function<void()>& work) {
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    setup();
    const auto start = clock_type::now();
    work();
    times.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::vector<fr> random_vector(std::size_t n, std::uint64_t seed) {
  std::vector<fr> v(n);
  parallel_for(0, n, [&](std::size_t lo, std::size_t hi) {
    std::mt19937_64 gen(seed ^ (lo * 0x9e3779b97f4a7c15ULL));
    for (std::size_t i = lo; i < hi; ++i) v[i] = fr::random(gen);
  }, 1 << 14);
  return v;
}

result bench_mul(std::size_t count) {
  // Four independent chains keep the multiplier busy the way butterflies do.
  std::mt19937_64 gen(1);
  fr x0 = fr::random(gen), x1 = fr::random(gen), x2 = fr::random(gen), x3 = fr::random(gen);
  const fr m = fr::random(gen);
  const double ms = median_ms(5, [] {}, [&] {
    for (std::size_t i = 0; i < count / 4; ++i) {
      x0 *= m;
      x1 *= m;
      x2 *= m;
      x3 *= m;
    }
  });
  // Keep the result observable.
  if ((x0 + x1 + x2 + x3).is_zero()) std::puts("");
  return {"fr_mul_1thread", count, ms, static_cast<double>(count) / (ms / 1e3)};
}

void usage() {
  std::cerr << "usage: bench_field [--json PATH] [--min-log K] [--max-log K] [--reps N] "
               "[--threads N]\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  unsigned min_log = 16, max_log = 22;
  int reps = 5;
  std::size_t threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--json") json_path = next();
    else if (arg == "--min-log") min_log = static_cast<unsigned>(std::stoul(next()));
    else if (arg == "--max-log") max_log = static_cast<unsigned>(std::stoul(next()));
    else if (arg == "--reps") reps = std::max(1, std::stoi(next()));
    else if (arg == "--threads") threads = std::stoul(next());
    else {
      usage();
      return 2;
    }
  }
  if (min_log > max_log || max_log > 28) {
    std::cerr << "bench_field: need min-log <= max-log <= 28\n";
    return 2;
  }
  set_parallelism(threads);

  std::vector<result> results;
  results.push_back(bench_mul(std::size_t{1} << 24));

  for (unsigned k = min_log; k <= max_log; ++k) {
    const std::size_t n = std::size_t{1} << k;
    const evaluation_domain domain(n);
    (void)domain.forward_twiddles();  // tables are built once per domain, outside the timing
    (void)domain.inverse_twiddles();
    const auto a = random_vector(n, 1), b = random_vector(n, 2);
    std::vector<fr> c(n), h(n), work(n);
    for (std::size_t i = 0; i < n; ++i) c[i] = a[i] * b[i];
    const double butterflies = static_cast<double>(n) / 2 * k;
    const auto reset = [&] { std::copy(a.begin(), a.end(), work.begin()); };
    const auto add = [&](const char* name, double ms, double muls) {
      results.push_back({name, n, ms, muls / (ms / 1e3)});
    };
    add("ntt_forward", median_ms(reps, reset, [&] { ntt(work, domain); }), butterflies);
    add("ntt_inverse", median_ms(reps, reset, [&] { intt(work, domain); }), butterflies);
    add("ntt_coset_forward", median_ms(reps, reset, [&] { coset_ntt(work, domain); }), butterflies);
    add("quotient", median_ms(reps, [] {}, [&] { compute_quotient(a, b, c, h, domain); }),
        7 * butterflies + 2.0 * n);
  }

  std::printf("%-20s %10s %12s %14s   (threads: %zu)\n", "case", "n", "ms", "Mmul/s",
              parallelism());
  for (const auto& r : results) {
    std::printf("%-20s %10zu %12.3f %14.1f\n", r.name.c_str(), r.n, r.ms, r.mul_per_s / 1e6);
  }
  if (!json_path.empty()) {
    boost::json::array out;
    for (const auto& r : results) {
      out.push_back(boost::json::object{{"case", r.name}, {"n", r.n}, {"ms", r.ms},
                                        {"mul_per_s", r.mul_per_s}});
    }
    std::ofstream file(json_path);
    if (!file) {
      std::cerr << "bench_field: cannot write " << json_path << "\n";
      return 1;
    }
    file << boost::json::serialize(out) << "\n";
  }
  return 0;
}
