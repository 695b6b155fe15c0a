// The host backend: the compute-backend interface computed on CPU worker threads with
// field::compute_quotient. A real implementation of the same math as the CUDA backend, so that
// machines without a GPU exercise everything above the kernels. Its host allocator is pageable.
#pragma once

#include <coprove/engine/compute_backend.hpp>

#include <cstddef>
#include <memory>

namespace coprove::engine {

namespace detail {
struct host_backend_state;
}

/// `devices` x `slots` worker slots; each slot runs its quotients in order (a strand on a shared
/// pool of `threads` worker threads, 0 = one thread per slot). Completion signals are set from
/// the worker threads.
class host_backend final : public compute_backend {
 public:
  /// Throws std::invalid_argument when devices or slots is 0.
  host_backend(std::size_t devices, std::size_t slots, std::size_t threads = 0);
  ~host_backend() override;  // waits for enqueued quotients to finish
  host_backend(const host_backend&) = delete;
  host_backend& operator=(const host_backend&) = delete;

  std::string_view name() const noexcept override;
  std::size_t device_count() const noexcept override;
  std::size_t worker_slots_per_device() const noexcept override;
  std::vector<std::string> device_names() const override;
  std::unique_ptr<pinned::host_allocator> make_host_allocator() const override;
  bool copies_to_device() const noexcept override { return false; }
  void enqueue_quotient(std::size_t device, std::size_t slot, const quotient_task& task,
                        gpu_stage_timings* timings, runtime::completion_signal done) override;
  std::size_t host_working_bytes(std::size_t n) const noexcept override;

 private:
  std::unique_ptr<detail::host_backend_state> state_;
};

}  // namespace coprove::engine
