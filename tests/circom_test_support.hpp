// Test helpers for circom and snarkjs files: the fixtures of tests/data/circom (made by
// scripts/make_circom_fixtures.sh) and an editable form of the iden3 container, to make files
// that are wrong in exactly one way.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace coprove::circom_fixtures {

/// tests/data/circom, or $COPROVE_CIRCOM_DATA where the tests run on a copy of the tree elsewhere
/// (the GPU host).
inline std::filesystem::path circom_data_dir() {
  if (const char* dir = std::getenv("COPROVE_CIRCOM_DATA"); dir != nullptr && *dir != '\0') return dir;
  return std::filesystem::path(COPROVE_SOURCE_DIR) / "tests" / "data" / "circom";
}

inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

/// A container taken apart: magic, version and the sections in file order.
struct container {
  std::string magic;
  std::uint32_t version = 0;
  std::vector<std::pair<std::uint32_t, std::vector<std::uint8_t>>> sections;

  static std::uint64_t le(const std::uint8_t* p, int n) {
    std::uint64_t v = 0;
    for (int i = n; i-- > 0;) v = (v << 8) | p[i];
    return v;
  }
  static void put(std::vector<std::uint8_t>& out, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }

  static container parse(const std::vector<std::uint8_t>& bytes) {
    container c;
    c.magic.assign(bytes.begin(), bytes.begin() + 4);
    c.version = static_cast<std::uint32_t>(le(bytes.data() + 4, 4));
    const auto count = le(bytes.data() + 8, 4);
    std::size_t at = 12;
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto type = static_cast<std::uint32_t>(le(bytes.data() + at, 4));
      const auto size = static_cast<std::size_t>(le(bytes.data() + at + 4, 8));
      at += 12;
      c.sections.emplace_back(type, std::vector<std::uint8_t>(bytes.begin() + at, bytes.begin() + at + size));
      at += size;
    }
    return c;
  }

  std::vector<std::uint8_t>& section(std::uint32_t type) {
    for (auto& [t, b] : sections)
      if (t == type) return b;
    throw std::runtime_error("no section " + std::to_string(type));
  }

  std::vector<std::uint8_t> bytes() const {
    std::vector<std::uint8_t> out(magic.begin(), magic.end());
    put(out, version, 4);
    put(out, sections.size(), 4);
    for (const auto& [t, b] : sections) {
      put(out, t, 4);
      put(out, b.size(), 8);
      out.insert(out.end(), b.begin(), b.end());
    }
    return out;
  }
};

}  // namespace coprove::circom_fixtures
