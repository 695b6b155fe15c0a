// Helpers shared by the Groth16 tests: bases whose discrete logarithms are known, so that a large
// MSM can be checked with one scalar multiplication, and a scratch directory; random points
// (inside and outside the subgroup) come from the field tests' helpers.
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/field/scalar.hpp>

#include "field/curve_test_support.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace coprove::groth16::testing {

/// A fresh directory under the system's temporary folder, removed at the end of the test.
struct temp_dir {
  std::filesystem::path path;
  explicit temp_dir(const std::string& tag) {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("coprove-groth16-" + tag + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

using field::testing::affine_of;
using field::testing::jacobian_of;
using field::testing::first_outside_subgroup;
using field::testing::random_curve_point;
using field::testing::random_subgroup_point;

/// Bases P_i = [k_i]G with the k_i known: k_i = start + i * step. Made in chunks on the shared
/// pool (one scalar multiplication to enter a chunk, then one addition a point, normalized per
/// chunk), so that the 2^24 bases of the large GPU tests take seconds rather than minutes.
template <class Curve>
struct known_bases {
  std::vector<affine_of<Curve>> points;
  std::vector<field::fr> logs;

  template <class URBG>
  static known_bases make(std::size_t n, URBG& gen) {
    known_bases out;
    const field::fr start = field::fr::random(gen);
    const field::fr step = field::fr::random(gen);
    out.logs.reserve(n);
    field::fr k = start;
    for (std::size_t i = 0; i < n; ++i) {
      out.logs.push_back(k);
      k += step;
    }
    out.points.resize(n);
    const auto g = jacobian_of<Curve>::generator();
    const jacobian_of<Curve> d = g.mul(step.to_canonical());
    field::parallel_for(
        0, n,
        [&](std::size_t lo, std::size_t hi) {
          std::vector<jacobian_of<Curve>> jac;
          jac.reserve(hi - lo);
          jacobian_of<Curve> p = g.mul(out.logs[lo].to_canonical());
          for (std::size_t i = lo; i < hi; ++i) {
            jac.push_back(p);
            p += d;
          }
          const auto affine = field::batch_normalize(std::span<const jacobian_of<Curve>>(jac));
          std::copy(affine.begin(), affine.end(), out.points.begin() + static_cast<std::ptrdiff_t>(lo));
        },
        4096);
    return out;
  }
};

}  // namespace coprove::groth16::testing
