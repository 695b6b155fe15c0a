// Reading files that come from someone else: only regular files, sized before anything is
// allocated, and never more than a stated limit. Every reader of untrusted input (keys, zkeys,
// witnesses, reports, proofs, configuration) goes through here, so that `/dev/zero`, a directory
// or a file larger than its kind can justify is refused with a message naming the file and the
// limit, before a byte of it is held in memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::runtime {

/// The largest inputs coprove reads whole, by kind (docs/CONFIG.md, "Input limits").
namespace input_limits {
/// JSON documents of a few fields: key.json, a verifying key's JSON, proof.json, public.json,
/// a configuration file, a token file.
inline constexpr std::uint64_t small_json_bytes = std::uint64_t{64} << 20;
/// Run reports and job results (one entry per partition and job).
inline constexpr std::uint64_t report_json_bytes = std::uint64_t{1} << 30;
/// Binary circuit files read whole (.zkey, .wtns, .r1cs): 2^28 constraints of BN254 or
/// BLS12-381 fit well below this.
inline constexpr std::uint64_t binary_file_bytes = std::uint64_t{64} << 30;
}  // namespace input_limits

/// A file that cannot be read as the input it was given as: not there, not a regular file, larger
/// than its limit, or changed while it was read. what() is "FILE: WHY".
class input_file_error : public std::runtime_error {
 public:
  input_file_error(std::string file, std::string why);

  const std::string& file() const noexcept { return file_; }
  const std::string& why() const noexcept { return why_; }

 private:
  std::string file_, why_;
};

/// The size of the regular file at `path`; input_file_error when it is missing, not a regular
/// file (a directory, a device, a pipe), or larger than `max_bytes`. `what` names the kind of
/// input in the message ("run report", "zkey", ...).
std::uint64_t regular_file_size(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what);

/// The bytes of the regular file at `path`, at most `max_bytes` of them; refused as
/// regular_file_size refuses, and when the file grows or shrinks while it is read.
std::vector<std::uint8_t> read_input_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                                          std::string_view what);

/// The same, as text (for JSON).
std::string read_input_text(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what);

/// "1.5 GiB", "64 MiB", "512 bytes": a byte count for messages.
std::string describe_bytes(std::uint64_t bytes);

}  // namespace coprove::runtime
