// The host_allocator interface: where pool buffers come from. The CUDA page-locking allocators
// live in cuda/; the pageable one here serves the CPU backend and the `pageable` fallback, and its
// name shows in stats and logs so that pageable memory is never mistaken for pinned memory.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

namespace coprove::pinned {

/// Allocates and frees host buffers for the pool. The pool calls it from one thread at a time.
class host_allocator {
 public:
  virtual ~host_allocator();

  /// Returns `bytes` (a multiple of the page size) of page-aligned memory; throws std::bad_alloc
  /// or std::system_error when it cannot.
  virtual void* allocate(std::size_t bytes) = 0;
  /// Frees memory returned by allocate(bytes).
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
  /// "pageable", "cuda_host_register" or "cuda_host_alloc".
  virtual std::string_view name() const noexcept = 0;
  /// True when the memory is page-locked (DMA-able at full PCIe speed).
  virtual bool is_pinned() const noexcept = 0;
};

/// Ordinary page-aligned heap memory (name "pageable", is_pinned() false).
std::unique_ptr<host_allocator> make_pageable_allocator();

}  // namespace coprove::pinned
