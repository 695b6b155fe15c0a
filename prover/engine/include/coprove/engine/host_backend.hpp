// The host backend: the compute-backend interface computed on CPU worker threads with
// field::compute_quotient. A real implementation of the same math as the CUDA backend, so that
// machines without a GPU exercise everything above the kernels. Its host allocator is pageable.
// Its errors have their own category, "coprove.host_backend".
#pragma once

#include <coprove/engine/compute_backend.hpp>

#include <cstddef>
#include <memory>
#include <system_error>

namespace coprove::engine {

/// Errors the host backend completes async_quotient with.
enum class host_backend_errc {
  no_such_worker_slot = 1,  ///< the device or the slot is out of range
  invalid_task,             ///< check_quotient_task refused the task
  computation_failed,       ///< the SpMV, the quotient or the evaluation threw on the worker
};

/// The category of host_backend_errc ("coprove.host_backend"). no_such_worker_slot and
/// invalid_task compare equal to std::errc::invalid_argument.
const std::error_category& host_backend_category() noexcept;

std::error_code make_error_code(host_backend_errc e) noexcept;

namespace detail {
struct host_backend_state;
}

/// `devices` x `slots` worker slots; each slot runs its tasks in order (a strand on a shared pool
/// of `threads` worker threads, 0 = one thread per slot). A task is checked on the calling thread
/// (a refused one completes at once, with the reason logged) and runs on its slot's strand, which
/// then submits the completion to the handler's executor.
class host_backend final : public compute_backend {
 public:
  /// Throws std::invalid_argument when devices or slots is 0.
  host_backend(std::size_t devices, std::size_t slots, std::size_t threads = 0);
  ~host_backend() override;  // waits for started tasks to finish (and complete)
  host_backend(const host_backend&) = delete;
  host_backend& operator=(const host_backend&) = delete;

  std::string_view name() const noexcept override;
  std::size_t device_count() const noexcept override;
  std::size_t worker_slots_per_device() const noexcept override;
  std::vector<std::string> device_names() const override;
  std::unique_ptr<pinned::host_allocator> make_host_allocator() const override;
  bool copies_to_device() const noexcept override { return false; }
  void start_quotient(worker_slot worker, quotient_task task, quotient_completion done) noexcept override;
  std::size_t host_working_bytes(std::size_t n) const noexcept override;

 private:
  std::unique_ptr<detail::host_backend_state> state_;
};

}  // namespace coprove::engine

template <>
struct std::is_error_code_enum<coprove::engine::host_backend_errc> : std::true_type {};
