// The record sizes of a snarkjs zkey (zkey.hpp), shared by its reader and its writer.
#pragma once

#include <coprove/field/g1.hpp>

#include <cstddef>
#include <type_traits>

namespace coprove::groth16::detail {

inline constexpr std::size_t zkey_g1_bytes = 96;   ///< x, y: 48 bytes each, LEM
inline constexpr std::size_t zkey_g2_bytes = 192;  ///< x.c0, x.c1, y.c0, y.c1
/// A coefficient: u32 matrix, u32 constraint, u32 signal, 32-byte value.
inline constexpr std::size_t zkey_coefficient_bytes = 12 + 32;

/// The largest domainSize a zkey may declare: 2^28 rows (H alone is then 24 GiB, and the whole key
/// must fit runtime::input_limits::binary_file_bytes). A smaller domain is still refused unless
/// section 9 holds its domainSize points.
inline constexpr std::size_t max_zkey_domain_size = std::size_t{1} << 28;

template <class Point>
inline constexpr std::size_t zkey_point_bytes = std::is_same_v<Point, field::g1_affine> ? zkey_g1_bytes : zkey_g2_bytes;

}  // namespace coprove::groth16::detail
