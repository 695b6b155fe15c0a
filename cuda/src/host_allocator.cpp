// The page-locking host allocators. The register path page-aligns a malloc, faults its pages in
// from several threads (the kernel's page faulting is the slow part of pinning) and then registers
// the range; cudaHostAlloc does it all in the driver, single-threaded and serialised across
// callers (DESIGN.md, measured limits).
#include "coprove/cuda/host_allocator.hpp"

#include "coprove/cuda/error.hpp"
#include "coprove/pinned/pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace coprove::cuda {
namespace {

// Writes one byte per page so that every page is faulted in, split over `threads` threads.
void touch_pages(std::byte* p, std::size_t bytes, unsigned threads) {
  constexpr std::size_t serial_below = std::size_t{64} << 20;  // thread start-up beats the win below this
  const std::size_t pages = bytes / pinned::page_bytes;
  auto touch = [p](std::size_t first_page, std::size_t last_page) {
    for (std::size_t i = first_page; i < last_page; ++i) static_cast<volatile std::byte*>(p)[i * pinned::page_bytes] = std::byte{0};
  };
  if (threads <= 1 || bytes < serial_below) {
    touch(0, pages);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(threads);
  const std::size_t per = (pages + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t lo = std::min(pages, t * per), hi = std::min(pages, lo + per);
    if (lo < hi) workers.emplace_back(touch, lo, hi);
  }
  for (auto& w : workers) w.join();
}

class host_register_allocator final : public pinned::host_allocator {
 public:
  explicit host_register_allocator(unsigned touch_threads) : touch_threads_(std::max(1u, touch_threads)) {}

  void* allocate(std::size_t bytes) override {
    const std::size_t rounded = pinned::round_up_to_pages(bytes == 0 ? 1 : bytes);
    auto* p = static_cast<std::byte*>(std::aligned_alloc(pinned::page_bytes, rounded));
    if (p == nullptr) throw std::bad_alloc();
    touch_pages(p, rounded, touch_threads_);
    (void)cudaGetLastError();
    const cudaError_t e = cudaHostRegister(p, rounded, cudaHostRegisterPortable);
    if (e != cudaSuccess) {
      std::free(p);
      detail::throw_cuda_error(e, "cudaHostRegister(p, rounded, cudaHostRegisterPortable)", __FILE__, __LINE__);
    }
    return p;
  }

  void deallocate(void* p, std::size_t) noexcept override {
    if (p == nullptr) return;
    COPROVE_CUDA_ASSERT_OK(cudaHostUnregister(p));
    std::free(p);
  }

  std::string_view name() const noexcept override { return "cuda_host_register"; }
  bool is_pinned() const noexcept override { return true; }

 private:
  unsigned touch_threads_;
};

class host_alloc_allocator final : public pinned::host_allocator {
 public:
  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    COPROVE_CUDA_TRY(cudaHostAlloc(&p, pinned::round_up_to_pages(bytes == 0 ? 1 : bytes), cudaHostAllocPortable));
    return p;
  }

  void deallocate(void* p, std::size_t) noexcept override {
    if (p != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFreeHost(p));
  }

  std::string_view name() const noexcept override { return "cuda_host_alloc"; }
  bool is_pinned() const noexcept override { return true; }
};

}  // namespace

std::unique_ptr<pinned::host_allocator> make_cuda_host_allocator(host_allocator_kind kind, unsigned touch_threads) {
  if (kind == host_allocator_kind::host_alloc) return std::make_unique<host_alloc_allocator>();
  return std::make_unique<host_register_allocator>(touch_threads);
}

}  // namespace coprove::cuda
