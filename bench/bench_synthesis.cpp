// Synthesis benchmark: the slow path (evaluating each constraint as it is enforced) against the
// PCE path (witness-only synthesis plus the multi-threaded CSR SpMV), per constraint, for circuit
// sizes 2^min..2^max, with their ratio in one run. Also reports the one-off recording cost and the
// PCE path's two parts. Prints a table; --json PATH writes
// [{"circuit","log_n","path","ns_per_constraint"}].
#include <coprove/prover/circuits.hpp>
#include <coprove/prover/parallel.hpp>
#include <coprove/prover/pce.hpp>
#include <coprove/prover/synthesis.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace coprove::prover;

namespace {

struct options {
  std::string circuit = "mimc";
  unsigned min_log = 16;
  unsigned max_log = 22;
  unsigned repetitions = 3;
  std::size_t threads = 0;
  std::string json_path;
};

[[noreturn]] void usage(const char* why) {
  std::cerr << "bench_synthesis: " << why << "\n"
            << "usage: bench_synthesis [--circuit mimc|merkle] [--min-log N] [--max-log N]\n"
            << "                       [--repetitions N] [--threads N] [--json PATH]\n";
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
      return argv[++i];
    };
    auto number = [&]() -> unsigned long {
      const std::string v = next();
      try {
        return std::stoul(v);
      } catch (const std::exception&) {
        usage((arg + " needs a number, got \"" + v + "\"").c_str());
      }
    };
    if (arg == "--circuit") o.circuit = next();
    else if (arg == "--min-log") o.min_log = static_cast<unsigned>(number());
    else if (arg == "--max-log") o.max_log = static_cast<unsigned>(number());
    else if (arg == "--repetitions") o.repetitions = static_cast<unsigned>(number());
    else if (arg == "--threads") o.threads = number();
    else if (arg == "--json") o.json_path = next();
    else usage(("unknown option " + arg).c_str());
  }
  if (o.min_log > o.max_log) usage("--min-log is above --max-log");
  if (o.repetitions == 0) usage("--repetitions must be at least 1");
  validate_circuit_parameters(o.circuit, o.min_log);
  validate_circuit_parameters(o.circuit, o.max_log);
  return o;
}

// The best of `repetitions` runs, in nanoseconds.
double best_ns(unsigned repetitions, const std::function<void()>& run) {
  double best = 1e300;
  for (unsigned r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse(argc, argv);
  set_parallelism(opt.threads);
  std::printf("synthesis: slow path vs PCE path, circuit %s, %zu threads for the SpMV, best of %u\n",
              opt.circuit.c_str(), parallelism(), opt.repetitions);
  std::printf("%6s %12s %12s %12s %12s %12s %8s %10s\n", "log_n", "slow ns/c", "pce ns/c",
              "witness ns/c", "spmv ns/c", "record ns/c", "ratio", "pce MiB");
  boost::json::array results;
  auto add = [&](unsigned log, const char* path, double ns) {
    boost::json::object o;
    o["circuit"] = opt.circuit;
    o["log_n"] = log;
    o["path"] = path;
    o["ns_per_constraint"] = ns;
    results.push_back(std::move(o));
  };
  for (unsigned log = opt.min_log; log <= opt.max_log; ++log) {
    const auto first = make_circuit(opt.circuit, log, 1, 0);
    const auto other = make_circuit(opt.circuit, log, 1, 1);
    const std::size_t n = first->domain_size();
    const double constraints = static_cast<double>(first->shape().num_rows());
    std::vector<fr> a(n), b(n), c(n);

    pce_cache cache;
    const double record = best_ns(1, [&] { cache.synthesize(*first, a, b, c); });
    const auto pce = cache.find(first->id());
    if (!pce) throw std::runtime_error("the PCE was not recorded");

    const double slow = best_ns(opt.repetitions, [&] { synthesize_slow(*other, a, b, c); });
    const double fast = best_ns(opt.repetitions, [&] {
      if (!cache.synthesize(*other, a, b, c).pce_used) throw std::runtime_error("PCE not used");
    });
    std::vector<fr> w;
    const double witness = best_ns(opt.repetitions, [&] { w = synthesize_witness(*other); });
    const double spmv = best_ns(opt.repetitions, [&] { pce->evaluate(w, a, b, c); });

    std::printf("%6u %12.1f %12.1f %12.1f %12.1f %12.1f %7.2fx %10.1f\n", log, slow / constraints,
                fast / constraints, witness / constraints, spmv / constraints,
                record / constraints, slow / fast,
                static_cast<double>(cache.bytes()) / (1 << 20));
    std::fflush(stdout);
    add(log, "slow", slow / constraints);
    add(log, "pce", fast / constraints);
    add(log, "pce_witness", witness / constraints);
    add(log, "pce_spmv", spmv / constraints);
    add(log, "record", record / constraints);
  }
  if (!opt.json_path.empty()) {
    std::ofstream out(opt.json_path);
    out << boost::json::serialize(results) << "\n";
    if (!out) {
      std::cerr << "bench_synthesis: cannot write " << opt.json_path << "\n";
      return 1;
    }
  }
  return 0;
}
