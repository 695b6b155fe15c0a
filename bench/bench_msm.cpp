// The CPU multi-scalar multiplication (groth16::msm) for G1 and G2 at 2^10..2^20 points, on one
// thread and on all of them, with uniform scalars and with 0/1-heavy ones (45% zero, 45% one, the
// rest uniform, as in circuits with boolean wires). Prints a table and, with --json PATH, writes
// [{"group", "log_size", "threads", "scalars", "ms", "points_per_s", "peer_ms"}]. The peer column
// is for blst's MSM built outside the repository; until it is wired in the bench says
// "peer not found". Times are wall-clock medians of --reps runs after one warm-up.
#include <coprove/groth16/msm.hpp>

#include <coprove/field/fr.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/field/parallel.hpp>

#include "bench_support.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace {

namespace field = coprove::field;
namespace groth16 = coprove::groth16;

/// n distinct bases: a random start point plus multiples of a random step, one addition each, so
/// that 2^20 G2 bases take seconds rather than minutes.
template <class Curve>
std::vector<field::detail::affine_point<Curve>> make_bases(std::size_t n, std::uint64_t seed) {
  using jacobian = field::detail::jacobian_point<Curve>;
  std::mt19937_64 gen(seed);
  const jacobian step = jacobian::generator().mul(field::random_scalar(gen));
  std::vector<jacobian> points(n);
  constexpr std::size_t chunk = 1 << 12;
  field::parallel_for(0, (n + chunk - 1) / chunk, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi; ++c) {
      std::mt19937_64 local(seed * 7919 + c);
      jacobian p = jacobian::generator().mul(field::random_scalar(local));
      for (std::size_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
        points[i] = p;
        p += step;
      }
    }
  });
  std::vector<field::detail::affine_point<Curve>> out(n);
  field::parallel_for(0, (n + chunk - 1) / chunk, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi; ++c) {
      const std::size_t begin = c * chunk, end = std::min(n, (c + 1) * chunk);
      const auto affine = field::batch_normalize(std::span<const jacobian>(points.data() + begin, end - begin));
      std::copy(affine.begin(), affine.end(), out.begin() + static_cast<std::ptrdiff_t>(begin));
    }
  });
  return out;
}

std::vector<field::fr> boolean_heavy(std::size_t n, std::uint64_t seed) {
  std::vector<field::fr> out = coprove::bench::random_elements(n, seed);
  std::mt19937_64 gen(seed ^ 0x5bd1e995);
  std::uniform_int_distribution<int> pick(0, 99);
  for (auto& s : out) {
    const int x = pick(gen);
    if (x < 45) s = field::fr::zero();
    else if (x < 90) s = field::fr::one();
  }
  return out;
}

struct row {
  std::string group;
  unsigned log_size;
  std::size_t threads;
  std::string scalars;
  double ms;
};

template <class Bases>
double time_msm(const Bases& bases, const std::vector<field::fr>& scalars, int reps,
                const groth16::msm_options& options) {
  (void)groth16::msm(bases, scalars, options);  // warm-up (and pages faulted in)
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const auto result = groth16::msm(bases, scalars, options);
    const auto stop = std::chrono::steady_clock::now();
    if (result.is_identity()) std::cerr << "bench_msm: unexpected identity\n";
    times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return coprove::bench::median(times);
}

void usage() {
  std::cerr << "usage: bench_msm [--g1 LOGS] [--g2 LOGS] [--all] [--reps N] [--window BITS] [--json PATH]\n"
               "  LOGS: comma-separated log2 sizes (default --g1 10,12,14 --g2 10,12);\n"
               "  --all: 10,12,14,16,18,20 for both groups\n"
               "  --window: a fixed window width (default: msm's choice for each size)\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<unsigned> g1_logs{10, 12, 14};
  std::vector<unsigned> g2_logs{10, 12};
  int reps = 3;
  groth16::msm_options options;
  std::string json_path;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto next = [&] { return coprove::bench::option_value(argc, argv, i, usage); };
      if (arg == "--g1") {
        g1_logs = coprove::bench::parse_log_sizes(next(), 1, 26, "bench_msm");
      } else if (arg == "--g2") {
        g2_logs = coprove::bench::parse_log_sizes(next(), 1, 26, "bench_msm");
      } else if (arg == "--all") {
        g1_logs = g2_logs = {10, 12, 14, 16, 18, 20};
      } else if (arg == "--reps") {
        reps = std::max(1, std::stoi(next()));
      } else if (arg == "--window") {
        options.window_bits = static_cast<unsigned>(std::stoul(next()));
      } else if (arg == "--json") {
        json_path = next();
      } else {
        usage();
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }

  const std::size_t all_threads = field::parallelism();
  std::vector<row> rows;
  const auto run_group = [&](const char* name, const std::vector<unsigned>& logs, auto make) {
    for (const unsigned log : logs) {
      const std::size_t n = std::size_t{1} << log;
      const auto bases = make(n);
      const auto uniform = coprove::bench::random_elements(n, 100 + log);
      const auto boolean = boolean_heavy(n, 200 + log);
      for (const std::size_t threads : {std::size_t{1}, all_threads}) {
        field::set_parallelism(threads);
        rows.push_back({name, log, threads, "uniform", time_msm(bases, uniform, reps, options)});
        rows.push_back({name, log, threads, "0/1-heavy", time_msm(bases, boolean, reps, options)});
        if (all_threads == 1) break;
      }
      field::set_parallelism(all_threads);
    }
  };
  run_group("g1", g1_logs, [](std::size_t n) { return make_bases<field::g1_curve>(n, 1); });
  run_group("g2", g2_logs, [](std::size_t n) { return make_bases<field::g2_curve>(n, 2); });

  std::printf("bench_msm: groth16::msm on the CPU, %zu threads available, Fr path %s, median of %d, window %s\n",
              all_threads, std::string(field::fr_multiply_path_name()).c_str(), reps,
              options.window_bits == 0 ? "by size" : std::to_string(options.window_bits).c_str());
  std::printf("%-5s %6s %8s %10s %12s %14s %16s\n", "group", "log2 n", "threads", "scalars", "ms",
              "points/s", "peer (blst)");
  boost::json::array json;
  for (const auto& r : rows) {
    const double rate = static_cast<double>(std::size_t{1} << r.log_size) / (r.ms / 1e3);
    std::printf("%-5s %6u %8zu %10s %12.2f %14.0f %16s\n", r.group.c_str(), r.log_size, r.threads,
                r.scalars.c_str(), r.ms, rate, "peer not found");
    json.push_back(boost::json::object{{"group", r.group},
                                       {"log_size", r.log_size},
                                       {"threads", r.threads},
                                       {"scalars", r.scalars},
                                       {"ms", r.ms},
                                       {"points_per_s", rate},
                                       {"peer_ms", nullptr},
                                       {"peer", "peer not found"}});
  }
  if (!json_path.empty() && !coprove::bench::write_json_file(json_path, json, "bench_msm")) return 1;
  return 0;
}
