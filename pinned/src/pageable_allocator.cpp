// The pageable host allocator: ordinary page-aligned heap memory, for the CPU backend and for the
// pool's `pageable` fallback.
#include "coprove/pinned/host_allocator.hpp"
#include "coprove/pinned/pool.hpp"

#include <cstdlib>
#include <new>

namespace coprove::pinned {

host_allocator::~host_allocator() = default;

namespace {
class pageable_allocator final : public host_allocator {
 public:
  void* allocate(std::size_t bytes) override {
    void* p = std::aligned_alloc(page_bytes, round_up_to_pages(bytes == 0 ? 1 : bytes));
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void deallocate(void* p, std::size_t) noexcept override { std::free(p); }
  std::string_view name() const noexcept override { return "pageable"; }
  bool is_pinned() const noexcept override { return false; }
};
}  // namespace

std::unique_ptr<host_allocator> make_pageable_allocator() { return std::make_unique<pageable_allocator>(); }

}  // namespace coprove::pinned
