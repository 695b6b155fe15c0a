// The GPU evaluation at zeta against the CPU functions of prover/evaluation.hpp, bit for bit:
// random polynomials from 2^1 to 2^22 points, zeta off and on the domain, one to three
// polynomials at once, and the argument checks.
#include <coprove/cuda/evaluation.hpp>

#include <coprove/cuda/error.hpp>
#include <coprove/cuda/stream.hpp>
#include <coprove/field/domain.hpp>
#include <coprove/field/evaluation.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/field/parallel.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {

namespace cuda = coprove::cuda;
namespace field = coprove::field;
using field::fr;

/// n random elements, filled in parallel (deterministic for a seed).
std::vector<fr> random_elements(std::size_t n, std::uint64_t seed) {
  std::vector<fr> out(n);
  constexpr std::size_t chunk = 1 << 14;
  field::parallel_for(0, (n + chunk - 1) / chunk, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t k = lo; k < hi; ++k) {
      std::mt19937_64 gen(seed * 1000003 + k);
      for (std::size_t i = k * chunk; i < std::min(n, (k + 1) * chunk); ++i) out[i] = fr::random(gen);
    }
  });
  return out;
}

/// A device array of fr, freed on scope exit.
struct device_array {
  fr* data = nullptr;
  explicit device_array(std::size_t n) { COPROVE_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(fr))); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() { COPROVE_CUDA_ASSERT_OK(cudaFree(data)); }
};

/// Up to three polynomials (evaluations over the domain) and one coefficient vector on the device.
struct device_inputs {
  std::size_t n;
  device_array a, b, c, h, out, scratch;
  device_inputs(const std::vector<fr>& ha, const std::vector<fr>& hb, const std::vector<fr>& hc,
                const std::vector<fr>& hh, unsigned log_n)
      : n(ha.size()), a(n), b(n), c(n), h(n), out(4),
        scratch((cuda::evaluation_scratch_bytes(log_n) + sizeof(fr) - 1) / sizeof(fr)) {
    const std::pair<fr*, const std::vector<fr>*> copies[] = {{a.data, &ha}, {b.data, &hb}, {c.data, &hc}, {h.data, &hh}};
    for (const auto& [dst, src] : copies)
      COPROVE_CUDA_TRY(cudaMemcpy(dst, src->data(), n * sizeof(fr), cudaMemcpyHostToDevice));
    // The copies ran on the legacy stream, which the evaluation's non-blocking stream does not wait for.
    COPROVE_CUDA_TRY(cudaDeviceSynchronize());
  }
};

/// a, b, c at zeta (Lagrange) and h at zeta (Horner) on the GPU, read back.
std::array<fr, 4> evaluate_on_gpu(device_inputs& in, const field::evaluation_domain& domain, const fr& zeta,
                                  cudaStream_t stream) {
  const void* const polys[] = {in.a.data, in.b.data, in.c.data};
  cuda::evaluate_lagrange_async(polys, 3, domain.log_size(), cuda::to_field_words(domain.omega()),
                                cuda::to_field_words(domain.size_inv()), cuda::to_field_words(zeta), in.out.data,
                                in.scratch.data, stream);
  cuda::evaluate_coefficients_async(in.h.data, domain.log_size(), cuda::to_field_words(zeta), in.out.data + 3,
                                    in.scratch.data, stream);
  std::array<fr, 4> values;
  COPROVE_CUDA_TRY(cudaMemcpyAsync(values.data(), in.out.data, sizeof values, cudaMemcpyDeviceToHost, stream));
  COPROVE_CUDA_TRY(cudaStreamSynchronize(stream));
  return values;
}

std::array<fr, 4> evaluate_on_cpu(const std::vector<fr>& a, const std::vector<fr>& b, const std::vector<fr>& c,
                                  const std::vector<fr>& h, const field::evaluation_domain& domain, const fr& zeta) {
  const auto r = field::make_evaluation_record(a, b, c, h, domain, zeta);
  return {r.a, r.b, r.c, r.h};
}

}  // namespace

TEST_CASE("the GPU evaluation at zeta equals the CPU's bit for bit from 2^1 to 2^22 points",
          "[cuda][evaluation][gpu]") {
  cuda::stream s(0);
  std::mt19937_64 gen(5);
  for (unsigned log_n = 1; log_n <= 22; ++log_n) {
    INFO("log_n " << log_n);
    const field::evaluation_domain domain(std::size_t{1} << log_n);
    const std::size_t n = domain.size();
    const auto a = random_elements(n, 4 * log_n), b = random_elements(n, 4 * log_n + 1),
               c = random_elements(n, 4 * log_n + 2), h = random_elements(n, 4 * log_n + 3);
    device_inputs in(a, b, c, h, log_n);
    for (int round = 0; round < 2; ++round) {
      const fr zeta = fr::random(gen);
      CHECK(evaluate_on_gpu(in, domain, zeta, s.get()) == evaluate_on_cpu(a, b, c, h, domain, zeta));
    }
  }
}

TEST_CASE("a zeta on the domain gives the entries at its index on the GPU as on the CPU",
          "[cuda][evaluation][gpu]") {
  cuda::stream s(0);
  std::mt19937_64 gen(9);
  for (unsigned log_n : {1u, 5u, 10u, 17u, 22u}) {
    INFO("log_n " << log_n);
    const field::evaluation_domain domain(std::size_t{1} << log_n);
    const std::size_t n = domain.size();
    const auto a = random_elements(n, 7 * log_n), b = random_elements(n, 7 * log_n + 1),
               c = random_elements(n, 7 * log_n + 2), h = random_elements(n, 7 * log_n + 3);
    device_inputs in(a, b, c, h, log_n);
    for (std::size_t i : {std::size_t{0}, std::size_t{1}, n / 2 + 1, n - 1, std::size_t(gen() % n)}) {
      INFO("index " << i);
      i %= n;
      const fr zeta = domain.omega().pow(static_cast<std::uint64_t>(i));
      const auto on_gpu = evaluate_on_gpu(in, domain, zeta, s.get());
      CHECK(on_gpu == evaluate_on_cpu(a, b, c, h, domain, zeta));
      CHECK(on_gpu[0] == a[i]);
      CHECK(on_gpu[1] == b[i]);
      CHECK(on_gpu[2] == c[i]);
    }
    // Off the domain again right after: the in-domain mark of the previous call is cleared.
    const fr zeta = fr::random(gen);
    CHECK(evaluate_on_gpu(in, domain, zeta, s.get()) == evaluate_on_cpu(a, b, c, h, domain, zeta));
  }
}

TEST_CASE("the GPU evaluates one or two polynomials as it does three", "[cuda][evaluation][gpu]") {
  cuda::stream s(0);
  std::mt19937_64 gen(13);
  const unsigned log_n = 12;
  const field::evaluation_domain domain(std::size_t{1} << log_n);
  const auto a = random_elements(domain.size(), 1), b = random_elements(domain.size(), 2);
  device_inputs in(a, b, a, b, log_n);
  const fr zeta = fr::random(gen);
  for (unsigned count : {1u, 2u}) {
    const void* const polys[] = {in.a.data, in.b.data};
    cuda::evaluate_lagrange_async(polys, count, log_n, cuda::to_field_words(domain.omega()),
                                  cuda::to_field_words(domain.size_inv()), cuda::to_field_words(zeta), in.out.data,
                                  in.scratch.data, s.get());
    std::array<fr, 2> values{fr::zero(), fr::zero()};
    COPROVE_CUDA_TRY(cudaMemcpyAsync(values.data(), in.out.data, count * sizeof(fr), cudaMemcpyDeviceToHost, s.get()));
    COPROVE_CUDA_TRY(cudaStreamSynchronize(s.get()));
    CHECK(values[0] == field::evaluate_lagrange(a, domain, zeta));
    if (count == 2) CHECK(values[1] == field::evaluate_lagrange(b, domain, zeta));
  }
}

TEST_CASE("the GPU evaluation refuses bad arguments", "[cuda][evaluation][gpu]") {
  cuda::stream s(0);
  device_array buffer(1024);
  const void* const polys[] = {buffer.data, buffer.data, buffer.data, buffer.data};
  const cuda::field_words w{};
  CHECK_THROWS_AS(cuda::evaluate_lagrange_async(polys, 0, 4, w, w, w, buffer.data, buffer.data, s.get()),
                  std::invalid_argument);
  CHECK_THROWS_AS(cuda::evaluate_lagrange_async(polys, 4, 4, w, w, w, buffer.data, buffer.data, s.get()),
                  std::invalid_argument);
  CHECK_THROWS_AS(cuda::evaluate_lagrange_async(polys, 3, 31, w, w, w, buffer.data, buffer.data, s.get()),
                  std::invalid_argument);
  CHECK_THROWS_AS(cuda::evaluate_lagrange_async(polys, 3, 4, w, w, w, nullptr, buffer.data, s.get()),
                  std::invalid_argument);
  CHECK_THROWS_AS(cuda::evaluate_coefficients_async(nullptr, 4, w, buffer.data, buffer.data, s.get()),
                  std::invalid_argument);
  CHECK_THROWS_AS(cuda::evaluate_coefficients_async(buffer.data, 4, w, buffer.data, nullptr, s.get()),
                  std::invalid_argument);
}
