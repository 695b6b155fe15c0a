// circom's constraint file (.r1cs, iden3/r1csfile doc/r1cs_bin_format.md; magic "r1cs", version
// 1), read to check a witness against the constraints before proving and to make a zkey from
// (groth16/zkey_setup.hpp). Section 1 (header): u32 fs,
// the prime (fs bytes LE), u32 nWires, nPubOut, nPubIn, nPrvIn, u64 nLabels, u32 mConstraints.
// Section 2: per constraint A, B, C, each u32 nFactors then (u32 wire, fs-byte LE value) pairs.
// Section 3 (the wire-to-label map, u64 a wire), when present, must hold nWires entries; other
// sections (custom gates) are not needed and not read. mConstraints is held to section 2's bytes
// (12 a constraint at least) and each factor count to the bytes that remain, before anything is
// sized from them.
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/r1cs/binfile.hpp>
#include <coprove/r1cs/constraint_matrices.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace coprove::r1cs {

class circom_r1cs {
 public:
  struct term {
    std::uint32_t wire;
    field::fr value;
  };

  /// Parses and checks the file (the BLS12-381 prime, section sizes, wires below nWires, values
  /// below r); circom_file_error names the file, the section and the problem.
  static circom_r1cs decode(std::vector<std::uint8_t> bytes, const std::string& name);
  static circom_r1cs read(const std::filesystem::path& path);

  const std::string& name() const noexcept { return name_; }
  std::size_t num_wires() const noexcept { return num_wires_; }
  /// Public outputs plus public inputs (the zkey's nPublic).
  std::size_t num_public() const noexcept { return num_public_; }
  std::size_t num_constraints() const noexcept { return offsets_.size() / 3; }
  /// The domain snarkjs proves the circuit on (zkey_new.js: 2^(floor(log2(constraints +
  /// nPublic)) + 1)): the smallest power of two above constraints + nPublic, at least 2.
  std::size_t domain_size() const noexcept;

  /// The constraint matrices in the layout snarkjs proves on (zkey_new.js): the circuit's
  /// constraints, then one row per signal s = 0..nPublic (the constant one, then the public
  /// signals) with A = signal s and B = C = 0, on domain_size() rows. num_inputs = nPublic + 1,
  /// circuit_id "r1cs:NAME". std::length_error when the domain would exceed 2^31 rows (snarkjs's
  /// H needs the 2n-th roots of unity, and Fr has them up to 2^32).
  pce_matrices matrices() const;

  /// The first constraint that the witness (one value per wire) does not satisfy, if any.
  /// std::invalid_argument when the witness has another length.
  std::optional<std::size_t> first_unsatisfied(std::span<const field::fr> witness) const;

 private:
  std::string name_;
  std::size_t num_wires_ = 0, num_public_ = 0;
  std::vector<term> terms_;
  /// Start of each linear combination (A, B, C of each constraint) in terms_, plus the end.
  std::vector<std::size_t> offsets_;
  std::size_t end_ = 0;

  field::fr evaluate(std::size_t lc, std::span<const field::fr> witness) const;
};

}  // namespace coprove::r1cs
