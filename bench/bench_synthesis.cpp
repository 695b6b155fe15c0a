// Synthesis benchmark: the slow path (evaluating each constraint as it is enforced) against the
// PCE path (witness-only synthesis plus the multi-threaded CSR SpMV), per constraint, for circuit
// sizes 2^min..2^max, with their ratio in one run. Also reports the one-off recording cost and the
// PCE path's two parts (witness, SpMV), in wall time and in process CPU time (all threads).
// --fr-path picks the Fr multiplication path (default: the fastest the CPU supports). Prints a table;
// --json PATH writes [{"circuit","log_n","path","ns_per_constraint","cpu_ns_per_constraint"}].
#include <coprove/r1cs/circuits.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/r1cs/pce.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace coprove::field;
using namespace coprove::r1cs;

namespace {

struct options {
  std::string circuit = "mimc";
  unsigned min_log = 16;
  unsigned max_log = 22;
  unsigned repetitions = 3;
  std::size_t threads = 0;
  std::string json_path;
  std::string fr_path;
};

/// The command line, checked: sizes the circuit supports, min <= max.
options parse(int argc, char** argv) {
  options o;
  coprove::bench::options cli("bench_synthesis", "the slow path against the PCE path (witness + SpMV), per constraint");
  cli.text("--circuit", o.circuit, "NAME", "the circuit: mimc or merkle (default mimc)")
      .number("--min-log", o.min_log, "N", "the smallest size, log2 constraints (default 16)", 1u, 30u)
      .number("--max-log", o.max_log, "N", "the largest (default 22)", 1u, 30u)
      .number("--repetitions", o.repetitions, "N", "runs a size and path, the best kept (default 3)", 1u, 1000u)
      .number("--threads", o.threads, "N", "threads (default 0: every core)", std::size_t{0}, std::size_t{4096})
      .choice("--fr-path", o.fr_path, {"portable", "adx"},
              "the Fr multiplication path (default: the fastest this CPU supports)")
      .text("--json", o.json_path, "PATH", "write the rows as JSON")
      .parse(argc, argv);
  if (o.min_log > o.max_log) cli.refuse("--min-log is above --max-log");
  try {
    validate_circuit_parameters(o.circuit, o.min_log);
    validate_circuit_parameters(o.circuit, o.max_log);
  } catch (const std::exception& e) {
    cli.refuse(e.what());
  }
  return o;
}

double process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Wall and process CPU time (every thread) of one run, in nanoseconds.
struct timing {
  double wall = 1e300;
  double cpu = 1e300;
};

// The best of `repetitions` runs (wall and CPU minima taken separately: on a shared machine the
// CPU time is the steadier measure of work, the wall time the one the SpMV's threads shorten).
timing best_ns(unsigned repetitions, const std::function<void()>& run) {
  timing best;
  for (unsigned r = 0; r < repetitions; ++r) {
    const double cpu_start = process_cpu_ns();
    const auto start = std::chrono::steady_clock::now();
    run();
    const auto stop = std::chrono::steady_clock::now();
    best.cpu = std::min(best.cpu, process_cpu_ns() - cpu_start);
    best.wall = std::min(best.wall, std::chrono::duration<double, std::nano>(stop - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse(argc, argv);
  set_parallelism(opt.threads);
  if (!opt.fr_path.empty()) {
    try {
      set_fr_multiply_path(opt.fr_path == "adx" ? fr_multiply_path::x86_64_adx
                                                : fr_multiply_path::portable);
    } catch (const std::invalid_argument& e) {
      std::cerr << "bench_synthesis: " << e.what() << "\n";
      return 2;
    }
  }
  std::printf("synthesis: slow path vs PCE path, circuit %s, %zu threads for the SpMV, best of %u, "
              "Fr multiplication: %s\n",
              opt.circuit.c_str(), parallelism(), opt.repetitions,
              std::string(fr_multiply_path_name()).c_str());
  std::printf("%6s | %10s %10s %7s | %10s %10s %7s | %10s %10s %10s | %10s %10s\n", "log_n",
              "slow", "pce", "ratio", "slow cpu", "pce cpu", "ratio", "witness", "spmv", "record",
              "witness", "spmv");
  std::printf("%6s | %29s | %29s | %32s | %21s\n", "", "wall ns/constraint",
              "process CPU ns/constraint", "PCE parts, record: wall ns/c", "PCE parts: CPU ns/c");
  boost::json::array results;
  auto add = [&](unsigned log, const char* path, const timing& t, double constraints) {
    boost::json::object o;
    o["circuit"] = opt.circuit;
    o["log_n"] = log;
    o["path"] = path;
    o["ns_per_constraint"] = t.wall / constraints;
    o["cpu_ns_per_constraint"] = t.cpu / constraints;
    results.push_back(std::move(o));
  };
  for (unsigned log = opt.min_log; log <= opt.max_log; ++log) {
    const auto first = make_circuit(opt.circuit, log, 1, 0);
    const auto other = make_circuit(opt.circuit, log, 1, 1);
    const std::size_t n = first->domain_size();
    const double constraints = static_cast<double>(first->shape().num_rows());
    std::vector<fr> a(n), b(n), c(n);

    pce_cache cache;
    const timing record = best_ns(1, [&] { cache.synthesize(*first, a, b, c); });
    const auto pce = cache.find(first->id());
    if (!pce) throw std::runtime_error("the PCE was not recorded");

    // Both paths reuse their assignment's memory across runs, as the cache does.
    std::vector<fr> scratch;
    const timing slow = best_ns(opt.repetitions, [&] {
      synthesize_slow(*other, a, b, c, nullptr, &scratch);
    });
    const timing fast = best_ns(opt.repetitions, [&] {
      if (!cache.synthesize(*other, a, b, c).pce_used) throw std::runtime_error("PCE not used");
    });
    std::vector<fr> w;
    const timing witness = best_ns(opt.repetitions, [&] {
      w = synthesize_witness(*other, std::move(w));
    });
    const timing spmv = best_ns(opt.repetitions, [&] { pce->evaluate(w, a, b, c); });

    std::printf("%6u | %10.1f %10.1f %6.2fx | %10.1f %10.1f %6.2fx | %10.1f %10.1f %10.1f | %10.1f "
                "%10.1f\n",
                log, slow.wall / constraints, fast.wall / constraints, slow.wall / fast.wall,
                slow.cpu / constraints, fast.cpu / constraints, slow.cpu / fast.cpu,
                witness.wall / constraints, spmv.wall / constraints, record.wall / constraints,
                witness.cpu / constraints, spmv.cpu / constraints);
    std::fflush(stdout);
    add(log, "slow", slow, constraints);
    add(log, "pce", fast, constraints);
    add(log, "pce_witness", witness, constraints);
    add(log, "pce_spmv", spmv, constraints);
    add(log, "record", record, constraints);
  }
  if (!opt.json_path.empty() && !coprove::bench::write_json_file(opt.json_path, results, "bench_synthesis")) return 1;
  return 0;
}
