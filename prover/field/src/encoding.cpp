// The zcash byte encodings and the snarkjs JSON form of G1 and G2 points. One template does each
// job for both groups; the only differences, the field's byte layout and its decimal form, are in
// field_codec.
#include <coprove/field/encoding.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <string>

namespace coprove::field {

namespace {

class decode_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "coprove.encoding"; }
  std::string message(int value) const override {
    switch (static_cast<decode_error>(value)) {
      case decode_error::wrong_length: return "encoding has the wrong length";
      case decode_error::compression_flag_mismatch: return "compression flag does not match the encoding";
      case decode_error::sign_flag_not_allowed: return "sign flag set on an uncompressed or identity encoding";
      case decode_error::infinity_not_canonical: return "identity flag set with other bits non-zero";
      case decode_error::coordinate_not_canonical: return "coordinate not below the field modulus";
      case decode_error::not_on_curve: return "point not on the curve";
      case decode_error::not_in_subgroup: return "point not in the prime-order subgroup";
      case decode_error::json_malformed: return "JSON point malformed";
      case decode_error::json_not_affine: return "JSON point neither affine (z = 1) nor the identity";
    }
    return "unknown decode error";
  }
};

constexpr std::uint8_t flag_compressed = 0x80;
constexpr std::uint8_t flag_infinity = 0x40;
constexpr std::uint8_t flag_sign = 0x20;
constexpr std::uint8_t flag_mask = flag_compressed | flag_infinity | flag_sign;

template <class Field>
struct field_codec;

template <>
struct field_codec<fq> {
  static constexpr std::size_t size = 48;
  static void write(const fq& v, std::uint8_t* out) { v.to_bytes_be(std::span<std::uint8_t, 48>(out, 48)); }
  static std::optional<fq> read(const std::uint8_t* in) {
    return fq::from_bytes_be(std::span<const std::uint8_t, 48>(in, 48));
  }
};

template <>
struct field_codec<fq2> {
  static constexpr std::size_t size = 96;
  // c1 first, then c0.
  static void write(const fq2& v, std::uint8_t* out) {
    field_codec<fq>::write(v.c1, out);
    field_codec<fq>::write(v.c0, out + 48);
  }
  static std::optional<fq2> read(const std::uint8_t* in) {
    const auto c1 = field_codec<fq>::read(in);
    const auto c0 = field_codec<fq>::read(in + 48);
    if (!c0 || !c1) return std::nullopt;
    return fq2{*c0, *c1};
  }
};

/// ffjavascript's LEM form: fq's Montgomery limbs, 48 bytes little-endian; Fq2 c0 then c1.
template <class Field>
struct lem_codec;

template <>
struct lem_codec<fq> {
  static constexpr std::size_t size = 48;
  static void write(const fq& v, std::uint8_t* out) {
    for (std::size_t i = 0; i < 48; ++i) out[i] = static_cast<std::uint8_t>(v.limbs[i / 8] >> (8 * (i % 8)));
  }
  /// nullopt when the limbs are not below p (a Montgomery form is canonical only then).
  static std::optional<fq> read(const std::uint8_t* in) {
    fq v = fq::zero();
    for (std::size_t i = 0; i < 48; ++i) v.limbs[i / 8] |= std::uint64_t{in[i]} << (8 * (i % 8));
    for (std::size_t i = 6; i-- > 0;) {
      if (v.limbs[i] != constants::fq_modulus[i]) {
        if (v.limbs[i] > constants::fq_modulus[i]) return std::nullopt;
        return v;
      }
    }
    return std::nullopt;  // equal to p
  }
};

template <>
struct lem_codec<fq2> {
  static constexpr std::size_t size = 96;
  static void write(const fq2& v, std::uint8_t* out) {
    lem_codec<fq>::write(v.c0, out);
    lem_codec<fq>::write(v.c1, out + 48);
  }
  static std::optional<fq2> read(const std::uint8_t* in) {
    const auto c0 = lem_codec<fq>::read(in);
    const auto c1 = lem_codec<fq>::read(in + 48);
    if (!c0 || !c1) return std::nullopt;
    return fq2{*c0, *c1};
  }
};

template <class Curve>
using affine = detail::affine_point<Curve>;

template <class Curve>
decode_result<affine<Curve>> failure(decode_error e) {
  return decode_result<affine<Curve>>{affine<Curve>::identity(), make_error_code(e)};
}

/// The on-curve and subgroup checks that every decoder ends with.
template <class Curve>
decode_result<affine<Curve>> checked(const affine<Curve>& p, subgroup_check check) {
  if (!p.is_on_curve()) return failure<Curve>(decode_error::not_on_curve);
  if (check == subgroup_check::check && !p.is_torsion_free()) return failure<Curve>(decode_error::not_in_subgroup);
  return decode_result<affine<Curve>>{p, {}};
}

template <class Curve, std::size_t N>
std::array<std::uint8_t, N> encode(const affine<Curve>& p) {
  using codec = field_codec<typename Curve::field>;
  constexpr bool compressed = N == codec::size;
  static_assert(N == codec::size || N == 2 * codec::size);
  std::array<std::uint8_t, N> out{};
  if (p.infinity) {
    out[0] = flag_infinity | (compressed ? flag_compressed : 0);
    return out;
  }
  codec::write(p.x, out.data());
  if constexpr (compressed) {
    out[0] |= flag_compressed | (p.y.lexicographically_largest() ? flag_sign : 0);
  } else {
    codec::write(p.y, out.data() + codec::size);
  }
  return out;
}

template <class Curve>
decode_result<affine<Curve>> decode(std::span<const std::uint8_t> bytes, bool compressed, subgroup_check check) {
  using field = typename Curve::field;
  using codec = field_codec<field>;
  if (bytes.size() != (compressed ? codec::size : 2 * codec::size)) return failure<Curve>(decode_error::wrong_length);
  const std::uint8_t flags = bytes[0] & flag_mask;
  if (((flags & flag_compressed) != 0) != compressed) return failure<Curve>(decode_error::compression_flag_mismatch);
  std::array<std::uint8_t, 2 * codec::size> buffer{};
  std::copy(bytes.begin(), bytes.end(), buffer.begin());
  buffer[0] &= static_cast<std::uint8_t>(~flag_mask);
  const bool sign = (flags & flag_sign) != 0;
  if (flags & flag_infinity) {
    if (sign) return failure<Curve>(decode_error::sign_flag_not_allowed);
    if (std::any_of(buffer.begin(), buffer.end(), [](std::uint8_t b) { return b != 0; }))
      return failure<Curve>(decode_error::infinity_not_canonical);
    return decode_result<affine<Curve>>{affine<Curve>::identity(), {}};
  }
  if (!compressed && sign) return failure<Curve>(decode_error::sign_flag_not_allowed);
  const auto x = codec::read(buffer.data());
  if (!x) return failure<Curve>(decode_error::coordinate_not_canonical);
  if (compressed) {
    auto y = (x->square() * *x + Curve::b()).sqrt();
    if (!y) return failure<Curve>(decode_error::not_on_curve);
    if (y->lexicographically_largest() != sign) *y = -*y;
    return checked<Curve>(affine<Curve>::from_coordinates(*x, *y), check);
  }
  const auto y = codec::read(buffer.data() + codec::size);
  if (!y) return failure<Curve>(decode_error::coordinate_not_canonical);
  return checked<Curve>(affine<Curve>::from_coordinates(*x, *y), check);
}

template <class Curve>
decode_result<affine<Curve>> decode_either(std::span<const std::uint8_t> bytes, subgroup_check check) {
  if (bytes.empty()) return failure<Curve>(decode_error::wrong_length);
  return decode<Curve>(bytes, (bytes[0] & flag_compressed) != 0, check);
}

// ---- snarkjs JSON --------------------------------------------------------------------------

boost::json::value json_of(const fq& v) { return boost::json::string(v.to_decimal()); }
boost::json::value json_of(const fq2& v) { return boost::json::array{json_of(v.c0), json_of(v.c1)}; }

/// A decimal string's value; the error says whether it was malformed or not below p.
std::optional<fq> fq_of(const boost::json::value& v, decode_error& error) {
  const auto* s = v.if_string();
  if (s == nullptr || s->empty() || !std::all_of(s->begin(), s->end(), [](char c) { return c >= '0' && c <= '9'; })) {
    error = decode_error::json_malformed;
    return std::nullopt;
  }
  auto value = fq::from_decimal(std::string_view(s->data(), s->size()));
  if (!value) error = decode_error::coordinate_not_canonical;
  return value;
}

std::optional<fq2> fq2_of(const boost::json::value& v, decode_error& error) {
  const auto* a = v.if_array();
  if (a == nullptr || a->size() != 2) {
    error = decode_error::json_malformed;
    return std::nullopt;
  }
  const auto c0 = fq_of((*a)[0], error);
  if (!c0) return std::nullopt;
  const auto c1 = fq_of((*a)[1], error);
  if (!c1) return std::nullopt;
  return fq2{*c0, *c1};
}

std::optional<fq> field_of(const boost::json::value& v, decode_error& error, const fq*) { return fq_of(v, error); }
std::optional<fq2> field_of(const boost::json::value& v, decode_error& error, const fq2*) { return fq2_of(v, error); }

template <class Curve>
boost::json::value to_json(const affine<Curve>& p) {
  using field = typename Curve::field;
  if (p.infinity) return boost::json::array{json_of(field::zero()), json_of(field::one()), json_of(field::zero())};
  return boost::json::array{json_of(p.x), json_of(p.y), json_of(field::one())};
}

template <class Curve>
decode_result<affine<Curve>> from_json(const boost::json::value& v, subgroup_check check) {
  using field = typename Curve::field;
  const auto* a = v.if_array();
  if (a == nullptr || a->size() != 3) return failure<Curve>(decode_error::json_malformed);
  decode_error error{};
  const auto x = field_of((*a)[0], error, static_cast<const field*>(nullptr));
  if (!x) return failure<Curve>(error);
  const auto y = field_of((*a)[1], error, static_cast<const field*>(nullptr));
  if (!y) return failure<Curve>(error);
  const auto z = field_of((*a)[2], error, static_cast<const field*>(nullptr));
  if (!z) return failure<Curve>(error);
  if (*z == field::one()) return checked<Curve>(affine<Curve>::from_coordinates(*x, *y), check);
  if (z->is_zero() && x->is_zero() && *y == field::one()) return decode_result<affine<Curve>>{affine<Curve>::identity(), {}};
  return failure<Curve>(decode_error::json_not_affine);
}

template <class Curve, std::size_t N>
std::array<std::uint8_t, N> encode_lem_point(const affine<Curve>& p) {
  using codec = lem_codec<typename Curve::field>;
  std::array<std::uint8_t, N> out{};
  if (p.is_identity()) return out;
  codec::write(p.x, out.data());
  codec::write(p.y, out.data() + codec::size);
  return out;
}

template <class Curve>
decode_result<affine<Curve>> decode_lem_point(std::span<const std::uint8_t> bytes, subgroup_check check) {
  using codec = lem_codec<typename Curve::field>;
  if (bytes.size() != 2 * codec::size) return failure<Curve>(decode_error::wrong_length);
  if (std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; }))
    return decode_result<affine<Curve>>{affine<Curve>::identity(), {}};
  const auto x = codec::read(bytes.data());
  const auto y = codec::read(bytes.data() + codec::size);
  if (!x || !y) return failure<Curve>(decode_error::coordinate_not_canonical);
  return checked<Curve>(affine<Curve>::from_coordinates(*x, *y), check);
}

}  // namespace

const std::error_category& decode_category() noexcept {
  static const decode_category_impl category;
  return category;
}

std::array<std::uint8_t, 48> encode_compressed(const g1_affine& p) { return encode<g1_curve, 48>(p); }
std::array<std::uint8_t, 96> encode_uncompressed(const g1_affine& p) { return encode<g1_curve, 96>(p); }
std::array<std::uint8_t, 96> encode_compressed(const g2_affine& p) { return encode<g2_curve, 96>(p); }
std::array<std::uint8_t, 192> encode_uncompressed(const g2_affine& p) { return encode<g2_curve, 192>(p); }

decode_result<g1_affine> decode_g1_compressed(std::span<const std::uint8_t> bytes, subgroup_check check) {
  return decode<g1_curve>(bytes, true, check);
}
decode_result<g1_affine> decode_g1_uncompressed(std::span<const std::uint8_t> bytes, subgroup_check check) {
  return decode<g1_curve>(bytes, false, check);
}
decode_result<g1_affine> decode_g1(std::span<const std::uint8_t> bytes, subgroup_check check) {
  return decode_either<g1_curve>(bytes, check);
}
decode_result<g2_affine> decode_g2_compressed(std::span<const std::uint8_t> bytes, subgroup_check check) {
  return decode<g2_curve>(bytes, true, check);
}
decode_result<g2_affine> decode_g2_uncompressed(std::span<const std::uint8_t> bytes, subgroup_check check) {
  return decode<g2_curve>(bytes, false, check);
}
decode_result<g2_affine> decode_g2(std::span<const std::uint8_t> bytes, subgroup_check check) {
  return decode_either<g2_curve>(bytes, check);
}

std::array<std::uint8_t, 96> encode_lem(const g1_affine& p) { return encode_lem_point<g1_curve, 96>(p); }
std::array<std::uint8_t, 192> encode_lem(const g2_affine& p) { return encode_lem_point<g2_curve, 192>(p); }
decode_result<g1_affine> decode_g1_lem(std::span<const std::uint8_t> bytes, subgroup_check check) {
  return decode_lem_point<g1_curve>(bytes, check);
}
decode_result<g2_affine> decode_g2_lem(std::span<const std::uint8_t> bytes, subgroup_check check) {
  return decode_lem_point<g2_curve>(bytes, check);
}

boost::json::value to_snarkjs_json(const g1_affine& p) { return to_json<g1_curve>(p); }
boost::json::value to_snarkjs_json(const g2_affine& p) { return to_json<g2_curve>(p); }
decode_result<g1_affine> g1_from_snarkjs_json(const boost::json::value& v, subgroup_check check) {
  return from_json<g1_curve>(v, check);
}
decode_result<g2_affine> g2_from_snarkjs_json(const boost::json::value& v, subgroup_check check) {
  return from_json<g2_curve>(v, check);
}

}  // namespace coprove::field
