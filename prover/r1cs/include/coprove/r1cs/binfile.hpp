// iden3's binary container, which circom's .r1cs and .wtns and snarkjs's .zkey and .ptau share
// (iden3/binfileutils): 4 ASCII magic bytes, u32 LE version, u32 LE section count, then per
// section u32 LE type, u64 LE size and the payload; sections in any order. Every refusal is a
// circom_file_error whose message names the file, the section and the problem.
#pragma once

#include <coprove/field/fr.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::r1cs {

/// A circom or snarkjs file that cannot be used: what() is "FILE: section S: WHY" (or
/// "FILE: WHY" for the container as a whole).
class circom_file_error : public std::runtime_error {
 public:
  circom_file_error(std::string file, std::string section, std::string why);

  const std::string& file() const noexcept { return file_; }
  /// The section's name ("header", "coefficients", ...), or "" for the container.
  const std::string& section() const noexcept { return section_; }
  const std::string& why() const noexcept { return why_; }

 private:
  std::string file_, section_, why_;
};

/// The curve whose scalar field (r) or base field (q) this little-endian prime is, for messages:
/// "bls12381 r", "bn128 r", "bn128 q", ..., or its hex digits when no known curve has it.
std::string describe_prime(std::span<const std::uint8_t> prime_le);
/// True when the 32 little-endian bytes are BLS12-381's r.
bool is_bls12_381_r(std::span<const std::uint8_t> prime_le) noexcept;

/// The bytes of the file at `path` (runtime::read_input_file, within
/// input_limits::binary_file_bytes); circom_file_error naming the file when it cannot be read, is
/// not a regular file (a device, a directory, a pipe) or is larger than the limit. `what` names
/// the kind of file in the message ("zkey", "wtns file").
std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path, std::string_view what = "circom file");

/// One parsed container; the sections are views into its bytes.
class binfile {
 public:
  /// Parses `bytes` (named `name` in errors): magic, a version in [1, max_version], the section
  /// table (every section inside the file, nothing after the last).
  binfile(std::vector<std::uint8_t> bytes, std::string name, std::string_view magic, std::uint32_t max_version);
  /// Reads and parses the file at `path`.
  static binfile read(const std::filesystem::path& path, std::string_view magic, std::uint32_t max_version);

  const std::string& name() const noexcept { return name_; }
  std::uint32_t version() const noexcept { return version_; }
  std::size_t file_bytes() const noexcept { return bytes_.size(); }
  /// The one section of `type`, named `section_name` in errors; refused when missing or repeated.
  std::span<const std::uint8_t> section(std::uint32_t type, const std::string& section_name) const;
  /// Whether a section of `type` is present.
  bool has_section(std::uint32_t type) const noexcept { return sections_.count(type) != 0; }

  [[noreturn]] void fail(const std::string& section, const std::string& why) const;

 private:
  std::vector<std::uint8_t> bytes_;
  std::string name_;
  std::uint32_t version_ = 0;
  std::multimap<std::uint32_t, std::span<const std::uint8_t>> sections_;
};

/// A little-endian cursor over one section; reading past its end fails naming the section.
class section_reader {
 public:
  section_reader(const binfile& file, std::span<const std::uint8_t> bytes, std::string section)
      : file_(file), bytes_(bytes), section_(std::move(section)) {}

  std::uint32_t u32(const char* what);
  std::uint64_t u64(const char* what);
  std::span<const std::uint8_t> bytes(std::size_t n, const char* what);
  std::size_t position() const noexcept { return at_; }
  std::size_t remaining() const noexcept { return bytes_.size() - at_; }
  /// Fails unless every byte was read (the section's size agrees with its contents).
  void expect_end();
  [[noreturn]] void fail(const std::string& why) const { file_.fail(section_, why); }

 private:
  const binfile& file_;
  std::span<const std::uint8_t> bytes_;
  std::string section_;
  std::size_t at_ = 0;
};

/// An Fr value of 32 little-endian bytes in standard form; nullopt when it is not below r.
std::optional<field::fr> fr_from_le_bytes(std::span<const std::uint8_t> bytes) noexcept;

}  // namespace coprove::r1cs
