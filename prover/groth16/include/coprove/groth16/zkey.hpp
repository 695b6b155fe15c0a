// snarkjs's Groth16 proving key (.zkey; snarkjs src/zkey_utils.js, zkey_new.js; magic "zkey") for
// BLS12-381, and proving a circom witness with it on the CPU.
//
// Sections: 1 protocol (u32: 1 Groth16; 2 plonk, 10 fflonk are refused by name); 2 header (u32
// n8q, q, u32 n8r, r, u32 nVars, nPublic, domainSize, then alpha1, beta1, beta2, gamma2, delta1,
// delta2); 3 IC (nPublic + 1 G1); 4 coefficients (u32 count, then {u32 matrix 0 = A / 1 = B,
// u32 constraint, u32 signal, 32-byte value v R^2 mod r}; C is not stored: c = a * b); 5 A, 6 B1
// (nVars G1), 7 B2 (nVars G2), 8 C (nVars - nPublic - 1 G1), 9 H (domainSize G1, the odd-coset
// form). Points in LEM form (field/encoding.hpp), each checked on the curve and in the subgroup.
// A, B and H are laid out on ffjavascript's roots of unity (field::domain_roots::ffjavascript).
//
// write_zkey writes one in the same layout from a key that setup made with the odd-coset H form
// (coprove setup --r1cs): snarkjs proves with it and exports its verifying key.
#pragma once

#include <coprove/field/domain.hpp>
#include <coprove/field/encoding.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/keys.hpp>
#include <coprove/groth16/proof.hpp>
#include <coprove/groth16/secret_source.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/r1cs/binfile.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>
#include <coprove/r1cs/constraint_matrices.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace coprove::groth16 {

/// A zkey, read and checked.
struct zkey {
  std::string name;             ///< the file, as errors name it
  std::size_t num_public = 0;   ///< nPublic: public outputs and inputs, without the constant one
  std::size_t file_bytes = 0;
  proving_key pk;               ///< h_form = odd_coset_evaluations, h of domainSize points
  /// A and B from the coefficients section (values in standard form); C empty: snarkjs forms it
  /// as a * b on the domain. circuit_id "zkey:NAME", num_rows the highest row used plus one.
  std::shared_ptr<const r1cs::pce_matrices> matrices;

  std::size_t num_variables() const noexcept { return pk.num_variables(); }
  std::size_t domain_size() const noexcept { return pk.domain_size(); }
  /// The key's domain: its size on ffjavascript's roots.
  field::evaluation_domain domain() const {
    return field::evaluation_domain(domain_size(), field::domain_roots::ffjavascript);
  }
  /// Heap bytes the key and matrices hold (what a memory plan charges).
  std::size_t bytes() const noexcept;
};

/// Parses and checks a zkey; r1cs::circom_file_error names the file, the section and the
/// problem: truncated, a section of the wrong size or missing, another protocol (named), another
/// curve (named by its prime), header counts that disagree, a coefficient outside the matrices,
/// a point not canonical, off the curve or outside the subgroup (with its index), an IC point at
/// infinity (find_degenerate_point). The header's nVars, nPublic and domainSize are held to the
/// sizes of sections 3 and 5 to 9, and the coefficient count to section 4's, before anything is
/// decoded or allocated from them; domainSize may not exceed 2^28 rows. With `bulk`, the
/// proving sections' subgroup tests (5 to 9) are made by it, a section at a time (key_files.hpp).
zkey decode_zkey(std::vector<std::uint8_t> bytes, const std::string& name, const bulk_subgroup_test* bulk = nullptr);
zkey read_zkey(const std::filesystem::path& path, const bulk_subgroup_test* bulk = nullptr);

/// Writes `pk` as a zkey at `path` (sections 1 to 10 in that order, version 1): pk must come from
/// setup(matrices, ..., quotient_form::odd_coset_evaluations), and section 4 holds the matrices'
/// A and B entries (row by row, A before B, as zkey_new.js writes them; values v R^2 mod r).
/// nPublic is matrices.num_inputs - 1. Section 10 (the MPC record) holds a zero circuit hash and
/// no contribution: snarkjs's prover and `zkey export verificationkey` do not read it, and `snarkjs
/// zkey contribute` can add contributions on top, but `snarkjs zkey verify` cannot trace the key
/// to a powers-of-tau file (there is none). Written to PATH.tmp and renamed into place;
/// std::invalid_argument when pk and the matrices disagree, key_file_error when it cannot be
/// written.
void write_zkey(const proving_key& pk, const r1cs::pce_matrices& matrices, const std::filesystem::path& path);

/// What proving one witness gives.
struct circom_proof {
  groth16::proof proof;
  std::vector<field::fr> public_signals;  ///< witness[1..nPublic]: public.json
};

/// The proof made from a witness did not verify: the witness does not satisfy the circuit, or the
/// key is corrupt (what() says which when it can be told: explain_failed_zkey_proof).
class unsatisfied_witness : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Why a proof that `key` made from `witness` did not verify, as far as it can be told. A zkey
/// holds A and B but not C (c = a * b on the domain), so the key alone cannot tell a witness that
/// breaks a constraint from a key whose points are not those of its constraints; with the circuit's
/// .r1cs (`constraints`) it can: "the witness does not satisfy the circuit (constraint N of R1CS)",
/// "KEY is not a key of R1CS (row N of A differs)", or "the zkey's points do not match its
/// constraints (the key is corrupt): the witness satisfies every constraint ...". Without it, a key
/// whose B1 and B2 disagree is named corrupt, and otherwise both causes are named.
std::string explain_failed_zkey_proof(const zkey& key, std::span<const field::fr> witness,
                                      const r1cs::circom_r1cs* constraints = nullptr);

/// h for the witness: a = A w, b = B w on the key's domain, then the odd-coset quotient.
std::vector<field::fr> zkey_quotient(const zkey& key, std::span<const field::fr> witness);

/// Proves `witness` (nVars values, the constant one first) on the CPU, r and s from `secrets`,
/// then verifies the proof with the key's verifying key: throws unsatisfied_witness when it does
/// not verify (its message from explain_failed_zkey_proof), std::invalid_argument for a witness of another length.
circom_proof prove_zkey(const zkey& key, const prepared_verifying_key& pvk, std::span<const field::fr> witness,
                        secret_source& secrets);

}  // namespace coprove::groth16
