// circom's .r1cs files (see circom_r1cs.hpp).
#include <coprove/r1cs/circom_r1cs.hpp>

#include <coprove/field/parallel.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <filesystem>
#include <limits>
#include <stdexcept>

namespace coprove::r1cs {

namespace {

/// A factor: u32 wire and a 32-byte value.
constexpr std::size_t term_bytes = 4 + 32;
/// A constraint with empty A, B and C: three u32 factor counts.
constexpr std::size_t min_constraint_bytes = 3 * 4;
constexpr std::uint32_t wire_map_section = 3;

}  // namespace

circom_r1cs circom_r1cs::decode(std::vector<std::uint8_t> bytes, const std::string& name) {
  const binfile file(std::move(bytes), name, "r1cs", 1);
  circom_r1cs out;
  out.name_ = name;
  section_reader header(file, file.section(1, "1 (header)"), "1 (header)");
  const std::uint32_t fs = header.u32("field size");
  const auto prime = header.bytes(fs, "the prime");
  if (fs != 32 || !is_bls12_381_r(prime))
    header.fail("the circuit is over " + describe_prime(prime) + ", not BLS12-381's r (compile with circom --prime bls12381)");
  out.num_wires_ = header.u32("nWires");
  const std::uint32_t outputs = header.u32("nPubOut");
  const std::uint32_t inputs = header.u32("nPubIn");
  (void)header.u32("nPrvIn");
  (void)header.u64("nLabels");
  const std::uint32_t constraints = header.u32("mConstraints");
  header.expect_end();
  out.num_public_ = std::size_t{outputs} + inputs;
  if (out.num_wires_ == 0 || out.num_public_ >= out.num_wires_)
    header.fail(std::to_string(out.num_wires_) + " wires cannot hold the constant one and " +
                std::to_string(out.num_public_) + " public signals");

  // The wire map (a u64 label a wire), which circom writes and snarkjs does not need, pins nWires
  // to bytes the file holds when it is there.
  if (file.has_section(wire_map_section)) {
    const std::size_t map_bytes = file.section(wire_map_section, "3 (wire map)").size();
    if (map_bytes != std::size_t{out.num_wires_} * 8)
      header.fail("nWires " + std::to_string(out.num_wires_) + " does not match section 3 (wire map) of " +
                  std::to_string(map_bytes) + " bytes (8 bytes a wire)");
  }
  section_reader body(file, file.section(2, "2 (constraints)"), "2 (constraints)");
  // Each constraint takes at least its three factor counts: the header's count is held to the
  // section's bytes before anything is sized from it.
  if (constraints > body.remaining() / min_constraint_bytes)
    header.fail("mConstraints " + std::to_string(constraints) + " does not fit section 2's " +
                std::to_string(body.remaining()) + " bytes (" + std::to_string(min_constraint_bytes) +
                " bytes a constraint at least)");
  out.offsets_.reserve(std::size_t{constraints} * 3);
  for (std::size_t c = 0; c < constraints; ++c) {
    for (int part = 0; part < 3; ++part) {
      out.offsets_.push_back(out.terms_.size());
      const std::uint32_t factors = body.u32("a factor count");
      if (factors > body.remaining() / term_bytes)
        body.fail("constraint " + std::to_string(c) + " declares " + std::to_string(factors) + " factors, " +
                  std::to_string(term_bytes) + " bytes each, and " + std::to_string(body.remaining()) +
                  " bytes remain (truncated)");
      for (std::uint32_t f = 0; f < factors; ++f) {
        const std::uint32_t wire = body.u32("a wire");
        if (wire >= out.num_wires_)
          body.fail("constraint " + std::to_string(c) + " names wire " + std::to_string(wire) + " of " +
                    std::to_string(out.num_wires_));
        const auto value = fr_from_le_bytes(body.bytes(32, "a coefficient"));
        if (!value) body.fail("constraint " + std::to_string(c) + " has a coefficient not below r");
        out.terms_.push_back({wire, *value});
      }
    }
  }
  body.expect_end();
  out.end_ = out.terms_.size();
  return out;
}

circom_r1cs circom_r1cs::read(const std::filesystem::path& path) {
  return decode(read_file_bytes(path, "constraint file (.r1cs)"), path.string());
}

field::fr circom_r1cs::evaluate(std::size_t lc, std::span<const field::fr> witness) const {
  const std::size_t end = lc + 1 < offsets_.size() ? offsets_[lc + 1] : end_;
  field::fr sum = field::fr::zero();
  for (std::size_t t = offsets_[lc]; t < end; ++t) sum += terms_[t].value * witness[terms_[t].wire];
  return sum;
}

std::optional<std::size_t> circom_r1cs::first_unsatisfied(std::span<const field::fr> witness) const {
  if (witness.size() != num_wires_)
    throw std::invalid_argument("circom_r1cs: the witness has " + std::to_string(witness.size()) + " values, " +
                                name_ + " has " + std::to_string(num_wires_) + " wires");
  std::atomic<std::size_t> first{std::numeric_limits<std::size_t>::max()};
  field::parallel_for(0, num_constraints(), [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi && c < first.load(); ++c) {
      if (evaluate(3 * c, witness) * evaluate(3 * c + 1, witness) != evaluate(3 * c + 2, witness)) {
        std::size_t seen = first.load();
        while (c < seen && !first.compare_exchange_weak(seen, c)) {
        }
        return;
      }
    }
  }, 1 << 12);
  if (first.load() == std::numeric_limits<std::size_t>::max()) return std::nullopt;
  return first.load();
}

std::size_t circom_r1cs::domain_size() const noexcept {
  return std::max<std::size_t>(2, std::bit_floor(num_constraints() + num_public_) * 2);
}

pce_matrices circom_r1cs::matrices() const {
  pce_matrices m;
  m.circuit_id = "r1cs:" + std::filesystem::path(name_).filename().string();
  m.num_inputs = num_public_ + 1;
  m.num_aux = num_wires_ - m.num_inputs;
  m.num_rows = num_constraints() + m.num_inputs;
  m.domain_size = domain_size();
  if (m.domain_size > (std::size_t{1} << 31))
    throw std::length_error("circom_r1cs: " + name_ + " needs a domain of " + std::to_string(m.domain_size) +
                            " rows, above the 2^31 that BLS12-381's roots of unity allow");
  if (end_ > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("circom_r1cs: " + name_ + " has more than 2^32 - 1 nonzeros");
  coefficient_table_builder table(m.coefficient_table);
  csr_matrix* parts[3] = {&m.a, &m.b, &m.c};
  for (csr_matrix* part : parts) {
    part->row_offsets.reserve(m.num_rows + 1);
    part->row_offsets.push_back(0);
  }
  for (std::size_t c = 0; c < num_constraints(); ++c) {
    for (std::size_t part = 0; part < 3; ++part) {
      const std::size_t lc = 3 * c + part;
      const std::size_t end = lc + 1 < offsets_.size() ? offsets_[lc + 1] : end_;
      csr_matrix& out = *parts[part];
      for (std::size_t t = offsets_[lc]; t < end; ++t) {
        out.columns.push_back(terms_[t].wire);
        out.coefficients.push_back(table.index(terms_[t].value));
      }
      out.row_offsets.push_back(static_cast<std::uint32_t>(out.columns.size()));
    }
  }
  for (std::size_t s = 0; s < m.num_inputs; ++s) {
    m.a.columns.push_back(static_cast<std::uint32_t>(s));
    m.a.coefficients.push_back(pce_coefficient_one);
    for (csr_matrix* part : parts) part->row_offsets.push_back(static_cast<std::uint32_t>(part->columns.size()));
  }
  return m;
}

}  // namespace coprove::r1cs
