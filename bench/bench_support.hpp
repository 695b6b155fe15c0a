// Small pieces the field benchmarks share: the median of repeated timings and reproducible random
// field elements filled on all cores. The command line and the output are support/options.hpp's
// and support/report.hpp's.
#pragma once

#include <coprove/field/fr.hpp>
#include <coprove/field/parallel.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
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

}  // namespace coprove::bench
