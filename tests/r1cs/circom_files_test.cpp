// Tests of the circom file readers: .wtns (values, prime, length, truncation) and .r1cs (the
// constraint check a witness goes through before proving), on the fixtures circom made.
#include <coprove/r1cs/binfile.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>
#include <coprove/r1cs/circom_witness.hpp>

#include "circom_test_support.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace coprove;
using coprove::field::fr;
using coprove::r1cs::circom_file_error;
using coprove::circom_fixtures::circom_data_dir;
using coprove::circom_fixtures::container;
using coprove::circom_fixtures::read_bytes;
using Catch::Matchers::Contains;

namespace {

const std::string wtns_name = (circom_data_dir() / "poseidon_chain_1.wtns").string();

std::vector<fr> decode(const std::vector<std::uint8_t>& bytes, std::optional<std::size_t> count = std::nullopt) {
  return r1cs::decode_wtns(bytes, "w.wtns", count);
}

}  // namespace

TEST_CASE("a circom witness reads as the constant one, the public signals and the rest", "[r1cs][circom][cpu]") {
  const auto w = r1cs::read_wtns(wtns_name, 2071);
  REQUIRE(w.size() == 2071);
  CHECK(w[0] == fr::one());
  CHECK(w[2] == fr::one());  // x = 1, the public input after the output
  // encode_wtns writes what snarkjs writes: the same bytes back.
  CHECK(r1cs::encode_wtns(w) == read_bytes(wtns_name));
  CHECK(r1cs::wtns_file_bytes(w.size()) == read_bytes(wtns_name).size());
}

TEST_CASE("a witness of another length, prime or truncated is refused naming the file and section",
          "[r1cs][circom][cpu]") {
  const auto good = read_bytes(wtns_name);
  SECTION("another circuit's witness (its length)") {
    CHECK_THROWS_WITH(r1cs::read_wtns(circom_data_dir() / "cube.wtns", 2071),
                      Contains("cube.wtns: section 1 (header): the witness has 4 values, the circuit 2071"));
  }
  SECTION("another prime") {
    auto c = container::parse(good);
    auto& header = c.section(1);
    // bn128's r, little-endian, over BLS12-381's.
    const std::vector<std::uint8_t> bn128_r = {0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9,
                                               0x79, 0x48, 0xe8, 0x33, 0x28, 0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45,
                                               0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
    std::copy(bn128_r.begin(), bn128_r.end(), header.begin() + 4);
    CHECK_THROWS_WITH(decode(c.bytes()), Contains("w.wtns: section 1 (header): the witness is over bn128 r"));
  }
  SECTION("truncated file") {
    auto cut = good;
    cut.resize(cut.size() - 10);
    CHECK_THROWS_WITH(decode(cut), Contains("w.wtns: section type 2: truncated"));
  }
  SECTION("a values section shorter than the header says") {
    auto c = container::parse(good);
    c.section(2).resize(c.section(2).size() - 32);
    CHECK_THROWS_WITH(decode(c.bytes()), Contains("section 2 (values): holds 66240 bytes, the header's 2071 values "
                                                  "need 66272 (truncated)"));
  }
  SECTION("a value not below r") {
    auto c = container::parse(good);
    std::fill(c.section(2).begin() + 32 * 7, c.section(2).begin() + 32 * 8, 0xff);
    CHECK_THROWS_WITH(decode(c.bytes()), Contains("section 2 (values): value 7 is not below r"));
  }
  SECTION("not a witness file") {
    CHECK_THROWS_WITH(r1cs::read_wtns(circom_data_dir() / "cube.r1cs"), Contains("not a .wtns file"));
  }
  SECTION("the file as it is reads") { CHECK(decode(good).size() == 2071); }
}

TEST_CASE("the r1cs check passes circom's witness and names the first constraint a changed one breaks",
          "[r1cs][circom][cpu]") {
  const auto r1cs_file = r1cs::circom_r1cs::read(circom_data_dir() / "poseidon_chain.r1cs");
  CHECK(r1cs_file.num_wires() == 2071);
  CHECK(r1cs_file.num_public() == 2);
  CHECK(r1cs_file.num_constraints() == 2068);
  auto w = r1cs::read_wtns(wtns_name);
  CHECK_FALSE(r1cs_file.first_unsatisfied(w).has_value());
  w[100] += fr::one();
  CHECK(r1cs_file.first_unsatisfied(w).has_value());
  w.pop_back();
  CHECK_THROWS_AS(r1cs_file.first_unsatisfied(w), std::invalid_argument);
}

TEST_CASE("an r1cs of another prime or cut short is refused", "[r1cs][circom][cpu]") {
  auto c = container::parse(read_bytes(circom_data_dir() / "cube.r1cs"));
  auto cut = c;
  cut.section(2).resize(cut.section(2).size() - 5);
  CHECK_THROWS_WITH(r1cs::circom_r1cs::decode(cut.bytes(), "c.r1cs"), Contains("c.r1cs: section 2 (constraints):"));
  c.section(1)[4] ^= 1;  // the prime's lowest byte
  CHECK_THROWS_WITH(r1cs::circom_r1cs::decode(c.bytes(), "c.r1cs"),
                    Contains("c.r1cs: section 1 (header): the circuit is over 0x73eda753"));
}

TEST_CASE("an r1cs gives the matrices snarkjs proves on: the constraints, then a row per public signal",
          "[r1cs][circom][cpu]") {
  const auto r1cs_file = r1cs::circom_r1cs::read(circom_data_dir() / "poseidon_chain.r1cs");
  const r1cs::pce_matrices m = r1cs_file.matrices();
  REQUIRE_NOTHROW(m.validate());
  // 2068 constraints + 2 public signals: 2^(floor(log2 2070) + 1).
  CHECK(r1cs_file.domain_size() == 4096);
  CHECK(m.domain_size == 4096);
  CHECK(m.num_inputs == 3);
  CHECK(m.num_aux == 2071 - 3);
  CHECK(m.num_rows == 2068 + 3);
  // The rows after the constraints: A = signal s (one), B = C = 0.
  for (std::uint32_t s = 0; s < 3; ++s) {
    const std::size_t row = 2068 + s;
    REQUIRE(m.a.row_offsets[row + 1] - m.a.row_offsets[row] == 1);
    CHECK(m.a.columns[m.a.row_offsets[row]] == s);
    CHECK(m.a.coefficients[m.a.row_offsets[row]] == r1cs::pce_coefficient_one);
    CHECK(m.b.row_offsets[row + 1] == m.b.row_offsets[row]);
    CHECK(m.c.row_offsets[row + 1] == m.c.row_offsets[row]);
  }
  // A w * B w = C w on every row with circom's witness; the public rows give a = w_s, c = 0.
  const auto w = r1cs::read_wtns(wtns_name);
  std::vector<fr> a(m.domain_size), b(m.domain_size), c(m.domain_size);
  m.evaluate(w, a, b, c);
  std::size_t unsatisfied = 0;
  for (std::size_t row = 0; row < m.domain_size; ++row) unsatisfied += a[row] * b[row] != c[row];
  CHECK(unsatisfied == 0);
  for (std::size_t s = 0; s < 3; ++s) CHECK(a[2068 + s] == w[s]);
}
