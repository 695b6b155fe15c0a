// Helpers shared by the Groth16 tests: bases whose discrete logarithms are known, so that a large
// MSM can be checked with one scalar multiplication, and a scratch directory; random points
// (inside and outside the subgroup) come from the field tests' helpers.
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/field/scalar.hpp>

#include "field/curve_test_support.hpp"

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
using field::testing::random_curve_point;
using field::testing::random_subgroup_point;

/// Bases P_i = [k_i]G with the k_i known: k_i = start + i * step, made with one addition each.
template <class Curve>
struct known_bases {
  std::vector<affine_of<Curve>> points;
  std::vector<field::fr> logs;

  template <class URBG>
  static known_bases make(std::size_t n, URBG& gen) {
    known_bases out;
    const field::fr start = field::fr::random(gen);
    const field::fr step = field::fr::random(gen);
    const auto g = jacobian_of<Curve>::generator();
    jacobian_of<Curve> p = g.mul(start.to_canonical());
    const jacobian_of<Curve> d = g.mul(step.to_canonical());
    std::vector<jacobian_of<Curve>> jac;
    jac.reserve(n);
    field::fr k = start;
    for (std::size_t i = 0; i < n; ++i) {
      jac.push_back(p);
      out.logs.push_back(k);
      p += d;
      k += step;
    }
    out.points = field::batch_normalize(std::span<const jacobian_of<Curve>>(jac));
    return out;
  }
};

}  // namespace coprove::groth16::testing
