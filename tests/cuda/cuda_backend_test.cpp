// The CUDA backend's async_quotient (completion on the handler's executor, whichever bridge finds
// the work done; errors in the backend's category; h left on the device unless asked for) and its
// copies of circuits' matrices on its devices: prepared ahead of a task, kept while a task in
// flight or anyone else holds the host matrices and freed (device memory included) once nobody
// does, never mistaken for the copy of other matrices; and the interface's defaults, which the
// host backend keeps.
#include <coprove/cuda/cuda_backend.hpp>

#include <coprove/cuda/error.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/engine/compute_backend.hpp>
#include <coprove/r1cs/pce.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include "cuda/matrices_test_support.hpp"
#include "pce_test_circuits.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

namespace cuda = coprove::cuda;
namespace test = coprove::test;
using namespace coprove::field;
using namespace coprove::r1cs;
using namespace coprove::engine;

// What the CUDA backend keeps on a device for these matrices: the nine CSR arrays and the table.
std::size_t device_bytes(const pce_matrices& m) {
  std::size_t bytes = m.coefficient_table.size() * sizeof(fr);
  for (const csr_matrix* x : {&m.a, &m.b, &m.c})
    bytes += (x->row_offsets.size() + x->columns.size() + x->coefficients.size()) * sizeof(std::uint32_t);
  return bytes;
}

std::size_t device_free_bytes() {
  std::size_t free = 0, total = 0;
  COPROVE_CUDA_TRY(cudaMemGetInfo(&free, &total));
  return free;
}

fr test_zeta(std::uint64_t k) { return fr::from_uint64(0x5eed) * fr::from_uint64(k); }

// A CUDA backend on device 0 with two slots.
std::unique_ptr<compute_backend> gpu_backend() {
  REQUIRE(cuda::cuda_device_count() > 0);
  return cuda::make_cuda_backend({0}, 2);
}

// `m` is resident on device 0, and the only matrices the backend holds.
void check_holds_only(const compute_backend& gpu, const pce_matrices& m) {
  CHECK(gpu.matrices_resident(0, m));
  CHECK(gpu.resident_matrices_bytes() == device_bytes(m));
}

// a, b, c of 2^log_n satisfied rows, and what the host backend makes of them at zeta.
struct host_reference {
  host_reference(unsigned log_n, const fr& at)
      : domain(std::size_t{1} << log_n), zeta(at), a(domain.size()), b(domain.size()), c(domain.size()),
        h(domain.size()) {
    std::mt19937_64 gen(log_n);
    for (std::size_t i = 0; i < domain.size(); ++i) {
      a[i] = fr::random(gen);
      b[i] = fr::random(gen);
      c[i] = a[i] * b[i];
    }
    auto host = make_host_backend(1, 1);
    auto [ec, r] = host->async_quotient(worker_slot{}, task().copy_h_to_host(h), boost::asio::use_future).get();
    REQUIRE_FALSE(ec);
    values = r.values;
  }

  quotient_task task() const { return quotient_task::from_evaluations(a, b, c, domain).evaluate_at(zeta); }

  evaluation_domain domain;
  fr zeta;
  std::vector<fr> a, b, c, h;
  evaluation_values values{};
};

}  // namespace

TEST_CASE("the CUDA backend completes on the handler's executor, with every bridge strategy", "[cuda][backend][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  const host_reference expected(14, test_zeta(7));
  for (const char* bridge : {"host_func", "event_poller", "mapped_flag", "stream_write"}) {
    INFO("bridge " << bridge);
    boost::asio::io_context io;  // outlives the backend, whose bridge posts to it
    auto gpu = cuda::make_cuda_backend({0}, 2, bridge);
    auto strand = boost::asio::make_strand(io);
    std::vector<fr> h(expected.domain.size());
    std::optional<std::tuple<std::error_code, quotient_result>> seen;
    bool on_strand = false;
    std::thread::id ran_on;
    auto task = expected.task();
    task.copy_h_to_host(h);
    gpu->async_quotient(worker_slot{0, 1}, task,
                        boost::asio::bind_executor(strand, [&](std::error_code ec, quotient_result r) {
                          on_strand = strand.running_in_this_thread();
                          ran_on = std::this_thread::get_id();
                          seen.emplace(ec, r);
                        }));
    CHECK_FALSE(seen);
    CHECK(io.run_one() == 1);  // the operation keeps the io_context busy until it completes
    REQUIRE(seen);
    const auto& [ec, r] = *seen;
    CHECK_FALSE(ec);
    CHECK(on_strand);
    CHECK(ran_on == std::this_thread::get_id());  // never on a bridge or driver thread
    CHECK(r.h_copied);
    CHECK(h == expected.h);
    CHECK(r.values == expected.values);
    CHECK(r.timings.h2d_bytes == 3 * expected.domain.size() * sizeof(fr));
    CHECK(r.timings.compute_ns > 0);
    CHECK(r.timings.evaluation_ns > 0);
    CHECK(r.timings.spmv_ns == 0);
  }
}

TEST_CASE("without the host copy of h only the values at zeta come back from the device", "[cuda][backend][gpu]") {
  auto gpu = gpu_backend();
  const host_reference expected(16, test_zeta(3));
  auto [ec, r] = gpu->async_quotient(worker_slot{0, 0}, expected.task(), boost::asio::use_future).get();
  REQUIRE_FALSE(ec);
  CHECK_FALSE(r.h_copied);
  CHECK(r.values == expected.values);
  CHECK(r.timings.d2h_bytes == 4 * sizeof(fr));
  auto with_h = expected.task();
  std::vector<fr> h(expected.domain.size());
  with_h.copy_h_to_host(h);
  auto [ec2, r2] = gpu->async_quotient(worker_slot{0, 0}, with_h, boost::asio::use_future).get();
  REQUIRE_FALSE(ec2);
  CHECK(h == expected.h);
  CHECK(r2.timings.d2h_bytes == 4 * sizeof(fr) + h.size() * sizeof(fr));
}

TEST_CASE("the CUDA backend's refusals arrive in its own category", "[cuda][backend][gpu]") {
  auto gpu = gpu_backend();
  const host_reference expected(10, test_zeta(5));
  auto refused = [&](worker_slot worker, const quotient_task& task, cuda::cuda_backend_errc code) {
    auto [ec, r] = gpu->async_quotient(worker, task, boost::asio::use_future).get();
    CHECK(ec == make_error_code(code));
    CHECK(std::string(ec.category().name()) == "coprove.cuda_backend");
    CHECK(ec.message().find("cuda backend: ") == 0);
    CHECK(ec == std::errc::invalid_argument);
    CHECK_FALSE(r.h_copied);
  };
  refused(worker_slot{1, 0}, expected.task(), cuda::cuda_backend_errc::no_such_worker_slot);
  refused(worker_slot{0, 2}, expected.task(), cuda::cuda_backend_errc::no_such_worker_slot);
  auto no_h = expected.task();
  no_h.stages.add(quotient_stage::copy_h_to_host);
  refused(worker_slot{0, 0}, no_h, cuda::cuda_backend_errc::invalid_task);
  const evaluation_domain one(1);
  std::vector<fr> x(1);
  refused(worker_slot{0, 0}, quotient_task::from_evaluations(x, x, x, one), cuda::cuda_backend_errc::unsupported_domain);
  // The backend goes on.
  auto [ec, r] = gpu->async_quotient(worker_slot{0, 0}, expected.task(), boost::asio::use_future).get();
  CHECK_FALSE(ec);
  CHECK(r.values == expected.values);
}

TEST_CASE("prepared matrices are resident before the first task, which computes what the host backend does",
          "[cuda][backend][gpu]") {
  auto gpu = gpu_backend();
  const auto m = test::record(*make_circuit("mimc", 14, 9, 0));
  CHECK_FALSE(gpu->matrices_resident(0, *m));
  CHECK(gpu->resident_matrices_bytes() == 0);

  gpu->prepare_matrices(0, m);
  check_holds_only(*gpu, *m);
  gpu->prepare_matrices(0, m);  // already there: no second copy
  check_holds_only(*gpu, *m);

  for (std::size_t slot = 0; slot < 2; ++slot) {
    test::quotient_from_matrices q(*m, *make_circuit("mimc", 14, 9, 3 + slot), test_zeta(slot + 1));
    q.enqueue(*gpu, 0, slot, m);
    q.check();
  }
  check_holds_only(*gpu, *m);
}

TEST_CASE("matrices nobody holds leave the device at the next prepare or upload, with their memory",
          "[cuda][backend][gpu]") {
  auto gpu = gpu_backend();
  const auto kept = test::record(*make_circuit("mimc", 12, 9, 0));
  // A task first, so that the slot's buffers and plan are part of the baseline.
  test::quotient_from_matrices warm_up(*kept, *make_circuit("mimc", 12, 9, 1), test_zeta(1));
  warm_up.enqueue(*gpu, 0, 0, kept);
  warm_up.check();
  const std::size_t kept_bytes = device_bytes(*kept);
  CHECK(gpu->resident_matrices_bytes() == kept_bytes);
  const std::size_t baseline = device_free_bytes();

  // The driver hands out memory in pages of up to 2 MiB: large matrices make the drop unmistakable.
  constexpr std::size_t tolerance = std::size_t{8} << 20;
  auto dropped = test::record(*make_circuit("mimc", 20, 9, 0));
  const std::size_t dropped_bytes = device_bytes(*dropped);
  REQUIRE(dropped_bytes > 4 * tolerance);
  gpu->prepare_matrices(0, dropped);
  CHECK(gpu->resident_matrices_bytes() == kept_bytes + dropped_bytes);
  CHECK(device_free_bytes() + dropped_bytes <= baseline + tolerance);

  dropped.reset();
  CHECK(gpu->resident_matrices_bytes() == kept_bytes + dropped_bytes);  // until the next prepare or upload
  gpu->prepare_matrices(0, kept);
  check_holds_only(*gpu, *kept);
  CHECK(device_free_bytes() + tolerance >= baseline);
}

TEST_CASE("tasks in flight keep their matrices on the device after every other holder lets go",
          "[cuda][backend][gpu]") {
  auto gpu = gpu_backend();
  const auto other = test::record(test::mixed_terms_circuit(1));
  auto m = test::record(*make_circuit("mimc", 18, 9, 0));
  const std::size_t m_bytes = device_bytes(*m), other_bytes = device_bytes(*other);
  std::vector<std::unique_ptr<test::quotient_from_matrices>> tasks;
  for (std::uint64_t p = 1; p <= 8; ++p)
    tasks.push_back(std::make_unique<test::quotient_from_matrices>(*m, *make_circuit("mimc", 18, 9, p), test_zeta(p)));
  gpu->prepare_matrices(0, m);
  for (std::size_t i = 0; i < tasks.size(); ++i) tasks[i]->enqueue(*gpu, 0, i % 2, m);

  m.reset();  // now only the tasks hold them
  gpu->prepare_matrices(0, other);  // consults the cache while the tasks (most likely) run
  if (gpu->resident_matrices_bytes() != m_bytes + other_bytes)
    WARN("the tasks were done before the cache was consulted: their hold on the matrices went untested");
  for (auto& t : tasks) t->check();

  gpu->prepare_matrices(0, other);
  check_holds_only(*gpu, *other);
}

TEST_CASE("matrices rebuilt for the same circuit are uploaded anew, not taken for the old ones",
          "[cuda][backend][gpu]") {
  auto gpu = gpu_backend();
  auto old = test::record(*make_circuit("mimc", 12, 9, 0));
  const std::size_t bytes = device_bytes(*old);
  gpu->prepare_matrices(0, old);

  const auto rebuilt = test::record(*make_circuit("mimc", 12, 9, 0));
  REQUIRE(rebuilt->circuit_id == old->circuit_id);
  CHECK_FALSE(gpu->matrices_resident(0, *rebuilt));
  gpu->prepare_matrices(0, rebuilt);
  CHECK(gpu->matrices_resident(0, *old));
  CHECK(gpu->matrices_resident(0, *rebuilt));
  CHECK(gpu->resident_matrices_bytes() == 2 * bytes);

  old.reset();
  gpu->prepare_matrices(0, rebuilt);
  check_holds_only(*gpu, *rebuilt);
}

TEST_CASE("another circuit's matrices where dead ones lived compute their own quotient", "[cuda][backend][gpu]") {
  auto gpu = gpu_backend();
  auto dead = test::record(*make_circuit("mimc", 12, 9, 0));
  const void* const dead_address = dead.get();
  gpu->prepare_matrices(0, dead);
  dead.reset();

  // Allocated as the dead ones were, the next matrices often take their address.
  const auto merkle = test::record(*make_circuit("merkle", 12, 9, 0));
  INFO("the new matrices are " << (static_cast<const void*>(merkle.get()) == dead_address ? "at" : "away from")
                               << " the dead ones' address");
  CHECK_FALSE(gpu->matrices_resident(0, *merkle));
  test::quotient_from_matrices q(*merkle, *make_circuit("merkle", 12, 9, 2), test_zeta(2));
  q.enqueue(*gpu, 0, 1, merkle);
  q.check();
  check_holds_only(*gpu, *merkle);
}

TEST_CASE("threads preparing the same matrices at once upload them once", "[cuda][backend][gpu]") {
  auto gpu = gpu_backend();
  const auto m = test::record(*make_circuit("mimc", 18, 9, 0));
  std::vector<std::future<void>> preparing;
  for (int t = 0; t < 4; ++t)
    preparing.push_back(std::async(std::launch::async, [&] { gpu->prepare_matrices(0, m); }));
  for (auto& f : preparing) CHECK_NOTHROW(f.get());
  check_holds_only(*gpu, *m);
}

TEST_CASE("prepare_matrices refuses a device out of range and null matrices, changing nothing",
          "[cuda][backend][gpu]") {
  auto gpu = gpu_backend();
  const auto m = test::record(test::mixed_terms_circuit(1));
  CHECK_THROWS_AS(gpu->prepare_matrices(1, m), std::invalid_argument);
  CHECK_THROWS_AS(gpu->prepare_matrices(0, nullptr), std::invalid_argument);
  CHECK_THROWS_AS(gpu->matrices_resident(1, *m), std::invalid_argument);
  CHECK_FALSE(gpu->matrices_resident(0, *m));
  CHECK(gpu->resident_matrices_bytes() == 0);
}

TEST_CASE("a backend that reads the host's matrices holds none: they count as resident, prepared or not",
          "[prover][backend][cpu]") {
  auto host = make_host_backend(2, 2);
  const auto m = test::record(test::mixed_terms_circuit(1));
  CHECK(host->matrices_resident(1, *m));
  CHECK_NOTHROW(host->prepare_matrices(1, m));
  CHECK(host->matrices_resident(1, *m));
  CHECK(host->resident_matrices_bytes() == 0);
}
