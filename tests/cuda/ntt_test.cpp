// The GPU field arithmetic, NTTs and quotient against their CPU twins, bit for bit, on fresh random
// inputs; and, without a GPU, the pass schedule run on the host against the CPU transforms (the
// index arithmetic is shared with the kernels, so this catches a wrong decomposition early).
#include <coprove/cuda/ntt.hpp>

#include <coprove/cuda/detail/ntt_launch.hpp>
#include <coprove/cuda/detail/ntt_schedule.hpp>
#include <coprove/field/domain.hpp>
#include <coprove/field/fr.hpp>
#include <coprove/field/ntt.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/field/quotient.hpp>

#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using coprove::field::fr;
namespace detail = coprove::cuda::detail;

/// Fresh random elements, generated in parallel from per-chunk seeds drawn from `seed`.
std::vector<fr> random_elements(std::size_t n, std::uint64_t seed) {
  std::vector<fr> out(n);
  constexpr std::size_t chunk = 1 << 14;
  std::vector<std::uint64_t> seeds((n + chunk - 1) / chunk);
  std::mt19937_64 root(seed);
  for (auto& s : seeds) s = root();
  coprove::field::parallel_for(0, seeds.size(), [&](std::size_t lo, std::size_t hi) {
    for (std::size_t c = lo; c < hi; ++c) {
      std::mt19937_64 gen(seeds[c]);
      const std::size_t end = std::min(n, (c + 1) * chunk);
      for (std::size_t i = c * chunk; i < end; ++i) out[i] = fr::random(gen);
    }
  });
  return out;
}

std::uint64_t fresh_seed() {
  static std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}

/// Empty when equal; otherwise the count of differing elements and the first few indices.
std::string differences(const std::vector<fr>& got, const std::vector<fr>& want) {
  if (got.size() != want.size()) return "sizes differ";
  std::size_t count = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      if (count < 4) first << " [" << i << "] got " << got[i].to_hex() << " want " << want[i].to_hex();
      ++count;
    }
  }
  if (count == 0) return {};
  return std::to_string(count) + " of " + std::to_string(got.size()) + " differ:" + first.str();
}

// ---- The host model of the passes -------------------------------------------------------------

std::vector<fr> powers(const fr& base, std::size_t count) {
  std::vector<fr> out(count);
  fr x = fr::one();
  for (auto& v : out) {
    v = x;
    x *= base;
  }
  return out;
}

std::uint32_t bit_reverse(std::uint32_t x, unsigned bits) {
  std::uint32_t r = 0;
  for (unsigned i = 0; i < bits; ++i) r |= ((x >> i) & 1u) << (bits - 1 - i);
  return r;
}

/// Runs the passes of the schedule over `data` exactly as the kernel orders them (same lines,
/// same butterflies, same table indexing), with omega = `omega`; no fused steps. Counts in
/// boundary_mismatches the boundary-table entries (as the plan builds them) that differ from the
/// twiddle formed from the lo/hi halves.
void model_transform(std::vector<fr>& data, const fr& omega, std::size_t& boundary_mismatches) {
  const std::size_t n = data.size();
  unsigned log_n = 0;
  while ((std::size_t{1} << log_n) < n) ++log_n;
  const auto schedule = detail::ntt_schedule::make(log_n);
  const unsigned roots_log = schedule.bits[0];
  const auto roots = powers(omega.pow(static_cast<std::uint64_t>(n >> roots_log)), std::size_t{1} << (roots_log - 1));
  const unsigned split = (log_n + 1) / 2;
  const auto tw_lo = powers(omega, std::size_t{1} << split);
  const auto tw_hi = powers(omega.pow(std::uint64_t{1} << split), std::size_t{1} << (log_n - split));
  std::vector<fr> scratch(schedule.passes > 1 ? n : 0);
  for (unsigned p = 0; p < schedule.passes; ++p) {
    const auto shape = schedule.pass(p);
    const std::vector<fr>& src = p == 0 ? data : scratch;
    std::vector<fr> out(n);  // a pass never reads what it writes: model it out of place
    const std::uint32_t len = 1u << shape.bits;
    const std::uint32_t lines = 1u << shape.log_lines;
    std::vector<fr> x(len);
    // The boundary table as the plan builds it: entry boundary_index(col, k) = (omega^(k << hi))^col.
    std::vector<fr> boundary(shape.last ? 0 : shape.boundary_entries());
    if (!shape.last) {
      for (std::uint32_t k = 0; k < len; ++k) {
        const fr step = omega.pow(std::uint64_t{k} << shape.hi);
        fr w = fr::one();
        for (std::uint32_t col = 0; col < (1u << shape.lo); ++col) {
          boundary[shape.boundary_index(col, k)] = w;
          w *= step;
        }
      }
    }
    for (std::uint32_t block = 0; block < shape.blocks(); ++block) {
      for (std::uint32_t g = 0; g < lines; ++g) {
        const std::uint32_t line = shape.line_of(block, g);
        for (std::uint32_t t = 0; t < len; ++t) x[t] = src[shape.position(line, t)];
        for (unsigned level = 0; level < shape.bits; ++level) {
          const unsigned log_half = shape.bits - 1 - level;
          const std::uint32_t half = 1u << log_half;
          for (std::uint32_t bt = 0; bt < len / 2; ++bt) {
            const std::uint32_t j = bt & (half - 1u);
            const std::uint32_t t = ((bt >> log_half) << (log_half + 1)) | j;
            const fr u = x[t], v = x[t + half];
            x[t] = u + v;
            fr d = u - v;
            if (log_half != 0) d *= roots[(j << level) << (roots_log - shape.bits)];
            x[t + half] = d;
          }
        }
        for (std::uint32_t k = 0; k < len; ++k) {
          fr v = x[bit_reverse(k, shape.bits)];
          if (!shape.last) {
            const std::uint32_t e = shape.twiddle_exponent(line, k);
            const fr from_halves = tw_lo[e & ((1u << split) - 1u)] * tw_hi[e >> split];
            // The boundary table, looked up where the kernel looks, holds the same twiddle.
            const std::uint32_t index = shape.boundary_index(line, k);
            if (index >= boundary.size() || boundary[index] != from_halves) ++boundary_mismatches;
            v *= from_halves;
            out[shape.position(line, k)] = v;
          } else {
            out[shape.output_index(line, k)] = v;
          }
        }
      }
    }
    if (shape.last) data = std::move(out);
    else scratch = std::move(out);
  }
}

}  // namespace

TEST_CASE("the NTT pass schedule covers every level once, stays within a block and prefers even digits", "[cuda][ntt][cpu]") {
  for (unsigned log_n = 1; log_n <= 30; ++log_n) {
    const auto s = detail::ntt_schedule::make(log_n);
    unsigned total = 0;
    for (unsigned p = 0; p < s.passes; ++p) {
      const auto shape = s.pass(p);
      CHECK(shape.bits >= 1);
      CHECK(shape.bits <= detail::ntt_max_pass_bits);
      CHECK((std::size_t{1} << (shape.bits + shape.log_lines)) <= detail::ntt_block_elements);
      CHECK(std::uint64_t{shape.blocks()} << (shape.bits + shape.log_lines) == std::uint64_t{1} << log_n);
      total += shape.bits;
    }
    CHECK(total == log_n);
    CHECK(s.passes <= detail::ntt_max_passes);
    unsigned odd = 0;
    for (unsigned p = 0; p < s.passes; ++p) {
      odd += s.bits[p] % 2;
      if (p > 0) CHECK(s.bits[p] <= s.bits[p - 1]);
    }
    // Even digits where possible: an odd size needs one odd digit; 22 = 11 + 11 cannot do better.
    CHECK(odd <= (log_n == 22 ? 2u : log_n % 2));
  }
}

TEST_CASE("the NTT passes modelled on the host equal the CPU transforms", "[cuda][ntt][cpu]") {
  for (unsigned log_n : {1u, 2u, 3u, 5u, 8u, 11u, 12u, 13u, 14u, 15u, 17u, 18u}) {
    CAPTURE(log_n);
    const coprove::field::evaluation_domain domain(std::size_t{1} << log_n);
    const auto input = random_elements(domain.size(), fresh_seed());
    auto want = input;
    coprove::field::ntt(want, domain);
    auto got = input;
    std::size_t boundary_mismatches = 0;
    model_transform(got, domain.omega(), boundary_mismatches);
    INFO(differences(got, want));
    CHECK(got == want);
    CHECK(boundary_mismatches == 0);
  }
}

TEST_CASE("the three-pass NTT schedule modelled on the host equals the CPU transform", "[cuda][ntt][cpu][slow]") {
  const coprove::field::evaluation_domain domain(std::size_t{1} << 23);
  const auto input = random_elements(domain.size(), fresh_seed());
  auto want = input;
  coprove::field::ntt(want, domain);
  auto got = input;
  std::size_t boundary_mismatches = 0;
  model_transform(got, domain.omega(), boundary_mismatches);
  INFO(differences(got, want));
  CHECK(got == want);
  CHECK(boundary_mismatches == 0);
}

TEST_CASE("an NTT plan refuses sizes and devices it cannot serve", "[cuda][ntt][cpu]") {
  CHECK_THROWS_AS(coprove::cuda::ntt_plan(0, 0), std::invalid_argument);
  CHECK_THROWS_AS(coprove::cuda::ntt_plan(31, 0), std::invalid_argument);
  CHECK_THROWS_AS(coprove::cuda::ntt_plan(10, -1), std::invalid_argument);
  CHECK_THROWS_AS(coprove::cuda::ntt_plan(10, 1 << 20), std::invalid_argument);
}

TEST_CASE("an NTT plan's device bytes count its tables and the quotient's scratch", "[cuda][ntt][cpu]") {
  using coprove::cuda::ntt_plan_device_bytes;
  CHECK_THROWS_AS(ntt_plan_device_bytes(0), std::invalid_argument);
  CHECK_THROWS_AS(ntt_plan_device_bytes(31), std::invalid_argument);
  for (unsigned log_n = 1; log_n <= 30; ++log_n) {
    INFO("log_n " << log_n);
    const detail::ntt_schedule schedule = detail::ntt_schedule::make(log_n);
    const std::size_t n_bytes = (std::size_t{1} << log_n) * sizeof(fr);
    const std::size_t bytes = ntt_plan_device_bytes(log_n);
    // More passes than one: the quotient's 3n elements of scratch and, up to the boundary tables'
    // limit, tables of n entries for pass 0 (twice: forward and inverse).
    const bool boundary_tables = log_n <= detail::ntt_default_boundary_table_max_log;
    if (schedule.passes > 1) CHECK(bytes >= (boundary_tables ? 5 : 3) * n_bytes);
    // The rest are tables of about sqrt(n) elements.
    if (schedule.passes == 1) CHECK(bytes < n_bytes + 4096 * sizeof(fr));
    if (log_n > 1) CHECK(bytes >= ntt_plan_device_bytes(log_n - 1));
  }
}

// ---- On the GPU -------------------------------------------------------------------------------

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) FAIL(what << ": " << cudaGetErrorString(e));
}

/// A device array of Fr, freed on scope exit.
class device_vector {
 public:
  explicit device_vector(std::size_t n) : n_(n) { check_cuda(cudaMalloc(&data_, n * sizeof(fr)), "cudaMalloc"); }
  ~device_vector() { cudaFree(data_); }
  device_vector(const device_vector&) = delete;
  device_vector& operator=(const device_vector&) = delete;
  fr* data() const { return static_cast<fr*>(data_); }
  /// Poisons with 0xFF bytes (no valid element: every limb pattern 0xFF.. is >= r), then copies in.
  void poison_and_copy_h2d(const std::vector<fr>& host) {
    check_cuda(cudaMemset(data_, 0xFF, n_ * sizeof(fr)), "cudaMemset");
    check_cuda(cudaMemcpy(data_, host.data(), host.size() * sizeof(fr), cudaMemcpyHostToDevice), "copy h2d");
  }
  void poison() { check_cuda(cudaMemset(data_, 0xFF, n_ * sizeof(fr)), "cudaMemset"); }
  std::vector<fr> copy_d2h() const {
    std::vector<fr> out(n_);
    check_cuda(cudaMemcpy(out.data(), data_, n_ * sizeof(fr), cudaMemcpyDeviceToHost), "copy d2h");
    return out;
  }

 private:
  void* data_ = nullptr;
  std::size_t n_;
};

bool have_gpu() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

/// Elements that are not fully reduced (< r): the 0xFF poison is not, so none may survive.
std::size_t unwritten(const std::vector<fr>& v) {
  std::size_t bad = 0;
  for (const fr& x : v) {
    bool below = false;
    for (int i = 3; i >= 0; --i) {
      if (x.limbs[i] != coprove::field::detail::fr_modulus[i]) {
        below = x.limbs[i] < coprove::field::detail::fr_modulus[i];
        break;
      }
    }
    if (!below) ++bad;
  }
  return bad;
}

enum class op { forward, inverse, coset_forward, coset_inverse };

void check_transform_on(const coprove::cuda::ntt_plan& plan, op which) {
  CAPTURE(plan.log_size(), static_cast<int>(which));
  const coprove::field::evaluation_domain domain(plan.size());
  const auto input = random_elements(domain.size(), fresh_seed());
  auto want = input;
  switch (which) {
    case op::forward: coprove::field::ntt(want, domain); break;
    case op::inverse: coprove::field::intt(want, domain); break;
    case op::coset_forward: coprove::field::coset_ntt(want, domain); break;
    case op::coset_inverse: coprove::field::coset_intt(want, domain); break;
  }
  device_vector d(domain.size());
  d.poison_and_copy_h2d(input);
  switch (which) {
    case op::forward: coprove::cuda::ntt_forward_async(plan, d.data(), nullptr); break;
    case op::inverse: coprove::cuda::ntt_inverse_async(plan, d.data(), nullptr); break;
    case op::coset_forward: coprove::cuda::coset_ntt_async(plan, d.data(), nullptr); break;
    case op::coset_inverse: coprove::cuda::coset_intt_async(plan, d.data(), nullptr); break;
  }
  check_cuda(cudaDeviceSynchronize(), "transform");
  const auto got = d.copy_d2h();
  CHECK(unwritten(got) == 0);
  INFO(differences(got, want));
  CHECK(got == want);
}

void check_transform(unsigned log_n, op which) { check_transform_on(coprove::cuda::ntt_plan(log_n, 0), which); }

/// The GPU quotient on `plan` (one of its own when null) against the CPU's.
void check_quotient(unsigned log_n, const coprove::cuda::ntt_plan* given = nullptr) {
  CAPTURE(log_n);
  const coprove::field::evaluation_domain domain(std::size_t{1} << log_n);
  std::optional<coprove::cuda::ntt_plan> own;
  if (given == nullptr) own.emplace(log_n, 0);
  const coprove::cuda::ntt_plan& plan = given != nullptr ? *given : *own;
  const auto a = random_elements(domain.size(), fresh_seed());
  const auto b = random_elements(domain.size(), fresh_seed());
  const auto c = random_elements(domain.size(), fresh_seed());
  std::vector<fr> want(domain.size());
  coprove::field::compute_quotient(a, b, c, want, domain);
  device_vector da(domain.size()), db(domain.size()), dc(domain.size());
  da.poison_and_copy_h2d(a);
  db.poison_and_copy_h2d(b);
  dc.poison_and_copy_h2d(c);
  coprove::cuda::quotient_async(plan, da.data(), db.data(), dc.data(), nullptr);
  check_cuda(cudaDeviceSynchronize(), "quotient");
  const auto got = da.copy_d2h();
  CHECK(unwritten(got) == 0);
  INFO(differences(got, want));
  CHECK(got == want);
}

/// snarkjs's odd-coset form on ffjavascript's roots, against field::compute_quotient_odd_coset.
void check_quotient_odd_coset(unsigned log_n) {
  CAPTURE(log_n);
  const coprove::field::evaluation_domain domain(std::size_t{1} << log_n, coprove::field::domain_roots::ffjavascript);
  const coprove::cuda::ntt_plan plan(log_n, 0, coprove::field::domain_roots::ffjavascript);
  CHECK(plan.roots() == coprove::field::domain_roots::ffjavascript);
  const auto a = random_elements(domain.size(), fresh_seed());
  const auto b = random_elements(domain.size(), fresh_seed());
  std::vector<fr> want(domain.size());
  coprove::field::compute_quotient_odd_coset(a, b, want, domain);
  device_vector da(domain.size()), db(domain.size()), dc(domain.size());
  da.poison_and_copy_h2d(a);
  db.poison_and_copy_h2d(b);
  dc.poison_and_copy_h2d(b);  // holds no input: the GPU forms c from a and b
  coprove::cuda::quotient_odd_coset_async(plan, da.data(), db.data(), dc.data(), nullptr);
  check_cuda(cudaDeviceSynchronize(), "odd-coset quotient");
  const auto got = da.copy_d2h();
  CHECK(unwritten(got) == 0);
  INFO(differences(got, want));
  CHECK(got == want);
}

/// Raw limbs (Montgomery words, not values) at the ends of the range: 0, 1, r - 1, r - 2, all-ones
/// limbs below r, and all-ones low limbs with a zero top limb.
std::vector<fr> raw_edge_elements() {
  using limbs = std::array<std::uint64_t, 4>;
  const limbs r_minus_1{0xffffffff00000000ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};
  return {fr{limbs{0, 0, 0, 0}},
          fr{limbs{1, 0, 0, 0}},
          fr{r_minus_1},
          fr{limbs{0xfffffffeffffffffULL, r_minus_1[1], r_minus_1[2], r_minus_1[3]}},
          fr{limbs{~0ULL, ~0ULL, ~0ULL, 0x73eda753299d7d47ULL}},
          fr{limbs{~0ULL, ~0ULL, ~0ULL, 0}}};
}

}  // namespace

TEST_CASE("GPU Fr addition, subtraction and multiplication equal the CPU's", "[cuda][ntt][field][gpu]") {
  if (!have_gpu()) FAIL("no CUDA device");
  std::size_t n = 1 << 16;
  auto a = random_elements(n, fresh_seed());
  auto b = random_elements(n, fresh_seed());
  // Edge values: 0, 1, -1, r - 2 (as elements), paired with each other.
  const std::vector<fr> edges{fr::zero(), fr::one(), -fr::one(), -fr::from_uint64(2), fr::from_uint64(2)};
  for (std::size_t i = 0; i < edges.size(); ++i)
    for (std::size_t j = 0; j < edges.size(); ++j) {
      a[i * edges.size() + j] = edges[i];
      b[i * edges.size() + j] = edges[j];
    }
  // Raw limbs at the top of the range: r - 1 in Montgomery form and values with all-ones limbs
  // below r.
  a[100] = fr{{0xffffffff00000000ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL}};
  b[100] = a[100];
  const auto raw = raw_edge_elements();
  for (std::size_t i = 0; i < raw.size(); ++i)
    for (std::size_t j = 0; j < raw.size(); ++j) {
      a[200 + i * raw.size() + j] = raw[i];
      b[200 + i * raw.size() + j] = raw[j];
    }
  device_vector da(n), db(n), ds(n), dd(n), dp(n);
  da.poison_and_copy_h2d(a);
  db.poison_and_copy_h2d(b);
  ds.poison();
  dd.poison();
  dp.poison();
  detail::launch_field_ops_check(da.data(), db.data(), ds.data(), dd.data(), dp.data(), n, nullptr);
  check_cuda(cudaDeviceSynchronize(), "field ops");
  std::vector<fr> want_sum(n), want_diff(n), want_prod(n);
  for (std::size_t i = 0; i < n; ++i) {
    want_sum[i] = a[i] + b[i];
    want_diff[i] = a[i] - b[i];
    want_prod[i] = a[i] * b[i];
  }
  const auto sum = ds.copy_d2h(), diff = dd.copy_d2h(), prod = dp.copy_d2h();
  INFO("sum: " << differences(sum, want_sum));
  CHECK(sum == want_sum);
  INFO("difference: " << differences(diff, want_diff));
  CHECK(diff == want_diff);
  INFO("product: " << differences(prod, want_prod));
  CHECK(prod == want_prod);
}

TEST_CASE("a GPU product with a lazy difference (below 2r) is fully reduced and equals the CPU's", "[cuda][ntt][field][gpu]") {
  if (!have_gpu()) FAIL("no CUDA device");
  const std::size_t n = 1 << 16;
  auto a = random_elements(n, fresh_seed());
  auto b = random_elements(n, fresh_seed());
  auto c = random_elements(n, fresh_seed());
  // With a = r - 1, b = 0 (raw words) the lazy difference is 2r - 1 (its largest); with a == b it is
  // exactly r.
  const auto edges = raw_edge_elements();
  std::size_t k = 0;
  for (const fr& x : edges)
    for (const fr& y : edges)
      for (const fr& z : edges) {
        a[k] = x;
        b[k] = y;
        c[k] = z;
        ++k;
      }
  for (std::size_t i = 0; i < 64; ++i, ++k) b[k] = a[k];  // a == b: the lazy difference is r itself
  device_vector da(n), db(n), dc(n), dp(n);
  da.poison_and_copy_h2d(a);
  db.poison_and_copy_h2d(b);
  dc.poison_and_copy_h2d(c);
  dp.poison();
  detail::launch_lazy_product_check(da.data(), db.data(), dc.data(), dp.data(), n, nullptr);
  check_cuda(cudaDeviceSynchronize(), "lazy product");
  std::vector<fr> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = c[i] * (a[i] - b[i]);
  const auto got = dp.copy_d2h();
  CHECK(unwritten(got) == 0);
  INFO(differences(got, want));
  CHECK(got == want);
}

TEST_CASE("GPU NTTs equal the CPU transforms bit for bit", "[cuda][ntt][gpu]") {
  if (!have_gpu()) FAIL("no CUDA device");
  for (unsigned log_n : {1u, 2u, 5u, 10u, 11u, 12u, 13u, 14u, 16u, 18u, 20u}) {
    for (op which : {op::forward, op::inverse, op::coset_forward, op::coset_inverse}) check_transform(log_n, which);
  }
}

TEST_CASE("an NTT plan holds what ntt_plan_device_bytes counts", "[cuda][ntt][gpu]") {
  if (!have_gpu()) FAIL("no CUDA device");
  for (unsigned log_n : {1u, 10u, 11u, 12u, 17u, 20u, 22u}) {
    INFO("log_n " << log_n);
    const coprove::cuda::ntt_plan plan(log_n, 0);
    CHECK(plan.table_bytes() + plan.quotient_scratch_bytes() == coprove::cuda::ntt_plan_device_bytes(log_n));
  }
}

TEST_CASE("plans sharing an NTT plan's tables hold none of their own and outlive it", "[cuda][ntt][quotient][gpu]") {
  if (!have_gpu()) FAIL("no CUDA device");
  const auto free_bytes = [] {
    std::size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  };
  for (unsigned log_n : {11u, 17u, 20u}) {
    INFO("log_n " << log_n);
    std::optional<coprove::cuda::ntt_plan> first;
    first.emplace(log_n, 0);
    const std::size_t before = free_bytes();
    const coprove::cuda::ntt_plan second = first->share_tables();
    const std::size_t after = free_bytes();
    // A pool and nothing else: well under the tables (a pool takes no memory until it is used).
    CHECK(before - std::min(before, after) < std::max<std::size_t>(first->table_bytes() / 2, std::size_t{2} << 20));
    CHECK(second.table_bytes() == first->table_bytes());
    CHECK(&second.state() != &first->state());
    CHECK(second.table_bytes() == coprove::cuda::ntt_plan_table_bytes(log_n));
    check_quotient(log_n, &second);
    first.reset();  // the tables stay for the plan that shares them
    check_quotient(log_n, &second);
    check_transform_on(second, op::coset_forward);
  }
  CHECK(coprove::cuda::ntt_plan_table_bytes(20) + coprove::cuda::ntt_plan_scratch_bytes(20) ==
        coprove::cuda::ntt_plan_device_bytes(20));
}

TEST_CASE("the GPU quotient equals the CPU quotient bit for bit", "[cuda][ntt][quotient][gpu]") {
  if (!have_gpu()) FAIL("no CUDA device");
  for (unsigned log_n : {1u, 3u, 10u, 11u, 12u, 14u, 16u, 18u, 20u}) check_quotient(log_n);
}

TEST_CASE("GPU NTTs and the quotient without boundary tables equal the CPU's", "[cuda][ntt][quotient][gpu]") {
  if (!have_gpu()) FAIL("no CUDA device");
  // Plans built now form every boundary twiddle as lo * hi and apply 1/n in the last pass, as
  // plans above 2^26 do.
  struct restore {
    ~restore() { detail::set_ntt_boundary_table_max_log(detail::ntt_default_boundary_table_max_log); }
  } restore_limit;
  const std::size_t n17_bytes = (std::size_t{1} << 17) * sizeof(fr);
  CHECK(coprove::cuda::ntt_plan(17, 0).table_bytes() > n17_bytes);  // pass 0's table: n entries
  detail::set_ntt_boundary_table_max_log(0);
  CHECK(coprove::cuda::ntt_plan(17, 0).table_bytes() < n17_bytes);
  for (unsigned log_n : {12u, 17u}) {
    for (op which : {op::forward, op::inverse, op::coset_forward, op::coset_inverse}) check_transform(log_n, which);
    check_quotient(log_n);
    check_quotient_odd_coset(log_n);
  }
}

TEST_CASE("the GPU odd-coset quotient (snarkjs's form) equals the CPU's bit for bit", "[cuda][ntt][quotient][gpu]") {
  if (!have_gpu()) FAIL("no CUDA device");
  for (unsigned log_n : {1u, 3u, 10u, 11u, 12u, 14u, 16u, 18u, 20u}) check_quotient_odd_coset(log_n);
}

TEST_CASE("GPU NTTs and the quotient at 2^23 and 2^24 equal the CPU's", "[cuda][ntt][quotient][gpu][slow]") {
  if (!have_gpu()) FAIL("no CUDA device");
  for (unsigned log_n : {23u, 24u}) {
    for (op which : {op::forward, op::inverse, op::coset_forward, op::coset_inverse}) check_transform(log_n, which);
    check_quotient(log_n);
  }
}

TEST_CASE("the GPU forward NTT and quotient at 2^26 equal the CPU's", "[cuda][ntt][quotient][gpu][slow]") {
  if (!have_gpu()) FAIL("no CUDA device");
  check_transform(26, op::forward);
  check_quotient(26);
}

TEST_CASE("GPU transforms refuse null and foreign buffers", "[cuda][ntt][gpu]") {
  if (!have_gpu()) FAIL("no CUDA device");
  const coprove::cuda::ntt_plan plan(10, 0);
  CHECK_THROWS_AS(coprove::cuda::ntt_forward_async(plan, nullptr, nullptr), std::invalid_argument);
  std::vector<fr> host(plan.size());
  CHECK_THROWS_AS(coprove::cuda::ntt_forward_async(plan, host.data(), nullptr), std::invalid_argument);
  device_vector a(plan.size());
  CHECK_THROWS_AS(coprove::cuda::quotient_async(plan, a.data(), a.data(), a.data(), nullptr), std::invalid_argument);
}
