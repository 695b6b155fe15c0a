// The global operator new of a test executable, recording the largest request (see
// largest_allocation.hpp). Only the plain forms are replaced; the aligned ones keep the library's
// own pairing of new and delete.
#include "largest_allocation.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<std::size_t> largest{0};

void* allocate(std::size_t bytes) {
  std::size_t seen = largest.load(std::memory_order_relaxed);
  while (bytes > seen && !largest.compare_exchange_weak(seen, bytes, std::memory_order_relaxed)) {
  }
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}

}  // namespace

namespace coprove::testing {

void reset_largest_allocation() noexcept { largest.store(0); }
std::size_t largest_allocation() noexcept { return largest.load(); }

}  // namespace coprove::testing

void* operator new(std::size_t bytes) { return allocate(bytes); }
void* operator new[](std::size_t bytes) { return allocate(bytes); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
