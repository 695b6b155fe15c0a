// The compute-backend interface itself: which tasks check_quotient_task takes and what it says of
// the others, the stage set, and an operation a backend lets go of without completing it.
#include <coprove/engine/compute_backend.hpp>

#include <coprove/engine/host_backend.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/r1cs/pce.hpp>
#include <coprove/runtime/error.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace coprove::field;
using namespace coprove::r1cs;
using namespace coprove::engine;

// The message check_quotient_task refuses `task` with; empty when it takes it.
std::string refusal(const quotient_task& task) {
  try {
    check_quotient_task("test", task);
    return {};
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

// A backend that keeps every operation it is given until told to drop them.
class dropping_backend final : public compute_backend {
 public:
  std::string_view name() const noexcept override { return "dropping"; }
  std::size_t device_count() const noexcept override { return 1; }
  std::size_t worker_slots_per_device() const noexcept override { return 1; }
  std::vector<std::string> device_names() const override { return {"nothing"}; }
  std::unique_ptr<coprove::pinned::host_allocator> make_host_allocator() const override {
    return coprove::pinned::make_pageable_allocator();
  }
  bool copies_to_device() const noexcept override { return false; }
  void start_quotient(worker_slot, quotient_task, quotient_completion done) noexcept override {
    kept.push_back(std::move(done));
  }

  std::vector<quotient_completion> kept;
};

}  // namespace

TEST_CASE("a quotient task lists its stages and their inputs", "[prover][backend][cpu]") {
  const evaluation_domain domain(1024);
  std::vector<fr> a(1024), b(1024), c(1024), h(1024);
  auto task = quotient_task::from_evaluations(a, b, c, domain);
  CHECK(task.stages == quotient_stages{quotient_stage::upload_evaluations, quotient_stage::quotient});
  CHECK_FALSE(task.stages.contains(quotient_stage::copy_h_to_host));
  task.evaluate_at(fr::from_uint64(5)).copy_h_to_host(h);
  CHECK(task.stages.contains(quotient_stage::evaluate_at_zeta));
  CHECK(task.stages.contains(quotient_stage::copy_h_to_host));
  CHECK(task.zeta == fr::from_uint64(5));
  CHECK(task.h.data() == h.data());
  CHECK(refusal(task).empty());
  CHECK(to_string(quotient_stage::copy_h_to_host) == "copy_h_to_host");
  CHECK(to_string(quotient_stage::proof_msms) == "proof_msms");
  CHECK_FALSE(task.stages.contains(quotient_stage::proof_msms));
  CHECK_FALSE(task.key);

  quotient_stages stages{quotient_stage::spmv};
  CHECK_FALSE(stages.empty());
  CHECK(stages.remove(quotient_stage::spmv).empty());
}

TEST_CASE("check_quotient_task says what does not fit", "[prover][backend][cpu]") {
  const auto circ = make_circuit("mimc", 10, 1, 0);
  pce_cache cache;
  std::vector<fr> a(1024), b(1024), c(1024), h(1024);
  cache.synthesize(*circ, a, b, c);  // records the PCE
  const deferred_synthesis d = cache.synthesize_deferred(*make_circuit("mimc", 10, 1, 1), a, b, c);
  REQUIRE(d.matrices);
  const evaluation_domain domain(1024), other(2048);
  const std::span<const fr> w(a.data(), d.assignment_size);

  auto task = quotient_task::from_assignment(w, d.matrices, domain);
  CHECK(refusal(task).empty());
  CHECK(refusal(quotient_task::from_evaluations(a, b, c, domain)).empty());

  auto no_matrices = task;
  no_matrices.matrices = nullptr;
  CHECK(refusal(no_matrices).find("test backend: a quotient task with a witness needs its matrices") == 0);
  auto short_witness = task;
  short_witness.witness = w.first(w.size() - 1);
  CHECK(refusal(short_witness).find("columns") != std::string::npos);
  auto with_a = task;
  with_a.a = a;
  CHECK(refusal(with_a).find("takes no a, b, c") != std::string::npos);
  auto other_domain = task;
  other_domain.domain = &other;
  CHECK(refusal(other_domain).find("domain of 1024") != std::string::npos);
  auto no_domain = task;
  no_domain.domain = nullptr;
  CHECK(refusal(no_domain).find("without a domain") != std::string::npos);
  auto both_uploads = task;
  both_uploads.stages.add(quotient_stage::upload_evaluations);
  CHECK(refusal(both_uploads).find("either its evaluations or its assignment") != std::string::npos);
  auto no_quotient = task;
  no_quotient.stages.remove(quotient_stage::quotient);
  CHECK(refusal(no_quotient).find("without the quotient stage") != std::string::npos);
  auto no_spmv = task;
  no_spmv.stages.remove(quotient_stage::spmv);
  CHECK(refusal(no_spmv).find("exactly when it uploads its assignment") != std::string::npos);
  auto short_a = quotient_task::from_evaluations(std::span<const fr>(a).first(1023), b, c, domain);
  CHECK(refusal(short_a).find("must each hold 1024 elements") != std::string::npos);
  auto short_h = task;
  short_h.copy_h_to_host(std::span<fr>(h).first(1000));
  CHECK(refusal(short_h).find("h must hold 1024 elements") != std::string::npos);
  auto stray_h = task;
  stray_h.h = h;
  CHECK(refusal(stray_h).find("takes no h") != std::string::npos);
}

TEST_CASE("an operation its backend lets go of completes with shut_down", "[prover][backend][cpu]") {
  dropping_backend backend;
  asio::io_context io;
  const evaluation_domain domain(4);
  std::vector<fr> a(4), b(4), c(4);
  std::optional<std::error_code> seen;
  backend.async_quotient(worker_slot{}, quotient_task::from_evaluations(a, b, c, domain),
                         asio::bind_executor(io, [&](std::error_code ec, quotient_result r) {
                           seen = ec;
                           CHECK_FALSE(r.h_copied);
                         }));
  auto future = backend.async_quotient(worker_slot{}, quotient_task::from_evaluations(a, b, c, domain),
                                       asio::use_future);
  REQUIRE(backend.kept.size() == 2);
  CHECK(io.poll() == 0);  // waiting: nothing to run, yet the io_context has work
  CHECK_FALSE(io.stopped());
  backend.kept.clear();
  CHECK_FALSE(seen);  // not inline in the completion's destructor
  CHECK(io.run() == 1);
  REQUIRE(seen);
  CHECK(*seen == coprove::runtime::make_error_code(coprove::runtime::errc::shut_down));
  auto [ec, r] = future.get();
  CHECK(ec == coprove::runtime::make_error_code(coprove::runtime::errc::shut_down));
  CHECK_FALSE(r.h_copied);
}
