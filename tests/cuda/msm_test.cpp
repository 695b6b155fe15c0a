// The GPU MSM against the CPU MSM (groth16::msm), compared in affine form, on fresh random inputs:
// G1 and G2 at every size 2^1..2^20 and at sizes that are not powers of two, with the cases that
// break naive kernels (equal points in one bucket, the identity among the bases, scalars 0, 1 and
// r - 1, all scalars equal, mostly 0 and 1), scalars in device memory and in page-locked host
// memory, and window widths from 1 bit (256 windows) to 20. Without a GPU: the signed digits
// recombine to the scalar and the plan's levels and buffers cover every group size.
#include <coprove/cuda/error.hpp>
#include <coprove/cuda/msm.hpp>

#include <coprove/cuda/detail/msm_launch.hpp>
#include <coprove/cuda/msm_plan.hpp>
#include <coprove/field/fq_constants.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/field/fq2.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/groth16/msm.hpp>

#include "cuda_test_kernels.hpp"
#include "groth16/groth16_test_support.hpp"

#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace coprove;
using cuda::msm_group;
using field::fr;
using groth16::testing::known_bases;

std::uint64_t fresh_seed() {
  static std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}

/// A page-locked copy of a vector (bases upload from page-locked memory; scalars may be read there).
template <class T>
class pinned_copy {
 public:
  explicit pinned_copy(const std::vector<T>& v) : size_(v.size()) {
    void* p = nullptr;
    if (cudaMallocHost(&p, std::max<std::size_t>(1, v.size()) * sizeof(T)) != cudaSuccess)
      throw std::runtime_error("cudaMallocHost failed");
    data_.reset(static_cast<T*>(p));
    if (!v.empty()) std::memcpy(static_cast<void*>(data_.get()), v.data(), v.size() * sizeof(T));
  }
  T* data() const { return data_.get(); }
  std::span<const T> span() const { return {data_.get(), size_}; }

 private:
  struct free_host {
    void operator()(T* p) const { cudaFreeHost(p); }
  };
  std::unique_ptr<T, free_host> data_;
  std::size_t size_;
};

/// Scalars copied to device memory.
class device_scalars {
 public:
  explicit device_scalars(const std::vector<fr>& v) {
    void* p = nullptr;
    REQUIRE(cudaMalloc(&p, std::max<std::size_t>(1, v.size()) * sizeof(fr)) == cudaSuccess);
    data_.reset(static_cast<fr*>(p));
    if (!v.empty()) REQUIRE(cudaMemcpy(p, v.data(), v.size() * sizeof(fr), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  const fr* data() const { return data_.get(); }

 private:
  struct free_device {
    void operator()(fr* p) const { cudaFree(p); }
  };
  std::unique_ptr<fr, free_device> data_;
};

template <class Affine>
struct group_types;
template <>
struct group_types<field::g1_affine> {
  using xyzz = field::g1_xyzz;
  using curve = field::g1_curve;
};
template <>
struct group_types<field::g2_affine> {
  using xyzz = field::g2_xyzz;
  using curve = field::g2_curve;
};

/// The GPU MSM of the first `count` scalars (from device memory, or from page-locked host memory
/// when `host_scalars`) in affine form.
template <class Affine>
Affine gpu_msm(cuda::msm_context& context, const cuda::msm_bases<Affine>& bases, const std::vector<fr>& scalars,
               bool host_scalars, const cuda::msm_gpu_options& options) {
  using xyzz = typename group_types<Affine>::xyzz;
  pinned_copy<xyzz> result(std::vector<xyzz>(1));
  // Poison the result: a run that writes nothing must not pass.
  std::memset(static_cast<void*>(result.data()), 0xa5, sizeof(xyzz));
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  if (host_scalars) {
    pinned_copy<fr> pinned(scalars);
    cuda::msm_async(context, bases, pinned.data(), scalars.size(), result.data(), stream, options);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  } else {
    device_scalars on_device(scalars);
    cuda::msm_async(context, bases, on_device.data(), scalars.size(), result.data(), stream, options);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  }
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
  return result.data()->to_affine();
}

template <class Affine>
Affine gpu_msm(cuda::msm_context& context, const cuda::msm_bases<Affine>& bases, const std::vector<fr>& scalars,
               bool host_scalars, unsigned window_bits = 0, std::uint32_t level0_chunk = 0) {
  return gpu_msm(context, bases, scalars, host_scalars, cuda::msm_gpu_options{window_bits, level0_chunk});
}

template <class Affine>
Affine cpu_msm(const std::vector<Affine>& bases, const std::vector<fr>& scalars) {
  return groth16::msm(std::span<const Affine>(bases.data(), scalars.size()), scalars).to_affine();
}

std::vector<fr> random_scalars(std::size_t n, std::mt19937_64& gen) {
  std::vector<fr> out(n);
  for (auto& s : out) s = fr::random(gen);
  return out;
}

fr minus_one() { return fr::zero() - fr::one(); }

bool gpu_present() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

template <class Affine>
void check_sizes(unsigned max_log, unsigned step_log) {
  REQUIRE(gpu_present());
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 gen(seed);
  const std::size_t largest = std::size_t{1} << max_log;
  const auto bases = known_bases<typename group_types<Affine>::curve>::make(largest + 5, gen);
  const pinned_copy<Affine> pinned(bases.points);
  cuda::msm_context context(0);
  const cuda::msm_bases<Affine> on_device(pinned.span(), 0);
  for (unsigned log_n = 1; log_n <= max_log; log_n += step_log) {
    for (const std::size_t n : {std::size_t{1} << log_n, (std::size_t{1} << log_n) + 5 - log_n % 3}) {
      const auto scalars = random_scalars(n, gen);
      INFO("n = " << n);
      CHECK(gpu_msm(context, on_device, scalars, log_n % 2 == 1) == cpu_msm(bases.points, scalars));
    }
  }
}

/// n bases with repeats, negations and identities among them: bucket sums that double, cancel or
/// skip.
template <class Affine>
std::vector<Affine> edge_case_bases(std::size_t n, std::mt19937_64& gen) {
  using curve = typename group_types<Affine>::curve;
  auto points = known_bases<curve>::make(n, gen).points;
  const Affine p = points[0];
  for (std::size_t i = 0; i < n; i += 7) points[i] = p;
  for (std::size_t i = 3; i < n; i += 11) points[i] = -p;
  for (std::size_t i = 5; i < n; i += 13) points[i] = Affine::identity();
  return points;
}

/// Scalar vectors that break naive kernels: 0, 1, r - 1, all equal, mostly 0 and 1, small values.
std::vector<std::pair<const char*, std::vector<fr>>> edge_case_scalars(std::size_t n, std::mt19937_64& gen) {
  std::uniform_int_distribution<int> pick(0, 99);
  const fr random_value = fr::random(gen);
  std::vector<std::pair<const char*, std::vector<fr>>> cases;
  cases.emplace_back("random", random_scalars(n, gen));
  cases.emplace_back("all zero", std::vector<fr>(n, fr::zero()));
  cases.emplace_back("all one", std::vector<fr>(n, fr::one()));
  cases.emplace_back("all r - 1", std::vector<fr>(n, minus_one()));
  cases.emplace_back("all equal", std::vector<fr>(n, random_value));
  std::vector<fr> mostly_boolean(n);
  for (auto& s : mostly_boolean) {
    const int x = pick(gen);
    s = x < 45 ? fr::zero() : x < 90 ? fr::one() : x < 95 ? minus_one() : fr::random(gen);
  }
  cases.emplace_back("0/1 heavy with r - 1", mostly_boolean);
  std::vector<fr> small(n);
  for (auto& s : small) s = fr::from_uint64(static_cast<std::uint64_t>(pick(gen) % 5));
  cases.emplace_back("0..4", small);
  return cases;
}

/// The edge cases on `n` bases, at several window widths, with level 0 in chunks of the plan's size
/// (0) or of the others given.
template <class Affine>
void check_edge_cases(std::size_t n, std::initializer_list<unsigned> widths,
                      std::initializer_list<std::uint32_t> level0_chunks = {0}) {
  REQUIRE(gpu_present());
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 gen(seed);
  const auto points = edge_case_bases<Affine>(n, gen);
  const std::vector<Affine> same(n, points[0]);
  const pinned_copy<Affine> pinned(points), pinned_same(same);
  cuda::msm_context context(0);
  const cuda::msm_bases<Affine> mixed(pinned.span(), 0), equal(pinned_same.span(), 0);
  const auto cases = edge_case_scalars(n, gen);
  for (const unsigned bits : widths) {
    for (const std::uint32_t chunk : level0_chunks) {
      for (const auto& [name, scalars] : cases) {
        INFO("scalars " << name << ", window " << bits << " bits, level-0 chunk " << chunk);
        const bool host = gen() % 2 == 0;
        CHECK(gpu_msm(context, mixed, scalars, host, bits, chunk) == cpu_msm(points, scalars));
        CHECK(gpu_msm(context, equal, scalars, host, bits, chunk) == cpu_msm(same, scalars));
      }
    }
  }
}

/// Bases with shifted copies (msm_precompute): every edge case over each configuration, at the
/// full count and a shorter one (a run may read fewer points than the bases hold), with level 0 in
/// chunks of the plan's size (0) or of the others given.
template <class Affine>
void check_precomputed(std::size_t n, std::initializer_list<cuda::msm_precompute> configs,
                       std::initializer_list<std::uint32_t> level0_chunks = {0}) {
  REQUIRE(gpu_present());
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 gen(seed);
  const auto points = edge_case_bases<Affine>(n, gen);
  const pinned_copy<Affine> pinned(points);
  cuda::msm_context context(0);
  const auto cases = edge_case_scalars(n, gen);
  for (const cuda::msm_precompute& config : configs) {
    const cuda::msm_bases<Affine> bases(pinned.span(), 0, config);
    INFO("copies " << config.copies << " for " << config.window_bits << " bits: " << bases.copies() << " copies of "
                   << bases.window_bits() << " bits");
    CHECK(bases.copies() > 1);
    CHECK(bases.bytes() == bases.copies() * n * 2 * sizeof(typename Affine::field));
    for (const std::uint32_t chunk : level0_chunks) {
      for (const auto& [name, scalars] : cases) {
        INFO("scalars " << name << ", level-0 chunk " << chunk);
        CHECK(gpu_msm(context, bases, scalars, gen() % 2 == 0, 0, chunk) == cpu_msm(points, scalars));
        const std::vector<fr> fewer(scalars.begin(), scalars.begin() + static_cast<std::ptrdiff_t>(n / 3));
        CHECK(gpu_msm(context, bases, fewer, false, bases.window_bits(), chunk) == cpu_msm(points, fewer));
      }
    }
    // Another width than the copies were made for is refused.
    const device_scalars some(cases[0].second);
    pinned_copy<typename group_types<Affine>::xyzz> result(std::vector<typename group_types<Affine>::xyzz>(1));
    const cuda::msm_gpu_options other{bases.window_bits() + 1};
    CHECK_THROWS_AS(cuda::msm_async(context, bases, some.data(), n, result.data(), nullptr, other),
                    std::invalid_argument);
    // So is a level-0 chunk above the most.
    const cuda::msm_gpu_options too_large{0, cuda::msm_max_level0_chunk + 1};
    CHECK_THROWS_AS(cuda::msm_async(context, bases, some.data(), n, result.data(), nullptr, too_large),
                    std::invalid_argument);
  }
}

}  // namespace

TEST_CASE("signed MSM digits stay within half a window and recombine to the scalar", "[cuda][msm][cpu]") {
  std::mt19937_64 gen(fresh_seed());
  std::vector<field::scalar_limbs> scalars{{0, 0, 0, 0}, {1, 0, 0, 0}, minus_one().to_canonical(),
                                           {~0ULL, ~0ULL, ~0ULL, 0x3fffffffffffffffULL}};
  for (int i = 0; i < 200; ++i) scalars.push_back(field::random_scalar(gen));
  for (unsigned bits = 1; bits <= cuda::msm_max_window_bits; ++bits) {
    for (const auto& s : scalars) {
      const auto digits = cuda::msm_signed_digits(s, bits);
      REQUIRE(digits.size() * bits >= 256);
      const long long half = 1LL << (bits - 1);
      // sum d_w 2^(c w), evaluated in Fr, equals s (a wrong digit is off by a small multiple of a
      // power of two, never a multiple of r).
      fr total = fr::zero(), weight = fr::one();
      const fr radix = fr::from_uint64(1ULL << bits);
      for (const int d : digits) {
        CHECK(d > -half);
        CHECK(d <= half);
        const fr magnitude = fr::from_uint64(static_cast<std::uint64_t>(d < 0 ? -d : d));
        total += d < 0 ? fr::zero() - magnitude * weight : magnitude * weight;
        weight *= radix;
      }
      CHECK(total == fr::from_canonical(s));
    }
  }
}

namespace {

/// The sums a group of n entries has left after the plan's levels: level 0 in spans runs across
/// groups (a group of n entries meets up to ceil((n - 1) / chunk) + 1 spans), in chunks it splits the
/// group into ceil(n / chunk) parts, as every later level splits its sums.
std::size_t level_sums(std::size_t n, const cuda::msm_plan& plan) {
  if (n == 0 || plan.level_chunk.empty()) return n;
  const std::size_t first = plan.level_chunk[0];
  std::size_t sums = plan.level0_spans ? (n - 1 + first - 1) / first + 1 : (n + first - 1) / first;
  for (std::size_t k = 1; k < plan.level_chunk.size(); ++k) sums = (sums + plan.level_chunk[k] - 1) / plan.level_chunk[k];
  return sums;
}

}  // namespace

TEST_CASE("the MSM plan's levels bring every group to one sum within its buffers", "[cuda][msm][cpu]") {
  for (const msm_group group : {msm_group::g1, msm_group::g2}) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{1000},
                                std::size_t{1} << 16, std::size_t{1} << 20, std::size_t{1} << 24,
                                std::size_t{1} << 26}) {
      const cuda::msm_plan plan = cuda::plan_msm(group, n);
      INFO("n = " << n << ", window " << plan.window_bits);
      CHECK(plan.windows * plan.window_bits >= 256);
      CHECK(plan.groups == plan.windows * plan.buckets + 1);
      CHECK(plan.entries == n * plan.windows);
      // Level 0 in spans for G2 only; its chunk between 32 and 128 entries.
      CHECK(plan.level0_spans == (group == msm_group::g2));
      CHECK(plan.level_chunk[0] >= 32);
      CHECK(plan.level_chunk[0] <= 128);
      // The largest group (n entries) after all levels: one sum.
      CHECK(level_sums(n, plan) <= 1);
      // Each level's capacity covers sum ceil(n_g / chunk) for any split of its input.
      std::size_t input = plan.entries;
      for (std::size_t k = 0; k < plan.level_chunk.size(); ++k) {
        CHECK(plan.level_capacity[k] >= std::min(input, (input + plan.level_chunk[k] - 1) / plan.level_chunk[k] + plan.groups));
        input = plan.level_capacity[k];
      }
      std::size_t segments = plan.segments;
      for (const auto chunk : plan.window_level_chunk) segments = (segments + chunk - 1) / chunk;
      CHECK(segments == 1);
      CHECK(plan.segment * plan.segments == plan.buckets);
      CHECK(plan.workspace_bytes >= plan.entries * 4 + n * 32);
    }
  }
  // Wider windows at larger sizes.
  CHECK(cuda::plan_msm(msm_group::g1, std::size_t{1} << 24).window_bits >
        cuda::plan_msm(msm_group::g1, std::size_t{1} << 12).window_bits);
  CHECK(cuda::plan_msm(msm_group::g1, 1000, 7).window_bits == 7);
  CHECK_THROWS_AS(cuda::plan_msm(msm_group::g1, 1000, cuda::msm_max_window_bits + 1), std::invalid_argument);
  CHECK_THROWS_AS(cuda::plan_msm(msm_group::g1, cuda::msm_max_count + 1), std::invalid_argument);
  CHECK_THROWS_AS(cuda::plan_msm(msm_group::g1, std::size_t{1} << 26, 1), std::invalid_argument);
  // G1's level 0 in chunks of 64 where groups average 1,024 entries or more (2^26 points over 13
  // copies), of 32 below (2^24 points).
  CHECK(cuda::plan_msm(msm_group::g1, std::size_t{1} << 26, 20, 13).level_chunk[0] == 64);
  CHECK(cuda::plan_msm(msm_group::g1, std::size_t{1} << 24, 20, 13).level_chunk[0] == 32);
  CHECK(cuda::plan_msm(msm_group::g1, std::size_t{1} << 26, 22, 12).level_chunk[0] == 32);
  // A level-0 chunk of the caller's: the levels still bring the largest group to one sum.
  for (const msm_group group : {msm_group::g1, msm_group::g2}) {
    for (const std::uint32_t chunk : {1u, 7u, 64u, cuda::msm_max_level0_chunk}) {
      const std::size_t n = std::size_t{1} << 20;
      const cuda::msm_plan plan = cuda::plan_msm(group, n, 0, 1, chunk);
      INFO("chunk " << chunk);
      CHECK(plan.level_chunk[0] == chunk);
      CHECK(level_sums(n, plan) <= 1);
      CHECK(plan.level_capacity[0] >= (plan.entries + chunk - 1) / chunk);
    }
    CHECK_THROWS_AS(cuda::plan_msm(group, 1000, 0, 1, cuda::msm_max_level0_chunk + 1), std::invalid_argument);
  }
}

TEST_CASE("the MSM plan over shifted copies of the bases weights only the windows of one copy", "[cuda][msm][cpu]") {
  for (const std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20, std::size_t{1} << 24}) {
    INFO("n = " << n);
    // One copy a window: every digit adds into the buckets of one window.
    const cuda::msm_plan full = cuda::plan_msm(msm_group::g1, n, 22, 0);
    CHECK(full.copies == 12);
    CHECK(full.digit_windows == 12);
    CHECK(full.windows == 1);
    CHECK(full.groups == (std::size_t{1} << 21) + 1);
    CHECK(full.entries == n * 12);
    // Four copies of 16-bit windows: 16 digits, 4 windows a copy.
    const cuda::msm_plan four = cuda::plan_msm(msm_group::g2, n, 16, 4);
    CHECK(four.windows == 4);
    CHECK(four.groups == 4 * four.buckets + 1);
    CHECK(four.entries == n * 16);
    // A group takes up to one entry per point of each copy: the levels still bring it to one sum.
    for (const cuda::msm_plan* plan : {&full, &four}) CHECK(level_sums(n * plan->copies, *plan) <= 1);
    // The width chosen for copies is at most the precomputed limit, and wider than without.
    const cuda::msm_plan chosen = cuda::plan_msm(msm_group::g1, n, 0, 0);
    CHECK(chosen.window_bits <= cuda::msm_max_precomputed_bits);
    CHECK(chosen.copies == chosen.digit_windows);
  }
  CHECK(cuda::plan_msm(msm_group::g1, std::size_t{1} << 24, 0, 0).window_bits >
        cuda::plan_msm(msm_group::g1, std::size_t{1} << 24).window_bits);
  // More copies than windows, and more bases than an entry can index.
  CHECK_THROWS_AS(cuda::plan_msm(msm_group::g1, 1000, 22, 13), std::invalid_argument);
  CHECK_THROWS_AS(cuda::plan_msm(msm_group::g1, std::size_t{1} << 28, 22, 12), std::invalid_argument);
}

TEST_CASE("a proof's MSM plans are each query's own, as its runs make them over the key's bases", "[cuda][msm][cpu]") {
  // The circuit of 384 constraints, 513 wires and 256 public signals (2^10 domain): over 13 copies
  // with the width left to the plan, H's bases (1,024 points) keep 8-bit windows and the witness's
  // (513) 7-bit ones. Charging H at the witness's width gave it a smaller arena than its run takes,
  // and every proof of that circuit failed on the device with cudaErrorMemoryAllocation.
  const cuda::msm_precompute auto_13{0, 13};
  const cuda::msm_proof_plans issue = cuda::plan_proof_msms(1024, 513, 256, auto_13);
  CHECK(issue.h.window_bits == 8);
  CHECK(issue.a.window_bits == 7);
  CHECK(issue.h.workspace_bytes > cuda::plan_msm(msm_group::g1, 1024, issue.a.window_bits, 13).workspace_bytes);
  // Every shape: each run's plan is the one its bases' own width and copies give, and B_G2's is
  // placed like A's (one placement of the witness serves the three).
  struct shape {
    std::size_t h, variables, aux;
  };
  for (const shape& s : {shape{4, 4, 2}, shape{4, 5, 5}, shape{64, 122, 120}, shape{1024, 513, 256}, shape{64, 63, 61},
                         shape{128, 64, 62}, shape{1 << 16, 70000, 69000}, shape{1 << 20, 1 << 19, 1 << 18}}) {
    for (const cuda::msm_precompute& key : {cuda::msm_precompute{0, 1}, cuda::msm_precompute{0, 13},
                                            cuda::msm_precompute{0, 12}, cuda::msm_precompute{0, 0},
                                            cuda::msm_precompute{16, 4}}) {
      INFO("H " << s.h << ", variables " << s.variables << ", aux " << s.aux << ", " << key.copies << " copies of "
                << key.window_bits << "-bit windows");
      const cuda::msm_proof_plans plans = cuda::plan_proof_msms(s.h, s.variables, s.aux, key);
      const auto as_run = [&](msm_group group, std::size_t count) {
        const cuda::msm_precompute kept = cuda::msm_bases_precompute(group, count, key);
        return cuda::plan_msm(group, count, kept.window_bits, kept.copies);
      };
      const auto same = [](const cuda::msm_plan& x, const cuda::msm_plan& y) {
        return x.group == y.group && x.count == y.count && x.window_bits == y.window_bits && x.copies == y.copies &&
               x.workspace_bytes == y.workspace_bytes;
      };
      CHECK(same(plans.h, as_run(msm_group::g1, s.h)));
      CHECK(same(plans.a, as_run(msm_group::g1, s.variables)));
      CHECK(same(plans.b_g1, as_run(msm_group::g1, s.variables)));
      CHECK(same(plans.b_g2, as_run(msm_group::g2, s.variables)));
      CHECK(same(plans.l, as_run(msm_group::g1, s.aux)));
      CHECK(plans.b_g2.window_bits == plans.a.window_bits);
      CHECK(plans.b_g2.groups == plans.a.groups);
      CHECK(plans.b_g2.entries == plans.a.entries);
    }
  }
  // Bases without copies keep none and no width; with copies, the width asked for or the plan's.
  CHECK(cuda::msm_bases_precompute(msm_group::g1, 1000, {0, 1}).copies == 1);
  CHECK(cuda::msm_bases_precompute(msm_group::g1, 1000, {0, 1}).window_bits == 0);
  CHECK(cuda::msm_bases_precompute(msm_group::g2, std::size_t{1} << 22, {20, 13}).window_bits == 20);
  CHECK(cuda::msm_bases_precompute(msm_group::g1, std::size_t{1} << 22, {0, 13}).window_bits == 20);
  CHECK(cuda::msm_bases_precompute(msm_group::g1, 1000, {10, 0}).copies == cuda::msm_window_count(10));
  CHECK_THROWS_AS(cuda::msm_bases_precompute(msm_group::g1, 1000, {22, 13}), std::invalid_argument);
}

TEST_CASE("the MSM plan places in two passes only where the bins fit, into the sums' part of the workspace",
          "[cuda][msm][cpu]") {
  using cuda::msm_placement;
  for (const std::size_t n : {std::size_t{1000}, std::size_t{1} << 20, std::size_t{1} << 24}) {
    INFO("n = " << n);
    // 13 copies of 20-bit windows: 2^19 + 1 groups in 257 bins of 2^11.
    const cuda::msm_plan two = cuda::plan_msm(msm_group::g1, n, 20, 13, 0, msm_placement::two_passes);
    CHECK(two.placement_bin_shift == 11);
    CHECK(two.placement_bins == 257);
    CHECK(std::size_t{two.placement_bins} << two.placement_bin_shift >= two.groups);
    CHECK(5 * (two.placement_bins + 1) <= two.groups + 1);
    CHECK_FALSE(two.placement_by_density);
    const cuda::msm_plan dense = cuda::plan_msm(msm_group::g1, n, 20, 13, 0, msm_placement::by_density);
    CHECK(dense.placement_bin_shift == 11);
    CHECK(dense.placement_by_density);
    // The plan's choice: by density from 2^23 entries on (13 copies: from 645,278 points), else one pass.
    const cuda::msm_plan chosen = cuda::plan_msm(msm_group::g1, n, 20, 13);
    CHECK(chosen.placement_bin_shift == (n * 13 >= (std::size_t{1} << 23) ? 11u : 0u));
    CHECK(chosen.placement_by_density == (chosen.placement_bin_shift != 0));
    const cuda::msm_plan one = cuda::plan_msm(msm_group::g1, n, 20, 13, 0, msm_placement::one_pass);
    CHECK(one.placement_bin_shift == 0);
    // The placement changes no other part of the plan, nor the workspace.
    CHECK(one.workspace_bytes == two.workspace_bytes);
    CHECK(one.level_capacity == two.level_capacity);
    // The temp lies after the entries: the workspace less the canonical scalars, the three offset
    // arrays, the entries and the result's slot.
    const auto up = [](std::size_t b) { return (b + 255) & ~std::size_t{255}; };
    CHECK(two.placement_temp_bytes ==
          two.workspace_bytes - up(n * 32) - 3 * up((two.groups + 1) * 4) - up(two.entries * 4) - up(two.point_bytes));
    CHECK(two.placement_temp_bytes >= 8 * two.digit_windows);
    // Without copies, 16-bit windows in G2: 16 * 2^15 + 1 groups, 257 bins.
    const cuda::msm_plan g2 = cuda::plan_msm(msm_group::g2, n, 16, 1, 0, msm_placement::two_passes);
    CHECK(g2.placement_bins == 257);
  }
  // 22-bit windows without copies: 12 * 2^21 + 1 groups need bins of 2^13 groups, wider than pass
  // 2's counters take: refused, and the plan's choice is one pass there.
  CHECK_THROWS_AS(cuda::plan_msm(msm_group::g1, 1000, 22, 1, 0, msm_placement::two_passes), std::invalid_argument);
  CHECK(cuda::plan_msm(msm_group::g1, std::size_t{1} << 24, 22, 1).placement_bin_shift == 0);
  // Bins of 2^12 groups where 2^11 would make more than 4,096: 21-bit windows without copies,
  // 13 * 2^20 + 1 groups in 3,329 bins; 20-bit ones, 13 * 2^19 + 1 groups, keep 2^11.
  const cuda::msm_plan wide = cuda::plan_msm(msm_group::g1, 1000, 21, 1, 0, msm_placement::two_passes);
  CHECK(wide.placement_bin_shift == 12);
  CHECK(wide.placement_bins == 3329);
  CHECK(cuda::plan_msm(msm_group::g1, 1000, 20, 1, 0, msm_placement::two_passes).placement_bin_shift == 11);
  CHECK_THROWS_AS(cuda::plan_msm(msm_group::g1, 1000, 22, 1, 0, msm_placement::by_density), std::invalid_argument);
}

TEST_CASE("scalars are dense for two passes where their entries besides the ones group are 3/8 of the possible",
          "[cuda][msm][cpu]") {
  // 1,000 scalars of 13 windows: 13,000 possible entries, dense from 4,875 on.
  CHECK(cuda::msm_dense_entries(4875, 0, 13000));
  CHECK_FALSE(cuda::msm_dense_entries(4874, 0, 13000));
  // Scalars 1 put one entry each in the ones group, which does not count (a 0/1-heavy witness).
  CHECK_FALSE(cuda::msm_dense_entries(4875 + 450, 451, 13000));
  CHECK(cuda::msm_dense_entries(4875 + 450, 450, 13000));
  CHECK_FALSE(cuda::msm_dense_entries(0, 0, 13000));
  // Uniform scalars at 2^26 x 16 windows: about 15/16 of the entries are there.
  const std::uint64_t possible = std::uint64_t{16} << 26;
  CHECK(cuda::msm_dense_entries(static_cast<std::uint32_t>(possible / 16 * 15), 0, possible));
}

namespace fq_raw {
using words = std::array<std::uint64_t, 6>;
const words p = {field::constants::fq_modulus[0], field::constants::fq_modulus[1], field::constants::fq_modulus[2],
                 field::constants::fq_modulus[3], field::constants::fq_modulus[4], field::constants::fq_modulus[5]};

words add(const words& x, const words& y) {
  words out{};
  unsigned __int128 carry = 0;
  for (int k = 0; k < 6; ++k) {
    carry += static_cast<unsigned __int128>(x[k]) + y[k];
    out[k] = static_cast<std::uint64_t>(carry);
    carry >>= 64;
  }
  return out;
}

bool below(const words& x, const words& bound) {
  for (int k = 5; k >= 0; --k)
    if (x[k] != bound[k]) return x[k] < bound[k];
  return false;
}

/// The element a raw value below 2p stands for (x - p when x >= p), or nullopt at 2p and above.
std::optional<field::fq> element(const words& x) {
  if (!below(x, add(p, p))) return std::nullopt;
  if (below(x, p)) return field::fq{x};
  words d{};
  unsigned __int128 borrow = 0;
  for (int k = 0; k < 6; ++k) {
    const unsigned __int128 t = static_cast<unsigned __int128>(x[k]) - p[k] - borrow;
    d[k] = static_cast<std::uint64_t>(t);
    borrow = (t >> 64) != 0 ? 1 : 0;
  }
  return field::fq{d};
}
}  // namespace fq_raw

TEST_CASE("Fq on the GPU takes and keeps values below 2p and equals the CPU's once reduced",
          "[cuda][msm][field][gpu]") {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) FAIL("no CUDA device");
  using fq_raw::words;
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 gen(seed);
  // Raw inputs (Montgomery limbs) below 2p: each element either as it is or plus p, and the edges:
  // 0, p (both zero), 1, p - 1, p + 1 and 2p - 1 (the largest value an operation may be given).
  const words one{1, 0, 0, 0, 0, 0};
  words p_minus_1 = fq_raw::p;
  p_minus_1[0] -= 1;
  // And the value below 2p whose 192-bit halves have the largest sum (its low half all ones).
  words halves_max = fq_raw::add(fq_raw::p, p_minus_1);
  halves_max[0] = halves_max[1] = halves_max[2] = ~std::uint64_t{0};
  halves_max[3] -= 1;
  const std::vector<words> edges = {words{}, fq_raw::p, one, p_minus_1, fq_raw::add(fq_raw::p, one),
                                    fq_raw::add(fq_raw::p, p_minus_1), halves_max};
  const std::size_t n = 4096;
  std::vector<words> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (words* w : {&a[i], &b[i]}) {
      *w = field::fq::random(gen).limbs;
      if (gen() & 1) *w = fq_raw::add(*w, fq_raw::p);
    }
  }
  for (std::size_t i = 0; i < edges.size(); ++i)
    for (std::size_t j = 0; j < edges.size(); ++j) {
      a[64 + i * edges.size() + j] = edges[i];
      b[64 + i * edges.size() + j] = edges[j];
    }
  constexpr unsigned rounds = 64;
  const std::size_t outputs = cuda::testing::fq_check_outputs;
  std::vector<words> out(n * outputs);
  std::vector<std::uint32_t> zero(n);
  {
    void *da = nullptr, *db = nullptr, *dout = nullptr, *dzero = nullptr;
    REQUIRE(cudaMalloc(&da, n * sizeof(words)) == cudaSuccess);
    REQUIRE(cudaMalloc(&db, n * sizeof(words)) == cudaSuccess);
    REQUIRE(cudaMalloc(&dout, out.size() * sizeof(words)) == cudaSuccess);
    REQUIRE(cudaMalloc(&dzero, n * 4) == cudaSuccess);
    REQUIRE(cudaMemcpy(da, a.data(), n * sizeof(words), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(db, b.data(), n * sizeof(words), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemset(dout, 0xa5, out.size() * sizeof(words)) == cudaSuccess);  // poison
    cuda::testing::fq_ops_check(da, db, dout, static_cast<std::uint32_t*>(dzero), n, rounds, nullptr);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaMemcpy(out.data(), dout, out.size() * sizeof(words), cudaMemcpyDeviceToHost) == cudaSuccess);
    REQUIRE(cudaMemcpy(zero.data(), dzero, n * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (void* d : {da, db, dout, dzero}) cudaFree(d);
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const field::fq x = *fq_raw::element(a[i]), y = *fq_raw::element(b[i]);
    const words* o = &out[i * outputs];
    field::fq chain = x;
    for (unsigned k = 0; k < rounds; ++k) chain = chain * chain + y - x;
    // As computed: below 2p and standing for the right element; reduced: exactly the CPU's limbs.
    const bool ok = fq_raw::element(o[0]) == x * y && fq_raw::element(o[1]) == x + y &&
                    fq_raw::element(o[2]) == x - y && o[3] == (x * y).limbs && o[4] == (x + y).limbs &&
                    o[5] == (x - y).limbs && o[6] == (-x).limbs && o[7] == chain.limbs &&
                    (zero[i] == 1) == x.is_zero();
    bool ok2 = true;
    if (i + 1 < n) {
      const field::fq next_x = *fq_raw::element(a[i + 1]), next_y = *fq_raw::element(b[i + 1]);
      const field::fq want = x * y - next_x * next_y;
      ok2 = fq_raw::element(o[14]) == want && o[15] == want.limbs;
    }
    if (i % 2 == 0 && i + 1 < n) {
      const field::fq2 u{x, *fq_raw::element(a[i + 1])}, v{y, *fq_raw::element(b[i + 1])};
      const field::fq2 uv = u * v, uu = u.square();
      ok2 = ok2 && fq_raw::element(o[8]) == uv.c0 && fq_raw::element(o[9]) == uv.c1 && o[10] == uv.c0.limbs &&
            o[11] == uv.c1.limbs && o[12] == uu.c0.limbs && o[13] == uu.c1.limbs;
    }
    if (!ok || !ok2) {
      if (wrong++ < 4) UNSCOPED_INFO("element " << i << " wrong (Fq " << ok << ", a b - c d and Fq2 " << ok2 << ")");
    }
  }
  CHECK(wrong == 0);
  CHECK(zero[64] == 1);                  // 0
  CHECK(zero[64 + edges.size()] == 1);   // p
  CHECK(zero[64 + 2 * edges.size()] == 0);
}

namespace {

/// The XYZZ addition and doubling on the GPU, with the points in registers and in shared memory,
/// against the CPU's over random points in general XYZZ form (ZZ, ZZZ not 1) and the cases the
/// formulas branch on: Q = P and Q = -P written with other ZZ, ZZZ, and the identity on either side.
template <class Affine>
void check_point_ops(msm_group group) {
  using xyzz = typename group_types<Affine>::xyzz;
  using field_type = decltype(xyzz{}.x);
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 gen(seed);
  // The same point with ZZ and ZZZ scaled by l^2 and l^3.
  const auto rescaled = [&](const xyzz& a) {
    const field_type l = field_type::random(gen), l2 = l * l, l3 = l2 * l;
    return xyzz{a.x * l2, a.y * l3, a.zz * l2, a.zzz * l3};
  };
  const auto random_point = [&] { return rescaled(Affine::generator().mul(fr::random(gen).to_canonical()).to_affine().to_xyzz()); };
  const std::size_t n = 256;
  std::vector<xyzz> p(n), q(n);
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = random_point();
    switch (i % 8) {
      case 1: q[i] = rescaled(p[i]); break;   // P + P
      case 2: q[i] = rescaled(-p[i]); break;  // P - P
      case 3: q[i] = xyzz::identity(); break;
      case 4: q[i] = p[i]; p[i] = xyzz::identity(); break;
      case 5: p[i] = xyzz::identity(); q[i] = xyzz::identity(); break;
      default: q[i] = random_point();
    }
  }
  std::vector<xyzz> out(4 * n);
  {
    void *dp = nullptr, *dq = nullptr, *dout = nullptr;
    REQUIRE(cudaMalloc(&dp, n * sizeof(xyzz)) == cudaSuccess);
    REQUIRE(cudaMalloc(&dq, n * sizeof(xyzz)) == cudaSuccess);
    REQUIRE(cudaMalloc(&dout, out.size() * sizeof(xyzz)) == cudaSuccess);
    REQUIRE(cudaMemcpy(dp, p.data(), n * sizeof(xyzz), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(dq, q.data(), n * sizeof(xyzz), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemset(dout, 0xa5, out.size() * sizeof(xyzz)) == cudaSuccess);  // poison
    cuda::testing::point_ops_check(group, dp, dq, dout, n, nullptr);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaMemcpy(out.data(), dout, out.size() * sizeof(xyzz), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (void* d : {dp, dq, dout}) cudaFree(d);
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Affine sum = (p[i] + q[i]).to_affine(), twice = p[i].doubled().to_affine();
    const bool ok = out[4 * i].to_affine() == sum && out[4 * i + 1].to_affine() == sum &&
                    out[4 * i + 2].to_affine() == twice && out[4 * i + 3].to_affine() == twice;
    if (!ok && wrong++ < 4) UNSCOPED_INFO("pair " << i << " (case " << i % 8 << ") wrong");
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("the XYZZ addition and doubling on the GPU equal the CPU's with the points in registers and in shared memory",
          "[cuda][msm][gpu]") {
  if (!gpu_present()) FAIL("no CUDA device");
  check_point_ops<field::g1_affine>(msm_group::g1);
  check_point_ops<field::g2_affine>(msm_group::g2);
}

TEST_CASE("the G1 MSM on the GPU equals the CPU's at 2^1..2^20 points and beside powers of two", "[cuda][msm][gpu]") {
  check_sizes<field::g1_affine>(20, 1);
}

TEST_CASE("the G2 MSM on the GPU equals the CPU's at 2^1..2^20 points and beside powers of two", "[cuda][msm][gpu]") {
  check_sizes<field::g2_affine>(20, 1);
}

TEST_CASE("the G1 MSM on the GPU handles equal, negated and identity bases and scalars 0, 1, r - 1 and all equal",
          "[cuda][msm][gpu]") {
  check_edge_cases<field::g1_affine>(3001, {1u, 4u, 9u, 0u, 16u, 20u});
}

TEST_CASE("the G2 MSM on the GPU handles equal, negated and identity bases and scalars 0, 1, r - 1 and all equal",
          "[cuda][msm][gpu]") {
  check_edge_cases<field::g2_affine>(1501, {3u, 0u, 13u});
}

TEST_CASE("MSMs over shifted copies of the bases equal the CPU's in G1 and G2, edge cases included",
          "[cuda][msm][gpu]") {
  check_precomputed<field::g1_affine>(3001, {{22, 0}, {9, 0}, {10, 3}, {4, 2}, {0, 0}});
  check_precomputed<field::g2_affine>(1501, {{13, 0}, {8, 5}});
}

TEST_CASE("level 0 in chunks other than the plan's gives the same MSM in G1 and G2, edge cases included",
          "[cuda][msm][gpu]") {
  check_edge_cases<field::g1_affine>(3001, {6u}, {1u, 5u, 64u, 200u});
  check_precomputed<field::g1_affine>(3001, {{10, 0}}, {1u, 5u, 64u, 200u});
  check_edge_cases<field::g2_affine>(1501, {5u}, {1u, 7u, 128u});
  check_precomputed<field::g2_affine>(1501, {{10, 0}}, {1u, 7u, 128u});
}

namespace {

/// Every edge case with the entries placed in two passes and by density (uniform scalars dense, the
/// 0/1-heavy and all-zero ones sparse), in one slice and in several, over bases without copies at
/// `bits` (0: the plan's width) and over one copy a window of 10 bits.
template <class Affine>
void check_two_passes(std::size_t n, unsigned bits) {
  REQUIRE(gpu_present());
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed << ", n " << n << ", window " << bits);
  std::mt19937_64 gen(seed);
  const auto points = edge_case_bases<Affine>(n, gen);
  const pinned_copy<Affine> pinned(points);
  cuda::msm_context context(0);
  const cuda::msm_bases<Affine> plain(pinned.span(), 0), copied(pinned.span(), 0, cuda::msm_precompute{10, 0});
  for (const auto& [name, scalars] : edge_case_scalars(n, gen)) {
    const Affine expected = cpu_msm(points, scalars);
    for (const std::size_t slice : {std::size_t{0}, n / 3 + 1, std::size_t{1000}}) {
      INFO("scalars " << name << ", slice " << slice);
      for (const auto placement : {cuda::msm_placement::two_passes, cuda::msm_placement::by_density}) {
        INFO((placement == cuda::msm_placement::two_passes ? "two passes" : "by density"));
        cuda::msm_gpu_options two{bits, 0, nullptr, placement, slice};
        CHECK(gpu_msm(context, plain, scalars, gen() % 2 == 0, two) == expected);
        two.window_bits = 0;
        CHECK(gpu_msm(context, copied, scalars, false, two) == expected);
      }
    }
  }
}

}  // namespace

TEST_CASE("entries placed in two passes, or by density, give the same MSM in G1 and G2, edge cases and slices included",
          "[cuda][msm][gpu]") {
  // 6-bit windows: one bin; 16-bit: 257 bins; over 10-bit copies 20,003 points put up to 520,078
  // entries in one bin (eight tiles of pass 2).
  check_two_passes<field::g1_affine>(3001, 6);
  check_two_passes<field::g1_affine>(3001, 16);
  check_two_passes<field::g1_affine>(20003, 0);
  check_two_passes<field::g2_affine>(1501, 16);
  check_two_passes<field::g2_affine>(20003, 0);
  std::mt19937_64 gen(fresh_seed());
  const auto g1 = known_bases<field::g1_curve>::make(64, gen);
  const pinned_copy<field::g1_affine> pinned(g1.points);
  cuda::msm_context context(0);
  const cuda::msm_bases_g1 bases(pinned.span(), 0);
  // Two passes where the bins do not fit the plan: refused before anything is enqueued.
  const device_scalars some(random_scalars(64, gen));
  pinned_copy<field::g1_xyzz> result(std::vector<field::g1_xyzz>(1));
  const cuda::msm_gpu_options unfit{24, 0, nullptr, cuda::msm_placement::two_passes};
  CHECK_THROWS_AS(cuda::msm_async(context, bases, some.data(), 64, result.data(), nullptr, unfit),
                  std::invalid_argument);
}

TEST_CASE("bases uploaded from pageable memory equal those uploaded from page-locked memory", "[cuda][msm][gpu]") {
  REQUIRE(gpu_present());
  std::mt19937_64 gen(fresh_seed());
  // Over two staging chunks of 2^18 points, so that both halves are reused.
  const std::size_t count = (std::size_t{5} << 17) + 3;
  const auto bases = known_bases<field::g1_curve>::make(count, gen);
  const pinned_copy<field::g1_affine> pinned(bases.points);
  cuda::msm_context context(0);
  const cuda::msm_bases_g1 from_pinned(pinned.span(), 0);
  const cuda::msm_bases_g1 from_pageable(std::span<const field::g1_affine>(bases.points), 0);
  REQUIRE(from_pageable.size() == count);
  std::vector<unsigned char> a(from_pinned.bytes()), b(from_pageable.bytes());
  REQUIRE(cudaMemcpy(a.data(), from_pinned.data(), a.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  REQUIRE(cudaMemcpy(b.data(), from_pageable.data(), b.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(a == b);
  const std::vector<fr> scalars = random_scalars(count, gen);
  CHECK(gpu_msm(context, from_pageable, scalars, false) == cpu_msm(bases.points, scalars));
}

TEST_CASE("MSMs on an arena context take their workspace from it and refuse one that does not fit",
          "[cuda][msm][gpu]") {
  REQUIRE(gpu_present());
  std::mt19937_64 gen(fresh_seed());
  const std::size_t count = 3001;
  const auto g1 = known_bases<field::g1_curve>::make(count, gen);
  const auto g2 = known_bases<field::g2_curve>::make(count, gen);
  const pinned_copy<field::g1_affine> g1_pinned(g1.points);
  const pinned_copy<field::g2_affine> g2_pinned(g2.points);
  const cuda::msm_bases_g1 g1_bases(g1_pinned.span(), 0);
  const cuda::msm_bases_g2 g2_bases(g2_pinned.span(), 0);
  const std::vector<fr> scalars = random_scalars(count, gen);
  const std::size_t g1_bytes = cuda::msm_workspace_bytes(cuda::plan_msm(cuda::msm_group::g1, count));
  const std::size_t g2_bytes = cuda::msm_workspace_bytes(cuda::plan_msm(cuda::msm_group::g2, count));
  // Exactly the largest workspace: both runs fit, one after the other on one stream.
  cuda::msm_context arena(0, cuda::msm_arena{std::max(g1_bytes, g2_bytes)});
  CHECK(arena.pool() == nullptr);
  CHECK(arena.reserved_bytes() == std::max(g1_bytes, g2_bytes));
  CHECK(gpu_msm(arena, g1_bases, scalars, false) == cpu_msm(g1.points, scalars));
  CHECK(gpu_msm(arena, g2_bases, scalars, true) == cpu_msm(g2.points, scalars));
  // One byte short: refused before anything is enqueued, with the CUDA error, and nothing lost.
  const std::size_t free_before = [] {
    std::size_t free = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
    return free;
  }();
  cuda::msm_context short_arena(0, cuda::msm_arena{g1_bytes - 1});
  pinned_copy<field::g1_xyzz> result(std::vector<field::g1_xyzz>(1));
  const device_scalars on_device(scalars);
  try {
    cuda::msm_async(short_arena, g1_bases, on_device.data(), count, result.data(), nullptr);
    FAIL("an MSM ran in an arena smaller than its workspace");
  } catch (const cuda::cuda_error& e) {
    CHECK(e.status() == cudaErrorMemoryAllocation);
    CHECK(std::string(e.what()).find(std::to_string(g1_bytes) + " bytes") != std::string::npos);
  }
  CHECK(short_arena.reserved_bytes() == g1_bytes - 1);
  std::size_t free_after = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
  CHECK(free_after + g1_bytes + (std::size_t{4} << 20) >= free_before);  // the short arena, and no more
}

TEST_CASE("a proof's MSM workspace holds each of its MSMs", "[cuda][msm][gpu]") {
  REQUIRE(gpu_present());  // the scan scratch is the device's figure
  const auto workspace = [](msm_group group, std::size_t count, unsigned bits, unsigned copies) {
    return cuda::msm_workspace_bytes(cuda::plan_msm(group, count, copies > 1 ? bits : 0, copies));
  };
  for (const std::size_t n : {std::size_t{1} << 10, (std::size_t{1} << 17) + 5, std::size_t{1} << 22}) {
    for (const auto& [bits, copies] : {std::pair{0u, 1u}, std::pair{20u, 13u}, std::pair{16u, 4u}}) {
      INFO("n = " << n << ", " << copies << " copies of " << bits << "-bit windows");
      const std::size_t variables = n - 3, aux = n - 40;
      const std::size_t bytes = cuda::msm_proof_workspace_bytes(n - 1, variables, aux, {bits, copies});
      CHECK(bytes >= workspace(msm_group::g1, n - 1, bits, copies));
      CHECK(bytes >= workspace(msm_group::g1, variables, bits, copies));
      CHECK(bytes >= workspace(msm_group::g2, variables, bits, copies));
      CHECK(bytes >= workspace(msm_group::g1, aux, bits, copies));
      // The witness's placement shared by three runs costs its entries once more than the largest
      // run alone, not three runs' worth.
      CHECK(bytes < 2 * std::max(workspace(msm_group::g1, variables, bits, copies),
                                 workspace(msm_group::g2, variables, bits, copies)));
    }
  }
  CHECK_THROWS_AS(cuda::msm_proof_workspace_bytes(1000, 1000, 990, {22, 13}), std::invalid_argument);
}

TEST_CASE("a GPU MSM of no points is the identity, and misplaced inputs are refused", "[cuda][msm][gpu]") {
  REQUIRE(gpu_present());
  std::mt19937_64 gen(fresh_seed());
  const auto bases = known_bases<field::g1_curve>::make(16, gen);
  const pinned_copy<field::g1_affine> pinned(bases.points);
  cuda::msm_context context(0);
  const cuda::msm_bases_g1 on_device(pinned.span(), 0);
  CHECK(gpu_msm(context, on_device, {}, false).is_identity());
  // Pageable scalars, more scalars than bases.
  const std::vector<fr> pageable = random_scalars(16, gen);
  pinned_copy<field::g1_xyzz> result(std::vector<field::g1_xyzz>(1));
  CHECK_THROWS_AS(cuda::msm_async(context, on_device, pageable.data(), 16, result.data(), nullptr),
                  std::invalid_argument);
  const device_scalars scalars(random_scalars(17, gen));
  CHECK_THROWS_AS(cuda::msm_async(context, on_device, scalars.data(), 17, result.data(), nullptr),
                  std::invalid_argument);
  CHECK_THROWS_AS(cuda::msm_async(context, on_device, scalars.data(), 16, nullptr, nullptr), std::invalid_argument);
}

namespace {

template <class Affine, class Windows>
void check_windows(std::size_t max_n, const cuda::msm_precompute& precompute = {}) {
  REQUIRE(gpu_present());
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 gen(seed);
  const auto bases = known_bases<typename group_types<Affine>::curve>::make(max_n, gen);
  const pinned_copy<Affine> pinned(bases.points);
  cuda::msm_context context(0);
  const cuda::msm_bases<Affine> on_device(pinned.span(), 0, precompute);
  pinned_copy<Windows> out(std::vector<Windows>(1));
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{37}, std::size_t{1} << 12, max_n}) {
    INFO("n = " << n);
    std::vector<fr> scalars = random_scalars(n, gen);
    for (std::size_t i = 0; i < n; i += 3) scalars[i] = fr::one();  // the ones' group too
    const device_scalars on(scalars);
    cuda::msm_windows_async(context, on_device, on.data(), n, out.data(), stream);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(out.data()->combine().to_affine() == cpu_msm(bases.points, scalars));
  }
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

}  // namespace

TEST_CASE("window sums combined on the host equal the CPU MSM in G1 and G2", "[cuda][msm][gpu]") {
  check_windows<field::g1_affine, cuda::msm_window_sums_g1>(std::size_t{1} << 16);
  check_windows<field::g2_affine, cuda::msm_window_sums_g2>(std::size_t{1} << 14);
  // Over copies: the windows of one copy (three of 12 bits for 22 digits and 8 copies; one for 0).
  check_windows<field::g1_affine, cuda::msm_window_sums_g1>(std::size_t{1} << 14, {12, 8});
  check_windows<field::g2_affine, cuda::msm_window_sums_g2>(std::size_t{1} << 12, {14, 0});
}

namespace {

/// A, B in G1 and B in G2 of a proof over one witness: three sets of bases, one set of scalars.
void check_same_scalars(std::size_t n, const cuda::msm_precompute& g1_first_copies,
                        const cuda::msm_precompute& others_copies, bool alike) {
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed << ", n = " << n << ", copies " << g1_first_copies.copies << " / " << others_copies.copies);
  std::mt19937_64 gen(seed);
  const auto a = known_bases<field::g1_curve>::make(n, gen);
  const auto b1 = known_bases<field::g1_curve>::make(n, gen);
  const auto b2 = known_bases<field::g2_curve>::make(n, gen);
  const pinned_copy<field::g1_affine> pa(a.points), pb1(b1.points);
  const pinned_copy<field::g2_affine> pb2(b2.points);
  cuda::msm_context context(0);
  const cuda::msm_bases_g1 da(pa.span(), 0, g1_first_copies), db1(pb1.span(), 0, others_copies);
  const cuda::msm_bases_g2 db2(pb2.span(), 0, others_copies);
  pinned_copy<cuda::msm_window_sums_g1> out_a(std::vector<cuda::msm_window_sums_g1>(1)),
      out_b1(std::vector<cuda::msm_window_sums_g1>(1));
  pinned_copy<cuda::msm_window_sums_g2> out_b2(std::vector<cuda::msm_window_sums_g2>(1));
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  for (const std::size_t count : {std::size_t{1}, std::size_t{37}, n - 5, n}) {
    INFO("count = " << count);
    std::vector<fr> scalars = random_scalars(count, gen);
    for (std::size_t i = 0; i < count; i += 3) scalars[i] = fr::one();   // the ones' group
    for (std::size_t i = 1; i < count; i += 7) scalars[i] = fr::zero();  // skipped
    if (count > 2) scalars[2] = minus_one();
    const device_scalars on(scalars);
    CHECK(cuda::msm_places_alike(da, db1, db2, count) == alike);
    CHECK(cuda::msm_windows_same_scalars_async(context, da, db1, db2, on.data(), count, out_a.data(), out_b1.data(),
                                               out_b2.data(), stream) == alike);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(out_a.data()->combine().to_affine() == cpu_msm(a.points, scalars));
    CHECK(out_b1.data()->combine().to_affine() == cpu_msm(b1.points, scalars));
    CHECK(out_b2.data()->combine().to_affine() == cpu_msm(b2.points, scalars));
  }
  // Bad input changes nothing and names what is wrong.
  CHECK_THROWS_AS(cuda::msm_windows_same_scalars_async(context, da, db1, db2, nullptr, n, out_a.data(), out_b1.data(),
                                                       out_b2.data(), stream),
                  std::invalid_argument);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK_FALSE(cuda::msm_places_alike(da, db1, db2, n + 1));
  CHECK_FALSE(cuda::msm_places_alike(da, db1, db2, 0));
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

}  // namespace

TEST_CASE("A and B over one witness place its entries once and equal the CPU's MSMs", "[cuda][msm][gpu][proof]") {
  REQUIRE(gpu_present());
  // No copies: every plan's 16-bit (or smaller) windows place alike.
  check_same_scalars(std::size_t{1} << 12, {}, {}, true);
  // Copies of every set for the same width: alike (an entry names its copy by the point count).
  check_same_scalars(std::size_t{1} << 11, {12, 8}, {12, 8}, true);
  // A's bases copied, the others not: placed once each, the sums still right.
  check_same_scalars(std::size_t{1} << 11, {12, 8}, {}, false);
}

namespace {

/// At 2^22..2^24 points a CPU MSM per size would take minutes: the bases are [k_i]G with the k_i
/// known, so the expected sum is [sum_i k_i s_i]G, one scalar multiplication (the MSM's result is
/// still compared in affine form, and a wrong bucket or window anywhere changes it).
template <class Affine>
void check_large(unsigned min_log, unsigned max_log, const cuda::msm_precompute& precompute = {}) {
  REQUIRE(gpu_present());
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 gen(seed);
  using curve = typename group_types<Affine>::curve;
  const std::size_t largest = std::size_t{1} << max_log;
  const auto bases = known_bases<curve>::make(largest, gen);
  cuda::msm_context context(0);
  const cuda::msm_bases<Affine> on_device(std::span<const Affine>(bases.points), 0, precompute);
  const auto g = field::testing::jacobian_of<curve>::generator();
  for (unsigned log_n = min_log; log_n <= max_log; ++log_n) {
    const std::size_t n = std::size_t{1} << log_n;
    INFO("n = 2^" << log_n);
    std::vector<fr> scalars = random_scalars(n, gen);
    for (std::size_t i = 0; i < n; i += 5) scalars[i] = i % 2 == 0 ? fr::zero() : fr::one();  // 0/1 share
    fr log_sum = fr::zero();
    for (std::size_t i = 0; i < n; ++i) log_sum += bases.logs[i] * scalars[i];
    CHECK(gpu_msm(context, on_device, scalars, false) == g.mul(log_sum.to_canonical()).to_affine());
  }
}

}  // namespace

TEST_CASE("the G1 and G2 MSMs on the GPU are right at 2^22..2^24 points", "[cuda][msm][gpu][large]") {
  check_large<field::g1_affine>(22, 24);
  check_large<field::g2_affine>(24, 24);
  // The configurations bench_msm measures over copies (one a window).
  check_large<field::g1_affine>(24, 24, {22, 0});
  check_large<field::g2_affine>(24, 24, {20, 0});
}
