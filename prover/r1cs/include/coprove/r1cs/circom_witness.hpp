// circom's witness file (.wtns, snarkjs src/wtns_utils.js; magic "wtns", version 2): section 1
// holds u32 n8, the prime (n8 bytes LE) and u32 nWitness; section 2 the nWitness values, n8 bytes
// LE each in standard form, the constant one first.
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/r1cs/binfile.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace coprove::r1cs {

/// The witness values of a .wtns file: one, the public outputs and inputs, then the rest.
/// Refused with circom_file_error (naming the file, the section and the problem): another
/// prime (named, e.g. "bn128 r"), a value count other than expected_count when given, a section
/// whose size disagrees with the header (truncated), a value not below r, a first value not one.
std::vector<field::fr> decode_wtns(std::vector<std::uint8_t> bytes, const std::string& name,
                                   std::optional<std::size_t> expected_count = std::nullopt);
/// decode_wtns of the file at `path`.
std::vector<field::fr> read_wtns(const std::filesystem::path& path,
                                 std::optional<std::size_t> expected_count = std::nullopt);
/// The bytes of a .wtns file for `values` (tests, and the service's clients).
std::vector<std::uint8_t> encode_wtns(const std::vector<field::fr>& values);
/// The size of the .wtns file of `count` values.
std::size_t wtns_file_bytes(std::size_t count) noexcept;

}  // namespace coprove::r1cs
