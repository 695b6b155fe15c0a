// Small pieces the field benchmarks share: the median of repeated timings and reproducible random
// field elements filled on all cores.
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/field/parallel.hpp>

#include "support/report.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <cstdint>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace coprove::bench {

/// The median of v (the mean of the middle two for an even count); v must not be empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/// n uniform field elements, the same for the same seed whatever the thread count.
inline std::vector<field::fr> random_elements(std::size_t n, std::uint64_t seed) {
  std::vector<field::fr> out(n);
  constexpr std::size_t chunk = 1 << 14;
  field::parallel_for(0, (n + chunk - 1) / chunk, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi; ++c) {
      std::mt19937_64 gen(seed * 1000003 + c);
      const std::size_t end = std::min(n, (c + 1) * chunk);
      for (std::size_t i = c * chunk; i < end; ++i) out[i] = field::fr::random(gen);
    }
  });
  return out;
}

/// The value after option argv[i] (advancing i); prints usage and exits with status 1 when the
/// command line ends first.
inline std::string option_value(int argc, char** argv, int& i, void (*usage)()) {
  if (i + 1 >= argc) {
    usage();
    std::exit(1);
  }
  return argv[++i];
}

/// The comma-separated numbers of `text`, each in [lo, hi]; throws std::invalid_argument naming
/// `program` and `what` (what a number is) otherwise.
inline std::vector<unsigned> parse_numbers(const std::string& text, unsigned lo, unsigned hi, const std::string& program,
                                           const std::string& what) {
  std::vector<unsigned> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const unsigned v = static_cast<unsigned>(std::stoul(item));
    if (v < lo || v > hi)
      throw std::invalid_argument(program + ": " + what + " " + item + " outside " + std::to_string(lo) + ".." +
                                  std::to_string(hi));
    out.push_back(v);
  }
  return out;
}

/// The comma-separated log2 sizes of `text`, each in [lo, hi].
inline std::vector<unsigned> parse_log_sizes(const std::string& text, unsigned lo, unsigned hi,
                                             const std::string& program) {
  return parse_numbers(text, lo, hi, program, "log size");
}

}  // namespace coprove::bench
