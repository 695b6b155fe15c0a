// lease::release_after: hands a buffer back only once the GPU work that reads it has completed.
#include "coprove/pinned/lease.hpp"

#include "coprove/runtime/completion_signal.hpp"

namespace coprove::pinned {

void lease::release_after(runtime::completion_signal done) {
  if (buffer_ == nullptr) return;
  // The waiter owns the lease: set (with any result), or every handle of `done` gone, returns it.
  // It has no executor of its own, so it runs on the system executor: the pool is thread-safe.
  done.async_wait([held = std::move(*this)](std::error_code) mutable { held.release(); });
}

}  // namespace coprove::pinned
