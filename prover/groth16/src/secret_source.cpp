// getrandom(2) and the seeded SHA-256 stream behind secret_source, and the wipe that the
// compiler cannot drop (explicit_bzero where glibc has it, volatile stores otherwise).
#include <coprove/groth16/secret_source.hpp>

#include <coprove/field/scalar.hpp>
#include <coprove/field/sha256.hpp>
#include <coprove/runtime/log.hpp>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include <sys/random.h>

namespace coprove::groth16 {

void secure_wipe(void* p, std::size_t n) noexcept {
  if (p == nullptr || n == 0) return;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 25))
  explicit_bzero(p, n);
#else
  volatile unsigned char* bytes = static_cast<volatile unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = 0;
#endif
}

secret_source::secret_source(bool seeded, std::uint64_t seed) noexcept : seeded_(seeded) {
  for (int i = 0; i < 8; ++i) seed_[i] = static_cast<std::byte>(seed >> (8 * i));
}

secret_source secret_source::system() { return secret_source(false, 0); }

secret_source secret_source::insecure_seeded(std::uint64_t seed, std::string_view purpose) {
  COPROVE_LOG(warning, "groth16") << std::string(purpose) << " uses an insecure deterministic source seeded with "
                                  << seed << ": anyone who knows the seed can forge proofs; for tests and "
                                  << "benchmarks only";
  return secret_source(true, seed);
}

secret_source secret_source::insecure_seeded_announced(std::uint64_t seed) { return secret_source(true, seed); }

secret_source::secret_source(secret_source&& o) noexcept
    : seeded_(o.seeded_), seed_(o.seed_), counter_(o.counter_) {
  secure_wipe(o.seed_.data(), o.seed_.size());
}

secret_source& secret_source::operator=(secret_source&& o) noexcept {
  seeded_ = o.seeded_;
  seed_ = o.seed_;
  counter_ = o.counter_;
  secure_wipe(o.seed_.data(), o.seed_.size());
  return *this;
}

secret_source::~secret_source() { secure_wipe(seed_.data(), seed_.size()); }

void secret_source::fill(std::span<std::byte> out) {
  if (!seeded_) {
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t got = ::getrandom(out.data() + done, out.size() - done, 0);
      if (got < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "getrandom");
      }
      done += static_cast<std::size_t>(got);
    }
    return;
  }
  std::size_t done = 0;
  while (done < out.size()) {
    field::sha256 hasher;
    hasher.update("coprove.groth16.insecure_seeded");
    hasher.update(seed_);
    std::array<std::byte, 8> counter;
    for (int i = 0; i < 8; ++i) counter[i] = static_cast<std::byte>(counter_ >> (8 * i));
    ++counter_;
    hasher.update(counter);
    auto block = hasher.finish();
    const std::size_t take = std::min(block.size(), out.size() - done);
    std::memcpy(out.data() + done, block.data(), take);
    done += take;
    secure_wipe(block.data(), block.size());
  }
}

field::fr secret_source::uniform() {
  wiped<std::array<std::uint64_t, 4>> limbs;
  for (;;) {
    fill(std::as_writable_bytes(std::span(limbs->data(), 4)));
    (*limbs)[3] &= 0x7fffffffffffffffULL;
    if (field::scalar_is_canonical(*limbs)) return field::fr::from_canonical(*limbs);
  }
}

field::fr secret_source::nonzero() {
  for (;;) {
    const field::fr v = uniform();
    if (!v.is_zero()) return v;
  }
}

}  // namespace coprove::groth16
