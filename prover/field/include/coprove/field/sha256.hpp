// SHA-256 (FIPS 180-4), used to derive evaluation points from a partition's inputs deterministically.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace coprove::field {

/// Incremental SHA-256.
class sha256 {
 public:
  using digest = std::array<std::byte, 32>;

  sha256() noexcept;
  /// Appends bytes to the message.
  void update(std::span<const std::byte> data) noexcept;
  void update(std::string_view text) noexcept;
  /// Pads, returns the digest and resets the hasher to the empty message.
  digest finish() noexcept;

  /// The digest of one message.
  static digest hash(std::span<const std::byte> data) noexcept;

 private:
  void compress(const std::uint8_t* data, std::size_t blocks) noexcept;

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_;
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes seen so far
};

/// The compression function this process uses, chosen once from CPUID: "x86-64 SHA extensions"
/// (about six times the portable path's bytes a second) or "portable".
std::string_view sha256_path() noexcept;

namespace detail {
/// Compresses `blocks` 64-byte blocks into `state`: the portable function, and the one with the
/// x86-64 SHA extensions (call it only where sha256_extensions_available()).
void sha256_blocks_portable(std::array<std::uint32_t, 8>& state, const std::uint8_t* data, std::size_t blocks) noexcept;
void sha256_blocks_extensions(std::array<std::uint32_t, 8>& state, const std::uint8_t* data,
                              std::size_t blocks) noexcept;
bool sha256_extensions_available() noexcept;
}  // namespace detail

/// Lower-case hex of bytes (digests, encodings), two digits a byte.
std::string to_hex(std::span<const std::byte> bytes);

}  // namespace coprove::field
