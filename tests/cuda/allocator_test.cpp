// The page-locking allocators and a pool over them: memory the driver knows as page-locked, and an
// H2D copy from a pool buffer at PCIe speed (>= 50 GB/s on the reference H200, PCIe Gen5 x16).
#include "coprove/cuda/host_allocator.hpp"

#include "coprove/cuda/device.hpp"
#include "coprove/cuda/error.hpp"
#include "coprove/cuda/event.hpp"
#include "coprove/cuda/stream.hpp"
#include "coprove/pinned/pool.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>

using coprove::cuda::host_allocator_kind;

namespace {
constexpr std::size_t mib = std::size_t{1} << 20;
}

TEST_CASE("both page-locking allocators return page-aligned memory the driver knows as pinned", "[gpu][allocator]") {
  const auto kind = GENERATE(host_allocator_kind::host_register, host_allocator_kind::host_alloc);
  auto alloc = coprove::cuda::make_cuda_host_allocator(kind);
  CHECK(alloc->is_pinned());
  CHECK(alloc->name() == (kind == host_allocator_kind::host_register ? "cuda_host_register" : "cuda_host_alloc"));
  // 80 MiB: large enough for the register path to touch pages from several threads.
  const std::size_t bytes = 80 * mib + coprove::pinned::page_bytes;
  void* p = alloc->allocate(bytes);
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % coprove::pinned::page_bytes == 0);
  cudaPointerAttributes attr{};
  REQUIRE(cudaPointerGetAttributes(&attr, p) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeHost);
  std::memset(p, 0x5a, bytes);
  alloc->deallocate(p, bytes);
}

TEST_CASE("a pool over the register allocator hands out pinned leases", "[gpu][allocator]") {
  boost::asio::io_context ioc;
  coprove::pinned::pool_config cfg;
  cfg.capacity_bytes = 64 * mib;
  cfg.prewarm_count = 2;
  cfg.prewarm_bytes = 16 * mib;
  coprove::pinned::pool pool(ioc.get_executor(), coprove::cuda::make_cuda_host_allocator(), cfg);
  pool.wait_idle();
  auto l = pool.try_checkout(16 * mib);
  REQUIRE(l);
  CHECK(l.is_pinned());
  CHECK(pool.stats().allocator == "cuda_host_register");
  cudaPointerAttributes attr{};
  REQUIRE(cudaPointerGetAttributes(&attr, l.data()) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeHost);
}

TEST_CASE("an H2D copy from a pool buffer runs at 50 GB/s or more", "[gpu][allocator]") {
  boost::asio::io_context ioc;
  constexpr std::size_t bytes = 256 * mib;
  coprove::pinned::pool_config cfg;
  cfg.capacity_bytes = bytes;
  cfg.prewarm_count = 1;
  cfg.prewarm_bytes = bytes;
  coprove::pinned::pool pool(ioc.get_executor(), coprove::cuda::make_cuda_host_allocator(), cfg);
  pool.wait_idle();
  auto l = pool.try_checkout(bytes);
  REQUIRE(l);
  std::memset(l.data(), 1, bytes);
  void* device = nullptr;
  COPROVE_CUDA_TRY(cudaMalloc(&device, bytes));
  coprove::cuda::stream s;
  coprove::cuda::event start(cudaEventDefault), stop(cudaEventDefault);
  double best = 0;
  for (int round = 0; round < 4; ++round) {  // the first round warms up
    start.record(s.get());
    for (int i = 0; i < 4; ++i) COPROVE_CUDA_TRY(cudaMemcpyAsync(device, l.data(), bytes, cudaMemcpyHostToDevice, s.get()));
    stop.record(s.get());
    stop.synchronize();
    const double gbs = 4.0 * bytes / (stop.elapsed_ms_since(start) * 1e6);
    if (round > 0) best = std::max(best, gbs);
  }
  COPROVE_CUDA_TRY(cudaFree(device));
  INFO("H2D from a pool buffer: " << best << " GB/s");
  CHECK(best >= 50.0);
}
