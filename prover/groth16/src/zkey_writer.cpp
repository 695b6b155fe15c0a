// Writing snarkjs zkeys (see zkey.hpp): every size is known up front, so each section's header is
// written before its payload and the points are encoded chunk by chunk as they are written.
#include <coprove/groth16/zkey.hpp>

#include "file_writer.hpp"
#include "zkey_layout.hpp"

#include <coprove/field/encoding.hpp>
#include <coprove/field/fq_constants.hpp>
#include <coprove/field/fr_constants.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace coprove::groth16 {

namespace {

using detail::zkey_coefficient_bytes;
using detail::zkey_g1_bytes;
using detail::zkey_g2_bytes;
using field::fr;
using field::g1_affine;
using field::g2_affine;

constexpr std::size_t circuit_hash_bytes = 64;  // zkey_new.js: blake2b-512

void put_u32(detail::byte_writer& out, std::uint64_t value) {
  const std::array<std::uint8_t, 4> b{static_cast<std::uint8_t>(value), static_cast<std::uint8_t>(value >> 8),
                                      static_cast<std::uint8_t>(value >> 16), static_cast<std::uint8_t>(value >> 24)};
  out.write(b);
}

void put_u64(detail::byte_writer& out, std::uint64_t value) {
  put_u32(out, value & 0xffffffffu);
  put_u32(out, value >> 32);
}

void section_header(detail::byte_writer& out, std::uint32_t type, std::uint64_t size) {
  put_u32(out, type);
  put_u64(out, size);
}

template <std::size_t N>
void put_limbs(detail::byte_writer& out, const std::uint64_t (&limbs)[N]) {
  for (const std::uint64_t limb : limbs) {
    put_u32(out, limb & 0xffffffffu);
    put_u32(out, limb >> 32);
  }
}

template <class Point>
void put_points(detail::byte_writer& out, std::uint32_t type, std::span<const Point> points) {
  constexpr std::size_t size = detail::zkey_point_bytes<Point>;
  section_header(out, type, points.size() * size);
  detail::write_records(out, points.size(), size, [&](std::size_t i, std::span<std::uint8_t> to) {
    const auto bytes = field::encode_lem(points[i]);
    std::copy(bytes.begin(), bytes.end(), to.begin());
  });
}

void check_fits(const proving_key& pk, const r1cs::pce_matrices& matrices) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("write_zkey: " + why); };
  if (pk.h_form != field::quotient_form::odd_coset_evaluations)
    fail("the key's H points are for " + std::string(field::to_string(pk.h_form)) +
         ", a zkey's for odd_coset_evaluations");
  pk.check_consistent();
  if (pk.num_inputs() != matrices.num_inputs || pk.num_aux() != matrices.num_aux ||
      pk.domain_size() != matrices.domain_size)
    fail("the key has " + std::to_string(pk.num_inputs()) + " inputs, " + std::to_string(pk.num_aux()) +
         " auxiliaries and a domain of " + std::to_string(pk.domain_size()) + ", the matrices " +
         std::to_string(matrices.num_inputs) + ", " + std::to_string(matrices.num_aux) + " and " +
         std::to_string(matrices.domain_size));
  constexpr std::size_t u32_max = std::numeric_limits<std::uint32_t>::max();
  if (pk.num_variables() > u32_max || matrices.domain_size > u32_max ||
      matrices.a.nonzeros() + matrices.b.nonzeros() > u32_max)
    fail("the circuit is too large for a zkey's 32-bit counts");
}

/// Section 4: A and B row by row, each value as v R^2 mod r (zkey_new.js writeCoef).
void put_coefficients(detail::byte_writer& out, const r1cs::pce_matrices& m) {
  const std::size_t count = m.a.nonzeros() + m.b.nonzeros();
  section_header(out, 4, 4 + count * zkey_coefficient_bytes);
  put_u32(out, count);
  // The Montgomery limbs {1, 0, 0, 0} are the element R^-1.
  const fr r_inverse = fr{{1, 0, 0, 0}};
  const fr r_squared = (r_inverse * r_inverse).inverse();
  std::vector<std::array<std::uint8_t, 32>> stored(m.coefficient_table.size());
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const auto bytes = (m.coefficient_table[i] * r_squared).to_bytes_le();
    std::memcpy(stored[i].data(), bytes.data(), 32);
  }
  std::vector<std::uint8_t> buffer;
  buffer.reserve(detail::points_per_chunk * zkey_coefficient_bytes);
  const auto put = [&](std::uint32_t matrix, std::size_t row, std::uint32_t column, std::uint32_t coefficient) {
    for (const std::uint64_t v : {std::uint64_t{matrix}, std::uint64_t{row}, std::uint64_t{column}})
      for (int b = 0; b < 4; ++b) buffer.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    buffer.insert(buffer.end(), stored[coefficient].begin(), stored[coefficient].end());
    if (buffer.size() >= detail::points_per_chunk * zkey_coefficient_bytes) {
      out.write(buffer);
      buffer.clear();
    }
  };
  for (std::size_t row = 0; row < m.num_rows; ++row) {
    for (std::uint32_t e = m.a.row_offsets[row]; e < m.a.row_offsets[row + 1]; ++e)
      put(0, row, m.a.columns[e], m.a.coefficients[e]);
    for (std::uint32_t e = m.b.row_offsets[row]; e < m.b.row_offsets[row + 1]; ++e)
      put(1, row, m.b.columns[e], m.b.coefficients[e]);
  }
  out.write(buffer);
}

}  // namespace

void write_zkey(const proving_key& pk, const r1cs::pce_matrices& matrices, const std::filesystem::path& path) {
  check_fits(pk, matrices);
  detail::file_writer out(path);
  out.write(std::span(reinterpret_cast<const std::uint8_t*>("zkey"), 4));
  put_u32(out, 1);   // version
  put_u32(out, 10);  // sections

  section_header(out, 1, 4);
  put_u32(out, 1);  // Groth16

  const verifying_key& vk = pk.vk;
  section_header(out, 2, 4 + 48 + 4 + 32 + 3 * 4 + 3 * zkey_g1_bytes + 3 * zkey_g2_bytes);
  put_u32(out, 48);
  put_limbs(out, field::constants::fq_modulus);
  put_u32(out, 32);
  put_limbs(out, field::constants::fr_modulus);
  put_u32(out, pk.num_variables());
  put_u32(out, pk.num_inputs() - 1);
  put_u32(out, pk.domain_size());
  detail::for_each_vk_point(vk, [&](const auto& p) { out.write(field::encode_lem(p)); });

  put_points<g1_affine>(out, 3, vk.ic);
  put_coefficients(out, matrices);
  put_points<g1_affine>(out, 5, pk.a);
  put_points<g1_affine>(out, 6, pk.b_g1);
  put_points<g2_affine>(out, 7, pk.b_g2);
  put_points<g1_affine>(out, 8, pk.l);
  put_points<g1_affine>(out, 9, pk.h);

  section_header(out, 10, circuit_hash_bytes + 4);
  const std::array<std::uint8_t, circuit_hash_bytes> no_hash{};
  out.write(no_hash);
  put_u32(out, 0);  // contributions
  out.commit();
}

}  // namespace coprove::groth16
