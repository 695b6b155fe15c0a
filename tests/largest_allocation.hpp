// The largest single heap allocation a piece of code makes, for tests that a reader refuses a
// declared size before it allocates from it. largest_allocation.cpp replaces the global operator
// new of a test executable (it is linked into those that use this header) to record the sizes.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace coprove::testing {

/// Starts a window: the record of the largest allocation is reset.
void reset_largest_allocation() noexcept;
/// The largest allocation (bytes, any thread) since the last reset.
std::size_t largest_allocation() noexcept;

/// The largest allocation `f` makes.
template <class F>
std::size_t largest_allocation_of(F&& f) {
  reset_largest_allocation();
  f();
  return largest_allocation();
}

/// The message of the exception of type E that `f` throws ("" when it throws none), and the
/// largest allocation `f` made before.
template <class E, class F>
std::pair<std::string, std::size_t> refusal_with_largest_allocation(F&& f) {
  std::string message;
  const std::size_t largest = largest_allocation_of([&] {
    try {
      f();
    } catch (const E& e) {
      message = e.what();
    }
  });
  return {message, largest};
}

}  // namespace coprove::testing
