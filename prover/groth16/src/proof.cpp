// The proof's byte and JSON forms (see proof.hpp), on the field layer's point encodings.
#include <coprove/groth16/proof.hpp>

#include <coprove/field/encoding.hpp>
#include <coprove/field/sha256.hpp>
#include <coprove/field/scalar.hpp>

#include <boost/json.hpp>

#include <algorithm>

namespace coprove::groth16 {

namespace {

template <class Point>
Point checked(const field::decode_result<Point>& r, const char* part) {
  if (!r.ok()) throw proof_format_error(std::string("proof ") + part + ": " + r.error.message());
  if (r.point.is_identity()) throw proof_format_error(std::string("proof ") + part + ": the point at infinity");
  return r.point;
}

}  // namespace

std::array<std::uint8_t, proof_bytes> encode_proof(const proof& p) {
  std::array<std::uint8_t, proof_bytes> out;
  const auto a = field::encode_compressed(p.a);
  const auto b = field::encode_compressed(p.b);
  const auto c = field::encode_compressed(p.c);
  std::copy(a.begin(), a.end(), out.begin());
  std::copy(b.begin(), b.end(), out.begin() + 48);
  std::copy(c.begin(), c.end(), out.begin() + 144);
  return out;
}

proof decode_proof(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != proof_bytes)
    throw proof_format_error("proof: " + std::to_string(bytes.size()) + " bytes, a proof has " +
                             std::to_string(proof_bytes));
  proof p;
  p.a = checked(field::decode_g1_compressed(bytes.subspan(0, 48)), "A");
  p.b = checked(field::decode_g2_compressed(bytes.subspan(48, 96)), "B");
  p.c = checked(field::decode_g1_compressed(bytes.subspan(144, 48)), "C");
  return p;
}

std::string encode_proof_hex(const proof& p) {
  const auto bytes = encode_proof(p);
  return field::to_hex(std::as_bytes(std::span(bytes)));
}

proof decode_proof_hex(std::string_view hex) {
  if (hex.size() != 2 * proof_bytes)
    throw proof_format_error("proof: " + std::to_string(hex.size()) + " hex digits, a proof has " +
                             std::to_string(2 * proof_bytes));
  const auto nibble = [&](std::size_t i) -> std::uint8_t {
    const char ch = hex[i];
    if (ch >= '0' && ch <= '9') return static_cast<std::uint8_t>(ch - '0');
    if (ch >= 'a' && ch <= 'f') return static_cast<std::uint8_t>(ch - 'a' + 10);
    if (ch >= 'A' && ch <= 'F') return static_cast<std::uint8_t>(ch - 'A' + 10);
    throw proof_format_error("proof: character " + std::to_string(i) + " is not a hex digit");
  };
  std::array<std::uint8_t, proof_bytes> bytes{};
  for (std::size_t i = 0; i < proof_bytes; ++i)
    bytes[i] = static_cast<std::uint8_t>(nibble(2 * i) << 4 | nibble(2 * i + 1));
  return decode_proof(bytes);
}

boost::json::object proof_to_snarkjs_json(const proof& p) {
  boost::json::object out;
  out["pi_a"] = field::to_snarkjs_json(p.a);
  out["pi_b"] = field::to_snarkjs_json(p.b);
  out["pi_c"] = field::to_snarkjs_json(p.c);
  out["protocol"] = "groth16";
  out["curve"] = "bls12381";
  return out;
}

proof proof_from_snarkjs_json(const boost::json::value& v) {
  if (!v.is_object()) throw proof_format_error("proof.json: not an object");
  const auto& o = v.as_object();
  const auto part = [&](const char* key) -> const boost::json::value& {
    const auto* p = o.if_contains(key);
    if (p == nullptr) throw proof_format_error(std::string("proof.json: ") + key + " is missing");
    return *p;
  };
  proof p;
  p.a = checked(field::g1_from_snarkjs_json(part("pi_a")), "pi_a");
  p.b = checked(field::g2_from_snarkjs_json(part("pi_b")), "pi_b");
  p.c = checked(field::g1_from_snarkjs_json(part("pi_c")), "pi_c");
  return p;
}

boost::json::array public_inputs_to_snarkjs_json(std::span<const field::fr> inputs) {
  boost::json::array out;
  for (const auto& x : inputs) out.push_back(boost::json::string(field::scalar_to_decimal(x.to_canonical())));
  return out;
}

std::vector<field::fr> public_inputs_from_snarkjs_json(const boost::json::value& v) {
  if (!v.is_array()) throw proof_format_error("public.json: not an array");
  std::vector<field::fr> out;
  for (std::size_t i = 0; i < v.as_array().size(); ++i) {
    const auto& e = v.as_array()[i];
    std::optional<field::scalar_limbs> s;
    if (e.is_string()) {
      const std::string_view text = e.as_string();
      if (!text.empty() && std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
        s = field::parse_scalar(text);
    }
    if (!s) throw proof_format_error("public.json: input " + std::to_string(i) + " is not a decimal string below r");
    out.push_back(field::fr::from_canonical(*s));
  }
  return out;
}

}  // namespace coprove::groth16
