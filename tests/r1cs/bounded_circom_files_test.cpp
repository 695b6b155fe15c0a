// The circom file readers against inputs that declare more than they hold: every count is held to
// the bytes that remain before anything is allocated from it (the largest allocation is measured),
// and only regular files are read, the refusal naming the file, the section and the count.
#include <coprove/r1cs/binfile.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>
#include <coprove/r1cs/circom_witness.hpp>

#include "circom_test_support.hpp"
#include "largest_allocation.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

using namespace coprove;
using coprove::circom_fixtures::circom_data_dir;
using coprove::circom_fixtures::container;
using coprove::circom_fixtures::read_bytes;
using Catch::Matchers::Contains;
using coprove::testing::refusal_with_largest_allocation;

namespace {

/// Anything a refused read allocates stays well below this.
constexpr std::size_t small_allocation = std::size_t{1} << 20;

void put_u32(std::vector<std::uint8_t>& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

r1cs::circom_r1cs decode_r1cs(const container& c, const std::string& name) {
  return r1cs::circom_r1cs::decode(c.bytes(), name);
}

}  // namespace

TEST_CASE("an r1cs whose constraint count its section cannot hold is refused before it is sized",
          "[r1cs][circom][bounds][cpu]") {
  auto c = container::parse(read_bytes(circom_data_dir() / "cube.r1cs"));
  // mConstraints is the header's last field (after fs, the prime, four u32 counts and u64 nLabels).
  auto& header = c.section(1);
  put_u32(header, header.size() - 4, 0x80000000u);
  const auto [message, largest] =
      refusal_with_largest_allocation<r1cs::circom_file_error>([&] { (void)decode_r1cs(c, "c.r1cs"); });
  CHECK_THAT(message, Contains("c.r1cs: section 1 (header): mConstraints 2147483648 does not fit section 2's") &&
                          Contains("(12 bytes a constraint at least)"));
  CHECK(largest < small_allocation);
}

TEST_CASE("an r1cs whose nWires its wire map does not hold is refused", "[r1cs][circom][bounds][cpu]") {
  auto c = container::parse(read_bytes(circom_data_dir() / "cube.r1cs"));
  put_u32(c.section(1), 4 + 32, 0xffffffffu);  // nWires, after fs and the prime
  CHECK_THROWS_WITH(decode_r1cs(c, "c.r1cs"), Contains("c.r1cs: section 1 (header): nWires 4294967295 does not match "
                                                       "section 3 (wire map) of 32 bytes (8 bytes a wire)"));
}

TEST_CASE("an r1cs factor count past its section's end is refused naming the count and the bytes left",
          "[r1cs][circom][bounds][cpu]") {
  auto c = container::parse(read_bytes(circom_data_dir() / "cube.r1cs"));
  put_u32(c.section(2), 0, 0x40000000u);  // the first constraint's A
  const auto [message, largest] =
      refusal_with_largest_allocation<r1cs::circom_file_error>([&] { (void)decode_r1cs(c, "c.r1cs"); });
  CHECK_THAT(message, Contains("c.r1cs: section 2 (constraints): constraint 0 declares 1073741824 factors, 36 bytes "
                               "each, and") &&
                          Contains("bytes remain (truncated)"));
  CHECK(largest < small_allocation);
}

TEST_CASE("a witness count its values section cannot hold is refused before the values are allocated",
          "[r1cs][circom][bounds][cpu]") {
  auto c = container::parse(read_bytes(circom_data_dir() / "cube.wtns"));
  auto& header = c.section(1);
  put_u32(header, header.size() - 4, 0x80000000u);  // nWitness
  const auto [message, largest] =
      refusal_with_largest_allocation<r1cs::circom_file_error>([&] { (void)r1cs::decode_wtns(c.bytes(), "w.wtns"); });
  CHECK_THAT(message, Contains("w.wtns: section 2 (values): holds 128 bytes, the header's 2147483648 values need"));
  CHECK(largest < small_allocation);
}

TEST_CASE("a device, a directory or a pipe given as a circom file is refused by its kind, naming it",
          "[r1cs][circom][bounds][cpu]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("coprove-circom-kinds-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path fifo = dir / "w.wtns";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A pipe with no writer: a reader that opened it blocking would never return.
  CHECK_THROWS_WITH(r1cs::read_wtns(fifo), Contains(fifo.string() + ": is a pipe, not a regular file (a witness "
                                                                    "(.wtns) must be one)"));
  CHECK_THROWS_WITH(r1cs::circom_r1cs::read(dir),
                    Contains(dir.string() + ": is a directory, not a regular file (a constraint file (.r1cs)"));
  CHECK_THROWS_WITH(r1cs::read_wtns("/dev/zero"), Contains("/dev/zero: is a character device, not a regular file"));
  CHECK_THROWS_WITH(r1cs::read_file_bytes(dir / "missing.zkey", "zkey"),
                    Contains("missing.zkey: cannot open zkey"));
  std::filesystem::remove_all(dir);
}
