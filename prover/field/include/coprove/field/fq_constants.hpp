// Constants of the BLS12-381 base field Fq, p = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf
// 6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab, as plain arrays of six little-endian 64-bit
// limbs. Kept apart from the arithmetic and free of the standard library beyond <cstdint> so that
// CUDA code can include the same numbers. Montgomery form uses R = 2^384 mod p.
#pragma once

#include <cstdint>

namespace coprove::field::constants {

/// p, the base-field modulus.
inline constexpr std::uint64_t fq_modulus[6] = {
    0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
    0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
/// R = 2^384 mod p: the Montgomery form of one.
inline constexpr std::uint64_t fq_r[6] = {
    0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
    0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL};
/// R^2 mod p: one multiplication by it takes a canonical value into Montgomery form.
inline constexpr std::uint64_t fq_r2[6] = {
    0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL, 0x8de5476c4c95b6d5ULL,
    0x67eb88a9939d83c0ULL, 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL};
/// -p^-1 mod 2^64, the Montgomery reduction factor.
inline constexpr std::uint64_t fq_inv = 0x89f3fffcfffcfffdULL;
/// p - 2: the Fermat exponent of the inverse.
inline constexpr std::uint64_t fq_p_minus_2[6] = {
    0xb9feffffffffaaa9ULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
    0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
/// (p + 1) / 4: p = 3 mod 4, so a^((p+1)/4) is a square root of a square a.
inline constexpr std::uint64_t fq_p_plus_1_div_4[6] = {
    0xee7fbfffffffeaabULL, 0x07aaffffac54ffffULL, 0xd9cc34a83dac3d89ULL,
    0xd91dd2e13ce144afULL, 0x92c6e9ed90d2eb35ULL, 0x0680447a8e5ff9a6ULL};
/// (p - 1) / 2: the Legendre exponent, and the bound of the zcash "largest" sign rule.
inline constexpr std::uint64_t fq_p_minus_1_div_2[6] = {
    0xdcff7fffffffd555ULL, 0x0f55ffff58a9ffffULL, 0xb39869507b587b12ULL,
    0xb23ba5c279c2895fULL, 0x258dd3db21a5d66bULL, 0x0d0088f51cbff34dULL};
/// (p - 3) / 4: the exponent of the Fq2 square root (Algorithm 9 of Adj and Rodriguez-Henriquez).
inline constexpr std::uint64_t fq_p_minus_3_div_4[6] = {
    0xee7fbfffffffeaaaULL, 0x07aaffffac54ffffULL, 0xd9cc34a83dac3d89ULL,
    0xd91dd2e13ce144afULL, 0x92c6e9ed90d2eb35ULL, 0x0680447a8e5ff9a6ULL};

/// |x| for the BLS parameter x = -0xd201000000010000 (the curve is built from x; x is negative).
inline constexpr std::uint64_t bls_x_abs = 0xd201000000010000ULL;
/// Whether x is negative (it is for BLS12-381: the Miller loop result is conjugated).
inline constexpr bool bls_x_is_negative = true;

}  // namespace coprove::field::constants
