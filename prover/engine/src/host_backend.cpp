// The host backend: quotients computed by field::compute_quotient on CPU worker threads, one
// strand per worker slot so that a slot's work runs in order like a CUDA stream, completing the
// same completion signals as the CUDA backend. The evaluation at zeta runs on the same worker,
// after the quotient, with the functions of prover/evaluation.hpp.
#include <coprove/engine/host_backend.hpp>

#include <coprove/engine/engine.hpp>
#include <coprove/field/evaluation.hpp>
#include <coprove/field/quotient.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/trace.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include <array>
#include <exception>
#include <stdexcept>
#include <string>

namespace coprove::engine {
using field::compute_quotient;
using field::evaluation_record;
using field::fr;
using field::make_evaluation_record;


namespace detail {

struct host_backend_state {
  using strand_type = boost::asio::strand<boost::asio::thread_pool::executor_type>;

  host_backend_state(std::size_t d, std::size_t s, std::size_t threads)
      : devices(d), slots(s), workers(threads) {
    strands.reserve(d * s);
    for (std::size_t i = 0; i < d * s; ++i) strands.push_back(boost::asio::make_strand(workers));
    scratch.resize(d * s);
  }

  std::size_t devices;
  std::size_t slots;
  boost::asio::thread_pool workers;
  std::vector<strand_type> strands;  // device * slots + slot
  // Per slot: a, b, c evaluated from a task's matrices (used only on that slot's strand).
  std::vector<std::array<std::vector<fr>, 3>> scratch;
};

}  // namespace detail

host_backend::host_backend(std::size_t devices, std::size_t slots, std::size_t threads) {
  if (devices == 0) throw std::invalid_argument("host backend: devices must be at least 1");
  if (slots == 0) throw std::invalid_argument("host backend: slots_per_device must be at least 1");
  if (threads == 0) threads = devices * slots;
  state_ = std::make_unique<detail::host_backend_state>(devices, slots, threads);
}

host_backend::~host_backend() {
  // Lets every enqueued quotient finish (and set its signal) before the threads go away.
  state_->workers.join();
}

std::string_view host_backend::name() const noexcept { return "host"; }

std::size_t host_backend::device_count() const noexcept { return state_->devices; }

std::size_t host_backend::worker_slots_per_device() const noexcept { return state_->slots; }

std::vector<std::string> host_backend::device_names() const {
  std::vector<std::string> names;
  for (std::size_t d = 0; d < state_->devices; ++d) names.push_back("host cpu " + std::to_string(d));
  return names;
}

std::unique_ptr<pinned::host_allocator> host_backend::make_host_allocator() const {
  return pinned::make_pageable_allocator();
}

void host_backend::enqueue_quotient(std::size_t device, std::size_t slot, const quotient_task& task,
                                    gpu_stage_timings* timings, runtime::completion_signal done) {
  if (device >= state_->devices)
    throw std::invalid_argument("host backend: device " + std::to_string(device) + " out of range (" +
                                std::to_string(state_->devices) + " devices)");
  if (slot >= state_->slots)
    throw std::invalid_argument("host backend: slot " + std::to_string(slot) + " out of range (" +
                                std::to_string(state_->slots) + " slots per device)");
  check_quotient_task("host", task);

  const std::size_t index = device * state_->slots + slot;
  boost::asio::post(state_->strands[index],
                    [task, timings, done, device, slot, scratch = &state_->scratch[index]]() mutable {
                      const std::uint64_t start = runtime::trace_writer::now_ns();
                      std::uint64_t quotient_end = start, spmv_end = start;
                      std::error_code result;
                      try {
                        std::span<const fr> a = task.a, b = task.b, c = task.c;
                        if (task.matrices) {
                          // A w, B w, C w into the slot's own vectors (the slot runs one task at a time).
                          const std::size_t n = task.domain->size();
                          for (auto& v : *scratch) v.resize(n);
                          task.matrices->evaluate(task.witness, (*scratch)[0], (*scratch)[1], (*scratch)[2]);
                          a = (*scratch)[0];
                          b = (*scratch)[1];
                          c = (*scratch)[2];
                          spmv_end = runtime::trace_writer::now_ns();
                        }
                        compute_quotient(a, b, c, task.h, *task.domain);
                        quotient_end = runtime::trace_writer::now_ns();
                        if (task.values != nullptr) {
                          const evaluation_record r = make_evaluation_record(a, b, c, task.h, *task.domain, task.zeta);
                          *task.values = evaluation_values{r.a, r.b, r.c, r.h};
                        }
                      } catch (const std::exception& e) {
                        runtime::log_fields fields;
                        fields.device = static_cast<int>(device);
                        COPROVE_LOG_F(error, "backend", fields)
                            << "host quotient on slot " << slot << " failed: " << e.what();
                        result = make_error_code(engine_errc::backend_failed);
                      }
                      if (timings != nullptr) {
                        const std::uint64_t end = runtime::trace_writer::now_ns();
                        *timings = gpu_stage_timings{};
                        timings->spmv_ns = spmv_end - start;
                        timings->compute_ns = (result ? end : quotient_end) - spmv_end;
                        if (!result && task.values != nullptr) timings->evaluation_ns = end - quotient_end;
                      }
                      done.set(result);
                    });
}

std::size_t host_backend::host_working_bytes(std::size_t n) const noexcept {
  return state_->devices * state_->slots * 3 * n * sizeof(fr);
}

std::unique_ptr<compute_backend> make_host_backend(std::size_t devices, std::size_t slots_per_device,
                                                   std::size_t threads) {
  return std::make_unique<host_backend>(devices, slots_per_device, threads);
}

}  // namespace coprove::engine
