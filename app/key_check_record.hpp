// The record that a key directory's params were checked point by point (on the curve, in the
// subgroup, ...), so that later loads verify the file's digest against it instead of testing every
// point again. It holds the SHA-256 of the bytes checked (what key.json names) and their leaf
// digest (groth16::hashed_params::leaf_digest): a later load computes the leaf digest alone, on
// all cores, and equal leaf digests mean the same bytes, so the same SHA-256. It lives next to the key as points_checked.json, or, where the key directory cannot
// be written, in the cache folder as <cache>/keys/checked/<params sha256>.json.
//
// Trust: a record is a claim that whoever wrote it checked these bytes. It is trusted exactly as
// far as the folder it is in: anyone who can write the key directory can change the key itself
// anyway (the params, key.json), and the cache folder is the user's own. A record vouches only for
// bytes with its digests and size, and only when it lists every check this build makes; anything
// else (another digest, another format version, a check missing, a file that is not JSON) is
// ignored, the points are checked in full, and the record is written anew.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::app {

/// The record's file name inside a key directory.
inline constexpr std::string_view points_checked_file_name = "points_checked.json";

/// The record format this build writes and reads.
inline constexpr unsigned check_record_format_version = 1;

/// What one check of params established.
struct check_record {
  unsigned format_version = check_record_format_version;
  std::string params_sha256;       ///< lowercase hex of the SHA-256 of the bytes checked
  /// Lowercase hex of their leaf digest (groth16::hashed_params::leaf_digest), which a later load
  /// verifies on all cores; with params_sha256 beside it, equal leaf digests mean the SHA-256 too.
  std::string params_leaf_sha256;
  std::uint64_t leaf_bytes = 0;    ///< the leaf size of params_leaf_sha256 (groth16::leaf_bytes)
  std::uint64_t params_bytes = 0;  ///< their count
  /// The params file's modification time when checked (ns since the epoch): a hint for people
  /// and logs, never a reason to trust or distrust the record.
  std::int64_t params_mtime_ns = 0;
  std::vector<std::string> checks;  ///< what was checked (params_checks() when this build wrote it)
  std::string circuit_id;          ///< the key's circuit, for people
  std::string checked;             ///< UTC, ISO 8601
};

/// The checks this build makes of every point of params, by name; a record must list them all.
const std::vector<std::string>& params_checks();

/// The cache folder's records: `default_key_cache_dir()/checked`; nullopt without a cache folder.
std::optional<std::filesystem::path> check_record_cache_dir();

/// Where a record of the params with this digest lives in `cache`.
std::filesystem::path cached_check_record(const std::filesystem::path& cache, const std::string& params_sha256);

/// Reads a record; nullopt with the reason in `why` when the file is absent, not a regular file,
/// not a record of this format, or says nothing about a field.
std::optional<check_record> read_check_record(const std::filesystem::path& file, std::string& why);

/// Whether `record` vouches for params with this SHA-256 and size: the same digest and size, this
/// build's leaf size, and every check of params_checks(). When not, `why` says what differs.
bool record_covers(const check_record& record, const std::string& params_sha256, std::uint64_t params_bytes,
                   std::string& why);

/// Writes `record` to `file` atomically (a temporary file beside it, renamed into place); false
/// with the reason in `why` when it cannot (a read-only folder, say). Creates no folder.
bool write_check_record(const check_record& record, const std::filesystem::path& file, std::string& why);

/// Where a load found a record that covers its params, or wrote one.
struct check_record_use {
  std::filesystem::path file;  ///< empty when none
  std::optional<check_record> record;  ///< what `file` holds, when found
  std::string note;            ///< what was looked at and why it was not used, for the log
};

/// The record covering the params of the key in `dir` (digest and size given): points_checked.json
/// in `dir` first, then the cache folder's, when `cache` is given.
check_record_use find_check_record(const std::filesystem::path& dir, const std::optional<std::filesystem::path>& cache,
                                   const std::string& params_sha256, std::uint64_t params_bytes);

/// Records a check: points_checked.json in `dir`, or, where that cannot be written, in the cache
/// folder (created). `file` is empty when neither could be written; `note` says why.
check_record_use record_check(const std::filesystem::path& dir, const std::optional<std::filesystem::path>& cache,
                              const check_record& record);

}  // namespace coprove::app
