// The GPU SpMV (A w, B w, C w from a circuit's cached matrices) equals pce_matrices::evaluate bit
// for bit: every kind of term, MiMC and Merkle circuits up to 2^20 rows, zero padding; and the CUDA
// backend, given only the assignment and the matrices, computes the quotient and the values at zeta
// of the host backend given a, b and c.
#include <coprove/cuda/cuda_backend.hpp>
#include <coprove/cuda/device.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/spmv.hpp>
#include <coprove/cuda/stream.hpp>

#include <coprove/prover/circuits.hpp>
#include <coprove/prover/compute_backend.hpp>
#include <coprove/prover/pce.hpp>
#include <coprove/prover/synthesis.hpp>

#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include "pce_test_circuits.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <vector>

namespace {

using namespace coprove;
using namespace coprove::prover;

// Device copies of a vector, freed on scope exit.
struct device_array {
  void* data = nullptr;
  template <class T>
  explicit device_array(const std::vector<T>& v) {
    COPROVE_CUDA_TRY(cudaMalloc(&data, v.size() * sizeof(T) + 1));
    if (!v.empty()) COPROVE_CUDA_TRY(cudaMemcpy(data, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  explicit device_array(std::size_t bytes) { COPROVE_CUDA_TRY(cudaMalloc(&data, bytes)); }
  ~device_array() { cudaFree(data); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
};

// A, B, C times w on the GPU, back on the host.
std::array<std::vector<fr>, 3> spmv_on_gpu(const pce_matrices& m, const std::vector<fr>& w) {
  const csr_matrix* ms[3] = {&m.a, &m.b, &m.c};
  std::vector<std::unique_ptr<device_array>> held;
  cuda::csr_device csr[3];
  for (int k = 0; k < 3; ++k) {
    held.push_back(std::make_unique<device_array>(ms[k]->row_offsets));
    held.push_back(std::make_unique<device_array>(ms[k]->columns));
    held.push_back(std::make_unique<device_array>(ms[k]->coefficients));
    csr[k] = {static_cast<const std::uint32_t*>(held[3 * k]->data), static_cast<const std::uint32_t*>(held[3 * k + 1]->data),
              static_cast<const std::uint32_t*>(held[3 * k + 2]->data)};
  }
  device_array table(m.coefficient_table), witness(w);
  const std::size_t n = m.domain_size;
  device_array a(n * sizeof(fr)), b(n * sizeof(fr)), c(n * sizeof(fr));
  // Padding must be written: fill the outputs with ones first.
  const std::vector<fr> ones(n, fr::one());
  for (auto* d : {&a, &b, &c}) COPROVE_CUDA_TRY(cudaMemcpy(d->data, ones.data(), n * sizeof(fr), cudaMemcpyHostToDevice));
  cuda::stream s(0);
  void* const out[3] = {a.data, b.data, c.data};
  cuda::spmv_abc_async(csr, table.data, witness.data, m.num_rows, n, out, s.get());
  s.synchronize();
  std::array<std::vector<fr>, 3> result;
  void* const from[3] = {a.data, b.data, c.data};
  for (int k = 0; k < 3; ++k) {
    result[k].resize(n);
    COPROVE_CUDA_TRY(cudaMemcpy(result[k].data(), from[k], n * sizeof(fr), cudaMemcpyDeviceToHost));
  }
  return result;
}

// The recorded matrices of a circuit family and one later partition's assignment.
std::shared_ptr<const pce_matrices> record(const circuit& first) {
  auto m = std::make_shared<pce_matrices>();
  std::vector<fr> a(first.domain_size()), b(first.domain_size()), c(first.domain_size());
  synthesize_slow(first, a, b, c, m.get());
  return m;
}

void check_equal_to_cpu(const pce_matrices& m, const std::vector<fr>& w) {
  const std::size_t n = m.domain_size;
  std::vector<fr> a(n), b(n), c(n);
  m.evaluate(w, a, b, c);
  const auto gpu = spmv_on_gpu(m, w);
  CHECK(gpu[0] == a);
  CHECK(gpu[1] == b);
  CHECK(gpu[2] == c);
}

}  // namespace

TEST_CASE("the GPU SpMV equals the CPU's for every kind of term", "[cuda][spmv][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  const auto m = record(test::mixed_terms_circuit(1));
  for (std::uint64_t seed = 2; seed < 6; ++seed) check_equal_to_cpu(*m, synthesize_witness(test::mixed_terms_circuit(seed)));
}

TEST_CASE("the GPU SpMV equals the CPU's for MiMC and Merkle circuits up to 2^20 rows", "[cuda][spmv][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  for (const char* name : {"mimc", "merkle"}) {
    for (unsigned log : {10u, 13u, 16u, 20u}) {
      const auto m = record(*make_circuit(name, log, 3, 0));
      check_equal_to_cpu(*m, synthesize_witness(*make_circuit(name, log, 3, 1)));
    }
  }
}

TEST_CASE("the CUDA backend given the assignment computes what the host backend computes from a, b, c",
          "[cuda][spmv][engine][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  auto gpu = cuda::make_cuda_backend({0}, 2);
  auto host = make_host_backend(1, 2);
  for (const char* name : {"mimc", "merkle"}) {
    for (unsigned log : {12u, 18u}) {
      const auto m = record(*make_circuit(name, log, 9, 0));
      const auto circ = make_circuit(name, log, 9, 4);
      const std::size_t n = circ->domain_size();
      const evaluation_domain domain(n);
      std::vector<fr> w = synthesize_witness(*circ);
      std::vector<fr> a(n), b(n), c(n), h_gpu(n, fr::one()), h_host(n);
      m->evaluate(w, a, b, c);
      const fr zeta = fr::from_uint64(0x5eed) * fr::from_uint64(log);
      evaluation_values v_gpu{}, v_host{};
      quotient_task on_gpu{{}, {}, {}, h_gpu, &domain, zeta, &v_gpu, w, m};
      quotient_task on_host{a, b, c, h_host, &domain, zeta, &v_host};
      gpu_stage_timings t;
      runtime::completion_signal done_gpu, done_host;
      gpu->enqueue_quotient(0, 1, on_gpu, &t, done_gpu);
      host->enqueue_quotient(0, 0, on_host, nullptr, done_host);
      CHECK_NOTHROW(done_gpu.async_wait(boost::asio::use_future).get());
      CHECK_NOTHROW(done_host.async_wait(boost::asio::use_future).get());
      CHECK_FALSE(done_gpu.result());
      CHECK(h_gpu == h_host);
      CHECK(v_gpu == v_host);
      CHECK(t.h2d_bytes == w.size() * sizeof(fr));
      CHECK(t.spmv_ns > 0);
    }
  }
}
