// Shared by the GPU tests of a circuit's matrices (the SpMV, the CUDA backend's cache of them): the
// matrices recorded from a circuit, and one partition's quotient computed from its assignment and
// the matrices on a backend under test, checked against the host backend's from a, b and c.
#pragma once

#include <coprove/r1cs/circuit.hpp>
#include <coprove/engine/compute_backend.hpp>
#include <coprove/field/domain.hpp>
#include <coprove/r1cs/pce.hpp>
#include <coprove/r1cs/synthesis.hpp>
#include <coprove/runtime/completion_signal.hpp>

#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <memory>
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
    runtime::completion_signal done;
    host->enqueue_quotient(0, 0, engine::quotient_task{a, b, c, expected_h_, &domain_, zeta_, &expected_values_},
                           nullptr, done);
    done.async_wait(boost::asio::use_future).get();
    REQUIRE_FALSE(done.result());
  }

  /// Enqueues it on (device, slot) of `backend` with the matrices `m`.
  void enqueue(engine::compute_backend& backend, std::size_t device, std::size_t slot,
               std::shared_ptr<const r1cs::pce_matrices> m) {
    backend.enqueue_quotient(device, slot,
                             engine::quotient_task{{}, {}, {}, h_, &domain_, zeta_, &values_, witness_, std::move(m)},
                             &timings_, done_);
  }

  /// Waits for it and checks h and the values at zeta against the host backend's, bit for bit.
  void check() {
    CHECK_NOTHROW(done_.async_wait(boost::asio::use_future).get());
    CHECK_FALSE(done_.result());
    CHECK(h_ == expected_h_);
    CHECK(values_ == expected_values_);
  }

  const engine::gpu_stage_timings& timings() const noexcept { return timings_; }
  std::size_t witness_bytes() const noexcept { return witness_.size() * sizeof(field::fr); }

 private:
  field::evaluation_domain domain_;
  field::fr zeta_;
  std::vector<field::fr> witness_, h_, expected_h_;
  engine::evaluation_values values_{}, expected_values_{};
  engine::gpu_stage_timings timings_{};
  runtime::completion_signal done_;
};

}  // namespace coprove::test
