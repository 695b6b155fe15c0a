// NTT and Groth16 quotient throughput: the CPU transforms (all cores) from 2^16 to 2^22 and, where
// CUDA is built and a GPU is present, the GPU transforms from 2^16 to 2^26 on device-resident data,
// timed with CUDA events (warm-up, then the median of the repetitions, buffers rotated so that small
// sizes are not served from L2). Prints a table; --json PATH writes
// [{"impl","op","log_n","ms","mul_per_s"}].
//
// --no-boundary-tables builds the GPU plans without boundary-twiddle tables (each boundary
// twiddle formed as lo * hi, 1/n applied in the last pass: what plans above 2^26 do); its rows are
// labelled impl "gpu-lohi".
//
// The GPU part starts with the raw Fr multiplication rate (op "fr_mul", log_n 0): chains of
// dependent multiplications in registers over the whole chip.
//
// mul_per_s counts nominal multiplications: (n/2) lg n per transform, n more for a coset or
// scaling step, and for the quotient the textbook sequence's 7 (n/2) lg n + 6n (three coset
// scalings, the pointwise product and the division by Z, the final coset scaling), although the
// quotient now runs six transforms: the rate stays comparable with earlier measurements and
// credits the saved transform.
#include "bench_support.hpp"
#include "support/options.hpp"
#include "support/report.hpp"

#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/field/ntt.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/field/quotient.hpp>

#if defined(COPROVE_HAVE_CUDA)
#include <coprove/cuda/detail/ntt_launch.hpp>
#include <coprove/cuda/ntt.hpp>
#include <cuda_runtime_api.h>
#endif

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using coprove::field::fr;

struct result {
  std::string impl, op;
  unsigned log_n;
  double ms;
  double mul_per_s;
};

double nominal_multiplications(const std::string& op, unsigned log_n) {
  const double n = static_cast<double>(std::uint64_t{1} << log_n);
  const double transform = n / 2 * log_n;
  if (op == "forward") return transform;
  if (op == "inverse" || op == "coset_forward" || op == "coset_inverse") return transform + n;
  return 7 * transform + 6 * n;  // quotient
}

using coprove::bench::median;
using coprove::bench::random_elements;

result make_result(std::string impl, std::string op, unsigned log_n, double ms) {
  const double muls = nominal_multiplications(op, log_n);
  return {std::move(impl), op, log_n, ms, muls / (ms * 1e-3)};
}

void run_cpu(unsigned min_log, unsigned max_log, std::vector<result>& results) {
  std::cout << "CPU: " << coprove::field::parallelism() << " threads\n";
  for (unsigned log_n = min_log; log_n <= max_log; ++log_n) {
    const coprove::field::evaluation_domain domain(std::size_t{1} << log_n);
    const auto a = random_elements(domain.size(), 1 + log_n);
    const auto b = random_elements(domain.size(), 101 + log_n);
    const auto c = random_elements(domain.size(), 201 + log_n);
    std::vector<fr> work = a, h(domain.size());
    const int reps = log_n <= 18 ? 11 : 5;
    auto time_op = [&](const std::string& op, const std::function<void()>& body) {
      body();  // warm-up (also builds the domain's twiddles)
      std::vector<double> ms;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        body();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      results.push_back(make_result("cpu", op, log_n, median(ms)));
    };
    time_op("forward", [&] { coprove::field::ntt(work, domain); });
    time_op("inverse", [&] { coprove::field::intt(work, domain); });
    time_op("coset_forward", [&] { coprove::field::coset_ntt(work, domain); });
    time_op("quotient", [&] { coprove::field::compute_quotient(a, b, c, h, domain); });
  }
}

#if defined(COPROVE_HAVE_CUDA)
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

bool gpu_present(std::string& name) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    return false;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  name = prop.name;
  return true;
}

void run_gpu(unsigned min_log, unsigned max_log, int reps, const std::string& impl, std::vector<result>& results) {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  const auto pattern = random_elements(std::size_t{1} << 20, 7);
  {
    // The raw Fr multiplication rate, memory out of the way: the ceiling the transforms work under.
    const std::size_t threads = std::size_t{132} * 2048 * 4;
    const unsigned rounds = 256;
    fr* in = nullptr;
    fr* out = nullptr;
    check(cudaMalloc(reinterpret_cast<void**>(&in), (threads + 1) * sizeof(fr)), "cudaMalloc");
    check(cudaMalloc(reinterpret_cast<void**>(&out), threads * sizeof(fr)), "cudaMalloc");
    for (std::size_t off = 0; off < threads + 1; off += pattern.size()) {
      const std::size_t count = std::min(pattern.size(), threads + 1 - off);
      check(cudaMemcpy(in + off, pattern.data(), count * sizeof(fr), cudaMemcpyHostToDevice), "copy h2d");
    }
    std::vector<double> ms;
    for (int r = 0; r < reps + 2; ++r) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      coprove::cuda::detail::launch_mul_throughput(in, out, threads, rounds, stream);
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float elapsed = 0;
      check(cudaEventElapsedTime(&elapsed, start, stop), "cudaEventElapsedTime");
      if (r >= 2) ms.push_back(elapsed);
    }
    const double m = median(ms);
    results.push_back({impl, "fr_mul", 0, m, 2.0 * threads * rounds / (m * 1e-3)});
    check(cudaFree(in), "cudaFree");
    check(cudaFree(out), "cudaFree");
  }
  for (unsigned log_n = min_log; log_n <= max_log; ++log_n) {
    const std::size_t n = std::size_t{1} << log_n;
    const std::size_t bytes = n * sizeof(fr);
    // Enough sets of three vectors that one rotation is well past the 60 MiB L2.
    const std::size_t sets = std::max<std::size_t>(1, (std::size_t{256} << 20) / (3 * bytes));
    std::vector<fr*> buffers(3 * sets);
    for (auto& p : buffers) {
      check(cudaMalloc(reinterpret_cast<void**>(&p), bytes), "cudaMalloc");
      for (std::size_t off = 0; off < n; off += pattern.size()) {
        const std::size_t count = std::min(pattern.size(), n - off);
        check(cudaMemcpy(p + off, pattern.data(), count * sizeof(fr), cudaMemcpyHostToDevice), "copy h2d");
      }
    }
    const coprove::cuda::ntt_plan plan(log_n, 0);
    auto time_op = [&](const std::string& op, const std::function<void(std::size_t set)>& body) {
      for (int w = 0; w < 3; ++w) body(w % sets);
      check(cudaStreamSynchronize(stream), "warm-up");
      std::vector<double> ms;
      for (int r = 0; r < reps; ++r) {
        const std::size_t set = static_cast<std::size_t>(r + 1) % sets;
        check(cudaEventRecord(start, stream), "cudaEventRecord");
        body(set);
        check(cudaEventRecord(stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float elapsed = 0;
        check(cudaEventElapsedTime(&elapsed, start, stop), "cudaEventElapsedTime");
        ms.push_back(elapsed);
      }
      results.push_back(make_result(impl, op, log_n, median(ms)));
    };
    time_op("forward", [&](std::size_t s) { coprove::cuda::ntt_forward_async(plan, buffers[3 * s], stream); });
    time_op("inverse", [&](std::size_t s) { coprove::cuda::ntt_inverse_async(plan, buffers[3 * s], stream); });
    time_op("coset_forward", [&](std::size_t s) { coprove::cuda::coset_ntt_async(plan, buffers[3 * s], stream); });
    time_op("coset_inverse", [&](std::size_t s) { coprove::cuda::coset_intt_async(plan, buffers[3 * s], stream); });
    time_op("quotient", [&](std::size_t s) {
      coprove::cuda::quotient_async(plan, buffers[3 * s], buffers[3 * s + 1], buffers[3 * s + 2], stream);
    });
    check(cudaStreamSynchronize(stream), "synchronize");
    for (auto* p : buffers) check(cudaFree(p), "cudaFree");
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
}
#endif

/// The rows as the table a person reads and as the JSON written.
coprove::bench::report make_report(const std::vector<result>& results) {
  coprove::bench::report table(
      {{"impl", "impl"}, {"op", "op"}, {"log_n", "log_n"}, {"ms (median)", "ms", 3}, {"Gmul/s", "mul_per_s", 2, 1e9}});
  for (const auto& r : results)
    table.add({{"impl", r.impl}, {"op", r.op}, {"log_n", r.log_n}, {"ms", r.ms}, {"mul_per_s", r.mul_per_s}});
  return table;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string json_path;
  unsigned cpu_min = 16, cpu_max = 22, gpu_min = 16, gpu_max = 26;
  int reps = 15;
  bool cpu = true, gpu = true, boundary_tables = true;
  coprove::bench::options cli("bench_ntt", "NTTs and the Groth16 quotient on every CPU core and on the GPU");
  cli.number("--cpu-max", cpu_max, "L", "the CPU's largest transform, log2 (default 22; from 16)", 1u, 30u)
      .number("--gpu-min", gpu_min, "L", "the GPU's smallest transform (default 16)", 1u, 30u)
      .number("--gpu-max", gpu_max, "L", "the GPU's largest (default 26)", 1u, 30u)
      .number("--reps", reps, "N", "runs a case, the median kept (default 15)", 1, 1000)
      .flag("--no-cpu", [&] { cpu = false; }, "leave the CPU out")
      .flag("--no-gpu", [&] { gpu = false; }, "leave the GPU out")
      .flag("--no-boundary-tables", [&] { boundary_tables = false; },
            "GPU plans form boundary twiddles as lo * hi (rows labelled impl gpu-lohi)")
      .text("--json", json_path, "PATH", "write the rows as JSON")
      .parse(argc, argv);
  std::vector<result> results;
#if defined(COPROVE_HAVE_CUDA)
  std::string name;
  if (gpu && gpu_present(name)) {
    std::cout << "GPU: " << name << "\n";
    if (!boundary_tables) coprove::cuda::detail::set_ntt_boundary_table_max_log(0);
    run_gpu(gpu_min, gpu_max, reps, boundary_tables ? "gpu" : "gpu-lohi", results);
  } else if (gpu) {
    std::cerr << "\n*** bench_ntt: NO CUDA DEVICE FOUND: the GPU part is SKIPPED; CPU only ***\n\n";
  }
#else
  if (gpu) std::cerr << "\n*** bench_ntt: built WITHOUT CUDA: the GPU part is SKIPPED; CPU only ***\n\n";
#endif
  if (cpu) run_cpu(cpu_min, cpu_max, results);
  const coprove::bench::report table = make_report(results);
  table.print();
  if (!json_path.empty() && !table.write_json(json_path, "bench_ntt")) return 1;
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_ntt: " << e.what() << "\n";
  return 1;
}
