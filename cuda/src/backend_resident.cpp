// The CUDA backend's resident store (backend_resident.hpp): uploads of matrices and keys, and the
// settling of the copies of a key's points.
#include "backend_resident.hpp"

#include <coprove/cuda/device.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/engine/memory_plan.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace coprove::cuda::detail {

namespace {

// The host arrays of a circuit's matrices in the order they live on a device: offsets, columns,
// coefficients of A, B, C; then the coefficient table.
std::array<std::span<const std::byte>, 10> matrices_arrays(const r1cs::pce_matrices& m) {
  std::array<std::span<const std::byte>, 10> parts;
  std::size_t i = 0;
  for (const r1cs::csr_matrix* x : {&m.a, &m.b, &m.c})
    for (const std::vector<std::uint32_t>* part : {&x->row_offsets, &x->columns, &x->coefficients})
      parts[i++] = std::as_bytes(std::span(*part));
  parts[9] = std::as_bytes(std::span(m.coefficient_table));
  return parts;
}

void* upload_array(std::span<const std::byte> from) {
  void* to = nullptr;
  COPROVE_CUDA_TRY(cudaMalloc(&to, from.empty() ? 1 : from.size()));
  if (!from.empty()) COPROVE_CUDA_TRY(cudaMemcpy(to, from.data(), from.size(), cudaMemcpyHostToDevice));
  return to;
}

}  // namespace

device_pce::device_pce(const r1cs::pce_matrices& m, int dev) : circuit_id(m.circuit_id), device(dev) {
  const auto parts = matrices_arrays(m);
  for (const auto& part : parts) bytes += part.size();
  try {
    for (std::size_t i = 0; i < parts.size(); ++i) arrays[i] = upload_array(parts[i]);
  } catch (const cuda_error& e) {
    release();
    if (e.status() != cudaErrorMemoryAllocation) throw;
    throw cuda_error(cudaErrorMemoryAllocation, "cuda backend: device " + std::to_string(dev) +
                                                    " has no room for the matrices of " + circuit_id + " (" +
                                                    std::to_string(bytes) + " bytes): " + e.what());
  } catch (...) {
    release();
    throw;
  }
  for (int k = 0; k < 3; ++k)
    csr[k] = csr_device{static_cast<const std::uint32_t*>(arrays[3 * k]),
                        static_cast<const std::uint32_t*>(arrays[3 * k + 1]),
                        static_cast<const std::uint32_t*>(arrays[3 * k + 2])};
}

void device_pce::release() noexcept {
  scoped_device on(device);
  for (void*& p : arrays) {
    if (p != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFree(p));
    p = nullptr;
  }
}

template <class Affine>
msm_bases<Affine> device_key::upload(std::span<const Affine> points) const {
  try {
    return msm_bases<Affine>(points, device, precompute);
  } catch (const cuda_error& e) {
    if (e.status() != cudaErrorMemoryAllocation) throw;
    throw cuda_error(cudaErrorMemoryAllocation, "cuda backend: device " + std::to_string(device) +
                                                    " has no room for the proving key of " + circuit_id + " (" +
                                                    std::to_string(bytes) + " bytes): " + e.what());
  }
}

device_key::device_key(const groth16::proving_key& k, std::string circuit, int dev, const msm_precompute& copies)
    : circuit_id(std::move(circuit)),
      bytes(engine::device_key_bytes(k) * copies.copies),
      device(dev),
      precompute(copies),
      a(upload<field::g1_affine>(k.a)),
      b_g1(upload<field::g1_affine>(k.b_g1)),
      l(upload<field::g1_affine>(k.l)),
      h(upload<field::g1_affine>(k.h)),
      b_g2(upload<field::g2_affine>(k.b_g2)),
      msm_bytes(msm_proof_workspace_bytes(k.h.size(), k.num_variables(), k.num_aux(), copies)) {
  // The workspace is sized for the plans the runs make over these bases; a query whose bases kept
  // another width than that sizing planned would run out of its arena.
  const msm_proof_plans plans = plan_proof_msms(k.h.size(), k.num_variables(), k.num_aux(), copies);
  const auto same = [](const auto& bases, const msm_plan& plan) {
    return bases.copies() == plan.copies && (plan.copies == 1 || bases.window_bits() == plan.window_bits);
  };
  if (!same(h, plans.h) || !same(a, plans.a) || !same(b_g1, plans.b_g1) || !same(b_g2, plans.b_g2) ||
      !same(l, plans.l))
    throw std::logic_error("cuda backend: the proving key of " + circuit_id +
                           " keeps bases of other widths than its MSM workspace was sized for");
}

std::string counts_text(const std::vector<std::size_t>& counts) {
  std::string out;
  for (std::size_t i = 0; i < counts.size(); ++i)
    out += (i == 0 ? "" : i + 1 == counts.size() ? " or " : ", ") + std::to_string(counts[i]);
  return out;
}

const device_pce& resident_store::matrices(std::size_t device, const std::shared_ptr<const r1cs::pce_matrices>& m,
                                           bool enqueuing) {
  return matrices_.get(device, m, enqueuing, [&] {
    scoped_device on(devices_[device]);
    return std::make_unique<device_pce>(*m, devices_[device]);
  });
}

const device_key& resident_store::key(std::size_t device, const std::shared_ptr<const groth16::proving_key>& k,
                                      std::string_view circuit, bool enqueuing) {
  return keys_.get(device, k, enqueuing, [&] {
    keys_made_.store(true);
    scoped_device on(devices_[device]);
    return std::make_unique<device_key>(*k, std::string(circuit), devices_[device],
                                        msm_precompute{window_bits_, copies_.load()});
  });
}

void resident_store::settle_copies(std::size_t copies) {
  if (copies != 1 && std::find(wanted_copies_.begin(), wanted_copies_.end(), copies) == wanted_copies_.end())
    throw std::logic_error("cuda backend: copies of a key's points settle at 1 or " + counts_text(wanted_copies_) +
                           ", not " + std::to_string(copies));
  if (keys_made_.load())
    throw std::logic_error("cuda backend: the copies of a key's points settle before the first key is made resident");
  copies_.store(static_cast<unsigned>(copies));
}

}  // namespace coprove::cuda::detail
