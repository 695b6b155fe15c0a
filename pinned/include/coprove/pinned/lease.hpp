// lease: the RAII handle to one buffer checked out of a pinned::pool. It returns its buffer on
// destruction (from any thread), or, with release_after, once the GPU work reading it is done.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace coprove::runtime {
class completion_signal;
}

namespace coprove::pinned {

namespace detail {
class pool_core;
struct buffer;
}  // namespace detail

/// One buffer checked out of a pool: at least size() bytes, page aligned. Movable, not copyable;
/// an empty lease (default constructed, moved from or released) holds nothing.
class [[nodiscard]] lease {
 public:
  lease() noexcept = default;
  lease(lease&& other) noexcept;
  lease& operator=(lease&& other) noexcept;
  lease(const lease&) = delete;
  lease& operator=(const lease&) = delete;
  /// Returns the buffer to its pool now.
  ~lease();

  /// The buffer's first byte (null for an empty lease).
  std::byte* data() noexcept;
  const std::byte* data() const noexcept;
  /// The bytes that were asked for.
  std::size_t size() const noexcept { return size_; }
  /// The bytes the buffer really holds (size() rounded up to pages, or a best-fit larger buffer).
  std::size_t capacity() const noexcept;
  /// True when the buffer is page-locked; false for a pageable pool or a pageable fallback.
  bool is_pinned() const noexcept;
  /// The first size() bytes viewed as T (size() / sizeof(T) elements).
  template <class T>
  std::span<T> as() noexcept {
    return {reinterpret_cast<T*>(data()), size_ / sizeof(T)};
  }
  explicit operator bool() const noexcept { return buffer_ != nullptr; }

  /// Returns the buffer to the pool now (same as destroying the lease).
  void release() noexcept;
  /// Gives the buffer up now but returns it to the pool only once `done` is set (with any result),
  /// so that asynchronous DMA never reads a reused buffer. Leaves this lease empty. If every
  /// handle to `done` goes away unset, the buffer returns then.
  void release_after(runtime::completion_signal done);

 private:
  friend class detail::pool_core;
  lease(std::shared_ptr<detail::pool_core> core, detail::buffer* buffer, std::size_t size) noexcept
      : core_(std::move(core)), buffer_(buffer), size_(size) {}

  std::shared_ptr<detail::pool_core> core_;
  detail::buffer* buffer_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace coprove::pinned
