// The CPU multi-scalar multiplication (groth16::msm) for G1 and G2 at 2^10..2^20 points, on one
// thread and on all of them, with uniform scalars and with 0/1-heavy ones (45% zero, 45% one, the
// rest uniform, as in circuits with boolean wires). Prints a table and, with --json PATH, writes
// [{"group", "log_size", "threads", "scalars", "ms", "points_per_s", "peer_ms", "ratio", "peer"}].
//
// The peer is blst's Pippenger (blst_p1s_mult_pippenger / blst_p2s_mult_pippenger, one thread),
// built outside the repository and linked when CMake is configured with COPROVE_BLST_DIR (see
// scripts/build_peers.sh); without it the peer column reads "peer not found". blst runs on the same
// bases and scalars, converted to its types outside the timed region, and its sum must equal ours
// at every size measured: the bench stops with status 2 otherwise. "ratio" is ours / blst, both on
// one thread (the rows on more threads carry blst's one-thread time but no ratio). Times are
// wall-clock medians of --reps runs after one warm-up, whose result is the one compared.
//
// --gpu measures cuda::msm_async instead (built where CUDA is): G1 at --g1 sizes (default
// 16,18,...,26) and G2 at --g2 sizes (default 16,...,24), uniform and 0/1-heavy scalars, with the
// scalars resident on the device and streamed from page-locked host memory, timed with CUDA events
// around each run (median of --reps after one warm-up). The bases are 2^16 distinct points tiled to
// the size (uploaded once per size), so the result is checked against groth16::msm over the 2^16
// points with the scalars of each point's copies summed: every configuration's warm-up result must
// match (status 2 otherwise). --windows LIST adds, for uniform resident scalars at 2^20 and up, a row per
// window width; --chunks LIST, over each --precompute's copies, a row per level-0 chunk (entries a
// thread adds). The phases of each run are timed too (events between them): placing the entries
// into groups, the bucket sums, the windows. The peer column holds sppark's time on the same H200 for uniform resident scalars
// (../shared/reference/peers-measured.md). JSON rows: {"group", "log_size", "scalars", "mode",
// "window_bits", "ms", "place_ms", "buckets_ms", "windows_ms", "points_per_s", "peer_ms", "gpu", "copies",
// "copies_ms", "level0_chunk"}.
#include <coprove/groth16/msm.hpp>

#include <coprove/field/fr.hpp>
#include <coprove/field/g1.hpp>
#include <coprove/field/g2.hpp>
#include <coprove/field/parallel.hpp>

#include <coprove/field/encoding.hpp>

#include "bench_support.hpp"
#include "support/options.hpp"
#include "support/report.hpp"

#if defined(COPROVE_HAVE_CUDA)
#include <coprove/cuda/msm.hpp>

#include <cuda_runtime_api.h>
#endif

#if defined(COPROVE_HAVE_BLST)
#include <blst.h>
#endif

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <list>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

namespace field = coprove::field;
namespace groth16 = coprove::groth16;

/// n distinct bases: a random start point plus multiples of a random step, one addition each, so
/// that 2^20 G2 bases take seconds rather than minutes.
template <class Curve>
std::vector<field::detail::affine_point<Curve>> make_bases(std::size_t n, std::uint64_t seed) {
  using jacobian = field::detail::jacobian_point<Curve>;
  std::mt19937_64 gen(seed);
  const jacobian step = jacobian::generator().mul(field::random_scalar(gen));
  std::vector<jacobian> points(n);
  constexpr std::size_t chunk = 1 << 12;
  field::parallel_for(0, (n + chunk - 1) / chunk, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi; ++c) {
      std::mt19937_64 local(seed * 7919 + c);
      jacobian p = jacobian::generator().mul(field::random_scalar(local));
      for (std::size_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
        points[i] = p;
        p += step;
      }
    }
  });
  std::vector<field::detail::affine_point<Curve>> out(n);
  field::parallel_for(0, (n + chunk - 1) / chunk, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi; ++c) {
      const std::size_t begin = c * chunk, end = std::min(n, (c + 1) * chunk);
      const auto affine = field::batch_normalize(std::span<const jacobian>(points.data() + begin, end - begin));
      std::copy(affine.begin(), affine.end(), out.begin() + static_cast<std::ptrdiff_t>(begin));
    }
  });
  return out;
}

std::vector<field::fr> boolean_heavy(std::size_t n, std::uint64_t seed) {
  std::vector<field::fr> out = coprove::bench::random_elements(n, seed);
  std::mt19937_64 gen(seed ^ 0x5bd1e995);
  std::uniform_int_distribution<int> pick(0, 99);
  for (auto& s : out) {
    const int x = pick(gen);
    if (x < 45) s = field::fr::zero();
    else if (x < 90) s = field::fr::one();
  }
  return out;
}

struct row {
  std::string group;
  unsigned log_size;
  std::size_t threads;
  std::string scalars;
  double ms;
  std::optional<double> peer_ms;  ///< blst, one thread, the same inputs
};

/// The median wall-clock time of `run` over `reps` runs after one warm-up, whose result goes to
/// `first`; every later run must return the same (status 2 otherwise).
template <class Run>
double time_median(Run run, int reps, decltype(run())& first) {
  first = run();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const auto result = run();
    const auto stop = std::chrono::steady_clock::now();
    if (!(result == first)) {
      std::cerr << "bench_msm: two runs on the same input disagree\n";
      std::exit(2);
    }
    times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return coprove::bench::median(times);
}

/// groth16::msm's sum, affine, in the zcash uncompressed encoding blst also writes.
template <class Bases>
auto msm_encoded(const Bases& bases, const std::vector<field::fr>& scalars, const groth16::msm_options& options) {
  return field::encode_uncompressed(groth16::msm(bases, scalars, options).to_affine());
}

#if defined(COPROVE_HAVE_BLST)
constexpr bool peer_found = true;

/// blst's functions for one group, and the size of its uncompressed encoding.
template <class Affine>
struct blst_group;
template <>
struct blst_group<blst_p1_affine> {
  using point = blst_p1;
  static constexpr std::size_t encoded_bytes = 96;
  static constexpr auto deserialize = blst_p1_deserialize;
  static constexpr auto scratch_sizeof = blst_p1s_mult_pippenger_scratch_sizeof;
  static constexpr auto mult_pippenger = blst_p1s_mult_pippenger;
  static constexpr auto serialize = blst_p1_serialize;
};
template <>
struct blst_group<blst_p2_affine> {
  using point = blst_p2;
  static constexpr std::size_t encoded_bytes = 192;
  static constexpr auto deserialize = blst_p2_deserialize;
  static constexpr auto scratch_sizeof = blst_p2s_mult_pippenger_scratch_sizeof;
  static constexpr auto mult_pippenger = blst_p2s_mult_pippenger;
  static constexpr auto serialize = blst_p2_serialize;
};

/// blst's inputs for one MSM: its affine points and little-endian scalars, and the scratch space
/// its Pippenger asks for. Made once per (group, size, scalars), outside the timed region.
template <class Affine>
struct blst_inputs {
  std::vector<Affine> points;
  std::vector<blst_scalar> scalars;
  std::vector<limb_t> scratch;
};

template <class Affine, class Bases>
blst_inputs<Affine> to_blst(const Bases& bases, const std::vector<field::fr>& scalars) {
  using group = blst_group<Affine>;
  blst_inputs<Affine> in;
  in.points.resize(bases.size());
  in.scalars.resize(scalars.size());
  constexpr std::size_t chunk = 1 << 12;
  field::parallel_for(0, (bases.size() + chunk - 1) / chunk, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo * chunk; i < std::min(bases.size(), hi * chunk); ++i) {
      const auto bytes = field::encode_uncompressed(bases[i]);
      if (group::deserialize(&in.points[i], bytes.data()) != BLST_SUCCESS) {
        std::cerr << "bench_msm: blst rejects base " << i << "\n";
        std::exit(2);
      }
      const auto limbs = scalars[i].to_canonical();
      blst_scalar_from_uint64(&in.scalars[i], limbs.data());
    }
  });
  const std::size_t scratch_bytes = group::scratch_sizeof(bases.size());
  in.scratch.resize((scratch_bytes + sizeof(limb_t) - 1) / sizeof(limb_t));
  return in;
}

/// blst's MSM of the bases and scalars, encoded as msm_encoded encodes ours.
template <class Affine>
std::array<std::uint8_t, blst_group<Affine>::encoded_bytes> blst_msm(blst_inputs<Affine>& in) {
  using group = blst_group<Affine>;
  // A null second pointer tells blst that the arrays are contiguous.
  const Affine* points[2] = {in.points.data(), nullptr};
  const byte* scalars[2] = {in.scalars.data()->b, nullptr};
  typename group::point sum;
  group::mult_pippenger(&sum, points, in.points.size(), scalars, 255, in.scratch.data());
  std::array<std::uint8_t, group::encoded_bytes> out;
  group::serialize(out.data(), &sum);
  return out;
}

auto make_blst_inputs(const std::vector<field::g1_affine>& bases, const std::vector<field::fr>& scalars) {
  return to_blst<blst_p1_affine>(bases, scalars);
}
auto make_blst_inputs(const std::vector<field::g2_affine>& bases, const std::vector<field::fr>& scalars) {
  return to_blst<blst_p2_affine>(bases, scalars);
}

/// blst's one-thread time on these inputs; stops the bench (status 2) when its sum is not ours.
template <class Bases>
std::optional<double> time_peer(const Bases& bases, const std::vector<field::fr>& scalars, int reps,
                                const char* group, unsigned log, const char* kind,
                                const decltype(msm_encoded(bases, scalars, {}))& ours) {
  auto in = make_blst_inputs(bases, scalars);
  decltype(blst_msm(in)) theirs;
  const double ms = time_median([&] { return blst_msm(in); }, reps, theirs);
  if (theirs != ours) {
    std::cerr << "bench_msm: blst and coprove disagree on " << group << " 2^" << log << " (" << kind
              << " scalars)\n";
    std::exit(2);
  }
  return ms;
}
#else
constexpr bool peer_found = false;

template <class Bases, class Encoded>
std::optional<double> time_peer(const Bases&, const std::vector<field::fr>&, int, const char*, unsigned,
                                const char*, const Encoded&) {
  return std::nullopt;
}
#endif

std::string fixed(double v, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

/// A precomputed configuration: `copies` copies (0: one a window) for windows of `bits`.
struct precompute_spec {
  unsigned copies;
  unsigned bits;
};

#if defined(COPROVE_HAVE_CUDA)
/// Stops the bench with status 1 on a CUDA error.
void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::cerr << "bench_msm: " << what << ": " << cudaGetErrorString(status) << "\n";
    std::exit(1);
  }
}

/// A page-locked array (bases upload from it; streamed scalars are read from it).
template <class T>
struct pinned_array {
  T* data = nullptr;
  std::size_t size = 0;
  explicit pinned_array(std::size_t n) : size(n) {
    cuda_check(cudaMallocHost(reinterpret_cast<void**>(&data), std::max<std::size_t>(n, 1) * sizeof(T)),
               "cudaMallocHost");
  }
  ~pinned_array() { cudaFreeHost(data); }
  pinned_array(const pinned_array&) = delete;
  pinned_array& operator=(const pinned_array&) = delete;
};

/// sppark's MSM on the reference H200, uniform scalars, device-resident (peers-measured.md).
std::optional<double> sppark_ms(const std::string& group, unsigned log) {
  static const std::pair<unsigned, double> g1[] = {{16, 7.65}, {18, 20.27}, {20, 21.26}, {22, 52.95}, {24, 155.19}, {26, 559.01}};
  static const std::pair<unsigned, double> g2[] = {{16, 10.84}, {18, 28.83}, {20, 48.82}, {22, 139.03}, {24, 447.87}};
  for (const auto& [l, ms] : group == "g1" ? std::span<const std::pair<unsigned, double>>(g1)
                                           : std::span<const std::pair<unsigned, double>>(g2)) {
    if (l == log) return ms;
  }
  return std::nullopt;
}

struct gpu_row {
  std::string group;
  unsigned log_size;
  std::string scalars;
  std::string mode;
  unsigned window_bits;
  double ms;
  double place_ms, buckets_ms, windows_ms;  ///< the phases of the median run
  unsigned copies = 1;                      ///< copies of the bases (precomputed; 1: none)
  double copy_ms = 0;                       ///< the time the copies took to make (once per size)
  std::uint32_t level0_chunk = 0;           ///< entries a thread of level 0 adds (the plan's or --chunks)
  std::string placement;                    ///< "one pass", "two passes" or by density (the plan's) or --placements
};

template <class Curve, class Xyzz>
void bench_gpu_group(const char* name, const std::vector<unsigned>& logs, int reps,
                     const std::vector<unsigned>& extra_windows, const std::vector<precompute_spec>& precomputed,
                     const std::vector<unsigned>& level0_chunks,
                     const std::vector<coprove::cuda::msm_placement>& placements, std::vector<gpu_row>& rows) {
  using affine = field::detail::affine_point<Curve>;
  constexpr std::size_t distinct = std::size_t{1} << 16;
  const auto base_set = make_bases<Curve>(distinct, name[1] == '1' ? 11 : 12);
  coprove::cuda::msm_context context(0);
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  coprove::cuda::msm_phase_events phases;
  for (cudaEvent_t* e : {&phases.start, &phases.placed, &phases.buckets, &phases.done})
    cuda_check(cudaEventCreate(e), "cudaEventCreate");
  const auto elapsed = [](cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    return static_cast<double>(ms);
  };
  pinned_array<Xyzz> result(1);
  for (const unsigned log : logs) {
    const std::size_t n = std::size_t{1} << log;
    pinned_array<affine> tiled(n);
    for (std::size_t i = 0; i < n; i += distinct)
      std::copy_n(base_set.begin(), std::min(distinct, n - i), tiled.data + i);
    std::optional<coprove::cuda::msm_bases<affine>> bases;
    bases.emplace(std::span<const affine>(tiled.data, n), 0);
    struct input {
      input(const char* k, std::size_t n) : kind(k), host(n) {}
      const char* kind;
      std::vector<field::fr> scalars;
      affine expected;
      pinned_array<field::fr> host;
      field::fr* device = nullptr;
    };
    std::list<input> inputs;
    for (const char* kind : {"uniform", "0/1-heavy"}) {
      auto scalars = std::string(kind) == "uniform" ? coprove::bench::random_elements(n, 300 + log)
                                                    : boolean_heavy(n, 400 + log);
      // The expected sum: each distinct base times the sum of its copies' scalars.
      std::vector<field::fr> folded(std::min(n, distinct), field::fr::zero());
      for (std::size_t i = 0; i < n; ++i) folded[i % distinct] += scalars[i];
      const auto expected =
          groth16::msm(std::span<const affine>(base_set.data(), folded.size()), folded).to_affine();
      input& in = inputs.emplace_back(kind, n);
      in.scalars = std::move(scalars);
      in.expected = expected;
      std::copy(in.scalars.begin(), in.scalars.end(), in.host.data);
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&in.device), n * sizeof(field::fr)), "cudaMalloc");
      cuda_check(cudaMemcpy(in.device, in.scalars.data(), n * sizeof(field::fr), cudaMemcpyHostToDevice),
                 "cudaMemcpy");
    }
    // One configuration: the run checked once against groth16::msm, then timed.
    const auto measure = [&](const input& in, const std::string& mode, unsigned window, double copy_ms,
                             std::uint32_t level0_chunk = 0,
                             coprove::cuda::msm_placement placement = coprove::cuda::msm_placement::plan) {
      const field::fr* scalars = mode == "streamed" ? in.host.data : in.device;
      const coprove::cuda::msm_gpu_options options{window, level0_chunk, &phases, placement};
      // The whole run, and its phases: placing the entries, the bucket sums, the windows.
      const auto run = [&] {
        std::memset(static_cast<void*>(result.data), 0xa5, sizeof(Xyzz));
        coprove::cuda::msm_async(context, *bases, scalars, n, result.data, stream, options);
        cuda_check(cudaEventSynchronize(phases.done), "cudaEventSynchronize");
        return std::array<double, 4>{elapsed(phases.start, phases.done), elapsed(phases.start, phases.placed),
                                     elapsed(phases.placed, phases.buckets), elapsed(phases.buckets, phases.done)};
      };
      run();
      if (!(result.data->to_affine() == in.expected)) {
        std::cerr << "bench_msm: the GPU MSM disagrees with groth16::msm on " << name << " 2^" << log << " ("
                  << in.kind << " scalars, " << mode << ", window " << window << ", " << bases->copies()
                  << " copies)\n";
        std::exit(2);
      }
      std::vector<std::array<double, 4>> times;
      for (int r = 0; r < reps; ++r) times.push_back(run());
      std::sort(times.begin(), times.end());
      const auto& median = times[times.size() / 2];
      const auto plan = coprove::cuda::plan_msm(
          name[1] == '1' ? coprove::cuda::msm_group::g1 : coprove::cuda::msm_group::g2, n,
          bases->copies() > 1 ? bases->window_bits() : window, bases->copies(), level0_chunk, placement);
      const std::string passes = plan.placement_bin_shift == 0 ? "one pass"
                                 : plan.placement_by_density ? "two passes if dense, else one"
                                                             : "two passes";
      rows.push_back({name, log, in.kind, mode, plan.window_bits, median[0], median[1], median[2], median[3],
                      bases->copies(), copy_ms, plan.level_chunk.front(), passes});
      std::fprintf(stderr,
                   "bench_msm --gpu: %s 2^%u %s %s window %u copies %u level-0 chunk %u: %.2f ms (place %.2f, "
                   "buckets %.2f, windows %.2f), placed in %s\n",
                   name, log, in.kind, mode.c_str(), plan.window_bits, bases->copies(), plan.level_chunk.front(),
                   median[0], median[1], median[2], median[3], passes.c_str());
    };
    for (const input& in : inputs) {
      measure(in, "resident", 0, 0);
      measure(in, "streamed", 0, 0);
      if (std::string(in.kind) == "uniform" && log >= 20)
        for (const unsigned w : extra_windows) measure(in, "resident", w, 0);
      for (const auto placement : placements) measure(in, "resident", 0, 0, 0, placement);
    }
    for (const precompute_spec& spec : precomputed) {
      bases.reset();
      const auto begin = std::chrono::steady_clock::now();
      try {
        bases.emplace(std::span<const affine>(tiled.data, n), 0, coprove::cuda::msm_precompute{spec.bits, spec.copies});
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_msm --gpu: %s 2^%u, %u copies for %u bits: not run (%s)\n", name, log,
                     spec.copies, spec.bits, e.what());
        continue;
      }
      const double copy_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
      for (const input& in : inputs) measure(in, "resident", 0, copy_ms);
      for (const unsigned chunk : level0_chunks) measure(inputs.front(), "resident", 0, copy_ms, chunk);
      for (const input& in : inputs)
        for (const auto placement : placements) measure(in, "resident", 0, copy_ms, 0, placement);
    }
    for (input& in : inputs) cuda_check(cudaFree(in.device), "cudaFree");
  }
  for (cudaEvent_t e : {phases.start, phases.placed, phases.buckets, phases.done}) cudaEventDestroy(e);
  cudaStreamDestroy(stream);
}

static_assert(coprove::cuda::msm_max_level0_chunk == 1024, "bench_msm --chunks takes 1..1024");

int bench_gpu(const std::vector<unsigned>& g1_logs, const std::vector<unsigned>& g2_logs, int reps,
              const std::vector<unsigned>& extra_windows, const std::vector<precompute_spec>& precomputed,
              const std::vector<unsigned>& level0_chunks,
              const std::vector<coprove::cuda::msm_placement>& placements, const std::string& json_path) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::cerr << "bench_msm --gpu: no CUDA device\n";
    return 1;
  }
  cudaDeviceProp props{};
  cuda_check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
  std::vector<gpu_row> rows;
  bench_gpu_group<field::g1_curve, field::g1_xyzz>("g1", g1_logs, reps, extra_windows, precomputed, level0_chunks,
                                                   placements, rows);
  bench_gpu_group<field::g2_curve, field::g2_xyzz>("g2", g2_logs, reps, extra_windows, precomputed, level0_chunks,
                                                   placements, rows);
  std::printf("bench_msm --gpu: cuda::msm_async on %s, median of %d (CUDA events), bases 2^16 distinct points "
              "tiled; peer: sppark on the reference H200, uniform resident scalars\n",
              props.name, reps);
  std::printf("%-5s %6s %10s %9s %7s %6s %6s %10s %8s %8s %8s %14s %10s %10s %10s\n", "group", "log2 n", "scalars",
              "mode", "window", "copies", "chunk", "ms", "place", "buckets", "windows", "points/s", "sppark ms",
              "ours/peer", "copies ms");
  boost::json::array json;
  for (const auto& r : rows) {
    const double rate = static_cast<double>(std::size_t{1} << r.log_size) / (r.ms / 1e3);
    const auto peer = r.scalars == "uniform" && r.mode == "resident" ? sppark_ms(r.group, r.log_size) : std::nullopt;
    std::printf("%-5s %6u %10s %9s %7u %6u %6u %10.2f %8.2f %8.2f %8.2f %14.0f %10s %10s %10s\n", r.group.c_str(),
                r.log_size, r.scalars.c_str(), r.mode.c_str(), r.window_bits, r.copies, r.level0_chunk, r.ms,
                r.place_ms, r.buckets_ms,
                r.windows_ms, rate, peer ? fixed(*peer, 2).c_str() : "-", peer ? fixed(r.ms / *peer, 2).c_str() : "-",
                r.copies > 1 ? fixed(r.copy_ms, 0).c_str() : "-");
    boost::json::object o{{"group", r.group},   {"log_size", r.log_size},       {"scalars", r.scalars},
                          {"mode", r.mode},     {"window_bits", r.window_bits}, {"ms", r.ms},
                          {"points_per_s", rate}, {"gpu", props.name}, {"place_ms", r.place_ms},
                          {"buckets_ms", r.buckets_ms}, {"windows_ms", r.windows_ms},
                          {"copies", r.copies}, {"copies_ms", r.copy_ms}, {"level0_chunk", r.level0_chunk},
                          {"placement", r.placement}};
    o["peer_ms"] = peer ? boost::json::value(*peer) : boost::json::value(nullptr);
    json.push_back(std::move(o));
  }
  if (!json_path.empty() && !coprove::bench::write_json_file(json_path, json, "bench_msm")) return 1;
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::vector<unsigned> g1_logs{10, 12, 14};
  std::vector<unsigned> g2_logs{10, 12};
  int reps = 3;
  groth16::msm_options options;
  std::string json_path;
  bool gpu = false;
  bool sizes_given = false;
  std::vector<unsigned> extra_windows;
  std::vector<precompute_spec> precomputed;
  std::vector<unsigned> level0_chunks;
  std::vector<std::string> placement_names;  // --placements: "one", "two", "density"
  coprove::bench::options cli("bench_msm", "the multi-scalar multiplication in G1 and G2, on the CPU (beside blst) or the GPU");
  cli.value("--g1", "LOGS", "G1 sizes, log2 points (default 10,12,14; with --gpu 16,18,...,26)",
            [&](const std::string& v) {
              g1_logs = coprove::bench::parse_list("--g1", v, 1u, 26u);
              sizes_given = true;
            })
      .value("--g2", "LOGS", "G2 sizes (default 10,12; with --gpu 16,...,24)",
             [&](const std::string& v) {
               g2_logs = coprove::bench::parse_list("--g2", v, 1u, 26u);
               sizes_given = true;
             })
      .flag("--all", [&] { g1_logs = g2_logs = {10, 12, 14, 16, 18, 20}; }, "10,12,...,20 for both groups")
      .number("--reps", reps, "N", "runs a configuration after one warm-up, the median kept (default 3)", 1, 1000)
      .number("--window", options.window_bits, "BITS",
              "a fixed window width on the CPU (default 0: msm's choice for each size)", 0u,
              groth16::msm_max_window_bits)
      .flag("--gpu", gpu, "the GPU MSM (cuda::msm_async) instead of the CPU's")
      .list("--windows", extra_windows, "BITS,...", "with --gpu: extra window widths to time (2^20 and up)", 1u, 24u)
      .value("--precompute", "F:C,...",
             "with --gpu: also over bases with F shifted copies (0: one a window) for C-bit windows",
             [&](const std::string& v) {
               for (const std::string& item : coprove::bench::parse_items("--precompute", v)) {
                 const std::size_t colon = item.find(':');
                 if (colon == std::string::npos) throw std::invalid_argument("expected F:C, got '" + item + "'");
                 precomputed.push_back({coprove::bench::parse_list("--precompute", item.substr(0, colon), 0u, 64u)[0],
                                        coprove::bench::parse_list("--precompute", item.substr(colon + 1), 1u, 24u)[0]});
               }
             })
      .list("--chunks", level0_chunks, "N,...",
            "with --gpu: also, over each --precompute's copies, N entries a thread at level 0", 1u, 1024u)
      .names("--placements", placement_names, {"one", "two", "density"},
             "with --gpu: also each resident configuration placed in one pass, two, or two if dense")
      .text("--json", json_path, "PATH", "write the rows as JSON")
      .note("The row without --chunks or --placements is the plan's choice.")
      .parse(argc, argv);
  if (gpu) {
#if defined(COPROVE_HAVE_CUDA)
    if (!sizes_given) {
      g1_logs = {16, 18, 20, 22, 24, 26};
      g2_logs = {16, 18, 20, 22, 24};
    }
    std::vector<coprove::cuda::msm_placement> placements;
    for (const std::string& p : placement_names)
      placements.push_back(p == "one"   ? coprove::cuda::msm_placement::one_pass
                           : p == "two" ? coprove::cuda::msm_placement::two_passes
                                        : coprove::cuda::msm_placement::by_density);
    return bench_gpu(g1_logs, g2_logs, reps, extra_windows, precomputed, level0_chunks, placements, json_path);
#else
    std::cerr << "bench_msm: --gpu needs a build with CUDA\n";
    return 1;
#endif
  }

  const std::size_t all_threads = field::parallelism();
  std::vector<row> rows;
  const auto run_group = [&](const char* name, const std::vector<unsigned>& logs, auto make) {
    for (const unsigned log : logs) {
      const std::size_t n = std::size_t{1} << log;
      const auto bases = make(n);
      const std::pair<const char*, std::vector<field::fr>> inputs[] = {
          {"uniform", coprove::bench::random_elements(n, 100 + log)}, {"0/1-heavy", boolean_heavy(n, 200 + log)}};
      for (const auto& [kind, scalars] : inputs) {
        std::optional<double> peer_ms;
        for (const std::size_t threads : {std::size_t{1}, all_threads}) {
          field::set_parallelism(threads);
          decltype(msm_encoded(bases, scalars, options)) ours;
          const double ms = time_median([&] { return msm_encoded(bases, scalars, options); }, reps, ours);
          if (threads == 1) {
            field::set_parallelism(all_threads);  // for the conversion; blst's MSM is one thread
            peer_ms = time_peer(bases, scalars, reps, name, log, kind, ours);
          }
          rows.push_back({name, log, threads, kind, ms, peer_ms});
          std::fprintf(stderr, "bench_msm: %s 2^%u %s, %zu thread(s): %.2f ms (blst %s)\n", name, log, kind,
                       threads, ms, peer_ms ? fixed(*peer_ms, 2).c_str() : "-");
          if (all_threads == 1) break;
        }
      }
      field::set_parallelism(all_threads);
    }
  };
  run_group("g1", g1_logs, [](std::size_t n) { return make_bases<field::g1_curve>(n, 1); });
  run_group("g2", g2_logs, [](std::size_t n) { return make_bases<field::g2_curve>(n, 2); });

  std::printf("bench_msm: groth16::msm on the CPU, %zu threads available, Fq path %s, median of %d, window %s, "
              "peer %s\n",
              all_threads, std::string(field::to_string(field::active_fq_multiply_path())).c_str(), reps,
              options.window_bits == 0 ? "by size" : std::to_string(options.window_bits).c_str(),
              peer_found ? "blst (1 thread)" : "not found");
  coprove::bench::report table({{"group", "group"},
                                 {"log2 n", "log_size"},
                                 {"threads", "threads"},
                                 {"scalars", "scalars"},
                                 {"ms", "ms", 2},
                                 {"points/s", "points_per_s", 0},
                                 {"blst 1t ms", "peer_ms", 2},
                                 {"ours/blst", "ratio", 2}});
  for (const auto& r : rows) {
    const double rate = static_cast<double>(std::size_t{1} << r.log_size) / (r.ms / 1e3);
    const bool compared = r.peer_ms && r.threads == 1;
    boost::json::object o{{"group", r.group},
                          {"log_size", r.log_size},
                          {"threads", r.threads},
                          {"scalars", r.scalars},
                          {"ms", r.ms},
                          {"points_per_s", rate},
                          {"peer", peer_found ? "blst" : "peer not found"}};
    o["peer_ms"] = r.peer_ms ? boost::json::value(*r.peer_ms) : boost::json::value(nullptr);
    o["ratio"] = compared ? boost::json::value(r.ms / *r.peer_ms) : boost::json::value(nullptr);
    table.add(std::move(o));
  }
  table.print();
  if (!json_path.empty() && !table.write_json(json_path, "bench_msm")) return 1;
  return 0;
}
