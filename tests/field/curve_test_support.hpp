// Helpers shared by the G1, G2 and encoding tests: one traits struct per group (its name in the
// noble oracle, its encodings and decoders), random points inside and outside the subgroup, and a
// plain double-and-add to check the fast scalar multiplications against.
#pragma once

#include <coprove/field/encoding.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/field/scalar.hpp>

#include "field/noble_oracle.hpp"

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace coprove::field::testing {

template <class Curve>
struct curve_traits;

template <>
struct curve_traits<g1_curve> {
  static constexpr const char* name = "g1";  // the oracle's op prefix
  static constexpr std::size_t compressed_size = 48;
  static auto compressed(const g1_affine& p) { return encode_compressed(p); }
  static auto uncompressed(const g1_affine& p) { return encode_uncompressed(p); }
  static auto decode_compressed(std::span<const std::uint8_t> b, subgroup_check c = subgroup_check::check) {
    return decode_g1_compressed(b, c);
  }
  static auto decode_uncompressed(std::span<const std::uint8_t> b, subgroup_check c = subgroup_check::check) {
    return decode_g1_uncompressed(b, c);
  }
  static auto decode_any(std::span<const std::uint8_t> b) { return decode_g1(b); }
  static auto from_json(const boost::json::value& v) { return g1_from_snarkjs_json(v); }
  /// The oracle's JSON for a coordinate.
  static boost::json::value coordinate_json(const fq& v) { return boost::json::string(hex_of(v)); }
  static std::string hex_of(const fq& v) {
    std::array<std::uint8_t, 48> b;
    v.to_bytes_be(b);
    return to_hex(b);
  }
};

template <>
struct curve_traits<g2_curve> {
  static constexpr const char* name = "g2";
  static constexpr std::size_t compressed_size = 96;
  static auto compressed(const g2_affine& p) { return encode_compressed(p); }
  static auto uncompressed(const g2_affine& p) { return encode_uncompressed(p); }
  static auto decode_compressed(std::span<const std::uint8_t> b, subgroup_check c = subgroup_check::check) {
    return decode_g2_compressed(b, c);
  }
  static auto decode_uncompressed(std::span<const std::uint8_t> b, subgroup_check c = subgroup_check::check) {
    return decode_g2_uncompressed(b, c);
  }
  static auto decode_any(std::span<const std::uint8_t> b) { return decode_g2(b); }
  static auto from_json(const boost::json::value& v) { return g2_from_snarkjs_json(v); }
  static boost::json::value coordinate_json(const fq2& v) {
    return boost::json::array{boost::json::string(curve_traits<g1_curve>::hex_of(v.c0)),
                              boost::json::string(curve_traits<g1_curve>::hex_of(v.c1))};
  }
};

template <class Curve>
using affine_of = detail::affine_point<Curve>;
template <class Curve>
using jacobian_of = detail::jacobian_point<Curve>;

/// A test generator with a fixed seed per test, so that failures reproduce.
inline std::mt19937_64 test_rng(std::uint64_t seed) { return std::mt19937_64(seed); }

/// [s]G for a random s.
template <class Curve, class URBG>
affine_of<Curve> random_subgroup_point(URBG& gen) {
  return jacobian_of<Curve>::generator().mul(random_scalar(gen)).to_affine();
}

/// A random point on the curve, its cofactor not cleared: outside the subgroup but for a
/// vanishing fraction of draws.
template <class Curve, class URBG>
affine_of<Curve> random_curve_point(URBG& gen) {
  using field = typename Curve::field;
  for (;;) {
    const field x = field::random(gen);
    if (const auto y = (x.square() * x + Curve::b()).sqrt()) return affine_of<Curve>::from_coordinates(x, *y);
  }
}

/// The first of `points` that is_torsion_free refuses, or nullopt: the per-point test over a whole
/// set, the answer a bulk subgroup test (groth16::bulk_subgroup_test, the GPU's) must give.
template <class Point>
std::optional<std::size_t> first_outside_subgroup(std::span<const Point> points) {
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!points[i].is_torsion_free()) return i;
  return std::nullopt;
}

/// [k]P bit by bit from the top (limbs of any length): the reference the fast paths must match.
template <class Curve>
jacobian_of<Curve> double_and_add(const jacobian_of<Curve>& p, std::span<const std::uint64_t> k) {
  jacobian_of<Curve> acc = jacobian_of<Curve>::identity();
  for (std::size_t bit = k.size() * 64; bit-- > 0;) {
    acc = acc.doubled();
    if ((k[bit / 64] >> (bit % 64)) & 1) acc = acc + p;
  }
  return acc;
}

/// The oracle's hex fields as bytes.
inline std::vector<std::uint8_t> answer_bytes(const boost::json::object& answer, std::string_view key) {
  return from_hex(answer_string(answer, key));
}

}  // namespace coprove::field::testing
