// The host backend's async_quotient: the same values as the field functions, from a, b and c or
// from the assignment; h copied only when asked; completion on the handler's executor, never
// inline, with any token; errors in its own category; a cancellation slot that aborts nothing.
#include <coprove/engine/host_backend.hpp>

#include <coprove/field/evaluation.hpp>
#include <coprove/field/quotient.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_witness.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/pce.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include "circom_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace coprove::field;
using namespace coprove::r1cs;
using namespace coprove::engine;

// A partition's a, b, c with satisfied rows (c = a * b on the domain), and its h.
struct partition_data {
  explicit partition_data(unsigned log_n, std::uint64_t seed = 23)
      : domain(std::size_t{1} << log_n), a(domain.size()), b(domain.size()), c(domain.size()),
        h(domain.size()), expected_h(domain.size()) {
    std::mt19937_64 gen(seed);
    for (std::size_t i = 0; i < domain.size(); ++i) {
      a[i] = fr::random(gen);
      b[i] = fr::random(gen);
      c[i] = a[i] * b[i];
    }
    compute_quotient(a, b, c, expected_h, domain);
  }

  evaluation_values expected_values(const fr& zeta) const {
    const evaluation_record r = make_evaluation_record(a, b, c, expected_h, domain, zeta);
    return {r.a, r.b, r.c, r.h};
  }

  quotient_task task() { return quotient_task::from_evaluations(a, b, c, domain); }
  quotient_task task_at(const fr& zeta) { return task().evaluate_at(zeta); }

  evaluation_domain domain;
  std::vector<fr> a, b, c, h, expected_h;
};

// Runs `task` on `worker` through use_future (which hands the std::error_code over in the tuple)
// and requires success.
quotient_result run(compute_backend& backend, worker_slot worker, const quotient_task& task) {
  auto [ec, result] = backend.async_quotient(worker, task, asio::use_future).get();
  REQUIRE_FALSE(ec);
  return result;
}

// What a callback handler saw.
struct seen_completion {
  std::error_code ec;
  quotient_result result;
  std::thread::id thread;
};

}  // namespace

TEST_CASE("the host backend's values at zeta equal make_evaluation_record's", "[prover][backend][evaluation][cpu]") {
  host_backend backend(1, 2);
  for (unsigned log_n : {0u, 3u, 10u}) {
    partition_data p(log_n);
    const std::size_t n = p.domain.size();
    // A point off the domain, and one on it (the values are then the entries at its index).
    std::mt19937_64 gen(log_n);
    const fr inside = p.domain.omega().pow(static_cast<std::uint64_t>(n / 2 + (n > 1 ? 1 : 0)) % n);
    for (const fr& zeta : {fr::random(gen), inside}) {
      std::fill(p.h.begin(), p.h.end(), fr::zero());
      auto task = p.task();
      task.evaluate_at(zeta).copy_h_to_host(p.h);
      const quotient_result r = run(backend, worker_slot{0, 1}, task);
      CHECK(r.h_copied);
      CHECK(p.h == p.expected_h);
      CHECK(r.values == p.expected_values(zeta));
      CHECK(verify(evaluation_record{zeta, r.values.a, r.values.b, r.values.c, r.values.h}, n));
      CHECK(r.timings.evaluation_ns > 0);
      CHECK(r.timings.spmv_ns == 0);
      CHECK(r.timings.h2d_ns == 0);  // computed in place: nothing is copied
      CHECK(r.timings.h2d_bytes == 0);
    }
    // Without evaluate_at_zeta only the quotient runs.
    std::fill(p.h.begin(), p.h.end(), fr::zero());
    auto task = p.task();
    task.copy_h_to_host(p.h);
    const quotient_result r = run(backend, worker_slot{0, 0}, task);
    CHECK(p.h == p.expected_h);
    CHECK(r.timings.evaluation_ns == 0);
    CHECK(r.values == evaluation_values{fr::zero(), fr::zero(), fr::zero(), fr::zero()});
  }
}

TEST_CASE("a task from its assignment and matrices computes what the task from a, b and c does",
          "[prover][backend][cpu]") {
  host_backend backend(2, 1);
  pce_cache cache;
  const std::size_t n = 1024;
  std::vector<fr> a(n), b(n), c(n), h(n), expected_h(n);
  cache.synthesize(*make_circuit("mimc", 10, 1, 0), a, b, c);  // records the PCE
  const deferred_synthesis d = cache.synthesize_deferred(*make_circuit("mimc", 10, 1, 1), a, b, c);
  REQUIRE(d.matrices);
  const evaluation_domain domain(n);
  const std::span<const fr> w(a.data(), d.assignment_size);
  std::vector<fr> ea(n), eb(n), ec(n);
  d.matrices->evaluate(w, ea, eb, ec);
  const fr zeta = fr::from_uint64(0x5eed);

  auto from_abc = quotient_task::from_evaluations(ea, eb, ec, domain);
  from_abc.evaluate_at(zeta).copy_h_to_host(expected_h);
  const quotient_result expected = run(backend, worker_slot{0, 0}, from_abc);

  auto from_w = quotient_task::from_assignment(w, d.matrices, domain);
  from_w.evaluate_at(zeta).copy_h_to_host(h);
  const quotient_result r = run(backend, worker_slot{1, 0}, from_w);
  CHECK(h == expected_h);
  CHECK(r.values == expected.values);
  CHECK(r.timings.spmv_ns > 0);
}

TEST_CASE("h stays with the host backend unless the task asks for its host copy", "[prover][backend][cpu]") {
  host_backend backend(1, 1);
  partition_data p(8);
  const fr zeta = fr::from_uint64(77);
  const quotient_result r = run(backend, worker_slot{}, p.task_at(zeta));
  CHECK_FALSE(r.h_copied);
  CHECK(r.values == p.expected_values(zeta));  // h(zeta) from the backend's own copy of h
  CHECK(backend.host_working_bytes(p.domain.size()) == 3 * p.domain.size() * sizeof(fr));
}

TEST_CASE("async_quotient completes on the handler's executor, never inline, keeping it busy meanwhile",
          "[prover][backend][cpu]") {
  asio::io_context io;  // outlives the backend, whose workers post to it
  host_backend backend(1, 2);
  partition_data p(6);
  auto strand = asio::make_strand(io);
  std::optional<seen_completion> seen;
  bool on_strand = false;
  auto task = p.task();
  task.copy_h_to_host(p.h);
  backend.async_quotient(worker_slot{0, 1}, task,
                         asio::bind_executor(strand, [&](std::error_code ec, quotient_result r) {
                           on_strand = strand.running_in_this_thread();
                           seen = seen_completion{ec, std::move(r), std::this_thread::get_id()};
                         }));
  CHECK_FALSE(seen);
  // The operation counts as work on the io_context: run_one waits for it instead of returning 0.
  CHECK(io.run_one() == 1);
  REQUIRE(seen);
  CHECK_FALSE(seen->ec);
  CHECK(seen->thread == std::this_thread::get_id());  // not the worker thread that finished the task
  CHECK(on_strand);
  CHECK(seen->result.h_copied);
  CHECK(p.h == p.expected_h);
  CHECK(io.poll() == 0);  // nothing else was posted, and no work is left
  CHECK(io.stopped());
}

TEST_CASE("the tasks of one worker slot complete in the order they were started", "[prover][backend][cpu]") {
  asio::io_context io;  // outlives the backend, whose workers post to it
  host_backend backend(1, 1);
  std::vector<partition_data> parts;
  for (std::uint64_t i = 0; i < 4; ++i) parts.emplace_back(9, 100 + i);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto task = parts[i].task();
    task.copy_h_to_host(parts[i].h);
    backend.async_quotient(worker_slot{}, task, asio::bind_executor(io, [&order, i](std::error_code ec, quotient_result) {
                             CHECK_FALSE(ec);
                             order.push_back(i);
                           }));
  }
  CHECK(io.run() == parts.size());
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 3});
  for (const auto& part : parts) CHECK(part.h == part.expected_h);
}

TEST_CASE("async_quotient takes use_future, deferred and callback tokens", "[prover][backend][cpu]") {
  asio::io_context io;  // outlives the backend, whose workers post to it
  host_backend backend(1, 1);
  partition_data p(5);
  const fr zeta = fr::from_uint64(9);
  const quotient_task task = p.task_at(zeta);

  CHECK(run(backend, worker_slot{}, task).values == p.expected_values(zeta));

  auto later = backend.async_quotient(worker_slot{}, task, asio::deferred);
  auto [ec, deferred_result] = std::move(later)(asio::use_future).get();
  CHECK_FALSE(ec);
  CHECK(deferred_result.values == p.expected_values(zeta));

  std::optional<evaluation_values> values;
  backend.async_quotient(worker_slot{}, task, asio::bind_executor(io, [&](std::error_code ec, quotient_result r) {
                           CHECK_FALSE(ec);
                           values = r.values;
                         }));
  io.run();
  CHECK(values == p.expected_values(zeta));
}

TEST_CASE("host backend errors arrive in its own category with a clear message, never inline",
          "[prover][backend][cpu]") {
  asio::io_context io;  // outlives the backend, whose workers post to it
  host_backend backend(1, 2);
  partition_data p(4);
  auto expect_error = [&](worker_slot worker, const quotient_task& task, host_backend_errc code) {
    std::optional<seen_completion> seen;
    backend.async_quotient(worker, task, asio::bind_executor(io, [&](std::error_code ec, quotient_result r) {
                             seen = seen_completion{ec, std::move(r), std::this_thread::get_id()};
                           }));
    CHECK_FALSE(seen);
    io.restart();
    CHECK(io.run() == 1);
    REQUIRE(seen);
    CHECK(seen->ec == make_error_code(code));
    CHECK(std::string(seen->ec.category().name()) == "coprove.host_backend");
    CHECK(seen->ec.message().find("host backend: ") == 0);
    CHECK_FALSE(seen->result.h_copied);
    CHECK(seen->result.timings.compute_ns == 0);
    return seen->ec;
  };

  auto task = p.task();
  task.copy_h_to_host(p.h);
  CHECK(expect_error(worker_slot{1, 0}, task, host_backend_errc::no_such_worker_slot) == std::errc::invalid_argument);
  CHECK(expect_error(worker_slot{0, 2}, task, host_backend_errc::no_such_worker_slot).message() ==
        "host backend: no such worker slot");

  auto no_h = p.task();
  no_h.stages.add(quotient_stage::copy_h_to_host);  // without a buffer for it
  const std::error_code refused = expect_error(worker_slot{0, 0}, no_h, host_backend_errc::invalid_task);
  CHECK(refused == std::errc::invalid_argument);
  CHECK(refused.message().find("does not fit") != std::string::npos);

  // h over a's own buffer: the quotient refuses to overwrite its input, on the worker.
  auto overlapping = p.task();
  overlapping.copy_h_to_host(p.a);
  const std::error_code failed = expect_error(worker_slot{0, 1}, overlapping, host_backend_errc::computation_failed);
  CHECK(failed != std::errc::invalid_argument);
  CHECK(failed.message().find("failed") != std::string::npos);

  // use_future hands the same code over.
  auto [ec, r] = backend.async_quotient(worker_slot{3, 0}, task, asio::use_future).get();
  CHECK(ec == make_error_code(host_backend_errc::no_such_worker_slot));
  CHECK_FALSE(r.h_copied);
}

TEST_CASE("a cancellation slot does not abort the host backend's work", "[prover][backend][cpu]") {
  asio::io_context io;  // outlives the backend, whose workers post to it
  host_backend backend(1, 1);
  partition_data p(10);
  asio::cancellation_signal cancel;
  std::optional<seen_completion> seen;
  const fr zeta = fr::from_uint64(31);
  auto task = p.task_at(zeta);
  task.copy_h_to_host(p.h);
  backend.async_quotient(worker_slot{}, task,
                         asio::bind_cancellation_slot(cancel.slot(), asio::bind_executor(io, [&](std::error_code ec,
                                                                                                 quotient_result r) {
                           seen = seen_completion{ec, std::move(r), std::this_thread::get_id()};
                         })));
  // A cancellation request changes nothing: the work in flight owns the task's buffers, and the
  // operation completes as it would have; its completion leaves the slot empty.
  cancel.emit(asio::cancellation_type::all);
  CHECK(io.run() == 1);
  CHECK_FALSE(cancel.slot().has_handler());
  REQUIRE(seen);
  CHECK_FALSE(seen->ec);
  CHECK(seen->result.h_copied);
  CHECK(p.h == p.expected_h);
  CHECK(seen->result.values == p.expected_values(zeta));
}

TEST_CASE("the odd-coset form of a zkey's witness gives snarkjs's h, from the assignment or from a and b",
          "[prover][backend][zkey][cpu]") {
  host_backend backend(1, 1);
  const auto dir = coprove::circom_fixtures::circom_data_dir();
  const auto key = coprove::groth16::read_zkey(dir / "poseidon_chain.zkey");
  const auto w = read_wtns(dir / "poseidon_chain_2.wtns", key.num_variables());
  const auto expected = coprove::groth16::zkey_quotient(key, w);
  const evaluation_domain domain = key.domain();
  const std::size_t n = domain.size();

  std::vector<fr> h(n);
  auto from_w = quotient_task::from_assignment(w, key.matrices, domain).in_odd_coset_form();
  from_w.copy_h_to_host(h);
  const quotient_result r = run(backend, worker_slot{0, 0}, from_w);
  CHECK(r.h_copied);
  CHECK(h == expected);

  std::vector<fr> a(n), b(n), c(n), h2(n);
  key.matrices->evaluate(w, a, b, c);
  auto from_ab = quotient_task::from_evaluations(a, b, {}, domain).in_odd_coset_form();
  from_ab.copy_h_to_host(h2);
  run(backend, worker_slot{0, 0}, from_ab);
  CHECK(h2 == expected);

  // The form's limits: no evaluation at zeta, no c.
  auto at_zeta = quotient_task::from_evaluations(a, b, {}, domain).in_odd_coset_form();
  at_zeta.evaluate_at(fr::one());
  CHECK_THROWS_WITH(check_quotient_task("host", at_zeta), Catch::Matchers::Contains("cannot be evaluated at zeta"));
  auto with_c = quotient_task::from_evaluations(a, b, c, domain).in_odd_coset_form();
  CHECK_THROWS_WITH(check_quotient_task("host", with_c), Catch::Matchers::Contains("no c"));
}
