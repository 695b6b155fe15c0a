// One partition as a coroutine on the control strand: each step awaits a part (partition inputs,
// synthesis on the CPU executor, the worker-slot pool, the device, the proof on the CPU executor)
// and the observer hears of each event; the inputs give everything back as they go out of scope.
#include <coprove/engine/detail/engine_core.hpp>

#include <coprove/field/sha256.hpp>
#include <coprove/groth16/prover.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/runtime/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <array>
#include <exception>
#include <system_error>

namespace coprove::engine::detail {

template <class R, class F>
boost::asio::awaitable<R> engine_core::run_on_cpu(F f) {
  co_return co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void(std::exception_ptr, R)>(
      [this, &f](auto handler) {
        auto work = boost::asio::make_work_guard(boost::asio::get_associated_executor(handler, strand_));
        boost::asio::post(cpu_, [&f, handler = std::move(handler), work = std::move(work)]() mutable {
          std::exception_ptr error;
          R result{};
          try {
            result = f();
          } catch (...) {
            error = std::current_exception();
          }
          auto ex = work.get_executor();
          boost::asio::post(ex, [handler = std::move(handler), error, result = std::move(result)]() mutable {
            std::move(handler)(error, std::move(result));
          });
          work.reset();
        });
      },
      boost::asio::use_awaitable);
}

namespace {

// Throws operation_aborted when the partition's job was stopped or its coroutine cancelled.
void stop_if_cancelled(const job& j, boost::asio::cancellation_state state) {
  if (j.stop_requested || state.cancelled() != boost::asio::cancellation_type::none)
    throw std::system_error(runtime::operation_aborted());
}

// The assignment a partition proves: in `a` when only it was sent, kept by the synthesis
// otherwise (empty when a configured synthesizer returned a, b and c alone).
std::span<const fr> assignment_of(partition_inputs& inputs, const synthesis_outcome& s) {
  return s.matrices ? std::span<const fr>(inputs.a_span().data(), s.assignment_size) : std::span<const fr>(s.assignment);
}

// The device's work for a synthesized partition: the source's quotient (the assignment with the
// matrices, or the evaluations, in its proofs' form); then, when the job proves, the proof's MSMs
// on the backend over the assignment and h (h stays with the backend: on a GPU only the sums come
// back). A job without a key (results = evaluation_record) copies h to the host.
quotient_task make_task(const job& j, std::size_t index, partition_inputs& inputs, const synthesis_outcome& s) {
  const std::span<const fr> assignment = assignment_of(inputs, s);
  quotient_task task = j.source->quotient(j, index, assignment, inputs, s);
  if (!j.key) return task.copy_h_to_host(inputs.h_span());
  // No assignment to prove with: the device's quotient and its check still run (a row that does
  // not hold shows there first), then prove_partition refuses.
  if (assignment.empty()) return task;
  return task.prove_with(j.key->keys.pk, assignment);
}

// The device's answer into the result: its timings and the evaluation record, checked here
// before it is returned. Throws partition_failure for a refusal, a device error or a record that
// does not verify.
void take_device_outcome(partition_result& result, const device_outcome& device, std::string_view backend,
                         const job& j, const quotient_task& task) {
  if (device.error)
    throw partition_failure(engine_errc::backend_failed, std::string(backend) + " quotient on device " +
                                                             std::to_string(result.device) + " slot " +
                                                             std::to_string(result.slot) + " failed: " +
                                                             device.error.message());
  const quotient_timings& t = device.result.timings;
  result.timings.h2d_ns = t.h2d_ns;
  result.timings.spmv_ns = t.spmv_ns;
  result.timings.gpu_compute_ns = t.compute_ns;
  result.timings.d2h_ns = t.d2h_ns;
  result.timings.evaluation_ns = t.evaluation_ns;
  result.timings.msm_ns = t.msm_ns;
  if (task.form == field::quotient_form::odd_coset_evaluations) return;  // no record: the proof is checked
  const evaluation_values& v = device.result.values;
  result.record = evaluation_record{task.zeta, v.a, v.b, v.c, v.h};
  result.verified = verify(result.record, j.domain->size());
  if (!result.verified)
    throw partition_failure(engine_errc::verification_failed,
                            "partition " + std::to_string(result.index) + " of job " + std::to_string(j.id) +
                                ": the evaluation record does not verify (h(zeta) * (zeta^n - 1) != "
                                "a(zeta) * b(zeta) - c(zeta))");
}

// The error a partition ended with, from what its steps threw.
std::pair<std::error_code, std::string> failure_of(std::exception_ptr thrown, std::size_t index) {
  const std::string prefix = "partition " + std::to_string(index) + ": ";
  try {
    std::rethrow_exception(thrown);
  } catch (const partition_failure& e) {
    return {make_error_code(e.code()), e.what()};
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::operation_canceled) return {runtime::operation_aborted(), {}};
    return {e.code(), prefix + e.what()};
  } catch (const std::exception& e) {
    return {make_error_code(engine_errc::backend_failed), prefix + e.what()};
  } catch (...) {
    return {make_error_code(engine_errc::backend_failed), prefix + "unknown error"};
  }
}

}  // namespace

// One partition: each step awaits a part (partition inputs, synthesis, the worker-slot pool, the
// device); the observer hears of each event; the inputs give everything back as they go out of
// scope, before the partition's end is recorded.
boost::asio::awaitable<void> engine_core::run_partition(std::shared_ptr<job> j, std::size_t index,
                                                        runtime::permit gpu_slot, std::uint64_t dispatch_sequence,
                                                        std::uint32_t lane) {
  namespace asio = boost::asio;
  co_await asio::this_coro::throw_if_cancelled(false);
  const partition_ref ref{j->id, index, lane};
  const std::uint64_t admitted = now_ns();
  partition_result result;
  result.index = index;
  result.dispatch_sequence = dispatch_sequence;
  result.timings.queue_wait_ns = admitted - j->submit_ns;
  std::pair<std::error_code, std::string> failure;
  depth_sample measured_times;
  {
    partition_inputs inputs;
    inputs.gpu_slot = std::move(gpu_slot);
    try {
      co_await acquire_inputs(*j, ref, inputs);
      const synthesis_outcome synthesized = co_await synthesize(*j, ref, inputs);
      // The partition that records its circuit's constraint cache takes the slow path once.
      measured_times.synthesis_one_off = j->source->one_off(synthesized);
      result.is_pinned = inputs.is_pinned();
      result.timings.synthesis_ns = synthesized.end - synthesized.start;
      result.pce_used = synthesized.output.pce_used;
      result.spmv_on_backend = synthesized.matrices != nullptr;
      stop_if_cancelled(*j, co_await asio::this_coro::cancellation_state);
      const quotient_task task = make_task(*j, index, inputs, synthesized);

      const worker_ref worker = co_await acquire_worker(ref, result.timings);
      result.device = static_cast<int>(worker.device);
      result.slot = worker.slot;
      if (synthesized.matrices) co_await make_resident(worker, ref, synthesized.matrices);
      if (task.key) co_await make_key_resident(worker, ref, *j);
      const std::uint64_t started = now_ns();
      observer_.device_started(worker.device);
      device_outcome device = co_await run_on_worker(worker, task);
      const std::uint64_t finished = now_ns();
      measured_times.device_ns = finished - started;
      observer_.device_done(ref, worker, started, finished, device.result.timings);
      leave_worker(worker);
      take_device_outcome(result, device, backend_->name(), *j, task);
      stop_if_cancelled(*j, co_await asio::this_coro::cancellation_state);
      if (j->key) {
        co_await prove_partition(*j, ref, std::move(device.result), synthesized, result);
        stop_if_cancelled(*j, co_await asio::this_coro::cancellation_state);
      }
    } catch (...) {
      failure = failure_of(std::current_exception(), index);
    }
  }  // inputs: buffers, full-input permit, reservation, GPU slot, in that order
  const std::uint64_t end = now_ns();
  result.timings.total_ns = end - j->submit_ns;
  const auto& [ec, message] = failure;
  if (!ec && depth_controller_) {
    measured_times.synthesis_ns = result.timings.synthesis_ns;
    measured_times.after_device_ns = result.timings.prove_ns + result.timings.proof_verify_ns;
    measured(measured_times);
  }
  observer_.partition_ended(ref, admitted, end, result.timings.queue_wait_ns, ec ? nullptr : &result.timings,
                            result.is_pinned, ec);
  if (ec && ec != std::errc::operation_canceled) {
    COPROVE_LOG_F(error, "engine", job_fields(j->id, index)) << message;
  }
  partition_ended(j, index, ec ? std::nullopt : std::optional<partition_result>(std::move(result)), ec, message);
}

boost::asio::awaitable<void> engine_core::acquire_inputs(const job& j, const partition_ref& ref,
                                                         partition_inputs& inputs) {
  namespace asio = boost::asio;
  input_sources from = sources();
  const std::uint64_t start = now_ns();
  co_await reserve_memory(inputs, from, j.reservation_bytes);
  stop_if_cancelled(j, co_await asio::this_coro::cancellation_state);
  const std::uint64_t reserved = now_ns();
  observer_.memory_reserved(ref, start, reserved);
  // A partition that will most likely send only its assignment (its circuit's PCE exists, or the
  // configured synthesizer sends assignments) leases a and h; b and c follow only if its
  // synthesis needs them after all.
  const bool lean = sizing_.lean_inputs && j.witness_fits &&
                    (j.source->sends_assignment(j) || full_in_flight_.contains(j.circuit_id));
  co_await lease_buffers(inputs, from, j.domain->size() * sizeof(fr), lean, j.circuit_id);
  stop_if_cancelled(j, co_await asio::this_coro::cancellation_state);
  observer_.buffers_leased(ref, reserved, now_ns());
}

// Synthesis on the CPU executor by the job's source, straight into the leased buffers. While the
// circuit's PCE is being built (policy wait) it waits for the build here, on the control executor,
// instead of on a synthesis thread; a lean partition whose synthesis finds no PCE after all leases
// b and c late and synthesizes again with the full set.
boost::asio::awaitable<synthesis_outcome> engine_core::synthesize(const job& j, const partition_ref& ref,
                                                                  partition_inputs& inputs) {
  bool first_try = true;
  for (;;) {
    observer_.synthesis_started();
    synthesis_outcome s = co_await run_on_cpu<synthesis_outcome>([&] {
      return j.source->synthesize(j, ref.partition, inputs.a_span(), inputs.b_span(), inputs.c_span(),
                                  observer_.synthesis_lane(), first_try);
    });
    observer_.synthesis_stopped();
    if (!s.error.empty())
      throw partition_failure(engine_errc::synthesis_failed, "synthesis of " + j.request.circuit + "/" +
                                                                 std::to_string(j.request.log_constraints) +
                                                                 " partition " + std::to_string(ref.partition) +
                                                                 " failed: " + s.error);
    if (s.pce_building) {
      first_try = false;
      co_await await_pce_build(j.circuit_id);
      continue;
    }
    if (s.needs_abc) {
      // No PCE to defer to after all (the builder in flight had not started it yet, or its build
      // failed, or it was dropped): b and c, then the synthesis again.
      input_sources from = sources();
      const std::uint64_t late = now_ns();
      co_await acquire_late_abc(inputs, from, j.domain->size() * sizeof(fr), j.circuit_id);
      observer_.late_abc_leased(ref, late, now_ns());
      first_try = true;
      continue;
    }
    const synthesis_path path = j.source->synthesized(j, s);
    observer_.synthesized(ref, s.lane, s.start, s.end, path, s.matrices != nullptr);
    co_return s;
  }
}

boost::asio::awaitable<void> engine_core::await_pce_build(const std::string& circuit_id) {
  // Not cancellable: the build ends on its own, and the partition looks at its job afterwards.
  co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void()>(
      [this, &circuit_id](auto handler) {
        using handler_type = decltype(handler);
        struct waiting {
          handler_type handler;
          boost::asio::executor_work_guard<boost::asio::any_io_executor> work;
        };
        auto state = std::make_shared<waiting>(waiting{std::move(handler), boost::asio::make_work_guard(executor_)});
        auto resume = [state] {
          auto ex = state->work.get_executor();
          boost::asio::post(ex, [state] {
            state->work.reset();
            std::move(state->handler)();
          });
        };
        if (!pce_->notify_when_built(circuit_id, resume)) resume();
      },
      boost::asio::use_awaitable);
}

boost::asio::awaitable<worker_ref> engine_core::acquire_worker(const partition_ref& ref, partition_timings& timings) {
  const std::uint64_t queued = now_ns();
  observer_.gpu_queued();
  auto [ec, worker] =
      co_await workers_.async_acquire(partition_key{ref.job, ref.partition}, boost::asio::use_awaitable);
  if (ec) {
    observer_.left_gpu_queue();
    throw std::system_error(ec);
  }
  const std::uint64_t acquired = now_ns();
  timings.gpu_queue_ns = acquired - queued;
  observer_.on_worker(ref, queued, acquired);
  co_return worker;
}

template <class Upload>
boost::asio::awaitable<void> engine_core::upload_on_cpu(worker_ref worker, const std::string& what, Upload upload) {
  std::string upload_error = co_await run_on_cpu<std::string>([&]() -> std::string {
    try {
      upload();
      return {};
    } catch (const std::exception& e) {
      return e.what()[0] != '\0' ? e.what() : "unknown error";
    }
  });
  if (!upload_error.empty()) {
    leave_worker(worker);
    throw partition_failure(engine_errc::backend_failed, std::string(backend_->name()) + " backend could not take " +
                                                             what + " on device " + std::to_string(worker.device) +
                                                             ": " + upload_error);
  }
}

// A circuit's matrices go to a device once, on its first task there: the copy blocks its caller,
// so it runs on the CPU executor rather than here, where it would hold up every completion.
boost::asio::awaitable<void> engine_core::make_resident(worker_ref worker, const partition_ref& ref,
                                                        const std::shared_ptr<const pce_matrices>& matrices) {
  if (backend_->matrices_resident(worker.device, *matrices)) co_return;
  const std::uint64_t start = now_ns();
  co_await upload_on_cpu(worker, "the matrices of " + matrices->circuit_id,
                         [&] { backend_->prepare_matrices(worker.device, matrices); });
  observer_.matrices_uploaded(ref, worker, start, now_ns());
}

// The same for the proving key's points, on the first proof of its circuit on the device.
boost::asio::awaitable<void> engine_core::make_key_resident(worker_ref worker, const partition_ref& ref,
                                                            const job& j) {
  const std::shared_ptr<const groth16::proving_key>& pk = j.key->keys.pk;
  if (backend_->key_resident(worker.device, *pk)) co_return;
  const std::uint64_t start = now_ns();
  co_await upload_on_cpu(worker, "the proving key of " + j.key->keys.circuit,
                         [&] { backend_->prepare_key(worker.device, pk, j.key->keys.circuit); });
  const std::uint64_t end = now_ns();
  observer_.key_uploaded(ref, worker, start, end);
  COPROVE_LOG(info, "engine") << "proving key of " << j.key->keys.circuit << " resident on device " << worker.device
                              << " after " << (end - start) / 1'000'000 << " ms";
}

// The device boundary: the only place that enqueues a quotient and waits for its completion.
boost::asio::awaitable<device_outcome> engine_core::run_on_worker(worker_ref worker, quotient_task task) {
  namespace asio = boost::asio;
  // Not cancellable: the buffers belong to the device until it is done with them.
  auto [ec, result] = co_await backend_->async_quotient(
      worker_slot{worker.device, worker.slot}, std::move(task),
      asio::bind_cancellation_slot(asio::cancellation_slot(), asio::as_tuple(asio::use_awaitable)));
  co_return device_outcome{ec, std::move(result)};
}

namespace {

// The blinding seed of one partition in the insecure deterministic mode: the same for the same
// configured seed, request and partition on every backend and in every run.
std::uint64_t blinding_seed(std::uint64_t configured, const prove_request& request, std::size_t partition) {
  field::sha256 hasher;
  hasher.update("coprove.engine.insecure_blinding");
  const auto add = [&](std::uint64_t v) {
    std::array<std::byte, 8> bytes;
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>(v >> (8 * i));
    hasher.update(bytes);
  };
  add(configured);
  hasher.update(request.circuit);
  add(request.log_constraints);
  add(request.seed);
  add(partition);
  const auto digest = hasher.finish();
  std::uint64_t out = 0;
  for (int i = 0; i < 8; ++i) out |= std::uint64_t{std::to_integer<std::uint8_t>(digest[i])} << (8 * i);
  return out;
}

// What the CPU made of one partition's proof.
struct proof_outcome {
  groth16::proof proof;
  groth16::verification check;
  std::uint64_t start = 0, proved = 0, verified = 0;
  std::uint32_t lane = 0;
  std::string error;
};

}  // namespace

// The proof, on the CPU executor, from the sums of the five MSMs the backend computed (combined
// here when they came in parts): blinded with fresh r and s, then checked with the key's verifying
// key. A proof that does not verify is never returned.
boost::asio::awaitable<void> engine_core::prove_partition(const job& j, const partition_ref& ref,
                                                          quotient_result device, const synthesis_outcome& s,
                                                          partition_result& result) {
  const std::string what = "partition " + std::to_string(ref.partition) + " of job " + std::to_string(j.id);
  if (!s.matrices && s.assignment.empty())
    throw partition_failure(engine_errc::proving_failed,
                            what + ": the configured synthesizer (" + config_.synthesizer_name +
                                ") returned a, b and c without the assignment, which a proof needs (configure "
                                "results = evaluation_record to measure the quotient alone)");
  if (!device.sums && !device.combine_sums)
    throw partition_failure(engine_errc::proving_failed,
                            what + ": the " + std::string(backend_->name()) + " backend returned no MSM sums");
  const key_entry& key = *j.key;
  proof_outcome p = co_await run_on_cpu<proof_outcome>([&]() -> proof_outcome {
    proof_outcome out;
    out.lane = observer_.synthesis_lane();
    out.start = now_ns();
    try {
      groth16::secret_source secrets =
          config_.insecure_proof_seed
              ? groth16::secret_source::insecure_seeded_announced(
                    blinding_seed(*config_.insecure_proof_seed, j.request, ref.partition))
              : groth16::secret_source::system();
      const std::optional<groth16::msm_sums> sums = device.take_sums();
      out.proof = groth16::assemble_proof(*key.keys.pk, *sums, secrets);
      out.proved = now_ns();
      out.check = groth16::verify(key.pvk, out.proof, s.output.public_inputs);
      out.verified = now_ns();
      // Which of the witness and the key is wrong, as far as the key can tell (not timed).
      if (!out.check && j.zkey)
        out.check.reason = groth16::explain_failed_zkey_proof(*j.zkey, (*j.request.witnesses)[ref.partition]);
    } catch (const std::exception& e) {
      out.error = e.what()[0] != '\0' ? e.what() : "unknown error";
    }
    return out;
  });
  if (!p.error.empty())
    throw partition_failure(engine_errc::proving_failed, what + ": the proof could not be made: " + p.error);
  observer_.proved(ref, p.lane, p.start, p.proved, p.verified);
  result.timings.prove_ns = p.proved - p.start;
  result.timings.proof_verify_ns = p.verified - p.proved;
  result.verified = p.check.accepted;
  if (!p.check && j.zkey) throw partition_failure(engine_errc::verification_failed, what + ": " + p.check.reason);
  if (!p.check)
    throw partition_failure(engine_errc::verification_failed,
                            what + ": its proof does not verify with the key of " +
                                key_name(j.request.circuit, j.request.log_constraints) + ": " + p.check.reason);
  result.proof = p.proof;
  result.public_inputs = s.output.public_inputs;
}

}  // namespace coprove::engine::detail
