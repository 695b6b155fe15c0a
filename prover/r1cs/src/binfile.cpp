// The iden3 binary container (see binfile.hpp).
#include <coprove/r1cs/binfile.hpp>

#include <coprove/runtime/input_file.hpp>

#include <array>
#include <iterator>

namespace coprove::r1cs {

namespace {

std::string describe(const std::string& file, const std::string& section, const std::string& why) {
  return file + (section.empty() ? "" : ": section " + section) + ": " + why;
}

std::uint64_t read_le(const std::uint8_t* p, std::size_t n) noexcept {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

std::string hex_be(std::span<const std::uint8_t> le) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = "0x";
  for (std::size_t i = le.size(); i-- > 0;) {
    out += digits[le[i] >> 4];
    out += digits[le[i] & 15];
  }
  return out;
}

struct known_prime {
  const char* name;
  const char* hex;  // big-endian, 0x-prefixed, as hex_be writes it
};

constexpr known_prime known_primes[] = {
    {"bls12381 r", "0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"},
    {"bls12381 q",
     "0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"},
    {"bn128 r", "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"},
    {"bn128 q", "0x30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd47"},
    {"goldilocks", "0xffffffff00000001"},
    {"secq256k1 (secp256k1 q)", "0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f"},
    {"pallas r (vesta q)", "0x40000000000000000000000000000000224698fc0994a8dd8c46eb2100000001"},
    {"vesta r (pallas q)", "0x40000000000000000000000000000000224698fc094cf91b992d30ed00000001"},
};

}  // namespace

circom_file_error::circom_file_error(std::string file, std::string section, std::string why)
    : std::runtime_error(describe(file, section, why)),
      file_(std::move(file)),
      section_(std::move(section)),
      why_(std::move(why)) {}

std::string describe_prime(std::span<const std::uint8_t> prime_le) {
  // Leading zero bytes (a prime written in more bytes than it needs) do not change the number.
  while (!prime_le.empty() && prime_le.back() == 0) prime_le = prime_le.first(prime_le.size() - 1);
  const std::string hex = hex_be(prime_le);
  for (const auto& p : known_primes) {
    std::string_view want = p.hex;
    if (hex == want) return p.name;
  }
  return hex;
}

bool is_bls12_381_r(std::span<const std::uint8_t> prime_le) noexcept {
  if (prime_le.size() != 32) return false;
  for (std::size_t i = 0; i < 4; ++i) {
    if (read_le(prime_le.data() + 8 * i, 8) != field::detail::fr_modulus[i]) return false;
  }
  return true;
}

binfile::binfile(std::vector<std::uint8_t> bytes, std::string name, std::string_view magic,
                 std::uint32_t max_version)
    : bytes_(std::move(bytes)), name_(std::move(name)) {
  const std::size_t size = bytes_.size();
  if (size < 12) fail("", "truncated: " + std::to_string(size) + " bytes, shorter than the 12-byte header");
  const std::string_view found(reinterpret_cast<const char*>(bytes_.data()), 4);
  if (found != magic) {
    std::string printable;
    for (char c : found) printable += (c >= 32 && c < 127) ? c : '?';
    fail("", "not a ." + std::string(magic) + " file (magic \"" + printable + "\", expected \"" +
                 std::string(magic) + "\")");
  }
  version_ = static_cast<std::uint32_t>(read_le(bytes_.data() + 4, 4));
  if (version_ == 0 || version_ > max_version)
    fail("", "version " + std::to_string(version_) + " is not supported (1 to " + std::to_string(max_version) + ")");
  const std::uint64_t count = read_le(bytes_.data() + 8, 4);
  std::size_t at = 12;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (size - at < 12)
      fail("", "truncated: the header of section " + std::to_string(i + 1) + " of " + std::to_string(count) +
                   " ends past the file's " + std::to_string(size) + " bytes");
    const auto type = static_cast<std::uint32_t>(read_le(bytes_.data() + at, 4));
    const std::uint64_t length = read_le(bytes_.data() + at + 4, 8);
    at += 12;
    if (length > size - at)
      fail("type " + std::to_string(type), "truncated: declares " + std::to_string(length) + " bytes, the file has " +
                                               std::to_string(size - at) + " after its header");
    sections_.emplace(type, std::span<const std::uint8_t>(bytes_.data() + at, static_cast<std::size_t>(length)));
    at += static_cast<std::size_t>(length);
  }
  if (at != size) fail("", std::to_string(size - at) + " bytes after the last of " + std::to_string(count) + " sections");
}

std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path, std::string_view what) {
  try {
    return runtime::read_input_file(path, runtime::input_limits::binary_file_bytes, what);
  } catch (const runtime::input_file_error& e) {
    throw circom_file_error(path.string(), "", e.why());
  }
}

binfile binfile::read(const std::filesystem::path& path, std::string_view magic, std::uint32_t max_version) {
  return binfile(read_file_bytes(path, std::string(magic) + " file"), path.string(), magic, max_version);
}

std::span<const std::uint8_t> binfile::section(std::uint32_t type, const std::string& section_name) const {
  const auto range = sections_.equal_range(type);
  if (range.first == range.second) fail(section_name, "missing (no section of type " + std::to_string(type) + ")");
  if (std::next(range.first) != range.second) fail(section_name, "appears more than once");
  return range.first->second;
}

void binfile::fail(const std::string& section, const std::string& why) const {
  throw circom_file_error(name_, section, why);
}

std::uint32_t section_reader::u32(const char* what) {
  return static_cast<std::uint32_t>(read_le(bytes(4, what).data(), 4));
}

std::uint64_t section_reader::u64(const char* what) { return read_le(bytes(8, what).data(), 8); }

std::span<const std::uint8_t> section_reader::bytes(std::size_t n, const char* what) {
  if (n > remaining())
    fail("truncated: " + std::string(what) + " needs " + std::to_string(n) + " bytes at offset " +
         std::to_string(at_) + ", the section has " + std::to_string(bytes_.size()));
  const auto out = bytes_.subspan(at_, n);
  at_ += n;
  return out;
}

void section_reader::expect_end() {
  if (remaining() != 0)
    fail("size " + std::to_string(bytes_.size()) + " does not match its contents (" + std::to_string(at_) +
         " bytes; " + std::to_string(remaining()) + " left over)");
}

std::optional<field::fr> fr_from_le_bytes(std::span<const std::uint8_t> bytes) noexcept {
  if (bytes.size() != 32) return std::nullopt;
  std::array<std::uint64_t, 4> v{};
  for (std::size_t i = 0; i < 4; ++i) v[i] = read_le(bytes.data() + 8 * i, 8);
  for (std::size_t i = 4; i-- > 0;) {
    if (v[i] != field::detail::fr_modulus[i]) {
      if (v[i] > field::detail::fr_modulus[i]) return std::nullopt;
      return field::fr::from_canonical(v);
    }
  }
  return std::nullopt;
}

}  // namespace coprove::r1cs
