// The prime-order subgroup test of many decoded points at once, on a GPU: the test the decoders
// make point by point on the CPU (field::g1_curve::is_torsion_free, endo(P) = -[x^2]P, and
// g2_curve's, psi(P) = [x]P), one point a thread. A proving key's checked load is almost all
// these tests (a 2^22 MiMC key holds about 16.8 million G1 and 4.2 million G2 points: two minutes
// on 16 cores), which a GPU makes in about a second.
#pragma once

#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>

#include <cstddef>
#include <optional>
#include <span>

namespace coprove::cuda {

/// The index of the first of `points` outside the prime-order subgroup, or nullopt when every
/// one is in it. The points must be on the curve (the decoders check that, and a point off it
/// gives no meaningful answer); the point at infinity is in the subgroup. Runs on `device`, a
/// chunk of points at a time (uploaded, tested, freed), and blocks until done; throws cuda_error
/// on a CUDA failure, std::invalid_argument for a device that does not exist.
std::optional<std::size_t> first_outside_subgroup(std::span<const field::g1_affine> points, int device);
std::optional<std::size_t> first_outside_subgroup(std::span<const field::g2_affine> points, int device);

}  // namespace coprove::cuda
