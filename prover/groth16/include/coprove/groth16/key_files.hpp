// The key files: bellman's `params` (VerifyingKey, then h, l, a, b_g1, b_g2, each a big-endian u32
// count and uncompressed points; a, b_g1 and b_g2 only for the variables whose A or B column is
// not empty) and `vk` (the VerifyingKey: alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2,
// then a u32 count and ic), as bellman, bellperson and supraseal read them; and snarkjs's
// verification_key.json (decimal strings, Fq2 as [c0, c1]), which `snarkjs groth16 verify` reads.
//
// Reading takes only regular files (runtime/input_file.hpp), checks every count against the bytes
// that remain in the file before anything is allocated from it, checks every point (canonical
// coordinates, on the curve, in the subgroup; all cores for the large sections), refuses the
// identity where bellman does (the verifying key's six points, h, a, b_g1, b_g2; l may hold it)
// and in ic (check_verifying_key), checks the counts against the circuit's key_shape, and refuses
// truncated files and trailing bytes. Every refusal is a key_file_error whose message names the
// file, the section and the point index.
#pragma once

#include <coprove/field/encoding.hpp>
#include <coprove/groth16/keys.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace coprove::groth16 {

/// A key file that cannot be read or written; what() names the file, section and index.
class key_file_error : public std::runtime_error {
 public:
  key_file_error(std::string file, std::string section, std::optional<std::size_t> index, const std::string& why);

  const std::string& file() const noexcept { return file_; }
  /// "alpha_g1", ..., "ic", "h", "l", "a", "b_g1", "b_g2", or "" for the file as a whole.
  const std::string& section() const noexcept { return section_; }
  /// The point's index in its section, when the error is about one point.
  std::optional<std::size_t> index() const noexcept { return index_; }

 private:
  std::string file_, section_;
  std::optional<std::size_t> index_;
};

/// Refuses a verifying key that would accept forged proofs: key_file_error naming `file`, the
/// point (find_degenerate_point) and why. Every reader of a verifying key (bellman's vk and
/// params, a zkey, verification_key.json) calls it, and so may a caller holding a key from
/// elsewhere before it verifies anything with it.
void check_verifying_key(const verifying_key& vk, const std::string& file);

/// The bytes of bellman's VerifyingKey (864 + 4 + 96 ic bytes).
std::vector<std::uint8_t> encode_verifying_key(const verifying_key& vk);
/// Decodes bellman's VerifyingKey bytes; `name` stands for the file in errors. Checks the ic
/// count against expected_ic (inputs, the one included) when given.
verifying_key decode_verifying_key(std::span<const std::uint8_t> bytes, const std::string& name,
                                   std::optional<std::size_t> expected_ic = std::nullopt);

/// Writes `vk` (a temporary file renamed into place).
void write_verifying_key(const verifying_key& vk, const std::filesystem::path& path);
/// Reads `vk`.
verifying_key read_verifying_key(const std::filesystem::path& path,
                                 std::optional<std::size_t> expected_ic = std::nullopt);

/// Writes `params` for a key of the given shape (std::invalid_argument if they disagree).
void write_params(const proving_key& pk, const key_shape& shape, const std::filesystem::path& path);
/// Reads `params` for a circuit of the given shape, expanding a, b_g1 and b_g2 to one point per
/// variable (the identity for empty columns). The subgroup checks of the proving queries (h, l,
/// a, b_g1, b_g2) dominate the load time; `subgroup_check::skip` leaves them out (coordinates and
/// curve equations are still checked, the verifying key fully) and is for a file this process
/// wrote or checked before, never for one received from elsewhere.
proving_key read_params(const std::filesystem::path& path, const key_shape& shape,
                        field::subgroup_check check = field::subgroup_check::check);

/// The subgroup test of a whole query's points at once (on a GPU, say), in place of the test each
/// point takes as it is decoded: each returns the index of the first point outside the subgroup,
/// or nullopt. The points reach it decoded and on the curve.
struct bulk_subgroup_test {
  std::string where;  ///< what runs it, for the log ("CUDA device 0")
  std::function<std::optional<std::size_t>(std::span<const field::g1_affine>)> g1;
  std::function<std::optional<std::size_t>(std::span<const field::g2_affine>)> g2;

  /// The test of the points' group.
  std::optional<std::size_t> first_outside(std::span<const field::g1_affine> points) const { return g1(points); }
  std::optional<std::size_t> first_outside(std::span<const field::g2_affine> points) const { return g2(points); }
};

/// read_params with the proving queries' subgroup tests made by `bulk` (every point still tested;
/// a point outside is refused with the same key_file_error, naming its section and index).
proving_key read_params(const std::filesystem::path& path, const key_shape& shape, const bulk_subgroup_test& bulk);

/// snarkjs's verification_key.json object: protocol, curve, nPublic, vk_alpha_1, vk_beta_2,
/// vk_gamma_2, vk_delta_2, IC (vk_alphabeta_12 is left out: snarkjs's verifier does not read it).
boost::json::object verifying_key_to_snarkjs_json(const verifying_key& vk);
/// Writes verification_key.json.
void write_verifying_key_json(const verifying_key& vk, const std::filesystem::path& path);
/// Reads verification_key.json (points checked as in the byte files).
verifying_key read_verifying_key_json(const std::filesystem::path& path);

}  // namespace coprove::groth16
