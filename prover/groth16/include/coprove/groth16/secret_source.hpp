// Where the secrets of Groth16 come from: the toxic waste of a setup (tau, alpha, beta, gamma,
// delta) and a proof's blinding (r, s). The default draws from the operating system's CSPRNG
// (getrandom(2)); the insecure mode derives them from a 64-bit seed (SHA-256 in counter mode) so
// that tests and benchmarks can make the same key or proof twice, and says so at warning each
// time it is created. Secrets are wiped with secure_wipe once used, so they do not linger in
// freed memory.
#pragma once

#include <coprove/field/fr.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace coprove::groth16 {

/// Overwrites n bytes at p with zeros in a way the compiler may not elide.
void secure_wipe(void* p, std::size_t n) noexcept;

/// Wipes every element of a span of trivially copyable values.
template <class T>
void secure_wipe(std::span<T> values) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  secure_wipe(static_cast<void*>(values.data()), values.size_bytes());
}

/// A trivially copyable value that is wiped when it goes out of scope.
template <class T>
class wiped {
 public:
  static_assert(std::is_trivially_copyable_v<T>);
  wiped() = default;
  explicit wiped(const T& v) : value_(v) {}
  wiped(const wiped&) = delete;
  wiped& operator=(const wiped&) = delete;
  ~wiped() { secure_wipe(static_cast<void*>(&value_), sizeof value_); }
  T& operator*() noexcept { return value_; }
  const T& operator*() const noexcept { return value_; }
  T* operator->() noexcept { return &value_; }

 private:
  T value_{};
};

/// A vector of secret values that wipes its elements when destroyed.
template <class T>
class wiped_vector {
 public:
  static_assert(std::is_trivially_copyable_v<T>);
  wiped_vector() = default;
  explicit wiped_vector(std::size_t n, const T& fill = T{}) : values_(n, fill) {}
  wiped_vector(const wiped_vector&) = delete;
  wiped_vector& operator=(const wiped_vector&) = delete;
  wiped_vector(wiped_vector&&) noexcept = default;
  wiped_vector& operator=(wiped_vector&& o) noexcept {
    wipe();
    values_ = std::move(o.values_);
    return *this;
  }
  ~wiped_vector() { wipe(); }

  std::span<T> span() noexcept { return values_; }
  std::span<const T> span() const noexcept { return values_; }
  T& operator[](std::size_t i) noexcept { return values_[i]; }
  const T& operator[](std::size_t i) const noexcept { return values_[i]; }
  std::size_t size() const noexcept { return values_.size(); }
  /// Wipes and frees the elements now.
  void wipe() noexcept {
    secure_wipe(std::span<T>(values_));
    values_ = {};
  }

 private:
  std::vector<T> values_;
};

/// A source of secret field elements.
class secret_source {
 public:
  /// Draws from getrandom(2); throws std::system_error if the kernel refuses.
  static secret_source system();
  /// Deterministic draws from `seed`, for tests and benchmarks only: logs at warning (channel
  /// "groth16") that `purpose` uses an insecure seeded source.
  static secret_source insecure_seeded(std::uint64_t seed, std::string_view purpose);
  /// The same without the warning, for a caller that said at warning once that it runs in the
  /// insecure mode and derives one source per use from its seed (an engine: one per proof).
  static secret_source insecure_seeded_announced(std::uint64_t seed);

  secret_source(secret_source&&) noexcept;
  secret_source& operator=(secret_source&&) noexcept;
  secret_source(const secret_source&) = delete;
  secret_source& operator=(const secret_source&) = delete;
  ~secret_source();

  /// A uniform element of Fr (rejection sampling on 255-bit draws).
  field::fr uniform();
  /// A uniform non-zero element of Fr.
  field::fr nonzero();
  /// Uniform bytes (system: getrandom; seeded: the SHA-256 stream).
  void fill(std::span<std::byte> out);
  /// True for the insecure seeded mode.
  bool deterministic() const noexcept { return seeded_; }

 private:
  secret_source(bool seeded, std::uint64_t seed) noexcept;

  bool seeded_ = false;
  std::array<std::byte, 8> seed_{};
  std::uint64_t counter_ = 0;
};

}  // namespace coprove::groth16
