// The multiplicative subgroup of Fr of size n = 2^k (k <= 32) on which R1CS vectors are evaluated,
// its coset by the generator 7, the odd coset omega_2n * H, and the twiddle tables the NTT needs,
// built once per domain on first use and shared by copies of it.
//
// Two conventions pick omega: 7^((r-1)/2^32) squared down (bellman, arkworks, coprove's own keys),
// or 5^((r-1)/2^32) squared down (ffjavascript, hence snarkjs: a zkey's rows and H points are laid
// out on those roots, so its quotient must be computed on them).
#pragma once

#include <coprove/field/fr.hpp>

#include <cstddef>
#include <memory>
#include <span>

namespace coprove::field {

namespace detail {
struct domain_tables;
}

/// Which primitive 2^32-th root of unity the domain's omega is a power of.
enum class domain_roots {
  standard,      ///< 7^((r-1)/2^32): bellman, arkworks, coprove's keys
  ffjavascript,  ///< 5^((r-1)/2^32): ffjavascript and snarkjs (zkeys)
};

class evaluation_domain {
 public:
  /// n must be a power of two in [1, 2^32]; throws std::invalid_argument naming n otherwise.
  explicit evaluation_domain(std::size_t n, domain_roots roots = domain_roots::standard);

  std::size_t size() const noexcept { return size_; }
  unsigned log_size() const noexcept { return log_size_; }
  /// A primitive n-th root of unity (omega^n == 1, omega^(n/2) == -1 for n > 1).
  const fr& omega() const noexcept { return omega_; }
  const fr& omega_inv() const noexcept { return omega_inv_; }
  domain_roots roots() const noexcept { return roots_; }
  /// omega_2n, the square root of omega in the same chain of roots, which shifts the domain onto
  /// the odd powers of omega_2n (snarkjs's coset). Throws std::domain_error for n = 2^32.
  fr odd_coset_shift() const;
  /// 1/n.
  const fr& size_inv() const noexcept { return size_inv_; }
  /// The multiplicative generator 7 of Fr^*, which shifts the domain to the coset g*H.
  static fr coset_generator() noexcept;
  static fr coset_generator_inv() noexcept;
  /// 1/(g^n - 1): the inverse of the vanishing polynomial X^n - 1, constant on the coset g*H.
  fr vanishing_on_coset_inv() const noexcept { return vanishing_on_coset_inv_; }

  /// Forward twiddles by level: entry h + j (1 <= h < n, h a power of two, j < h) is
  /// omega_{2h}^j, so every butterfly level reads a contiguous run. Built on first use (in
  /// parallel) and cached; size n (entry 0 unused).
  std::span<const fr> forward_twiddles() const;
  /// The same layout for omega^-1.
  std::span<const fr> inverse_twiddles() const;

 private:
  std::size_t size_;
  unsigned log_size_;
  domain_roots roots_;
  fr omega_, omega_inv_, size_inv_, vanishing_on_coset_inv_;
  std::shared_ptr<detail::domain_tables> tables_;
};

}  // namespace coprove::field
