// Key directories: the Groth16 keys of one built-in circuit at one size, as the binary makes,
// keeps and loads them. A directory holds
//   params    bellman's Parameters (the proving key, the verifying key first),
//   vk        bellman's VerifyingKey,
//   vk.json   snarkjs's verification_key.json (for `snarkjs groth16 verify`),
//   key.json  what the key is for and how it was made (key_metadata).
// Reading one checks everything a key received from elsewhere needs: the circuit it names is the
// built-in circuit of that name and size (same id and structure digest), every point of params is
// on its curve and in the subgroup, the files are the ones key.json hashed, and vk and vk.json are
// the verifying key of params.
//
// Development keys are made on demand by this machine alone (a single-party setup: whoever ran
// it could have kept the toxic waste), cached under the user's cache directory, and announced
// loudly each time they are used; they are for trying the binary out, never for production.
#pragma once

#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/r1cs/constraint_matrices.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace coprove::app {

/// The file names inside a key directory.
inline constexpr std::string_view params_file_name = "params";
inline constexpr std::string_view vk_file_name = "vk";
inline constexpr std::string_view vk_json_file_name = "vk.json";
inline constexpr std::string_view key_json_file_name = "key.json";

/// The key.json format this build writes and reads.
inline constexpr unsigned key_format_version = 1;

/// A key directory that cannot be made or read; what() names the file and says what is wrong.
class key_dir_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What key.json says.
struct key_metadata {
  unsigned format_version = key_format_version;
  std::string circuit;               ///< the family, e.g. "mimc"
  unsigned log_constraints = 0;
  std::string circuit_id;            ///< r1cs::circuit::id(), e.g. "mimc/10"
  std::uint64_t structure_digest = 0;  ///< r1cs::circuit::structure_digest() (hex in the file)
  std::size_t num_inputs = 0;        ///< public inputs, the constant one included
  std::size_t num_aux = 0;
  std::size_t num_constraints = 0;   ///< rows used: the circuit's constraints and the input rows
  std::size_t domain_size = 0;
  std::string params_sha256;         ///< lowercase hex of the params file's SHA-256
  std::string vk_sha256;             ///< lowercase hex of the vk file's SHA-256
  std::string created;               ///< UTC, ISO 8601 ("2026-12-02T03:21:01Z")
  std::optional<std::uint64_t> insecure_seed;  ///< the seed the toxic waste came from, if any
  bool development = false;          ///< made on demand by development_keys
};

/// How read_key_dir established that the points of params are sound.
struct key_load_stats {
  /// Every point of params was tested in this load, the subgroup tests included.
  bool points_checked = false;
  /// A record of an earlier check (key_check_record.hpp) covered key.json's SHA-256 and the
  /// leaf digest of the bytes decoded, so the subgroup tests were not made again (the cheaper
  /// checks always are).
  bool digest_verified = false;
  /// The record used or written; empty when none could be written.
  std::filesystem::path record;
  bool record_written = false;
  std::uint64_t params_bytes = 0;
  double read_seconds = 0;   ///< reading, hashing and decoding params (canonical, on the curve), each pass
  double check_seconds = 0;  ///< the subgroup tests (0 when digest_verified)
};

/// A loaded (or just made) key and where it lives.
struct key_set {
  std::string circuit;
  unsigned log_constraints = 0;
  std::shared_ptr<const groth16::proving_key> pk;
  /// The circuit's constraint matrices, recorded to get the key's shape (provers need them too).
  std::shared_ptr<const r1cs::pce_matrices> matrices;
  std::filesystem::path dir;
  key_metadata metadata;
  bool development = false;  ///< metadata.development
  bool insecure = false;     ///< made from an insecure seed (metadata.insecure_seed)
  double load_seconds = 0;   ///< reading every file with its checks, or making the key
  key_load_stats load;       ///< how read_key_dir checked params (all false for a key just made)

  /// One line for logs: circuit, directory, kind of key, sizes and load time.
  std::string describe() const;
};

/// One finished stage of making a key ("matrices", "setup", "write") and what it produced.
struct key_stage {
  std::string name;
  double seconds = 0;
  std::string detail;
};

/// How make_key_dir makes a key.
struct key_options {
  /// Toxic waste from this seed (reproducible and insecure; warns) instead of the system CSPRNG.
  std::optional<std::uint64_t> insecure_seed;
  bool development = false;  ///< recorded in key.json
  std::function<void(const key_stage&)> progress;  ///< called after each stage, when set
};

/// What a reader expects a key directory to be for.
struct expected_key {
  std::string circuit;
  unsigned log_constraints = 0;
};

/// Throws key_dir_error unless `dir` is absent or an empty directory: the check make_key_dir
/// makes before any work, for a command that wants to refuse a bad --out at once.
void check_new_key_dir(const std::filesystem::path& dir);

/// Makes the keys of built-in circuit `circuit` at 2^log_constraints into `dir` (created, with
/// its parents). The four files are written into a temporary sibling directory that is renamed
/// into place, so `dir` either holds a complete key or nothing new. Throws std::invalid_argument
/// for an unknown circuit or size, and key_dir_error when `dir` exists and is not an empty
/// directory (a key is never overwritten) or cannot be written.
key_set make_key_dir(const std::string& circuit, unsigned log_constraints, const std::filesystem::path& dir,
                     const key_options& options = {});

/// Reads key.json alone (no other file is opened); key_dir_error names the file and the field.
key_metadata read_key_metadata(const std::filesystem::path& dir);

/// Compares what key.json claims (`m`, read from `dir`) with what the key itself holds, before
/// anything the size of the claim is built: the named circuit's id, structure digest and shape
/// (inputs, auxiliaries, domain: known without building the circuit) against key.json's counts,
/// the vk file's size against its IC count, and the params file's own counts (ic, h, l) and size
/// against the shape. Reads a few bytes of each file. Throws key_dir_error naming the file and
/// the count; with `params_required` false, a directory without params passes the params check.
void check_key_claim(const std::filesystem::path& dir, const key_metadata& m, bool params_required = true);

/// Refuses a degenerate verifying key: no IC point, or alpha_g1, beta_g1, beta_g2, gamma_g2,
/// delta_g1, delta_g2 or an IC point at infinity (with gamma and delta at infinity a forged proof verifies for any
/// inputs). `has_g1_copies` is false for a verification_key.json, which holds no beta_g1 or
/// delta_g1. Throws groth16::key_file_error naming `file`, the point and its index.
void refuse_degenerate_verifying_key(const groth16::verifying_key& vk, const std::string& file, bool has_g1_copies = true);

/// Reads and checks a key directory (see the top of this file); when `expected` is given, the
/// key must be for that circuit and size. Throws key_dir_error naming the file and the problem.
/// params is read once, hashed and decoded from the same bytes (groth16::read_params_hashed). Its
/// points' subgroup tests are made unless a record of an earlier check of these very bytes is found
/// (key_check_record.hpp: beside the key, then in the cache folder); after they pass, the check is
/// recorded, beside the key or, where the directory cannot be written, in the cache folder.
/// With `subgroup_test`, the subgroup tests are made by it (a GPU) rather than on all CPU cores.
/// key_set::load says which way the load went.
key_set read_key_dir(const std::filesystem::path& dir, const std::optional<expected_key>& expected = std::nullopt,
                     const groth16::bulk_subgroup_test* subgroup_test = nullptr);

/// `$XDG_CACHE_HOME/coprove`, else `$HOME/.cache/coprove`; nullopt when neither variable is set
/// to an absolute path.
std::optional<std::filesystem::path> default_cache_dir();

/// `$XDG_CACHE_HOME/coprove/keys`, else `$HOME/.cache/coprove/keys`; key_dir_error when neither
/// variable is set to an absolute path.
std::filesystem::path default_key_cache_dir();

/// The development key of (circuit, log_constraints): cache_dir/<circuit>-<log_constraints>/,
/// read when present and valid; otherwise (the reason logged at warning) made anew with the
/// system CSPRNG and written there. Every call says at warning and on stderr that the key is a
/// single-party development key, not for production, and where it is.
key_set development_keys(const std::string& circuit, unsigned log_constraints,
                         const std::filesystem::path& cache_dir = default_key_cache_dir(),
                         const groth16::bulk_subgroup_test* subgroup_test = nullptr);

/// Lowercase hex of the SHA-256 of a file's bytes; key_dir_error when it cannot be read.
std::string file_sha256(const std::filesystem::path& path);
/// Lowercase hex of the SHA-256 of bytes in memory (file_sha256 of a file holding them).
std::string sha256_hex(std::span<const std::uint8_t> bytes);

}  // namespace coprove::app
