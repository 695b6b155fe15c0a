// Reading bellman's `params` at disk speed: the file is read once, in large chunks, and each chunk
// is hashed (SHA-256, on a thread of its own, one chunk ahead) and decoded on all cores from the
// same buffer, so the digest is the digest of exactly the bytes that became points: a file that
// changes while it is read cannot pass a digest that vouches for other bytes.
//
// Decoding checks everything read_params checks (counts, canonical coordinates, on the curve, the
// identity where bellman refuses it, the verifying key in full, truncation and trailing bytes)
// except the subgroup tests of the proving queries, which dominate a load. The caller either makes
// them (check_params_subgroups) or holds a record that these very bytes were tested before (the
// digest says so); key directories keep such records (app/key_check_record.hpp).
#pragma once

#include <coprove/field/sha256.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/keys.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace coprove::groth16 {

/// The file is also cut into leaves of this many bytes (the last one shorter), each hashed on its
/// own, so that all cores hash it: see hashed_params::leaf_digest.
inline constexpr std::size_t leaf_bytes = std::size_t{1} << 20;

/// A params file decoded without the proving queries' subgroup tests, and the digests of its bytes.
struct hashed_params {
  proving_key pk;                 ///< a, b_g1 and b_g2 expanded to one point per variable
  /// The SHA-256 of every byte of the file, exactly those decoded (one thread hashes them: at
  /// about 1.6 GB/s, the floor of a load); zero when not asked for.
  field::sha256::digest sha256{};
  /// The SHA-256 of the SHA-256s of the file's leaves (leaf_bytes each, in order): as binding as
  /// sha256 (equal leaf digests mean equal bytes), and made on all cores. A record of a check
  /// that holds both lets a later load verify the bytes by this one alone.
  field::sha256::digest leaf_digest{};
  std::uint64_t bytes = 0;        ///< the file's size
};

/// Reads and hashes `path` once (see the top of this file) for a circuit of the given shape.
/// Refuses, as key_file_error naming the file, section and point index, what read_params refuses
/// apart from a point outside the subgroup, and a file that grows or shrinks while it is read.
/// The points are NOT known to be in the subgroup until check_params_subgroups passes or a
/// record of an earlier check covers `sha256`.
hashed_params read_params_hashed(const std::filesystem::path& path, const key_shape& shape);

/// The counts of params that are known before the circuit's matrices are (a key directory's
/// key.json, compared with the circuit's arithmetic shape, gives them).
struct params_counts {
  std::size_t num_inputs = 0;  ///< ic
  std::size_t h_count = 0;
  std::size_t num_aux = 0;     ///< l
};

/// read_params_hashed with the shape given late, so that the matrices can be recorded while the
/// file is read: the verifying key, h and l are read with `early`'s counts, then `shape()` is called
/// once (it may wait for the matrices, and may throw) for a, b_g1 and b_g2; its counts must be
/// `early`'s (std::invalid_argument otherwise). Without `with_sha256` only the leaf digest is made.
hashed_params read_params_hashed(const std::filesystem::path& path, const params_counts& early,
                                 const std::function<const key_shape&()>& shape, bool with_sha256 = true);

/// The subgroup tests of the proving queries (h, l, a, b_g1, b_g2) of a key read by
/// read_params_hashed: on all cores, or by `bulk` when given (it gets one point per variable for
/// a, b_g1 and b_g2, the identity for an empty column). Throws key_file_error naming `file`, the
/// section and the point's index in it as stored (a, b_g1 and b_g2 are stored packed).
void check_params_subgroups(const proving_key& pk, const key_shape& shape, const std::string& file,
                            const bulk_subgroup_test* bulk = nullptr);

}  // namespace coprove::groth16
