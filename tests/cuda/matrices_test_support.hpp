// Shared by the GPU tests of a circuit's matrices (the SpMV, the CUDA backend's cache of them): the
// matrices recorded from a circuit, and one partition's quotient computed from its assignment and
// the matrices on a backend under test, checked against the host backend's from a, b and c.
#pragma once

#include <coprove/r1cs/circuit.hpp>
#include <coprove/engine/compute_backend.hpp>
#include <coprove/field/domain.hpp>
#include <coprove/r1cs/pce.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <future>
#include <memory>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

namespace coprove::test {

/// The matrices recorded from a circuit family's first partition.
inline std::shared_ptr<const r1cs::pce_matrices> record(const r1cs::circuit& first) {
  auto m = std::make_shared<r1cs::pce_matrices>();
  std::vector<field::fr> a(first.domain_size()), b(first.domain_size()), c(first.domain_size());
  r1cs::synthesize_slow(first, a, b, c, m.get());
  return m;
}

/// A partition's quotient and values at zeta, to be computed on a backend from the partition's
/// assignment and matrices; the host backend's, from a, b and c, are computed at construction.
class quotient_from_matrices {
 public:
  quotient_from_matrices(const r1cs::pce_matrices& m, const r1cs::circuit& partition, field::fr zeta)
      : domain_(partition.domain_size()),
        zeta_(zeta),
        witness_(r1cs::synthesize_witness(partition)),
        h_(domain_.size(), field::fr::one()),
        expected_h_(domain_.size()) {
    const std::size_t n = domain_.size();
    std::vector<field::fr> a(n), b(n), c(n);
    m.evaluate(witness_, a, b, c);
    auto host = engine::make_host_backend(1, 1);
    auto task = engine::quotient_task::from_evaluations(a, b, c, domain_);
    task.evaluate_at(zeta_).copy_h_to_host(expected_h_);
    auto [ec, expected] = host->async_quotient(engine::worker_slot{}, task, boost::asio::use_future).get();
    REQUIRE_FALSE(ec);
    expected_values_ = expected.values;
  }

  /// Starts it on (device, slot) of `backend` with the matrices `m`.
  void enqueue(engine::compute_backend& backend, std::size_t device, std::size_t slot,
               std::shared_ptr<const r1cs::pce_matrices> m) {
    auto task = engine::quotient_task::from_assignment(witness_, std::move(m), domain_);
    task.evaluate_at(zeta_).copy_h_to_host(h_);
    done_ = backend.async_quotient(engine::worker_slot{device, slot}, task, boost::asio::use_future);
  }

  /// Waits for it and checks h and the values at zeta against the host backend's, bit for bit.
  void check() {
    auto [ec, result] = done_.get();
    CHECK_FALSE(ec);
    CHECK(result.h_copied);
    CHECK(h_ == expected_h_);
    CHECK(result.values == expected_values_);
    timings_ = result.timings;
  }

  /// The stage timings of the task, once check() has run.
  const engine::quotient_timings& timings() const noexcept { return timings_; }
  std::size_t witness_bytes() const noexcept { return witness_.size() * sizeof(field::fr); }

 private:
  field::evaluation_domain domain_;
  field::fr zeta_;
  std::vector<field::fr> witness_, h_, expected_h_;
  engine::evaluation_values expected_values_{};
  engine::quotient_timings timings_{};
  std::future<std::tuple<std::error_code, engine::quotient_result>> done_;
};

}  // namespace coprove::test
