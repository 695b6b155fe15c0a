// snarkjs zkeys (see zkey.hpp).
#include <coprove/groth16/zkey.hpp>

#include "zkey_layout.hpp"

#include <coprove/field/parallel.hpp>
#include <coprove/field/quotient.hpp>
#include <coprove/field/sha256.hpp>
#include <coprove/groth16/prover.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace coprove::groth16 {

namespace {

using field::fr;
using r1cs::binfile;
using r1cs::section_reader;

constexpr std::size_t coefficient_bytes = detail::zkey_coefficient_bytes;

std::string protocol_name(std::uint32_t id) {
  switch (id) {
    case 1: return "groth16";
    case 2: return "plonk";
    case 10: return "fflonk";
    default: return "unknown protocol " + std::to_string(id);
  }
}

/// "the key is for bn128, not bls12381" from a prime that is not BLS12-381's.
std::string other_curve(std::span<const std::uint8_t> prime, const char* which) {
  const std::string d = r1cs::describe_prime(prime);
  const auto space = d.find(' ');
  if (space != std::string::npos && d.substr(space + 1, 1) == which)
    return "the key is for " + d.substr(0, space) + ", not bls12381";
  return std::string("its prime ") + which + " = " + d + " is not BLS12-381's (the key is for another curve)";
}

bool is_bls12_381_q(std::span<const std::uint8_t> prime) {
  if (prime.size() != 48) return false;
  for (std::size_t i = 0; i < 6; ++i) {
    std::uint64_t limb = 0;
    for (std::size_t b = 8; b-- > 0;) limb = (limb << 8) | prime[8 * i + b];
    if (limb != field::constants::fq_modulus[i]) return false;
  }
  return true;
}

template <class Point>
field::decode_result<Point> decode_lem(std::span<const std::uint8_t> bytes,
                                       field::subgroup_check check = field::subgroup_check::check) {
  if constexpr (std::is_same_v<Point, field::g1_affine>) {
    return field::decode_g1_lem(bytes, check);
  } else {
    return field::decode_g2_lem(bytes, check);
  }
}

template <class Point>
constexpr std::size_t point_bytes = detail::zkey_point_bytes<Point>;

template <class Point>
Point read_point(section_reader& in, const char* what, bool allow_identity) {
  const auto decoded = decode_lem<Point>(in.bytes(point_bytes<Point>, what));
  if (!decoded.ok()) in.fail(std::string(what) + ": " + decoded.error.message());
  if (!allow_identity && decoded.point.is_identity()) in.fail(std::string(what) + " is the point at infinity");
  return decoded.point;
}

/// A points section of exactly `count` points, decoded and checked on all cores; the lowest bad
/// index is the one reported. With `bulk`, the subgroup tests are its, once the section is decoded.
template <class Point>
std::vector<Point> read_points(const binfile& file, std::uint32_t type, const std::string& section, std::size_t count,
                               const bulk_subgroup_test* bulk = nullptr) {
  const field::subgroup_check check = bulk != nullptr ? field::subgroup_check::skip : field::subgroup_check::check;
  const auto bytes = file.section(type, section);
  constexpr std::size_t size = point_bytes<Point>;
  if (bytes.size() != count * size)
    file.fail(section, "holds " + std::to_string(bytes.size()) + " bytes, its " + std::to_string(count) +
                           " points need " + std::to_string(count * size) +
                           (bytes.size() < count * size ? " (truncated)" : ""));
  std::vector<Point> out(count);
  std::mutex mutex;
  std::optional<std::size_t> bad_index;
  std::string bad_reason;
  field::parallel_for(0, count, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      const auto decoded = decode_lem<Point>(bytes.subspan(i * size, size), check);
      if (decoded.ok()) {
        out[i] = decoded.point;
        continue;
      }
      std::lock_guard lock(mutex);
      if (!bad_index || i < *bad_index) {
        bad_index = i;
        bad_reason = decoded.error.message();
      }
      return;
    }
  }, 256);
  if (bad_index) file.fail(section, "point " + std::to_string(*bad_index) + ": " + bad_reason);
  if (bulk != nullptr) {
    if (const auto outside = bulk->first_outside(std::span<const Point>(out)))
      file.fail(section, "point " + std::to_string(*outside) + ": " +
                             make_error_code(field::decode_error::not_in_subgroup).message());
  }
  return out;
}

/// The points sections' sizes against the header's counts, all before any of them is decoded or
/// anything is allocated from a count: a count the file's bytes do not hold is refused here,
/// naming the section, the count and the bytes it needs.
void check_point_sections(const binfile& file, std::size_t variables, std::size_t publics, std::size_t domain_size) {
  struct expected {
    std::uint32_t type;
    const char* section;
    const char* count_name;
    std::size_t count, point_bytes;
  };
  const expected sections[] = {
      {3, "3 (IC)", "nPublic + 1", publics + 1, detail::zkey_g1_bytes},
      {5, "5 (A)", "nVars", variables, detail::zkey_g1_bytes},
      {6, "6 (B1)", "nVars", variables, detail::zkey_g1_bytes},
      {7, "7 (B2)", "nVars", variables, detail::zkey_g2_bytes},
      {8, "8 (C)", "nVars - nPublic - 1", variables - publics - 1, detail::zkey_g1_bytes},
      {9, "9 (H)", "domainSize", domain_size, detail::zkey_g1_bytes},
  };
  for (const expected& e : sections) {
    const std::size_t held = file.section(e.type, e.section).size();
    const std::size_t needed = e.count * e.point_bytes;
    if (held != needed)
      file.fail(e.section, "holds " + std::to_string(held) + " bytes, its " + std::to_string(e.count) + " points need " +
                               std::to_string(needed) + (held < needed ? " (truncated)" : "") + " (" + e.count_name +
                               " = " + std::to_string(e.count) + " in the header, " + std::to_string(e.point_bytes) +
                               " bytes a point)");
  }
}

/// Section 4 as A and B in CSR; values are v R^2 mod r on file (zkey_new.js writeCoef).
std::shared_ptr<r1cs::pce_matrices> read_coefficients(const binfile& file, std::size_t variables, std::size_t inputs,
                                                       std::size_t domain_size) {
  const std::string section = "4 (coefficients)";
  const auto bytes = file.section(4, section);
  section_reader in(file, bytes, section);
  const std::uint32_t count = in.u32("the coefficient count");
  if (in.remaining() != std::size_t{count} * coefficient_bytes)
    in.fail("holds " + std::to_string(bytes.size()) + " bytes, its " + std::to_string(count) + " coefficients need " +
            std::to_string(4 + std::size_t{count} * coefficient_bytes) +
            (in.remaining() < std::size_t{count} * coefficient_bytes ? " (truncated)" : ""));
  auto m = std::make_shared<r1cs::pce_matrices>();
  m->num_inputs = inputs;
  m->num_aux = variables - inputs;
  m->domain_size = domain_size;
  r1cs::coefficient_table_builder table(m->coefficient_table);
  // R^-2: the Montgomery limbs {1, 0, 0, 0} are the element R^-1.
  const fr r_inv = fr{{1, 0, 0, 0}};
  const fr r_inv2 = r_inv * r_inv;
  struct entry {
    std::uint32_t row, column, coefficient;
  };
  std::vector<entry> entries[2];
  std::size_t rows = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t matrix = in.u32("a matrix");
    const std::uint32_t row = in.u32("a constraint");
    const std::uint32_t column = in.u32("a signal");
    const auto stored = r1cs::fr_from_le_bytes(in.bytes(32, "a value"));
    const std::string at = "coefficient " + std::to_string(i) + ": ";
    if (matrix > 1) in.fail(at + "matrix " + std::to_string(matrix) + " (only 0 = A and 1 = B are stored)");
    if (row >= domain_size)
      in.fail(at + "constraint " + std::to_string(row) + " outside the domain of " + std::to_string(domain_size));
    if (column >= variables)
      in.fail(at + "signal " + std::to_string(column) + " of " + std::to_string(variables));
    if (!stored) in.fail(at + "the value is not below r");
    const fr value = *stored * r_inv2;
    entries[matrix].push_back({row, column, table.index(value)});
    rows = std::max<std::size_t>(rows, std::size_t{row} + 1);
  }
  m->num_rows = rows;
  r1cs::csr_matrix* out[2] = {&m->a, &m->b};
  for (int k = 0; k < 2; ++k) {
    auto& csr = *out[k];
    csr.row_offsets.assign(rows + 1, 0);
    for (const entry& e : entries[k]) ++csr.row_offsets[e.row + 1];
    for (std::size_t r = 0; r < rows; ++r) csr.row_offsets[r + 1] += csr.row_offsets[r];
    csr.columns.resize(entries[k].size());
    csr.coefficients.resize(entries[k].size());
    std::vector<std::uint32_t> next(csr.row_offsets.begin(), csr.row_offsets.end() - 1);
    for (const entry& e : entries[k]) {
      const std::uint32_t at = next[e.row]++;
      csr.columns[at] = e.column;
      csr.coefficients[at] = e.coefficient;
    }
  }
  m->c.row_offsets.assign(rows + 1, 0);
  field::sha256 digest;
  digest.update(std::as_bytes(bytes));
  const auto d = digest.finish();
  std::memcpy(&m->structure_digest, d.data(), sizeof(m->structure_digest));
  return m;
}

}  // namespace

std::size_t zkey::bytes() const noexcept { return pk.bytes() + (matrices ? matrices->bytes() : 0); }

zkey decode_zkey(std::vector<std::uint8_t> bytes, const std::string& name, const bulk_subgroup_test* bulk) {
  if (bulk != nullptr && (!bulk->g1 || !bulk->g2))
    throw std::invalid_argument("decode_zkey: the bulk subgroup test needs both groups' tests");
  const std::size_t file_bytes = bytes.size();
  const binfile file(std::move(bytes), name, "zkey", 1);

  section_reader protocol(file, file.section(1, "1 (protocol)"), "1 (protocol)");
  const std::uint32_t id = protocol.u32("the protocol");
  protocol.expect_end();
  if (id != 1) protocol.fail("the key is for " + protocol_name(id) + ", not groth16");

  section_reader header(file, file.section(2, "2 (header)"), "2 (header)");
  const std::uint32_t n8q = header.u32("n8q");
  const auto q = header.bytes(n8q, "q");
  if (!is_bls12_381_q(q)) header.fail(other_curve(q, "q"));
  const std::uint32_t n8r = header.u32("n8r");
  const auto r = header.bytes(n8r, "r");
  if (!r1cs::is_bls12_381_r(r)) header.fail(other_curve(r, "r"));
  const std::size_t variables = header.u32("nVars");
  const std::size_t publics = header.u32("nPublic");
  const std::size_t domain_size = header.u32("domainSize");
  if (domain_size < 2 || (domain_size & (domain_size - 1)) != 0)
    header.fail("domainSize " + std::to_string(domain_size) + " is not a power of two of at least 2");
  if (publics + 1 > variables)
    header.fail("nVars " + std::to_string(variables) + " cannot hold the constant one and nPublic " +
                std::to_string(publics));
  if (publics + 1 > domain_size)
    header.fail("domainSize " + std::to_string(domain_size) + " cannot hold nPublic + 1 = " + std::to_string(publics + 1) +
                " rows");
  if (domain_size > detail::max_zkey_domain_size)
    header.fail("domainSize " + std::to_string(domain_size) + " is above the largest domain coprove reads, 2^" +
                std::to_string(std::countr_zero(detail::max_zkey_domain_size)) + " rows");
  check_point_sections(file, variables, publics, domain_size);

  zkey out;
  out.name = name;
  out.num_public = publics;
  out.file_bytes = file_bytes;
  verifying_key& vk = out.pk.vk;
  vk.alpha_g1 = read_point<field::g1_affine>(header, "alpha1", false);
  vk.beta_g1 = read_point<field::g1_affine>(header, "beta1", false);
  vk.beta_g2 = read_point<field::g2_affine>(header, "beta2", false);
  vk.gamma_g2 = read_point<field::g2_affine>(header, "gamma2", false);
  vk.delta_g1 = read_point<field::g1_affine>(header, "delta1", false);
  vk.delta_g2 = read_point<field::g2_affine>(header, "delta2", false);
  header.expect_end();

  vk.ic = read_points<field::g1_affine>(file, 3, "3 (IC)", publics + 1);
  if (const auto bad = find_degenerate_point(vk))  // the header's points are refused as they are read
    file.fail("3 (IC)", "point " + std::to_string(bad->index.value_or(0)) +
                            " is the point at infinity: a verifying key with it accepts forged proofs");
  const auto matrices = read_coefficients(file, variables, publics + 1, domain_size);
  matrices->circuit_id = "zkey:" + std::filesystem::path(name).filename().string();
  matrices->validate();
  out.matrices = matrices;
  out.pk.a = read_points<field::g1_affine>(file, 5, "5 (A)", variables, bulk);
  out.pk.b_g1 = read_points<field::g1_affine>(file, 6, "6 (B1)", variables, bulk);
  out.pk.b_g2 = read_points<field::g2_affine>(file, 7, "7 (B2)", variables, bulk);
  out.pk.l = read_points<field::g1_affine>(file, 8, "8 (C)", variables - publics - 1, bulk);
  out.pk.h = read_points<field::g1_affine>(file, 9, "9 (H)", domain_size, bulk);
  out.pk.h_form = field::quotient_form::odd_coset_evaluations;
  out.pk.check_consistent();
  return out;
}

zkey read_zkey(const std::filesystem::path& path, const bulk_subgroup_test* bulk) {
  return decode_zkey(r1cs::read_file_bytes(path, "zkey"), path.string(), bulk);
}

std::vector<fr> zkey_quotient(const zkey& key, std::span<const fr> witness) {
  const std::size_t n = key.domain_size();
  std::vector<fr> a(n), b(n), c(n), h(n);
  key.matrices->evaluate(witness, a, b, c);
  field::compute_quotient_odd_coset(a, b, h, key.domain());
  return h;
}

circom_proof prove_zkey(const zkey& key, const prepared_verifying_key& pvk, std::span<const fr> witness,
                        secret_source& secrets) {
  if (witness.size() != key.num_variables())
    throw std::invalid_argument("prove_zkey: the witness has " + std::to_string(witness.size()) + " values, " +
                                key.name + " " + std::to_string(key.num_variables()) + " signals");
  const std::vector<fr> h = zkey_quotient(key, witness);
  circom_proof out;
  out.proof = prove(key.pk, witness, h, secrets);
  out.public_signals.assign(witness.begin() + 1, witness.begin() + 1 + static_cast<std::ptrdiff_t>(key.num_public));
  const verification v = verify(pvk, out.proof, out.public_signals);
  if (!v) throw unsatisfied_witness(explain_failed_zkey_proof(key, witness));
  return out;
}

}  // namespace coprove::groth16
