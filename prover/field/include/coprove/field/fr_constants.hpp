// Constants of the BLS12-381 scalar field Fr, r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfe
// ffffffff00000001, as plain arrays of four little-endian 64-bit limbs. The one copy of these
// numbers: Fr on the CPU (fr.hpp) and the CUDA kernels (cuda/fr_device.cuh) both read them, so the
// header stays free of the standard library beyond <cstdint> and compiles as C++17 under nvcc.
#pragma once

#include <cstdint>

namespace coprove::field::constants {

/// r, the group order of BLS12-381.
inline constexpr std::uint64_t fr_modulus[4] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL,
                                                0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};
/// R = 2^256 mod r: the Montgomery form of one.
inline constexpr std::uint64_t fr_r[4] = {0x00000001fffffffeULL, 0x5884b7fa00034802ULL,
                                          0x998c4fefecbc4ff5ULL, 0x1824b159acc5056fULL};
/// R^2 mod r: converts a canonical value into Montgomery form with one multiplication.
inline constexpr std::uint64_t fr_r2[4] = {0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL,
                                           0x05d314967254398fULL, 0x0748d9d99f59ff11ULL};
/// -r^-1 mod 2^64 (its low 32 bits are -r^-1 mod 2^32).
inline constexpr std::uint64_t fr_inv = 0xfffffffeffffffffULL;

}  // namespace coprove::field::constants
