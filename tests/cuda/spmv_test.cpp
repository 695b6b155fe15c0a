// The GPU SpMV (A w, B w, C w from a circuit's cached matrices) equals pce_matrices::evaluate bit
// for bit: every kind of term, MiMC and Merkle circuits up to 2^20 rows, zero padding; and the CUDA
// backend, given only the assignment and the matrices, computes the quotient and the values at zeta
// of the host backend given a, b and c.
#include <coprove/cuda/cuda_backend.hpp>
#include <coprove/cuda/device.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/spmv.hpp>
#include <coprove/cuda/stream.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/engine/compute_backend.hpp>
#include <coprove/r1cs/pce.hpp>
#include <coprove/r1cs/synthesis.hpp>

#include <catch2/catch.hpp>

#include "cuda/matrices_test_support.hpp"
#include "pce_test_circuits.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <vector>

namespace {

namespace cuda = coprove::cuda;
namespace test = coprove::test;
using namespace coprove::field;
using namespace coprove::r1cs;
using namespace coprove::engine;

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
  const auto m = test::record(test::mixed_terms_circuit(1));
  for (std::uint64_t seed = 2; seed < 6; ++seed) check_equal_to_cpu(*m, synthesize_witness(test::mixed_terms_circuit(seed)));
}

TEST_CASE("the GPU SpMV equals the CPU's for MiMC and Merkle circuits up to 2^20 rows", "[cuda][spmv][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  for (const char* name : {"mimc", "merkle", "bits"}) {
    for (unsigned log : {10u, 13u, 16u, 20u}) {
      const auto m = test::record(*make_circuit(name, log, 3, 0));
      check_equal_to_cpu(*m, synthesize_witness(*make_circuit(name, log, 3, 1)));
    }
  }
}

TEST_CASE("the CUDA backend given the assignment computes what the host backend computes from a, b, c",
          "[cuda][spmv][engine][gpu]") {
  REQUIRE(cuda::cuda_device_count() > 0);
  auto gpu = cuda::make_cuda_backend({0}, 2);
  for (const char* name : {"mimc", "merkle", "bits"}) {
    for (unsigned log : {12u, 18u}) {
      const auto m = test::record(*make_circuit(name, log, 9, 0));
      test::quotient_from_matrices q(*m, *make_circuit(name, log, 9, 4), fr::from_uint64(0x5eed) * fr::from_uint64(log));
      q.enqueue(*gpu, 0, 1, m);
      q.check();
      CHECK(q.timings().h2d_bytes == q.witness_bytes());
      CHECK(q.timings().spmv_ns > 0);
    }
  }
}
