// A Groth16 proof (A in G1, B in G2, C in G1) and its forms: bellman's 192 bytes (A, B, C
// compressed, zcash encoding) and snarkjs's proof.json / public.json (decimal strings; Fq2 as
// [c0, c1]; public inputs without the leading one, in the circuit's input order).
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::groth16 {

struct proof {
  field::g1_affine a;
  field::g2_affine b;
  field::g1_affine c;

  friend bool operator==(const proof&, const proof&) = default;
};

/// A proof encoding that cannot be decoded: what() names the part (A, B, C) and the reason.
class proof_format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr std::size_t proof_bytes = 192;

/// A ‖ B ‖ C compressed (48 + 96 + 48 bytes).
std::array<std::uint8_t, proof_bytes> encode_proof(const proof& p);
/// Decodes and checks the 192 bytes (each point canonical, on the curve, in the subgroup, and not
/// the identity, as bellman's Proof::read requires); throws proof_format_error.
proof decode_proof(std::span<const std::uint8_t> bytes);

/// The 192 bytes as 384 lower-case hex digits (the form reports and HTTP results carry).
std::string encode_proof_hex(const proof& p);
/// The proof of 384 hex digits (either case), checked as decode_proof does; throws
/// proof_format_error naming a wrong length or a non-hex digit.
proof decode_proof_hex(std::string_view hex);

/// {"pi_a", "pi_b", "pi_c", "protocol": "groth16", "curve": "bls12381"}.
boost::json::object proof_to_snarkjs_json(const proof& p);
/// The proof of a proof.json object, checked as decode_proof does; throws proof_format_error.
proof proof_from_snarkjs_json(const boost::json::value& v);
/// public.json: the decimal strings of the public inputs (without the constant one).
boost::json::array public_inputs_to_snarkjs_json(std::span<const field::fr> inputs);
/// The inputs of a public.json array; throws proof_format_error on a non-decimal or >= r entry.
std::vector<field::fr> public_inputs_from_snarkjs_json(const boost::json::value& v);

}  // namespace coprove::groth16
