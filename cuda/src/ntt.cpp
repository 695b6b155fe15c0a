// ntt_plan (its device tables and scratch pool) and the host side of the GPU transforms and the
// quotient: which passes run, over which buffers, with which fused first- and last-pass steps.
#include <coprove/cuda/ntt.hpp>

#include <coprove/cuda/detail/ntt_launch.hpp>
#include <coprove/cuda/detail/ntt_schedule.hpp>
#include <coprove/cuda/error.hpp>
#include <coprove/prover/domain.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace coprove::cuda {
namespace detail {

struct ntt_plan_state {
  unsigned log_n = 0;
  int device = 0;
  ntt_schedule schedule{};
  unsigned split = 0;
  void* tables = nullptr;
  std::size_t table_bytes = 0;
  ntt_direction_tables forward{};
  ntt_direction_tables inverse{};
  // g^e and g^-e as lo/hi exponent tables; the hi halves carry the constant factors.
  const void* coset_lo = nullptr;             // g^e
  const void* coset_hi = nullptr;             // g^(e << split)
  const void* coset_hi_over_n = nullptr;      // g^(e << split) / n
  const void* coset_inv_lo = nullptr;         // g^-e
  const void* coset_inv_hi_over_n = nullptr;  // g^-(e << split) / n
  const void* coset_inv_hi_quotient = nullptr;  // g^-(e << split) / (n (g^n - 1))
  ntt_constant size_inv{};
  cudaMemPool_t pool = nullptr;

  ntt_plan_state() = default;
  ntt_plan_state(const ntt_plan_state&) = delete;
  ntt_plan_state& operator=(const ntt_plan_state&) = delete;
  ~ntt_plan_state() {
    if (pool != nullptr) COPROVE_CUDA_ASSERT_OK(cudaMemPoolDestroy(pool));
    if (tables != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFree(tables));
  }
};

}  // namespace detail

namespace {

using prover::fr;
using detail::ntt_constant;
using detail::ntt_plan_state;

/// Makes `device` current for the scope and restores the caller's device after.
class device_scope {
 public:
  explicit device_scope(int device) {
    COPROVE_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) COPROVE_CUDA_TRY(cudaSetDevice(device));
  }
  ~device_scope() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) COPROVE_CUDA_ASSERT_OK(cudaSetDevice(previous_));
  }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_ = 0;
};

ntt_constant to_constant(const fr& x) {
  ntt_constant c;
  static_assert(sizeof(c.limbs) == sizeof(x.limbs));
  std::memcpy(c.limbs, x.limbs.data(), sizeof(c.limbs));
  return c;
}

/// factor * base^i for i < count.
std::vector<fr> powers(const fr& base, std::size_t count, const fr& factor = fr::one()) {
  std::vector<fr> out(count);
  fr x = factor;
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = x;
    x *= base;
  }
  return out;
}

/// Scratch taken stream-ordered from the plan's pool, given back (stream-ordered) on scope exit,
/// so an exception between launches leaks nothing.
class scratch_buffer {
 public:
  scratch_buffer(const ntt_plan_state& plan, std::size_t elements, cudaStream_t stream) : stream_(stream) {
    if (elements == 0) return;
    COPROVE_CUDA_TRY(cudaMallocFromPoolAsync(&data_, elements * sizeof(fr), plan.pool, stream));
  }
  ~scratch_buffer() {
    if (data_ != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFreeAsync(data_, stream_));
  }
  scratch_buffer(const scratch_buffer&) = delete;
  scratch_buffer& operator=(const scratch_buffer&) = delete;
  fr* data() const { return static_cast<fr*>(data_); }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

/// One transform over `batch` vectors: its passes, the fused steps of the first and last.
struct transform_request {
  unsigned batch = 1;
  fr* data[3] = {};
  const detail::ntt_direction_tables* direction = nullptr;
  detail::ntt_pre pre = detail::ntt_pre::none;
  const void* pre_lo = nullptr;
  const void* pre_hi = nullptr;
  const void* src_b = nullptr;
  const void* src_c = nullptr;
  detail::ntt_post post = detail::ntt_post::none;
  const void* post_lo = nullptr;
  const void* post_hi = nullptr;
  ntt_constant scale{};
};

void run_transform(const ntt_plan_state& plan, const transform_request& request, fr* scratch,
                   cudaStream_t stream) {
  const std::size_t n = std::size_t{1} << plan.log_n;
  for (unsigned p = 0; p < plan.schedule.passes; ++p) {
    detail::ntt_pass_args args;
    args.shape = plan.schedule.pass(p);
    args.batch = request.batch;
    for (unsigned v = 0; v < request.batch; ++v) {
      fr* scratch_v = scratch == nullptr ? nullptr : scratch + v * n;
      args.src[v] = p == 0 ? request.data[v] : scratch_v;
      args.dst[v] = args.shape.last ? request.data[v] : scratch_v;
    }
    args.tables = *request.direction;
    args.split = plan.split;
    if (p == 0) {
      args.pre = request.pre;
      args.pre_lo = request.pre_lo;
      args.pre_hi = request.pre_hi;
      args.src_b = request.src_b;
      args.src_c = request.src_c;
    }
    if (args.shape.last) {
      args.post = request.post;
      args.post_lo = request.post_lo;
      args.post_hi = request.post_hi;
      args.scale = request.scale;
    }
    detail::launch_ntt_pass(args, stream);
  }
}

void check_buffer(const ntt_plan& plan, const fr* d, const char* what) {
  if (d == nullptr) throw std::invalid_argument(std::string("ntt: ") + what + " is a null pointer");
  cudaPointerAttributes attributes{};
  COPROVE_CUDA_TRY(cudaPointerGetAttributes(&attributes, d));
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
    throw std::invalid_argument(std::string("ntt: ") + what + " is not device memory");
  if (attributes.device != plan.device())
    throw std::invalid_argument(std::string("ntt: ") + what + " is on device " +
                                std::to_string(attributes.device) + ", the plan on device " +
                                std::to_string(plan.device()));
}

enum class transform_kind { forward, inverse, coset_forward, coset_inverse };

void transform_async(const ntt_plan& plan, fr* d_data, cudaStream_t stream, transform_kind kind) {
  check_buffer(plan, d_data, "d_data");
  const ntt_plan_state& st = plan.state();
  const device_scope scope(st.device);
  transform_request request;
  request.data[0] = d_data;
  switch (kind) {
    case transform_kind::forward:
      request.direction = &st.forward;
      break;
    case transform_kind::coset_forward:
      request.direction = &st.forward;
      request.pre = detail::ntt_pre::coset;
      request.pre_lo = st.coset_lo;
      request.pre_hi = st.coset_hi;
      break;
    case transform_kind::inverse:
      request.direction = &st.inverse;
      request.post = detail::ntt_post::scale;
      request.scale = st.size_inv;
      break;
    case transform_kind::coset_inverse:
      request.direction = &st.inverse;
      request.post = detail::ntt_post::coset;
      request.post_lo = st.coset_inv_lo;
      request.post_hi = st.coset_inv_hi_over_n;
      break;
  }
  const scratch_buffer scratch(st, st.schedule.passes > 1 ? plan.size() : 0, stream);
  run_transform(st, request, scratch.data(), stream);
}

}  // namespace

ntt_plan::ntt_plan(unsigned log_n, int device) : state_(std::make_unique<detail::ntt_plan_state>()) {
  if (log_n < min_log_size || log_n > max_log_size)
    throw std::invalid_argument("ntt_plan: log_n = " + std::to_string(log_n) + " is outside [" +
                                std::to_string(min_log_size) + ", " + std::to_string(max_log_size) + "]");
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  (void)cudaGetLastError();
  if (device < 0 || device >= devices)
    throw std::invalid_argument("ntt_plan: device " + std::to_string(device) + " does not exist (" +
                                std::to_string(devices) + " CUDA devices)");
  detail::ntt_plan_state& st = *state_;
  st.log_n = log_n;
  st.device = device;
  st.schedule = detail::ntt_schedule::make(log_n);
  st.split = (log_n + 1) / 2;

  const std::size_t n = std::size_t{1} << log_n;
  const prover::evaluation_domain domain(n);
  const fr g = prover::evaluation_domain::coset_generator();
  const fr g_inv = prover::evaluation_domain::coset_generator_inv();
  const unsigned roots_log = st.schedule.bits[0];
  const std::size_t lo_count = std::size_t{1} << st.split;
  const std::size_t hi_count = std::size_t{1} << (log_n - st.split);
  st.size_inv = to_constant(domain.size_inv());

  // All tables in one allocation; each starts on a 32-byte boundary (elements are 32 bytes).
  std::vector<fr> host;
  auto append = [&host](const std::vector<fr>& t) {
    const std::size_t offset = host.size();
    host.insert(host.end(), t.begin(), t.end());
    return offset;
  };
  const fr w_roots = domain.omega().pow(static_cast<std::uint64_t>(n >> roots_log));
  const fr w_roots_inv = domain.omega_inv().pow(static_cast<std::uint64_t>(n >> roots_log));
  const std::size_t roots_count = std::size_t{1} << (roots_log - 1);
  const std::size_t o_roots = append(powers(w_roots, roots_count));
  const std::size_t o_roots_inv = append(powers(w_roots_inv, roots_count));
  const std::size_t o_tw_lo = append(powers(domain.omega(), lo_count));
  const std::size_t o_tw_hi = append(powers(domain.omega().pow(std::uint64_t{lo_count}), hi_count));
  const std::size_t o_tw_inv_lo = append(powers(domain.omega_inv(), lo_count));
  const std::size_t o_tw_inv_hi = append(powers(domain.omega_inv().pow(std::uint64_t{lo_count}), hi_count));
  const fr g_step = g.pow(std::uint64_t{lo_count});
  const fr g_inv_step = g_inv.pow(std::uint64_t{lo_count});
  const std::size_t o_coset_lo = append(powers(g, lo_count));
  const std::size_t o_coset_hi = append(powers(g_step, hi_count));
  const std::size_t o_coset_hi_n = append(powers(g_step, hi_count, domain.size_inv()));
  const std::size_t o_coset_inv_lo = append(powers(g_inv, lo_count));
  const std::size_t o_coset_inv_hi_n = append(powers(g_inv_step, hi_count, domain.size_inv()));
  const std::size_t o_coset_inv_hi_q =
      append(powers(g_inv_step, hi_count, domain.size_inv() * domain.vanishing_on_coset_inv()));

  const device_scope scope(device);
  detail::configure_ntt_kernels();
  st.table_bytes = host.size() * sizeof(fr);
  COPROVE_CUDA_TRY(cudaMalloc(&st.tables, st.table_bytes));
  COPROVE_CUDA_TRY(cudaMemcpy(st.tables, host.data(), st.table_bytes, cudaMemcpyHostToDevice));
  const fr* base = static_cast<const fr*>(st.tables);
  st.forward = {base + o_roots, roots_log, base + o_tw_lo, base + o_tw_hi};
  st.inverse = {base + o_roots_inv, roots_log, base + o_tw_inv_lo, base + o_tw_inv_hi};
  st.coset_lo = base + o_coset_lo;
  st.coset_hi = base + o_coset_hi;
  st.coset_hi_over_n = base + o_coset_hi_n;
  st.coset_inv_lo = base + o_coset_inv_lo;
  st.coset_inv_hi_over_n = base + o_coset_inv_hi_n;
  st.coset_inv_hi_quotient = base + o_coset_inv_hi_q;

  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  COPROVE_CUDA_TRY(cudaMemPoolCreate(&st.pool, &props));
  // Keep what the passes freed for the next call instead of returning it at every synchronize.
  std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
  COPROVE_CUDA_TRY(cudaMemPoolSetAttribute(st.pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

ntt_plan::~ntt_plan() = default;
ntt_plan::ntt_plan(ntt_plan&&) noexcept = default;
ntt_plan& ntt_plan::operator=(ntt_plan&&) noexcept = default;

unsigned ntt_plan::log_size() const noexcept { return state_->log_n; }
std::size_t ntt_plan::size() const noexcept { return std::size_t{1} << state_->log_n; }
int ntt_plan::device() const noexcept { return state_->device; }
unsigned ntt_plan::passes() const noexcept { return state_->schedule.passes; }
std::size_t ntt_plan::table_bytes() const noexcept { return state_->table_bytes; }
std::size_t ntt_plan::transform_scratch_bytes() const noexcept {
  return state_->schedule.passes > 1 ? size() * sizeof(fr) : 0;
}
std::size_t ntt_plan::quotient_scratch_bytes() const noexcept { return 3 * transform_scratch_bytes(); }

void ntt_forward_async(const ntt_plan& plan, prover::fr* d_data, cudaStream_t stream) {
  transform_async(plan, d_data, stream, transform_kind::forward);
}
void ntt_inverse_async(const ntt_plan& plan, prover::fr* d_data, cudaStream_t stream) {
  transform_async(plan, d_data, stream, transform_kind::inverse);
}
void coset_ntt_async(const ntt_plan& plan, prover::fr* d_data, cudaStream_t stream) {
  transform_async(plan, d_data, stream, transform_kind::coset_forward);
}
void coset_intt_async(const ntt_plan& plan, prover::fr* d_data, cudaStream_t stream) {
  transform_async(plan, d_data, stream, transform_kind::coset_inverse);
}

void quotient_async(const ntt_plan& plan, prover::fr* d_a, prover::fr* d_b, prover::fr* d_c,
                    cudaStream_t stream) {
  check_buffer(plan, d_a, "d_a");
  check_buffer(plan, d_b, "d_b");
  check_buffer(plan, d_c, "d_c");
  if (d_a == d_b || d_a == d_c || d_b == d_c)
    throw std::invalid_argument("quotient_async: d_a, d_b and d_c must be distinct buffers");
  const ntt_plan_state& st = plan.state();
  const device_scope scope(st.device);
  const scratch_buffer scratch(st, st.schedule.passes > 1 ? 3 * plan.size() : 0, stream);

  // 1. Evaluations -> coefficients, each coefficient k scaled by g^k / n on the way out: the
  //    input of a plain forward transform that evaluates on the coset.
  transform_request to_coset;
  to_coset.batch = 3;
  to_coset.data[0] = d_a;
  to_coset.data[1] = d_b;
  to_coset.data[2] = d_c;
  to_coset.direction = &st.inverse;
  to_coset.post = detail::ntt_post::coset;
  to_coset.post_lo = st.coset_lo;
  to_coset.post_hi = st.coset_hi_over_n;
  run_transform(st, to_coset, scratch.data(), stream);

  // 2. Coset evaluations of A, B and C.
  transform_request evaluate = to_coset;
  evaluate.direction = &st.forward;
  evaluate.post = detail::ntt_post::none;
  evaluate.post_lo = evaluate.post_hi = nullptr;
  run_transform(st, evaluate, scratch.data(), stream);

  // 3. h = (a*b - c) / (g^n - 1) on the coset (the product formed as the first pass loads it),
  //    back to coefficients: the last pass multiplies output k by g^-k / (n (g^n - 1)).
  transform_request quotient;
  quotient.batch = 1;
  quotient.data[0] = d_a;
  quotient.direction = &st.inverse;
  quotient.pre = detail::ntt_pre::quotient;
  quotient.src_b = d_b;
  quotient.src_c = d_c;
  quotient.post = detail::ntt_post::coset;
  quotient.post_lo = st.coset_inv_lo;
  quotient.post_hi = st.coset_inv_hi_quotient;
  run_transform(st, quotient, scratch.data(), stream);
}

}  // namespace coprove::cuda
