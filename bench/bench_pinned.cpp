// bench_pinned: what the pinned pool costs and buys. Checkout latency from a warm pool (p50/p99;
// runs without a GPU with the pageable allocator), and on a GPU: page-locking cost per GiB
// (cudaHostAlloc against malloc + page touch + cudaHostRegister; one caller and 12 at once, and 12
// cold checkouts through the pool's allocator thread), H2D GB/s from a pool buffer against pageable
// memory, and PyTorch's caching pinned allocator side by side when `import torch` works.
//
//   bench_pinned [--json PATH] [--checkouts N]
//   bench_pinned --h2d-scaling [--seconds S] [--writers K] [--json PATH]
// The second form measures how many GPUs this host can feed: H2D from pool buffers on 1..N devices
// at once, each device copying without pause, alone and beside K host threads that write with
// streaming stores into other pool buffers as synthesis writes a, b and c.
#include "coprove/pinned/pool.hpp"

#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(COPROVE_HAVE_CUDA)
#include "coprove/cuda/device.hpp"
#include "coprove/cuda/error.hpp"
#include "coprove/cuda/event.hpp"
#include "coprove/cuda/host_allocator.hpp"
#include "coprove/cuda/stream.hpp"
#endif

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using clock_type = std::chrono::steady_clock;
using coprove::pinned::pool;
using coprove::pinned::pool_config;

constexpr std::size_t mib = std::size_t{1} << 20;
constexpr std::size_t gib = std::size_t{1} << 30;
constexpr std::size_t vector_bytes = 2458 * mib;  // one a/b/c vector of the production workload

struct options {
  std::string json_path;
  std::size_t checkouts = 200'000;
  bool h2d_scaling = false;
  double seconds = 3.0;
  std::size_t writers = 16;
};

options parse(int argc, char** argv) {
  options o;
  coprove::bench::options("bench_pinned", "the pinned pool: checkout latency, page-locking cost, H2D, beside PyTorch")
      .number("--checkouts", o.checkouts, "N", "checkouts timed from a warm pool (default 200000)", std::size_t{1000},
              std::size_t{1} << 32)
      .flag("--h2d-scaling", o.h2d_scaling, "instead: H2D on 1..N devices at once, alone and beside host writers")
      .number("--seconds", o.seconds, "S", "with --h2d-scaling: seconds a measurement (default 3)", 0.1, 600.0)
      .number("--writers", o.writers, "K", "with --h2d-scaling: host threads writing pinned memory (default 16)",
              std::size_t{0}, std::size_t{1024})
      .text("--json", o.json_path, "PATH", "write the report as JSON")
      .parse(argc, argv);
  return o;
}

double ns_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

std::string today() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// Checkout latency from a warm pool holding one buffer of vector_bytes.
json::object checkout_latency(std::unique_ptr<coprove::pinned::host_allocator> alloc, std::size_t n) {
  asio::io_context ioc;
  pool_config cfg;
  cfg.capacity_bytes = vector_bytes;
  cfg.prewarm_count = 1;
  cfg.prewarm_bytes = vector_bytes;
  pool p(ioc.get_executor(), std::move(alloc), cfg);
  p.wait_idle();
  std::vector<double> take, give, async_round;
  take.reserve(n);
  give.reserve(n);
  async_round.reserve(n / 4);
  for (std::size_t i = 0; i < n; ++i) {
    auto t0 = clock_type::now();
    auto l = p.try_checkout(vector_bytes);
    take.push_back(ns_since(t0));
    if (!l) {
      std::cerr << "bench_pinned: the warm pool did not serve a checkout\n";
      std::exit(1);
    }
    t0 = clock_type::now();
    l.release();
    give.push_back(ns_since(t0));
  }
  for (std::size_t i = 0; i < n / 4; ++i) {
    coprove::pinned::lease got;
    const auto t0 = clock_type::now();
    p.async_checkout(vector_bytes, [&got](std::error_code, coprove::pinned::lease l) { got = std::move(l); });
    ioc.restart();
    ioc.run_one();
    async_round.push_back(ns_since(t0));
    got.release();
  }
  const auto s = p.stats();
  json::object r{{"allocator", s.allocator},
                 {"request_bytes", vector_bytes},
                 {"reserved_bytes", s.bytes_allocated},
                 {"reserved_ratio", static_cast<double>(s.bytes_allocated) / static_cast<double>(vector_bytes)},
                 {"try_checkout_p50_us", percentile(take, 0.5) / 1e3},
                 {"try_checkout_p99_us", percentile(take, 0.99) / 1e3},
                 {"release_p50_us", percentile(give, 0.5) / 1e3},
                 {"release_p99_us", percentile(give, 0.99) / 1e3},
                 {"async_checkout_to_handler_p50_us", percentile(async_round, 0.5) / 1e3},
                 {"async_checkout_to_handler_p99_us", percentile(async_round, 0.99) / 1e3},
                 {"first_allocation_ms", static_cast<double>(s.allocation_ns) / 1e6}};
  std::printf("%-22s %12.3f %12.3f %12.3f %12.3f %14.3f %14.3f %9.2fx %10.1f\n", s.allocator.c_str(),
              r["try_checkout_p50_us"].as_double(), r["try_checkout_p99_us"].as_double(), r["release_p50_us"].as_double(),
              r["release_p99_us"].as_double(), r["async_checkout_to_handler_p50_us"].as_double(),
              r["async_checkout_to_handler_p99_us"].as_double(), r["reserved_ratio"].as_double(),
              r["first_allocation_ms"].as_double());
  return r;
}

#if defined(COPROVE_HAVE_CUDA)

// Allocation cost of `callers` threads at once, each allocating `bytes` with `alloc`.
json::object allocation_cost(const char* label, coprove::pinned::host_allocator& alloc, std::size_t bytes, int callers) {
  std::vector<double> per_call(callers), per_free(callers);
  std::vector<void*> ptrs(callers);
  std::barrier start(callers + 1);
  std::vector<std::thread> threads;
  for (int i = 0; i < callers; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      const auto t0 = clock_type::now();
      ptrs[i] = alloc.allocate(bytes);
      per_call[i] = ns_since(t0) / 1e6;
    });
  const auto wall0 = clock_type::now();
  start.arrive_and_wait();
  for (auto& t : threads) t.join();
  const double wall_ms = ns_since(wall0) / 1e6;
  for (int i = 0; i < callers; ++i) {
    const auto t0 = clock_type::now();
    alloc.deallocate(ptrs[i], bytes);
    per_free[i] = ns_since(t0) / 1e6;
  }
  const double gibs = static_cast<double>(bytes) / static_cast<double>(gib);
  json::object r{{"allocator", label},
                 {"bytes", bytes},
                 {"callers", callers},
                 {"wall_ms", wall_ms},
                 {"per_call_median_ms", median(per_call)},
                 {"per_call_max_ms", *std::max_element(per_call.begin(), per_call.end())},
                 {"median_ms_per_gib", median(per_call) / gibs},
                 {"free_median_ms", median(per_free)}};
  std::printf("%-28s %8d %12.1f %16.1f %14.1f %14.1f %12.1f\n", label, callers, wall_ms, median(per_call),
              r["per_call_max_ms"].as_double(), median(per_call) / gibs, median(per_free));
  return r;
}

// 12 cold checkouts of `bytes` at once through one pool: the allocator thread serialises them.
json::object pool_cold_checkouts(std::size_t bytes, int callers) {
  asio::io_context ioc;
  pool_config cfg;
  cfg.capacity_bytes = bytes * callers;
  pool p(ioc.get_executor(), coprove::cuda::make_cuda_host_allocator(), cfg);
  std::vector<double> done_ms;
  std::vector<coprove::pinned::lease> leases;
  const auto t0 = clock_type::now();
  for (int i = 0; i < callers; ++i)
    p.async_checkout(bytes, [&](std::error_code ec, coprove::pinned::lease l) {
      if (ec) {
        std::cerr << "bench_pinned: cold checkout failed: " << ec.message() << "\n";
        std::exit(1);
      }
      done_ms.push_back(ns_since(t0) / 1e6);
      leases.push_back(std::move(l));
    });
  while (done_ms.size() < static_cast<std::size_t>(callers)) ioc.run_one();
  const double wall = done_ms.back();
  const double gibs = static_cast<double>(bytes) * callers / static_cast<double>(gib);
  std::printf("%-28s %8d %12.1f %16.1f %14.1f %14.1f %12s\n", "pool (register, serialised)", callers, wall,
              median(done_ms), done_ms.back(), wall / gibs, "-");
  return {{"allocator", "pool cuda_host_register, one allocator thread"},
          {"bytes", bytes},
          {"callers", callers},
          {"wall_ms", wall},
          {"completion_median_ms", median(done_ms)},
          {"wall_ms_per_gib", wall / gibs}};
}

double h2d_gbs(const void* host, void* device, std::size_t bytes, cudaStream_t s) {
  coprove::cuda::event a(cudaEventDefault), b(cudaEventDefault);
  double best = 0;
  for (int round = 0; round < 4; ++round) {
    a.record(s);
    COPROVE_CUDA_TRY(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, s));
    b.record(s);
    b.synchronize();
    const double gbs = static_cast<double>(bytes) / (b.elapsed_ms_since(a) * 1e6);
    if (round > 0) best = std::max(best, gbs);
  }
  return best;
}

json::object h2d_comparison() {
  constexpr std::size_t bytes = 512 * mib;
  asio::io_context ioc;
  pool_config cfg;
  cfg.capacity_bytes = bytes;
  cfg.prewarm_count = 1;
  cfg.prewarm_bytes = bytes;
  pool p(ioc.get_executor(), coprove::cuda::make_cuda_host_allocator(), cfg);
  p.wait_idle();
  auto l = p.try_checkout(bytes);
  std::memset(l.data(), 1, bytes);
  std::vector<std::byte> pageable(bytes, std::byte{1});
  void* device = nullptr;
  COPROVE_CUDA_TRY(cudaMalloc(&device, bytes));
  coprove::cuda::stream s;
  const double pinned = h2d_gbs(l.data(), device, bytes, s.get());
  const double plain = h2d_gbs(pageable.data(), device, bytes, s.get());
  COPROVE_CUDA_TRY(cudaFree(device));
  std::printf("%-28s %10.1f GB/s\n%-28s %10.1f GB/s\n", "pool buffer (register)", pinned, "pageable (std::vector)", plain);
  return {{"bytes", bytes}, {"pool_gbs", pinned}, {"pageable_gbs", plain}};
}

// H2D on `devices` GPUs at once for `seconds`, each from its own pool buffer of 512 MiB into device
// memory, back to back on one stream; meanwhile `writers` host threads overwrite other pool
// buffers (512 MiB each) with streaming stores. Returns each device's GB/s and the writers' total.
json::object h2d_concurrent(pool& p, int devices, std::size_t writers, double seconds) {
  constexpr std::size_t copy_bytes = 512 * mib, write_bytes = 512 * mib;
  std::vector<coprove::pinned::lease> sources, targets;
  for (int d = 0; d < devices; ++d) {
    sources.push_back(p.try_checkout(copy_bytes));
    if (!sources.back()) throw std::runtime_error("h2d scaling: the pool has no free 512 MiB buffer");
    std::memset(sources.back().data(), 1, copy_bytes);
  }
  for (std::size_t w = 0; w < writers; ++w) {
    targets.push_back(p.try_checkout(write_bytes));
    if (!targets.back()) throw std::runtime_error("h2d scaling: the pool has no free 512 MiB buffer");
  }
  std::atomic<bool> stop{false};
  std::barrier start(static_cast<std::ptrdiff_t>(devices + writers + 1));
  std::vector<double> device_gbs(devices, 0.0);
  std::vector<double> written(writers, 0.0);
  std::vector<std::thread> threads;
  for (int d = 0; d < devices; ++d) {
    threads.emplace_back([&, d] {
      coprove::cuda::scoped_device on(d);
      void* device = nullptr;
      COPROVE_CUDA_TRY(cudaMalloc(&device, copy_bytes));
      coprove::cuda::stream s;
      COPROVE_CUDA_TRY(cudaMemcpyAsync(device, sources[d].data(), copy_bytes, cudaMemcpyHostToDevice, s.get()));
      COPROVE_CUDA_TRY(cudaStreamSynchronize(s.get()));  // warm-up
      start.arrive_and_wait();
      const auto t0 = clock_type::now();
      std::size_t copies = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int k = 0; k < 4; ++k)
          COPROVE_CUDA_TRY(cudaMemcpyAsync(device, sources[d].data(), copy_bytes, cudaMemcpyHostToDevice, s.get()));
        COPROVE_CUDA_TRY(cudaStreamSynchronize(s.get()));
        copies += 4;
      }
      device_gbs[d] = static_cast<double>(copies * copy_bytes) / ns_since(t0);
      COPROVE_CUDA_TRY(cudaFree(device));
    });
  }
  for (std::size_t w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      auto* out = static_cast<std::byte*>(targets[w].data());
      start.arrive_and_wait();
      const auto t0 = clock_type::now();
      std::size_t rounds = 0;
      while (!stop.load(std::memory_order_relaxed)) {
#if defined(__SSE2__)
        const __m128i v = _mm_set1_epi64x(static_cast<long long>(rounds));
        for (std::size_t i = 0; i < write_bytes; i += 16)
          _mm_stream_si128(reinterpret_cast<__m128i*>(out + i), v);
        _mm_sfence();
#else
        std::memset(out, static_cast<int>(rounds), write_bytes);
#endif
        ++rounds;
      }
      written[w] = static_cast<double>(rounds * write_bytes) / ns_since(t0);
    });
  }
  start.arrive_and_wait();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  double total = 0, writes = 0;
  json::array per_device;
  for (double g : device_gbs) {
    total += g;
    per_device.push_back(g);
  }
  for (double g : written) writes += g;
  std::printf("%8d %8zu %14.1f %14.1f %16.1f\n", devices, writers, total / devices, total, writes);
  return {{"devices", devices}, {"writers", writers}, {"h2d_gbs_per_device", per_device},
          {"h2d_gbs_total", total}, {"host_write_gbs", writes}};
}

int h2d_scaling(const options& o, json::object& report) {
  const int devices = coprove::cuda::device_count();
  if (devices == 0) {
    std::fprintf(stderr, "bench_pinned --h2d-scaling: no CUDA device\n");
    return 1;
  }
  report["gpu"] = coprove::cuda::device_name(0);
  report["devices"] = devices;
  asio::io_context ioc;
  pool_config cfg;
  // Every buffer is page-locked once, by the pool's pre-warm, before the runs.
  cfg.prewarm_count = static_cast<std::size_t>(devices) + o.writers;
  cfg.prewarm_bytes = 512 * mib;
  cfg.capacity_bytes = cfg.prewarm_count * cfg.prewarm_bytes;
  pool p(ioc.get_executor(), coprove::cuda::make_cuda_host_allocator(), cfg);
  p.wait_idle();
  std::printf("H2D from pool buffers on N devices at once (512 MiB copies, back to back, %.1f s), alone and\n"
              "beside K host threads writing other pool buffers with streaming stores (GB/s)\n",
              o.seconds);
  std::printf("%8s %8s %14s %14s %16s\n", "devices", "writers", "H2D per device", "H2D total", "host writes");
  json::array rows;
  for (int d = 1; d <= devices; ++d) {
    rows.push_back(h2d_concurrent(p, d, 0, o.seconds));
    if (o.writers > 0) rows.push_back(h2d_concurrent(p, d, o.writers, o.seconds));
  }
  if (o.writers > 0) rows.push_back(h2d_concurrent(p, 0, o.writers, o.seconds));
  report["h2d_scaling"] = rows;
  return 0;
}

// PyTorch's caching host allocator, run as a small Python script.
json::value torch_side_by_side() {
  if (std::system("python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    std::printf("torch is absent (python3 -c 'import torch' failed): no side-by-side row\n");
    return "absent";
  }
  const char* script = R"PY(
import json, os, time, torch
n = 2458 * 1024 * 1024
out = {"torch": torch.__version__, "setting": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "default")}
t0 = time.perf_counter_ns()
x = torch.empty(n, dtype=torch.uint8, pin_memory=True)
out["first_allocation_ms"] = (time.perf_counter_ns() - t0) / 1e6
del x
lat = []
for _ in range(2000):
    t0 = time.perf_counter_ns()
    x = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    lat.append(time.perf_counter_ns() - t0)
    del x
lat.sort()
out["realloc_p50_us"] = lat[len(lat) // 2] / 1e3
out["realloc_p99_us"] = lat[int(len(lat) * 0.99)] / 1e3
try:
    stats = torch.cuda.host_memory_stats()
    out["host_memory_stats"] = dict(stats)
except Exception as e:  # older torch
    out["host_memory_stats_error"] = str(e)
print(json.dumps(out))
)PY";
  const std::string path = "/tmp/coprove_bench_torch_pinned.py";
  {
    std::ofstream f(path);
    f << script;
  }
  json::array results;
  std::printf("%-34s %12s %14s %14s %16s\n", "torch setting", "first ms", "realloc p50 us", "realloc p99 us",
              "reserved bytes");
  for (const char* conf : {"", "pinned_use_cuda_host_register:True,pinned_num_register_threads:8"}) {
    std::string cmd = std::string(*conf ? "PYTORCH_CUDA_ALLOC_CONF=" + std::string(conf) + " " : "") + "python3 " +
                      path + " 2>/dev/null";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) continue;
    std::string text;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, pipe) != nullptr) text += buf;
    const int rc = pclose(pipe);
    if (rc != 0 || text.empty()) {
      std::printf("%-34s failed (exit %d)\n", *conf ? conf : "default", rc);
      continue;
    }
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec || !v.is_object()) continue;
    auto& o = v.as_object();
    std::string reserved = "?";
    if (auto* st = o.if_contains("host_memory_stats"); st && st->is_object()) {
      for (auto& [k, val] : st->as_object())
        if ((k.find("reserved") != json::string_view::npos || k.find("segment") != json::string_view::npos) &&
            k.find("current") != json::string_view::npos && reserved == "?")
          reserved = std::string(k) + "=" + json::serialize(val);
    }
    std::printf("%-34s %12.1f %14.2f %14.2f %16s\n", *conf ? "host_register, 8 threads" : "default (cudaHostAlloc)",
                o["first_allocation_ms"].to_number<double>(), o["realloc_p50_us"].to_number<double>(),
                o["realloc_p99_us"].to_number<double>(), reserved.c_str());
    results.push_back(v);
  }
  return results;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  const auto o = parse(argc, argv);
  json::object report{{"bench", "pinned"}, {"date", today()}};
#if defined(COPROVE_HAVE_CUDA)
  if (o.h2d_scaling) {
    const int rc = h2d_scaling(o, report);
    if (rc == 0 && !o.json_path.empty() && !coprove::bench::write_json_file(o.json_path, report, "bench_pinned"))
      return 1;
    return rc;
  }
#else
  if (o.h2d_scaling) {
    std::fprintf(stderr, "bench_pinned --h2d-scaling: built without CUDA\n");
    return 1;
  }
#endif
  std::printf("bench_pinned, %s\n\ncheckout from a warm pool (one %zu MiB buffer, %zu checkouts; us)\n", today().c_str(),
              vector_bytes / mib, o.checkouts);
  std::printf("%-22s %12s %12s %12s %12s %14s %14s %10s %10s\n", "allocator", "try p50", "try p99", "release p50",
              "release p99", "async->hdl p50", "async->hdl p99", "reserved", "alloc ms");
  json::array latency;
  latency.push_back(checkout_latency(coprove::pinned::make_pageable_allocator(), o.checkouts));

#if defined(COPROVE_HAVE_CUDA)
  if (coprove::cuda::device_count() > 0) {
    report["gpu"] = coprove::cuda::device_name(0);
    latency.push_back(checkout_latency(coprove::cuda::make_cuda_host_allocator(), o.checkouts));
    report["checkout_latency"] = latency;
    std::printf("targets: try_checkout p50 <= 1 us, p99 <= 3 us\n");

    std::printf("\npage-locking cost, 512 MiB per call\n");
    std::printf("%-28s %8s %12s %16s %14s %14s %12s\n", "allocator", "callers", "wall ms", "per call med ms",
                "per call max", "med ms / GiB", "free med ms");
    auto host_alloc = coprove::cuda::make_cuda_host_allocator(coprove::cuda::host_allocator_kind::host_alloc);
    auto host_register = coprove::cuda::make_cuda_host_allocator(coprove::cuda::host_allocator_kind::host_register);
    json::array cost;
    for (int callers : {1, 12}) {
      cost.push_back(allocation_cost("cudaHostAlloc", *host_alloc, 512 * mib, callers));
      cost.push_back(allocation_cost("malloc+touch+cudaHostRegister", *host_register, 512 * mib, callers));
    }
    cost.push_back(pool_cold_checkouts(512 * mib, 12));
    report["allocation_cost"] = cost;

    std::printf("\nH2D copy, 512 MiB (best of 3 after a warm-up)\n");
    report["h2d"] = h2d_comparison();

    std::printf("\nPyTorch caching pinned allocator, %zu MiB (same machine, same run)\n", vector_bytes / mib);
    report["torch"] = torch_side_by_side();
  } else {
    report["checkout_latency"] = latency;
    std::printf("\nno CUDA device: page-locking, H2D and torch rows skipped\n");
  }
#else
  report["checkout_latency"] = latency;
  std::printf("\nbuilt without CUDA: page-locking, H2D and torch rows skipped\n");
#endif

  if (!o.json_path.empty() && !coprove::bench::write_json_file(o.json_path, report, "bench_pinned")) return 1;
  return 0;
}
