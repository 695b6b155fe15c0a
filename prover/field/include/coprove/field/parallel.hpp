// A shared pool of CPU threads for data-parallel loops (NTTs, the quotient, evaluations). One pool
// for the process keeps the machine from being oversubscribed when several stages run at once.
#pragma once

#include <cstddef>
#include <functional>

namespace coprove::field {

/// Runs body(lo, hi) over disjoint chunks covering [begin, end), each at least min_chunk long
/// (except possibly the last), on the shared pool; the calling thread takes part. Returns when
/// every chunk has finished. If a chunk throws, the chunks not yet started are skipped and the
/// first exception is rethrown here. A call made from inside a body (a pool thread or the caller
/// running a chunk) runs inline on that thread, so nesting never deadlocks.
void parallel_for(std::size_t begin, std::size_t end,
                  const std::function<void(std::size_t lo, std::size_t hi)>& body,
                  std::size_t min_chunk = 1);

/// Sets the number of threads parallel_for uses (the caller included); 0 means
/// std::thread::hardware_concurrency(). Waits for the pool's threads to finish their current
/// chunks; calls in progress complete on the threads that remain.
void set_parallelism(std::size_t threads);

/// The number of threads parallel_for uses (the caller included).
std::size_t parallelism() noexcept;

}  // namespace coprove::field
