// The subgroup tests of many points on a GPU (see subgroup.hpp): each chunk uploaded and
// reformatted as the MSM's bases are, tested by subgroup_kernels.cu, then freed.
#include <coprove/cuda/subgroup.hpp>

#include <coprove/cuda/detail/subgroup_launch.hpp>
#include <coprove/cuda/device.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/msm.hpp>
#include <coprove/cuda/stream.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace coprove::cuda {
namespace {

constexpr std::size_t chunk = std::size_t{1} << 22;  // points a pass (about 400 MB of G1 on the device)
constexpr unsigned long long none = ~0ull;

template <class Affine, class Launch>
std::optional<std::size_t> first_outside(std::span<const Affine> points, int device, const Launch& launch) {
  if (device < 0 || device >= device_count())
    throw std::invalid_argument("subgroup test: no CUDA device " + std::to_string(device) + " (there are " +
                                std::to_string(device_count()) + ")");
  if (points.empty()) return std::nullopt;
  scoped_device scope(device);
  stream s(device);
  void* allocated = nullptr;
  COPROVE_CUDA_TRY(cudaMalloc(&allocated, sizeof(unsigned long long)));
  auto* first_bad = static_cast<unsigned long long*>(allocated);
  try {
    COPROVE_CUDA_TRY(cudaMemsetAsync(first_bad, 0xff, sizeof *first_bad, s.get()));
    for (std::size_t begin = 0; begin < points.size(); begin += chunk) {
      const std::size_t n = std::min(chunk, points.size() - begin);
      const msm_bases<Affine> bases(points.subspan(begin, n), device);  // uploaded when this returns
      launch(bases.data(), n, begin, first_bad, s.get());
      s.synchronize();  // before the chunk's points are freed
    }
    unsigned long long found = none;
    COPROVE_CUDA_TRY(cudaMemcpy(&found, first_bad, sizeof found, cudaMemcpyDeviceToHost));
    COPROVE_CUDA_TRY(cudaFree(first_bad));
    if (found == none) return std::nullopt;
    return static_cast<std::size_t>(found);
  } catch (...) {
    COPROVE_CUDA_ASSERT_OK(cudaStreamSynchronize(s.get()));
    COPROVE_CUDA_ASSERT_OK(cudaFree(first_bad));
    throw;
  }
}

}  // namespace

std::optional<std::size_t> first_outside_subgroup(std::span<const field::g1_affine> points, int device) {
  const field::fq beta = field::g1_endomorphism_beta();
  return first_outside(points, device,
                       [&](const void* data, std::size_t n, std::size_t begin, unsigned long long* first_bad,
                           cudaStream_t stream) {
                         detail::launch_g1_subgroup_test(data, n, begin, &beta, first_bad, stream);
                       });
}

std::optional<std::size_t> first_outside_subgroup(std::span<const field::g2_affine> points, int device) {
  // psi's coefficients from the CPU's psi of the generator: psi(G) = (conj(Gx) cx, conj(Gy) cy).
  const field::g2_affine g = field::g2_affine::generator();
  const field::g2_affine psi_g = field::g2_endomorphism(g);
  const field::fq2 cx = psi_g.x * g.x.conjugate().inverse();
  const field::fq2 cy = psi_g.y * g.y.conjugate().inverse();
  return first_outside(points, device,
                       [&](const void* data, std::size_t n, std::size_t begin, unsigned long long* first_bad,
                           cudaStream_t stream) {
                         detail::launch_g2_subgroup_test(data, n, begin, &cx, &cy, first_bad, stream);
                       });
}

}  // namespace coprove::cuda
