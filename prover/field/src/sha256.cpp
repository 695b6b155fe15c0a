// SHA-256 (FIPS 180-4): a portable implementation, and one with the x86-64 SHA extensions where
// the CPU has them (chosen once from CPUID: a key file's SHA-256 runs at several times the bytes a
// second). Evaluation points are derived with it, and key files are checked against key.json.
#include <coprove/field/sha256.hpp>

#include <coprove/field/detail/limbs.hpp>

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COPROVE_SHA_EXTENSIONS 1
#include <immintrin.h>
#else
#define COPROVE_SHA_EXTENSIONS 0
#endif

namespace coprove::field {

namespace {

constexpr std::array<std::uint32_t, 64> round_constants{
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::array<std::uint32_t, 8> initial_state{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr std::uint32_t rotr(std::uint32_t x, int n) noexcept { return (x >> n) | (x << (32 - n)); }

}  // namespace

sha256::sha256() noexcept : state_(initial_state), buffer_{} {}

namespace detail {

void sha256_blocks_portable(std::array<std::uint32_t, 8>& state, const std::uint8_t* data, std::size_t blocks) noexcept {
  for (; blocks > 0; --blocks, data += 64) {
    const std::uint8_t* block = data;
    std::array<std::uint32_t, 64> w;
    for (int i = 0; i < 16; ++i) {
      w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
             (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, h] = state;
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const std::uint32_t ch = (e & f) ^ (~e & g);
      const std::uint32_t t1 = h + s1 + ch + round_constants[i] + w[i];
      const std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      const std::uint32_t t2 = s0 + maj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#if COPROVE_SHA_EXTENSIONS
// The state lives as two registers, ABEF and CDGH (the order sha256rnds2 takes); each pair of
// rounds takes two words of message plus constants from the low half of a register. The message
// schedule runs four words at a time: W[t..t+3] = msg2(msg1(W[t-16..], W[t-12..]) + W[t-7..t-4],
// W[t-4..t-1]).
__attribute__((target("sha,ssse3,sse4.1"))) void sha256_blocks_extensions(std::array<std::uint32_t, 8>& state,
                                                                           const std::uint8_t* data,
                                                                           std::size_t blocks) noexcept {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data()));      // A B C D (lanes 0-3)
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data() + 4));  // E F G H
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i w[4];  // the last four groups of four message words, group g at w[g % 4]
    for (int g = 0; g < 16; ++g) {
      __m128i& group = w[g % 4];
      if (g < 4) {
        group = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * g)), byte_swap);
      } else {
        // w[g % 4] holds group g - 4 until it is replaced here.
        const __m128i x = _mm_add_epi32(_mm_sha256msg1_epu32(group, w[(g - 3) % 4]),
                                        _mm_alignr_epi8(w[(g - 1) % 4], w[(g - 2) % 4], 4));
        group = _mm_sha256msg2_epu32(x, w[(g - 1) % 4]);
      }
      __m128i wk = _mm_add_epi32(group, _mm_loadu_si128(reinterpret_cast<const __m128i*>(&round_constants[4 * g])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      wk = _mm_shuffle_epi32(wk, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data()), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data() + 4), hgfe);
}
#else
void sha256_blocks_extensions(std::array<std::uint32_t, 8>& state, const std::uint8_t* data,
                              std::size_t blocks) noexcept {
  sha256_blocks_portable(state, data, blocks);  // never chosen: sha256_extensions_available() is false
}
#endif

bool sha256_extensions_available() noexcept {
#if COPROVE_SHA_EXTENSIONS
  static const bool available = cpu_has_sha_extensions();
  return available;
#else
  return false;
#endif
}

}  // namespace detail

std::string_view sha256_path() noexcept {
  return detail::sha256_extensions_available() ? "x86-64 SHA extensions" : "portable";
}

void sha256::compress(const std::uint8_t* data, std::size_t blocks) noexcept {
  if (detail::sha256_extensions_available()) {
    detail::sha256_blocks_extensions(state_, data, blocks);
  } else {
    detail::sha256_blocks_portable(state_, data, blocks);
  }
}

void sha256::update(std::span<const std::byte> data) noexcept {
  const auto* p = reinterpret_cast<const std::uint8_t*>(data.data());
  std::size_t left = data.size();
  length_ += left;
  if (buffered_ > 0) {
    const std::size_t take = std::min(left, 64 - buffered_);
    std::memcpy(buffer_.data() + buffered_, p, take);
    buffered_ += take;
    p += take;
    left -= take;
    if (buffered_ < 64) return;
    compress(buffer_.data(), 1);
    buffered_ = 0;
  }
  if (left >= 64) {
    compress(p, left / 64);
    p += left / 64 * 64;
    left %= 64;
  }
  if (left > 0) {
    std::memcpy(buffer_.data(), p, left);
    buffered_ = left;
  }
}

void sha256::update(std::string_view text) noexcept {
  update(std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

sha256::digest sha256::finish() noexcept {
  const std::uint64_t bit_length = length_ * 8;
  std::array<std::byte, 72> padding{};
  padding[0] = std::byte{0x80};
  const std::size_t pad = (buffered_ < 56 ? 56 - buffered_ : 120 - buffered_);
  for (int i = 0; i < 8; ++i) padding[pad + i] = static_cast<std::byte>(bit_length >> (56 - 8 * i));
  update(std::span<const std::byte>(padding.data(), pad + 8));
  digest out;
  for (int i = 0; i < 8; ++i) {
    for (int k = 0; k < 4; ++k) out[4 * i + k] = static_cast<std::byte>(state_[i] >> (24 - 8 * k));
  }
  *this = sha256();
  return out;
}

sha256::digest sha256::hash(std::span<const std::byte> data) noexcept {
  sha256 hasher;
  hasher.update(data);
  return hasher.finish();
}

std::string to_hex(std::span<const std::byte> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const std::byte b : bytes) {
    out.push_back(digits[std::to_integer<unsigned>(b) >> 4]);
    out.push_back(digits[std::to_integer<unsigned>(b) & 15]);
  }
  return out;
}

}  // namespace coprove::field
