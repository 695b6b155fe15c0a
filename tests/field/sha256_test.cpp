// SHA-256's two compression functions: the SHA-extensions one (where the CPU has it) against the
// portable one block by block, and the path in use against FIPS 180-4's long message.
#include <coprove/field/sha256.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace coprove::field;

TEST_CASE("sha256 over a million 'a' (FIPS 180-4) on the path in use, fed in uneven pieces", "[field][sha256][cpu]") {
  const std::string piece(997, 'a');
  sha256 hasher;
  std::size_t fed = 0;
  while (fed < 1'000'000) {
    const std::size_t n = std::min(piece.size() - fed % 13, 1'000'000 - fed);
    hasher.update(std::string_view(piece.data(), n));
    fed += n;
  }
  INFO("path: " << sha256_path());
  CHECK(to_hex(hasher.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256's SHA-extensions compression equals the portable one", "[field][sha256][cpu]") {
  if (!detail::sha256_extensions_available()) {
    WARN("this CPU has no SHA extensions: only the portable path runs here");
    CHECK(sha256_path() == "portable");
    return;
  }
  CHECK(sha256_path() == "x86-64 SHA extensions");
  std::mt19937_64 gen(5);
  std::vector<std::uint8_t> data(64 * 40);
  for (auto& b : data) b = static_cast<std::uint8_t>(gen());
  for (const std::size_t blocks : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{40}}) {
    for (int start = 0; start < 3; ++start) {
      std::array<std::uint32_t, 8> a{}, b{};
      for (auto& word : a) word = static_cast<std::uint32_t>(gen());
      b = a;
      detail::sha256_blocks_portable(a, data.data() + start, blocks - (start > 0 ? 1 : 0));
      detail::sha256_blocks_extensions(b, data.data() + start, blocks - (start > 0 ? 1 : 0));
      INFO(blocks << " blocks from offset " << start);
      CHECK(a == b);
    }
  }
}
