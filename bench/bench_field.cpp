// CPU field and NTT throughput: Fr multiplications and squarings per second on one thread on every
// multiplication path this CPU supports (side by side, interleaved), and the forward, inverse and
// coset NTTs and the full Groth16 quotient from 2^16 to 2^22 on all cores (medians).
// Prints a table and, with --json PATH, writes [{"case","n","ms","mul_per_s"}]. The one-thread
// cases ("fr_mul[path]", "fr_square[path]", "fr_mul_latency[path]", "fr_square_latency[path]",
// "mimc_round[path]", and on x86-64 the chain kernels "fr_mul_latency[x86-64 chain kernel]" and
// "fr_square_latency[x86-64 chain kernel]") are timed in thread CPU time, the transforms in wall
// time; --fr-path portable|adx picks the transforms' multiplication path. The latency cases are one
// dependent chain each (each step waits for the previous result, as in the MiMC witness);
// mimc_round counts the three multiplications of a round (t^2, t^4, t^5), so 1 / mul_per_s is the
// witness chain's time a constraint.
//
// mul_per_s counts the multiplications the algorithm is charged with: one per butterfly
// (n/2 log2 n per transform) for the NTTs; for the quotient 7 transforms plus 2n pointwise.
#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/r1cs/mimc.hpp>
#include <coprove/field/ntt.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/field/quotient.hpp>

#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace coprove::field;
using namespace coprove::r1cs;
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

// This thread's CPU time in milliseconds: steadier than wall time on a shared machine.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// One-thread Fr multiplication and squaring on every supported path, interleaved repetition by
// repetition so that both see the same machine load, timed in thread CPU time. "throughput": four independent chains keep
// the multiplier busy the way butterflies do; "latency": one dependent chain, as in the MiMC
// witness (x -> x^5 round after round).
std::vector<result> bench_mul_paths(std::size_t count, int reps) {
  const fr_multiply_path start_path = active_fr_multiply_path();
  std::vector<fr_multiply_path> paths;
  for (fr_multiply_path p : {fr_multiply_path::portable, fr_multiply_path::x86_64_adx}) {
    if (fr_multiply_path_supported(p)) paths.push_back(p);
  }
  struct kernel {
    const char* name;
    std::function<fr(std::size_t)> run;
  };
  std::mt19937_64 gen(1);
  const fr m = fr::random(gen);
  const fr s0 = fr::random(gen), s1 = fr::random(gen), s2 = fr::random(gen), s3 = fr::random(gen);
  const std::vector<kernel> kernels = {
      {"fr_mul", [&](std::size_t n) {
         fr x0 = s0, x1 = s1, x2 = s2, x3 = s3;
         for (std::size_t i = 0; i < n / 4; ++i) {
           x0 *= m;
           x1 *= m;
           x2 *= m;
           x3 *= m;
         }
         return x0 + x1 + x2 + x3;
       }},
      {"fr_square", [&](std::size_t n) {
         fr x0 = s0, x1 = s1, x2 = s2, x3 = s3;
         for (std::size_t i = 0; i < n / 4; ++i) {
           x0 = x0.square();
           x1 = x1.square();
           x2 = x2.square();
           x3 = x3.square();
         }
         return x0 + x1 + x2 + x3;
       }},
      {"fr_mul_latency", [&](std::size_t n) {
         fr x = s0;
         for (std::size_t i = 0; i < n; ++i) x *= m;
         return x;
       }},
      {"fr_square_latency", [&](std::size_t n) {
         fr x = s0;
         for (std::size_t i = 0; i < n; ++i) x = x.square();
         return x;
       }},
      {"mimc_round", [&](std::size_t n) { return mimc_permute(s0, n / 3, mimc_chain_tag); }},
  };
  std::vector<result> out;
  for (const kernel& k : kernels) {
    std::vector<std::vector<double>> times(paths.size());
    fr sink = fr::zero();
    for (int r = 0; r < reps; ++r) {
      for (std::size_t p = 0; p < paths.size(); ++p) {
        set_fr_multiply_path(paths[p]);
        const double start = thread_cpu_ms();
        sink += k.run(count);
        times[p].push_back(thread_cpu_ms() - start);
      }
    }
    // Keep the results observable.
    if (sink.is_zero()) std::puts("");
    for (std::size_t p = 0; p < paths.size(); ++p) {
      std::sort(times[p].begin(), times[p].end());
      const double ms = times[p][times[p].size() / 2];
      out.push_back({std::string(k.name) + "[" + std::string(to_string(paths[p])) + "]", count, ms,
                     static_cast<double>(count) / (ms / 1e3)});
    }
  }
  set_fr_multiply_path(start_path);
#if defined(COPROVE_FR_HAVE_ADX_LATENCY)
  // The kernels the MiMC round chains on the MULX/ADX path, alone (fully reduced each step).
  if (fr_multiply_path_supported(fr_multiply_path::x86_64_adx)) {
    const std::vector<kernel> chain_kernels = {
        {"fr_mul_latency", [&](std::size_t n) {
           detail::limbs4 x = s0.limbs;
           for (std::size_t i = 0; i < n; ++i) x = detail::mont_mul_latency_adx(x, m.limbs);
           return fr{x};
         }},
        {"fr_square_latency", [&](std::size_t n) {
           detail::limbs4 x = s0.limbs;
           for (std::size_t i = 0; i < n; ++i) x = detail::mont_square_latency_adx(x);
           return fr{x};
         }},
    };
    for (const kernel& k : chain_kernels) {
      std::vector<double> times;
      fr sink = fr::zero();
      for (int r = 0; r < reps; ++r) {
        const double start = thread_cpu_ms();
        sink += k.run(count);
        times.push_back(thread_cpu_ms() - start);
      }
      if (sink.is_zero()) std::puts("");
      std::sort(times.begin(), times.end());
      const double ms = times[times.size() / 2];
      out.push_back({std::string(k.name) + "[x86-64 chain kernel]", count, ms,
                     static_cast<double>(count) / (ms / 1e3)});
    }
  }
#endif
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  unsigned min_log = 16, max_log = 22;
  int reps = 5;
  std::size_t threads = 0;
  std::string fr_path;
  coprove::bench::options cli("bench_field", "Fr multiplication on one thread and the NTTs and quotient on every core");
  cli.number("--min-log", min_log, "K", "the smallest transform, log2 elements (default 16)", 1u, 28u)
      .number("--max-log", max_log, "K", "the largest (default 22)", 1u, 28u)
      .number("--reps", reps, "N", "runs a case, the median kept (default 5)", 1, 1000)
      .number("--threads", threads, "N", "threads for the transforms (default 0: every core)", std::size_t{0},
              std::size_t{4096})
      .choice("--fr-path", fr_path, {"portable", "adx"}, "the transforms' multiplication path (default: the fastest)")
      .text("--json", json_path, "PATH", "write the rows as JSON")
      .parse(argc, argv);
  if (min_log > max_log) cli.refuse("--min-log is above --max-log");
  set_parallelism(threads);

  std::vector<result> results = bench_mul_paths(std::size_t{1} << 22, std::max(reps, 5));
  // The transforms run on the chosen path (by default the fastest this CPU supports).
  if (!fr_path.empty()) {
    try {
      set_fr_multiply_path(fr_path == "adx" ? fr_multiply_path::x86_64_adx
                                            : fr_multiply_path::portable);
    } catch (const std::invalid_argument& e) {
      std::cerr << "bench_field: " << e.what() << "\n";
      return 2;
    }
  }

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

  std::printf("bench_field: %zu threads; NTTs on the %s path\n", parallelism(),
              std::string(fr_multiply_path_name()).c_str());
  coprove::bench::report table({{"case", "case"}, {"n", "n"}, {"ms", "ms", 3}, {"Mmul/s", "mul_per_s", 1, 1e6}});
  for (const auto& r : results) table.add({{"case", r.name}, {"n", r.n}, {"ms", r.ms}, {"mul_per_s", r.mul_per_s}});
  table.print();
  if (!json_path.empty() && !table.write_json(json_path, "bench_field")) return 1;
  return 0;
}
