// The key readers against keys that declare more than they hold or that would verify anything: a
// zkey, bellman's vk and params files and verification_key.json. Every count is held to the bytes
// that remain before anything is allocated from it (the largest allocation is measured), only
// regular files are read, and a verifying key with a point at the identity is refused by every
// reader. Last, a proof that fails with a zkey is blamed on the witness or on the key only when
// that can be known.
#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/verifier.hpp>
#include <coprove/groth16/zkey.hpp>

#include "circom_test_support.hpp"
#include "groth16/groth16_test_support.hpp"
#include "largest_allocation.hpp"

#include <coprove/field/encoding.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>
#include <coprove/r1cs/circom_witness.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <string>

using namespace coprove;
using namespace coprove::groth16;
using coprove::circom_fixtures::circom_data_dir;
using coprove::circom_fixtures::container;
using coprove::circom_fixtures::read_bytes;
using coprove::circom_fixtures::write_bytes;
using coprove::field::fr;
using Catch::Matchers::Contains;
using coprove::testing::refusal_with_largest_allocation;

namespace {

/// Anything a refused read allocates stays well below this.
constexpr std::size_t small_allocation = std::size_t{1} << 20;

const std::filesystem::path zkey_path = circom_data_dir() / "poseidon_chain.zkey";

const zkey& fixture_key() {
  static const zkey key = read_zkey(zkey_path);
  return key;
}

/// Byte offsets in a zkey's header section: nVars, nPublic, domainSize (after n8q, q, n8r, r).
constexpr std::size_t header_variables = 4 + 48 + 4 + 32;
constexpr std::size_t header_domain_size = header_variables + 8;
constexpr std::size_t header_points = header_domain_size + 4;

void put_le32(std::vector<std::uint8_t>& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

void put_be32(std::vector<std::uint8_t>& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<std::uint8_t>(v >> (8 * (3 - i)));
}

}  // namespace

TEST_CASE("a zkey whose raised domainSize its H section cannot hold is refused before anything is sized by it",
          "[groth16][zkey][bounds][cpu]") {
  auto c = container::parse(read_bytes(zkey_path));
  // The exploit: a larger domain, and one coefficient moved to its last row, so that the
  // coefficients' rows reach it.
  put_le32(c.section(2), header_domain_size, 1u << 22);
  put_le32(c.section(4), 4 + 4, (1u << 22) - 1);  // the first coefficient's constraint
  auto bytes = c.bytes();  // moved into the reader: the file's own bytes are not counted
  const auto [message, largest] =
      refusal_with_largest_allocation<r1cs::circom_file_error>([&] { (void)decode_zkey(std::move(bytes), "k.zkey"); });
  CHECK_THAT(message, Contains("k.zkey: section 9 (H): holds 393216 bytes, its 4194304 points need 402653184 "
                               "(truncated) (domainSize = 4194304 in the header, 96 bytes a point)"));
  CHECK(largest < small_allocation);
}

TEST_CASE("a zkey may declare no domain above 2^28 rows", "[groth16][zkey][bounds][cpu]") {
  auto c = container::parse(read_bytes(zkey_path));
  put_le32(c.section(2), header_domain_size, 1u << 29);
  CHECK_THROWS_WITH(decode_zkey(c.bytes(), "k.zkey"),
                    Contains("k.zkey: section 2 (header): domainSize 536870912 is above the largest domain coprove "
                             "reads, 2^28 rows"));
}

TEST_CASE("a zkey whose nVars its sections cannot hold is refused naming the section and the count",
          "[groth16][zkey][bounds][cpu]") {
  auto c = container::parse(read_bytes(zkey_path));
  put_le32(c.section(2), header_variables, 0x80000000u);
  auto bytes = c.bytes();  // moved into the reader: the file's own bytes are not counted
  const auto [message, largest] =
      refusal_with_largest_allocation<r1cs::circom_file_error>([&] { (void)decode_zkey(std::move(bytes), "k.zkey"); });
  CHECK_THAT(message, Contains("k.zkey: section 5 (A): holds 198816 bytes, its 2147483648 points need") &&
                          Contains("(nVars = 2147483648 in the header, 96 bytes a point)"));
  CHECK(largest < small_allocation);
}

TEST_CASE("a zkey coefficient count past its section is refused before the coefficients are read",
          "[groth16][zkey][bounds][cpu]") {
  auto c = container::parse(read_bytes(zkey_path));
  put_le32(c.section(4), 0, 0x80000000u);
  auto bytes = c.bytes();  // moved into the reader: the file's own bytes are not counted
  const auto [message, largest] =
      refusal_with_largest_allocation<r1cs::circom_file_error>([&] { (void)decode_zkey(std::move(bytes), "k.zkey"); });
  CHECK_THAT(message, Contains("k.zkey: section 4 (coefficients): holds") &&
                          Contains("its 2147483648 coefficients need 94489280516 (truncated)"));
  CHECK(largest < small_allocation);
}

TEST_CASE("a bellman vk whose ic count its bytes cannot hold is refused without allocating for it",
          "[groth16][keys][files][bounds][cpu]") {
  auto bytes = encode_verifying_key(fixture_key().pk.vk);
  REQUIRE(bytes.size() == 864 + 4 + 3 * 96);
  put_be32(bytes, 864, 1u << 24);
  const std::string expected =
      "section ic: truncated: declares 16777216 points of 96 bytes, more than the 288 bytes that remain in the "
      "file hold";
  auto [message, largest] =
      refusal_with_largest_allocation<key_file_error>([&] { (void)decode_verifying_key(bytes, "vk"); });
  CHECK_THAT(message, Contains("key file 'vk', " + expected));
  CHECK(largest < small_allocation);

  groth16::testing::temp_dir dir("bounded-vk");
  write_bytes(dir.path / "vk", bytes);
  std::tie(message, largest) =
      refusal_with_largest_allocation<key_file_error>([&] { (void)read_verifying_key(dir.path / "vk"); });
  CHECK_THAT(message, Contains("key file '" + (dir.path / "vk").string() + "', " + expected));
  CHECK(largest < small_allocation);
}

TEST_CASE("a device, a directory or a pipe given as a key file is refused by its kind, naming it",
          "[groth16][keys][files][bounds][cpu]") {
  groth16::testing::temp_dir dir("key-kinds");
  const auto fifo = dir.path / "vk";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const key_shape shape = key_shape::of(*fixture_key().matrices);
  CHECK_THROWS_WITH(read_verifying_key(fifo),
                    Contains("key file '" + fifo.string() +
                             "': is a pipe, not a regular file (a verifying key must be one)"));
  CHECK_THROWS_WITH(read_params(dir.path, shape), Contains("is a directory, not a regular file (a params file"));
  CHECK_THROWS_WITH(read_params("/dev/zero", shape), Contains("key file '/dev/zero': is a character device"));
  CHECK_THROWS_WITH(read_verifying_key_json("/dev/zero"), Contains("key file '/dev/zero': is a character device"));
  CHECK_THROWS_WITH(read_verifying_key_json(fifo), Contains("is a pipe, not a regular file (a verifying key (JSON)"));
  CHECK_THROWS_WITH(read_zkey("/dev/zero"), Contains("/dev/zero: is a character device, not a regular file (a zkey"));
}

TEST_CASE("a verifying key with gamma and delta at infinity is refused by every reader and by the verifier",
          "[groth16][keys][files][degenerate][cpu]") {
  verifying_key vk = fixture_key().pk.vk;
  vk.gamma_g2 = field::g2_affine::identity();
  vk.delta_g2 = field::g2_affine::identity();
  groth16::testing::temp_dir dir("degenerate-vk");

  CHECK(find_degenerate_point(vk)->name == std::string("gamma_g2"));
  CHECK_THROWS_WITH(check_verifying_key(vk, "given.vk"),
                    Contains("key file 'given.vk', section gamma_g2: the point at infinity: a verifying key with it "
                             "accepts forged proofs"));
  CHECK_THROWS_WITH(prepared_verifying_key::from(vk), Contains("gamma_g2 is the point at infinity"));

  // bellman's vk, and the vk at the head of a params file.
  CHECK_THROWS_WITH(decode_verifying_key(encode_verifying_key(vk), "vk"),
                    Contains("key file 'vk', section gamma_g2: the point at infinity, which a verifying key may not "
                             "hold"));
  proving_key pk = fixture_key().pk;
  pk.vk = vk;
  const key_shape shape = key_shape::of(*fixture_key().matrices);
  write_params(pk, shape, dir.path / "params");
  CHECK_THROWS_WITH(read_params(dir.path / "params", shape), Contains("section gamma_g2: the point at infinity"));

  // snarkjs's verification_key.json.
  write_verifying_key_json(vk, dir.path / "vk.json");
  CHECK_THROWS_WITH(read_verifying_key_json(dir.path / "vk.json"),
                    Contains("section vk_gamma_2: the point at infinity: a verifying key with it accepts forged proofs"));

  // A zkey's header.
  auto c = container::parse(read_bytes(zkey_path));
  const std::size_t gamma2 = header_points + 96 + 96 + 192;
  std::fill(c.section(2).begin() + gamma2, c.section(2).begin() + gamma2 + 192, 0);
  std::fill(c.section(2).begin() + gamma2 + 192 + 96, c.section(2).begin() + gamma2 + 192 + 96 + 192, 0);  // delta2
  CHECK_THROWS_WITH(decode_zkey(c.bytes(), "k.zkey"), Contains("section 2 (header): gamma2 is the point at infinity"));
}

TEST_CASE("a verifying key with an IC point at infinity is refused by every reader",
          "[groth16][keys][files][degenerate][cpu]") {
  verifying_key vk = fixture_key().pk.vk;
  vk.ic[2] = field::g1_affine::identity();
  groth16::testing::temp_dir dir("degenerate-ic");
  CHECK_THROWS_WITH(decode_verifying_key(encode_verifying_key(vk), "vk"),
                    Contains("key file 'vk', section ic, point 2: the point at infinity: a verifying key with it "
                             "accepts forged proofs"));
  write_verifying_key_json(vk, dir.path / "vk.json");
  CHECK_THROWS_WITH(read_verifying_key_json(dir.path / "vk.json"),
                    Contains("section IC, point 2: the point at infinity"));
  CHECK_THROWS_AS(prepared_verifying_key::from(vk), std::invalid_argument);

  auto c = container::parse(read_bytes(zkey_path));
  std::fill(c.section(3).begin() + 2 * 96, c.section(3).begin() + 3 * 96, 0);
  CHECK_THROWS_WITH(decode_zkey(c.bytes(), "k.zkey"),
                    Contains("k.zkey: section 3 (IC): point 2 is the point at infinity: a verifying key with it "
                             "accepts forged proofs"));
}

TEST_CASE("a proof that fails with a zkey is blamed on the key or the witness when that can be known",
          "[groth16][zkey][diagnosis][cpu]") {
  const auto r1cs_file = r1cs::circom_r1cs::read(circom_data_dir() / "poseidon_chain.r1cs");
  const auto witness = r1cs::read_wtns(circom_data_dir() / "poseidon_chain_1.wtns", 2071);
  REQUIRE_FALSE(r1cs_file.first_unsatisfied(witness));
  auto secrets = secret_source::system();
  const auto generator = field::encode_lem(field::g1_affine::generator());

  SECTION("one A point altered (on the curve, in the subgroup): the key is corrupt") {
    auto c = container::parse(read_bytes(zkey_path));
    std::copy(generator.begin(), generator.end(), c.section(5).begin());  // the constant one's A point
    const zkey key = decode_zkey(c.bytes(), "corrupt.zkey");
    const auto pvk = prepared_verifying_key::from(key.pk.vk);
    try {
      (void)prove_zkey(key, pvk, witness, secrets);
      FAIL("a proof made with a corrupt key verified");
    } catch (const unsatisfied_witness& e) {
      // The key alone cannot tell: both causes are named.
      CHECK_THAT(std::string(e.what()),
                 Contains("or the zkey's points do not match its constraints (the key is corrupt); a zkey holds no C "
                          "to tell which"));
    }
    CHECK_THAT(explain_failed_zkey_proof(key, witness, &r1cs_file),
               Contains("the zkey's points do not match its constraints (the key is corrupt): the witness satisfies "
                        "every constraint of " + r1cs_file.name()));
  }
  SECTION("one B1 point altered: the key alone shows it is corrupt") {
    auto c = container::parse(read_bytes(zkey_path));
    std::copy(generator.begin(), generator.end(), c.section(6).begin() + 5 * 96);
    const zkey key = decode_zkey(c.bytes(), "corrupt.zkey");
    CHECK_THAT(explain_failed_zkey_proof(key, witness),
               Contains("the zkey's points do not match its constraints (the key is corrupt): its B1 and B2 sections "
                        "do not hold the same points"));
  }
  SECTION("a witness that breaks a constraint, with a sound key") {
    auto bad = witness;
    bad[500] += fr::one();
    const auto c = r1cs_file.first_unsatisfied(bad);
    REQUIRE(c);
    CHECK(explain_failed_zkey_proof(fixture_key(), bad, &r1cs_file) ==
          "the witness does not satisfy the circuit (constraint " + std::to_string(*c) + " of " + r1cs_file.name() +
              ")");
  }
  SECTION("a key whose coefficients are not the r1cs's") {
    auto c = container::parse(read_bytes(zkey_path));
    c.section(4)[4 + 12] ^= 1;  // the first coefficient's value, lowest byte
    const zkey key = decode_zkey(c.bytes(), "other.zkey");
    CHECK_THAT(explain_failed_zkey_proof(key, witness, &r1cs_file),
               Contains("other.zkey is not a key of " + r1cs_file.name() + " (row ") && Contains(" of A differs)"));
  }
}
