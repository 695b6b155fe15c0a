// Point encodings: the zcash/bellman/blst byte forms of G1 and G2 (proofs, verifying keys and
// parameter files are made of them) and the decimal-string JSON form that snarkjs writes in
// proof.json and verification_key.json.
//
// Bytes (zcash serialization notes, zkcrypto/bls12_381 src/notes/serialization.rs): coordinates
// big-endian, 48 bytes each; Fq2 c0 + c1 u written c1 then c0; G1 48 bytes compressed (x) or 96
// uncompressed (x, y), G2 96 or 192. The top three bits of byte 0 are flags: 0x80 compressed,
// 0x40 the identity (every other bit zero), 0x20 (compressed only) y is the lexicographically
// larger of the two roots.
//
// JSON (snarkjs, ffjavascript toObject): G1 ["x", "y", "1"], G2 [["x.c0", "x.c1"], ["y.c0", "y.c1"],
// ["1", "0"]], decimal strings, Fq2 as [c0, c1]; the identity is ["0", "1", "0"] and
// [["0", "0"], ["1", "0"], ["0", "0"]].
//
// LEM (ffjavascript's toRprLEM, the points of a snarkjs .zkey): each coordinate 48 bytes
// little-endian in Montgomery form (x * 2^384 mod p, which is field::fq's own limb form); G1 x ‖ y
// (96 bytes), G2 x.c0 ‖ x.c1 ‖ y.c0 ‖ y.c1 (192 bytes); the identity all zero bytes.
//
// Errors: decoders do not throw for bad input. They return a decode_result whose `error` is a
// std::error_code of category decode_category(), one decode_error value per failed check, in the
// order the checks run (length, flags, canonical coordinates, curve, subgroup).
#pragma once

#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>

#include <boost/json/value.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <system_error>
#include <type_traits>

namespace coprove::field {

/// Why a decoder refused its input.
enum class decode_error {
  wrong_length = 1,           ///< not the byte count of the form asked for (or of either form)
  compression_flag_mismatch,  ///< the compression bit disagrees with the form being decoded
  sign_flag_not_allowed,      ///< the sign bit set on an uncompressed encoding or on the identity
  infinity_not_canonical,     ///< the identity flag set but some other bit is not zero
  coordinate_not_canonical,   ///< a coordinate (or Fq2 part) is not below p
  not_on_curve,               ///< the point is not on the curve (compressed: x^3 + b has no root)
  not_in_subgroup,            ///< on the curve but outside the prime-order subgroup
  json_malformed,             ///< not the JSON shape described above, or not a decimal string
  json_not_affine,            ///< the third coordinate is neither "1" (affine) nor the identity form
};

/// The category of decode_error codes ("coprove.encoding").
const std::error_category& decode_category() noexcept;

/// A std::error_code for a decode_error.
inline std::error_code make_error_code(decode_error e) noexcept {
  return {static_cast<int>(e), decode_category()};
}

/// A decoded point, or the reason there is none.
template <class Point>
struct decode_result {
  Point point{};          ///< the point; the identity when error is set
  std::error_code error;  ///< empty on success, else a decode_error

  bool ok() const noexcept { return !error; }
};

/// Whether a decoder also checks subgroup membership (on by default; off only for trusted input
/// such as a parameter file checked once already).
enum class subgroup_check { check, skip };

/// G1, 48 bytes.
std::array<std::uint8_t, 48> encode_compressed(const g1_affine& p);
/// G1, 96 bytes.
std::array<std::uint8_t, 96> encode_uncompressed(const g1_affine& p);
/// G2, 96 bytes.
std::array<std::uint8_t, 96> encode_compressed(const g2_affine& p);
/// G2, 192 bytes.
std::array<std::uint8_t, 192> encode_uncompressed(const g2_affine& p);

/// A compressed G1 encoding (48 bytes, compression bit set).
decode_result<g1_affine> decode_g1_compressed(std::span<const std::uint8_t> bytes,
                                              subgroup_check check = subgroup_check::check);
/// An uncompressed G1 encoding (96 bytes, compression bit clear).
decode_result<g1_affine> decode_g1_uncompressed(std::span<const std::uint8_t> bytes,
                                                subgroup_check check = subgroup_check::check);
/// Either G1 form, chosen by the compression bit (the length must match it).
decode_result<g1_affine> decode_g1(std::span<const std::uint8_t> bytes, subgroup_check check = subgroup_check::check);
/// A compressed G2 encoding (96 bytes, compression bit set).
decode_result<g2_affine> decode_g2_compressed(std::span<const std::uint8_t> bytes,
                                              subgroup_check check = subgroup_check::check);
/// An uncompressed G2 encoding (192 bytes, compression bit clear).
decode_result<g2_affine> decode_g2_uncompressed(std::span<const std::uint8_t> bytes,
                                                subgroup_check check = subgroup_check::check);
/// Either G2 form, chosen by the compression bit (the length must match it).
decode_result<g2_affine> decode_g2(std::span<const std::uint8_t> bytes, subgroup_check check = subgroup_check::check);

/// G1 in LEM form, 96 bytes.
std::array<std::uint8_t, 96> encode_lem(const g1_affine& p);
/// G2 in LEM form, 192 bytes.
std::array<std::uint8_t, 192> encode_lem(const g2_affine& p);
/// A G1 point in LEM form (96 bytes): all zeros is the identity; otherwise each coordinate below
/// p, on the curve and (unless skipped) in the subgroup.
decode_result<g1_affine> decode_g1_lem(std::span<const std::uint8_t> bytes, subgroup_check check = subgroup_check::check);
/// A G2 point in LEM form (192 bytes), with the same checks.
decode_result<g2_affine> decode_g2_lem(std::span<const std::uint8_t> bytes, subgroup_check check = subgroup_check::check);

/// The snarkjs JSON form of a G1 point.
boost::json::value to_snarkjs_json(const g1_affine& p);
/// The snarkjs JSON form of a G2 point.
boost::json::value to_snarkjs_json(const g2_affine& p);
/// A G1 point from its snarkjs JSON form, with the same checks as the byte decoders.
decode_result<g1_affine> g1_from_snarkjs_json(const boost::json::value& v, subgroup_check check = subgroup_check::check);
/// A G2 point from its snarkjs JSON form, with the same checks as the byte decoders.
decode_result<g2_affine> g2_from_snarkjs_json(const boost::json::value& v, subgroup_check check = subgroup_check::check);

}  // namespace coprove::field

template <>
struct std::is_error_code_enum<coprove::field::decode_error> : std::true_type {};
