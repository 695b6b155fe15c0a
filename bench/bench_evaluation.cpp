// The evaluation record's four values at zeta, CPU against GPU, side by side: a(zeta), b(zeta),
// c(zeta) by barycentric evaluation over the domain and h(zeta) by Horner. The CPU column is
// field::make_evaluation_record on every core (what the engine ran per partition before the
// backends evaluated); the GPU column is evaluate_lagrange_async + evaluate_coefficients_async on
// device-resident data, timed with CUDA events (one warm-up, then the median of the repetitions).
// Both results are compared; a mismatch fails the run. Prints a table; --json PATH writes
// [{"log_n","cpu_ms","gpu_ms","speedup","equal"}] (-1 for a column not measured: no GPU, or --no-cpu).
#include "bench_support.hpp"
#include "support/options.hpp"
#include "support/report.hpp"

#include <coprove/field/domain.hpp>
#include <coprove/field/evaluation.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/field/parallel.hpp>

#if defined(COPROVE_HAVE_CUDA)
#include <coprove/cuda/device.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/evaluation.hpp>
#include <cuda_runtime_api.h>
#endif

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using coprove::field::fr;

struct result {
  unsigned log_n = 0;
  double cpu_ms = -1, gpu_ms = -1;
  bool equal = true;
};

using coprove::bench::median;
using coprove::bench::random_elements;

#if defined(COPROVE_HAVE_CUDA)
/// Median device time of the four values at zeta, and the values of the last repetition.
double gpu_evaluation_ms(const std::array<std::vector<fr>, 4>& polys, const coprove::field::evaluation_domain& domain,
                         const fr& zeta, unsigned reps, std::array<fr, 4>& values) {
  namespace cuda = coprove::cuda;
  const std::size_t n = domain.size();
  std::array<void*, 4> d{};
  void* out = nullptr;
  void* scratch = nullptr;
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  COPROVE_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  COPROVE_CUDA_TRY(cudaEventCreate(&start));
  COPROVE_CUDA_TRY(cudaEventCreate(&stop));
  for (std::size_t k = 0; k < 4; ++k) {
    COPROVE_CUDA_TRY(cudaMalloc(&d[k], n * sizeof(fr)));
    COPROVE_CUDA_TRY(cudaMemcpy(d[k], polys[k].data(), n * sizeof(fr), cudaMemcpyHostToDevice));
  }
  COPROVE_CUDA_TRY(cudaMalloc(&out, 4 * sizeof(fr)));
  COPROVE_CUDA_TRY(cudaMalloc(&scratch, cuda::evaluation_scratch_bytes(domain.log_size())));
  // The copies ran on the legacy stream, which the non-blocking stream below does not wait for.
  COPROVE_CUDA_TRY(cudaDeviceSynchronize());
  const void* const abc[] = {d[0], d[1], d[2]};
  std::vector<double> times;
  for (unsigned r = 0; r <= reps; ++r) {
    COPROVE_CUDA_TRY(cudaEventRecord(start, s));
    cuda::evaluate_lagrange_async(abc, 3, domain.log_size(), cuda::to_field_words(domain.omega()),
                                  cuda::to_field_words(domain.size_inv()), cuda::to_field_words(zeta), out, scratch, s);
    cuda::evaluate_coefficients_async(d[3], domain.log_size(), cuda::to_field_words(zeta),
                                      static_cast<fr*>(out) + 3, scratch, s);
    COPROVE_CUDA_TRY(cudaEventRecord(stop, s));
    COPROVE_CUDA_TRY(cudaEventSynchronize(stop));
    float ms = 0;
    COPROVE_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
    if (r > 0) times.push_back(ms);  // the first is the warm-up
  }
  COPROVE_CUDA_TRY(cudaMemcpy(values.data(), out, sizeof values, cudaMemcpyDeviceToHost));
  for (void* p : d) COPROVE_CUDA_TRY(cudaFree(p));
  COPROVE_CUDA_TRY(cudaFree(out));
  COPROVE_CUDA_TRY(cudaFree(scratch));
  COPROVE_CUDA_TRY(cudaEventDestroy(start));
  COPROVE_CUDA_TRY(cudaEventDestroy(stop));
  COPROVE_CUDA_TRY(cudaStreamDestroy(s));
  return median(times);
}
#endif

void print(const std::vector<result>& results) {
  std::printf("%6s %14s %14s %10s %6s\n", "log_n", "cpu ms", "gpu ms", "speedup", "equal");
  auto cell = [](double v, const char* format) {
    char buf[32];
    if (v < 0) return std::string("-");
    std::snprintf(buf, sizeof buf, format, v);
    return std::string(buf);
  };
  for (const auto& r : results) {
    const bool both = r.gpu_ms > 0 && r.cpu_ms > 0;
    std::printf("%6u %14s %14s %10s %6s\n", r.log_n, cell(r.cpu_ms, "%.3f").c_str(), cell(r.gpu_ms, "%.3f").c_str(),
                cell(both ? r.cpu_ms / r.gpu_ms : -1, "%.1f").c_str(), both ? (r.equal ? "yes" : "NO") : "-");
  }
}

bool write_json(const std::vector<result>& results, const std::string& path) {
  boost::json::array out;
  for (const auto& r : results)
    out.push_back(boost::json::object{{"log_n", r.log_n},
                                      {"cpu_ms", r.cpu_ms},
                                      {"gpu_ms", r.gpu_ms},
                                      {"speedup", r.gpu_ms > 0 && r.cpu_ms > 0 ? r.cpu_ms / r.gpu_ms : 0.0},
                                      {"equal", r.equal}});
  return coprove::bench::write_json_file(path, out, "bench_evaluation");
}

}  // namespace

int main(int argc, char** argv) try {
  std::string json_path;
  unsigned min_log = 16, max_log = 22, reps = 5;
  bool cpu = true;
  coprove::bench::options cli("bench_evaluation", "the evaluation at zeta, every CPU core against the GPU");
  cli.number("--min", min_log, "L", "the smallest domain, log2 (default 16; sizes step by 2)", 1u, 28u)
      .number("--max", max_log, "L", "the largest (default 22)", 1u, 28u)
      .number("--reps", reps, "N", "GPU runs, the median kept (default 5; the CPU runs at most 3)", 1u, 1000u)
      .flag("--no-cpu", [&] { cpu = false; }, "leave the CPU column out")
      .text("--json", json_path, "PATH", "write the rows as JSON")
      .parse(argc, argv);
  if (min_log > max_log) cli.refuse("--min is above --max");

  std::vector<result> results;
  std::mt19937_64 gen(3);
  bool all_equal = true;
  for (unsigned log_n = min_log; log_n <= max_log; log_n += 2) {
    const coprove::field::evaluation_domain domain(std::size_t{1} << log_n);
    std::array<std::vector<fr>, 4> polys;
    for (std::size_t k = 0; k < 4; ++k) polys[k] = random_elements(domain.size(), 4 * log_n + k);
    const fr zeta = fr::random(gen);
    result r;
    r.log_n = log_n;
    coprove::field::evaluation_record record{};
    if (cpu) {
      std::vector<double> times;
      for (unsigned rep = 0; rep < std::min(reps, 3u); ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        record = coprove::field::make_evaluation_record(polys[0], polys[1], polys[2], polys[3], domain, zeta);
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      r.cpu_ms = median(times);
    }
#if defined(COPROVE_HAVE_CUDA)
    if (coprove::cuda::device_count() > 0) {
      std::array<fr, 4> values;
      r.gpu_ms = gpu_evaluation_ms(polys, domain, zeta, reps, values);
      if (cpu) r.equal = values == std::array<fr, 4>{record.a, record.b, record.c, record.h};
    }
#endif
    all_equal = all_equal && r.equal;
    results.push_back(r);
  }
  std::printf("evaluation at zeta (a, b, c barycentric + h Horner), %zu CPU threads\n",
              coprove::field::parallelism());
  print(results);
  if (!json_path.empty() && !write_json(results, json_path)) return 1;
  return all_equal ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "bench_evaluation: " << e.what() << "\n";
  return 2;
}
