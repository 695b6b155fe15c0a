// The host backend: quotient tasks run by field::compute_quotient on CPU worker threads, one
// strand per worker slot so that a slot's work runs in order like a CUDA stream. The SpMV (for a
// task that arrives as its assignment) and the evaluation at zeta run on the same worker, before
// and after the quotient, with pce_matrices::evaluate and the functions of field/evaluation.hpp;
// the proof's MSMs after them, with groth16::compute_msm_sums (all cores).
// The worker completes the caller's operation, which runs the handler on its own executor.
#include <coprove/engine/host_backend.hpp>

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

namespace {

class host_backend_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "coprove.host_backend"; }
  std::string message(int value) const override {
    switch (static_cast<host_backend_errc>(value)) {
      case host_backend_errc::no_such_worker_slot: return "host backend: no such worker slot";
      case host_backend_errc::invalid_task: return "host backend: the quotient task does not fit its domain or stages";
      case host_backend_errc::computation_failed: return "host backend: the computation failed on its worker";
    }
    return "unknown coprove.host_backend error " + std::to_string(value);
  }
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (static_cast<host_backend_errc>(value)) {
      case host_backend_errc::no_such_worker_slot:
      case host_backend_errc::invalid_task: return std::errc::invalid_argument;
      default: return {value, *this};
    }
  }
};

std::uint64_t now_ns() noexcept { return runtime::trace_writer::now_ns(); }

}  // namespace

const std::error_category& host_backend_category() noexcept {
  static const host_backend_category_impl category;
  return category;
}

std::error_code make_error_code(host_backend_errc e) noexcept { return {static_cast<int>(e), host_backend_category()}; }

namespace detail {

// What one worker slot keeps between its tasks (used only on the slot's strand).
struct host_slot_scratch {
  std::array<std::vector<fr>, 3> abc;  // a, b, c evaluated from a task's matrices
  std::vector<fr> h;                   // h of a task that does not ask for its host copy
};

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
  std::vector<host_slot_scratch> scratch;
};

}  // namespace detail

namespace {

// The task's stages on the calling worker, in order; throws what the computation throws.
void run_stages(const quotient_task& task, detail::host_slot_scratch& scratch, quotient_result& out) {
  const std::size_t n = task.domain->size();
  const std::uint64_t start = now_ns();
  std::span<const fr> a = task.a, b = task.b, c = task.c;
  std::uint64_t spmv_end = start;
  if (task.stages.contains(quotient_stage::spmv)) {
    // A w, B w, C w into the slot's own vectors (the slot runs one task at a time).
    for (auto& v : scratch.abc) v.resize(n);
    task.matrices->evaluate(task.witness, scratch.abc[0], scratch.abc[1], scratch.abc[2]);
    a = scratch.abc[0];
    b = scratch.abc[1];
    c = scratch.abc[2];
    spmv_end = now_ns();
  }
  out.timings.spmv_ns = spmv_end - start;
  std::span<fr> h = task.h;
  if (!task.stages.contains(quotient_stage::copy_h_to_host)) {
    scratch.h.resize(n);
    h = scratch.h;
  }
  if (task.form == field::quotient_form::odd_coset_evaluations) {
    field::compute_quotient_odd_coset(a, b, h, *task.domain);
  } else {
    compute_quotient(a, b, c, h, *task.domain);
  }
  const std::uint64_t quotient_end = now_ns();
  out.timings.compute_ns = quotient_end - spmv_end;
  if (task.stages.contains(quotient_stage::evaluate_at_zeta)) {
    const evaluation_record r = make_evaluation_record(a, b, c, h, *task.domain, task.zeta);
    out.values = evaluation_values{r.a, r.b, r.c, r.h};
    out.timings.evaluation_ns = now_ns() - quotient_end;
  }
  out.h_copied = task.stages.contains(quotient_stage::copy_h_to_host);
  if (task.stages.contains(quotient_stage::proof_msms)) {
    // Over as many values of h as the key has H points (n - 1 coefficients, or n odd-coset
    // values), as a device does: a witness that does not satisfy the circuit shows in the proof.
    const std::uint64_t msm_start = now_ns();
    out.sums = groth16::compute_msm_sums(*task.key, task.witness, std::span<const fr>(h).first(task.key->h.size()));
    out.timings.msm_ns = now_ns() - msm_start;
  }
}

}  // namespace

host_backend::host_backend(std::size_t devices, std::size_t slots, std::size_t threads) {
  if (devices == 0) throw std::invalid_argument("host backend: devices must be at least 1");
  if (slots == 0) throw std::invalid_argument("host backend: slots_per_device must be at least 1");
  if (threads == 0) threads = devices * slots;
  state_ = std::make_unique<detail::host_backend_state>(devices, slots, threads);
}

host_backend::~host_backend() {
  // Lets every started task finish (and complete) before the threads go away.
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

void host_backend::start_quotient(worker_slot worker, quotient_task task, quotient_completion done) noexcept {
  try {
    if (worker.device >= state_->devices || worker.slot >= state_->slots) {
      COPROVE_LOG(error, "backend") << "host backend: worker slot " << worker.slot << " of device " << worker.device
                                    << " out of range (" << state_->devices << " devices, " << state_->slots
                                    << " slots each)";
      done.complete(make_error_code(host_backend_errc::no_such_worker_slot), {});
      return;
    }
    check_quotient_task("host", task);
  } catch (const std::invalid_argument& e) {
    COPROVE_LOG(error, "backend") << "refused a quotient task: " << e.what();
    done.complete(make_error_code(host_backend_errc::invalid_task), {});
    return;
  } catch (...) {
    // Only the log could throw here; the completion says what happened.
    done.complete(make_error_code(host_backend_errc::invalid_task), {});
    return;
  }

  const std::size_t index = worker.device * state_->slots + worker.slot;
  try {
    boost::asio::post(state_->strands[index], [task = std::move(task), done = std::move(done), worker,
                                               scratch = &state_->scratch[index]]() mutable {
      quotient_result result;
      std::error_code ec;
      try {
        run_stages(task, *scratch, result);
      } catch (const std::exception& e) {
        try {
          runtime::log_fields fields;
          fields.device = static_cast<int>(worker.device);
          COPROVE_LOG_F(error, "backend", fields) << "host quotient on slot " << worker.slot << " failed: " << e.what();
        } catch (...) {
        }
        ec = make_error_code(host_backend_errc::computation_failed);
      }
      if (ec) result = quotient_result{};
      // The task (and its hold on the matrices) goes before the caller hears of the outcome.
      task = quotient_task{};
      done.complete(ec, std::move(result));
    });
  } catch (...) {
    // Posting failed (out of memory): the completion, moved into the discarded function, has
    // completed the operation with runtime::errc::shut_down as it went.
  }
}

std::size_t host_backend::host_working_bytes(std::size_t n) const noexcept {
  return state_->devices * state_->slots * 3 * n * sizeof(fr);
}

std::unique_ptr<compute_backend> make_host_backend(std::size_t devices, std::size_t slots_per_device,
                                                   std::size_t threads) {
  return std::make_unique<host_backend>(devices, slots_per_device, threads);
}

}  // namespace coprove::engine
