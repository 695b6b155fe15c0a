// Fixed-base multiplication for the setup: the multiples j 2^(8w) G (j = 1..255, w = 0..31) of a
// generator in one affine table, so that [k]G is at most 32 mixed additions, and a batch that
// turns many scalars into affine points on all cores with one inversion per chunk. The table
// reads depend on the scalar (as in bellman's generator): the setup is meant to run once, on a
// machine that runs nothing else.
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/groth16/secret_source.hpp>

#include <algorithm>
#include <span>
#include <vector>

namespace coprove::groth16::detail {

template <class Curve>
class fixed_base_table {
 public:
  using affine = field::detail::affine_point<Curve>;
  using jacobian = field::detail::jacobian_point<Curve>;
  using xyzz = field::detail::xyzz_point<Curve>;

  static constexpr unsigned window = 8;
  static constexpr unsigned windows = 256 / window;
  static constexpr unsigned per_window = (1u << window) - 1;

  explicit fixed_base_table(const affine& base) {
    std::vector<jacobian> entries;
    entries.reserve(windows * per_window);
    jacobian window_base = base.to_jacobian();
    for (unsigned w = 0; w < windows; ++w) {
      jacobian p = window_base;
      for (unsigned j = 1; j <= per_window; ++j) {
        entries.push_back(p);
        p += window_base;
      }
      window_base = p;  // 256 * window_base = 2^(8(w+1)) G
    }
    table_ = field::batch_normalize(std::span<const jacobian>(entries));
  }

  /// [k]G for the canonical limbs of k.
  xyzz multiply(const field::scalar_limbs& k) const noexcept {
    xyzz acc = xyzz::identity();
    for (unsigned w = 0; w < windows; ++w) {
      const unsigned digit = static_cast<unsigned>((k[w / 8] >> (8 * (w % 8))) & 0xff);
      if (digit != 0) acc += table_[w * per_window + digit - 1];
    }
    return acc;
  }

  /// out[i] = [scalars[i]] G, on all cores.
  void multiply_all(std::span<const field::fr> scalars, std::span<affine> out) const {
    constexpr std::size_t chunk = 1024;
    field::parallel_for(0, (scalars.size() + chunk - 1) / chunk, [&](std::size_t lo, std::size_t hi) {
      std::vector<jacobian> points;
      for (std::size_t c = lo; c < hi; ++c) {
        const std::size_t begin = c * chunk, end = std::min(scalars.size(), begin + chunk);
        points.clear();
        for (std::size_t i = begin; i < end; ++i) {
          wiped<field::scalar_limbs> k(scalars[i].to_canonical());
          points.push_back(multiply(*k).to_jacobian());
        }
        const auto affine_points = field::batch_normalize(std::span<const jacobian>(points));
        std::copy(affine_points.begin(), affine_points.end(), out.begin() + static_cast<std::ptrdiff_t>(begin));
      }
    });
  }

  /// A vector of the multiples.
  std::vector<affine> multiply_all(std::span<const field::fr> scalars) const {
    std::vector<affine> out(scalars.size());
    multiply_all(scalars, out);
    return out;
  }

 private:
  std::vector<affine> table_;
};

}  // namespace coprove::groth16::detail
