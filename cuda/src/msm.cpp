// The host side of the GPU MSM: the context's memory pool, the resident bases, and the sequence of
// launches of one run (msm_plan.hpp describes the method, msm_kernels.cu the kernels).
#include <coprove/cuda/msm.hpp>

#include <coprove/cuda/detail/msm_launch.hpp>
#include <coprove/cuda/device.hpp>
#include <coprove/cuda/error.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace coprove::cuda {
namespace {

static_assert(sizeof(field::g1_xyzz) == 192 && std::is_standard_layout_v<field::g1_xyzz>,
              "the device writes field::g1_xyzz's bytes (x, y, zz, zzz of 48 bytes)");
static_assert(sizeof(field::g2_xyzz) == 384 && std::is_standard_layout_v<field::g2_xyzz>,
              "the device writes field::g2_xyzz's bytes (x, y, zz, zzz of 96 bytes)");

template <class Affine>
struct affine_traits;
template <>
struct affine_traits<field::g1_affine> {
  static constexpr msm_group group = msm_group::g1;
  static constexpr std::size_t device_bytes = 96;
  static constexpr std::size_t xyzz_bytes = 192;
};
template <>
struct affine_traits<field::g2_affine> {
  static constexpr msm_group group = msm_group::g2;
  static constexpr std::size_t device_bytes = 192;
  static constexpr std::size_t xyzz_bytes = 384;
};

void check_device(int device) {
  const int devices = device_count();
  if (device < 0 || device >= devices)
    throw std::invalid_argument("MSM: device " + std::to_string(device) + " does not exist (" +
                                std::to_string(devices) + " devices)");
}

/// Where a pointer lies, as the device sees it: the device address of page-locked host memory or
/// of device memory on `device`; std::invalid_argument (naming `what`) for anything else.
const void* device_view(const void* p, int device, const char* what) {
  cudaPointerAttributes attributes{};
  COPROVE_CUDA_TRY(cudaPointerGetAttributes(&attributes, p));
  switch (attributes.type) {
    case cudaMemoryTypeHost:
      if (attributes.devicePointer == nullptr)
        throw std::invalid_argument(std::string("MSM: ") + what + " are page-locked but not mapped for the device");
      return attributes.devicePointer;
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
      if (attributes.device != device)
        throw std::invalid_argument(std::string("MSM: ") + what + " lie on device " +
                                    std::to_string(attributes.device) + ", the bases on device " +
                                    std::to_string(device));
      return p;
    default:
      throw std::invalid_argument(std::string("MSM: ") + what +
                                  " must be in device memory or page-locked host memory (pageable memory given)");
  }
}

/// One run's workspace: from a pool context, one stream-ordered allocation, returned to the pool on
/// the stream when the run's work is enqueued, or at once if enqueueing fails; from an arena context,
/// the arena (the runs on it follow one another on one stream). Or a region of another workspace
/// (`borrowed`), which it does not free: runs one after another on one stream carve theirs from the
/// same region.
class workspace {
 public:
  workspace(msm_context& context, std::size_t bytes, cudaStream_t stream) : stream_(stream) {
    if (context.arena() != nullptr) {
      if (bytes > context.arena_bytes())
        throw cuda_error(cudaErrorMemoryAllocation, "MSM: a workspace of " + std::to_string(bytes) +
                                                        " bytes in an arena of " +
                                                        std::to_string(context.arena_bytes()));
      base_ = context.arena();
      return;
    }
    COPROVE_CUDA_TRY(cudaMallocFromPoolAsync(&base_, std::max<std::size_t>(bytes, 256), context.pool(), stream));
    owned_ = true;
  }
  explicit workspace(void* borrowed) : base_(borrowed), stream_(nullptr) {}
  ~workspace() {
    if (owned_ && base_ != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFreeAsync(base_, stream_));
  }
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;

  template <class T>
  T* take(std::size_t bytes) {
    auto* p = static_cast<unsigned char*>(base_) + used_;
    used_ += (bytes + 255) & ~std::size_t{255};
    return reinterpret_cast<T*>(p);
  }

 private:
  void* base_ = nullptr;
  std::size_t used_ = 0;
  cudaStream_t stream_;
  bool owned_ = false;
};

std::size_t scan_items(const msm_plan& plan) { return std::max(plan.groups, std::size_t{plan.windows}) + 1; }

std::size_t aligned(std::size_t bytes) { return (bytes + 255) & ~std::size_t{255}; }

/// The checks of a run's inputs that come before anything is enqueued: the context on the bases'
/// device, scalars present (for count > 0) and 16-byte aligned.
void check_scalars(const msm_context& context, int bases_device, const field::fr* scalars, std::size_t count) {
  if (context.device() != bases_device)
    throw std::invalid_argument("MSM: context on device " + std::to_string(context.device()) + ", bases on device " +
                                std::to_string(bases_device));
  if (count > 0 && scalars == nullptr) throw std::invalid_argument("MSM: null scalars");
  if (reinterpret_cast<std::uintptr_t>(scalars) % 16 != 0)
    throw std::invalid_argument("MSM: scalars must be 16-byte aligned");
}

/// The scalars' entries placed once for several runs over the same scalars: the groups' offsets
/// (as the placement left them) and the entries, in device memory that outlives the runs' enqueueing;
/// and the region each run carves its own workspace from (the runs follow one another on one stream).
struct placed_entries {
  const std::uint32_t* offsets = nullptr;
  const std::uint32_t* entries = nullptr;
  void* run_region = nullptr;
};

/// What a run's workspace holds only to place the entries (the canonical scalars and the entries):
/// a run that reads placed_entries leaves them out.
std::size_t placement_only_bytes(const msm_plan& plan, std::size_t count) {
  return aligned(count * 32) + aligned(plan.entries * 4);
}

/// One placement for several runs over the same scalars (msm_windows_same_scalars_async) takes one
/// allocation: the placement (scan scratch, canonical scalars, offsets, entries) and, after it, the
/// region each run carves its workspace from in turn: about the largest run's workspace. (With an
/// allocation for the placement and one for each run, a 2^24 proof over 13 copies ran out of device
/// memory on an H200.)
std::size_t shared_placement_bytes(const msm_plan& first, std::size_t count) {
  return aligned(detail::msm_scan_scratch_bytes(scan_items(first))) + aligned(count * 32) +
         3 * aligned((first.groups + 1) * 4) + aligned(first.entries * 4);
}
std::size_t shared_run_bytes(const msm_plan& first, const msm_plan& second, const msm_plan& g2, std::size_t count) {
  const std::size_t placed = placement_only_bytes(first, count);
  return std::max({msm_workspace_bytes(first), msm_workspace_bytes(second), msm_workspace_bytes(g2)}) - placed;
}

/// Enqueues the placement: the canonical scalars, each group's count, its offset (into `off_a`)
/// and the entries, sorted by group; `off_b` and `counts` are scratch, and so is `temp` (temp_bytes)
/// for the two-pass placement, which goes over the scalars in slices whose temporary entries fit it
/// (at most `slice` scalars a slice where that is not 0).
void place(const msm_plan& plan, const void* d_scalars, std::size_t count, std::size_t stride, void* scratch,
           std::size_t scratch_bytes, std::uint32_t* canonical, std::uint32_t* counts, std::uint32_t* off_a,
           std::uint32_t* off_b, std::uint32_t* entries, void* temp, std::size_t temp_bytes, std::size_t slice,
           cudaStream_t stream) {
  const std::size_t groups = plan.groups;
  COPROVE_CUDA_TRY(cudaMemsetAsync(counts, 0, (groups + 1) * 4, stream));
  detail::msm_count_entries(d_scalars, canonical, count, plan.window_bits, plan.digit_windows, plan.windows, counts,
                            stream);
  detail::msm_exclusive_scan(scratch, scratch_bytes, counts, off_a, groups + 1, stream);
  COPROVE_CUDA_TRY(cudaMemcpyAsync(off_b, off_a, groups * 4, cudaMemcpyDeviceToDevice, stream));
  if (plan.placement_bin_shift == 0) {
    detail::msm_place_entries(canonical, count, plan.window_bits, plan.digit_windows, plan.windows, stride, off_b,
                              entries, {}, stream);
    return;
  }
  // The plan's choice: both placements enqueued, the device running the one that suits the counted
  // entries (msm_dense_entries), the other's kernels returning at once.
  detail::msm_placement_gate dense{};
  if (plan.placement_by_density) {
    const detail::msm_placement_gate sparse{off_a, static_cast<std::uint32_t>(groups),
                                            std::uint64_t{count} * plan.digit_windows, false};
    detail::msm_place_entries(canonical, count, plan.window_bits, plan.digit_windows, plan.windows, stride, off_b,
                              entries, sparse, stream);
    dense = sparse;
    dense.dense = true;
  }
  // Two passes, slice by slice; the bins' counters in `counts` (free once scanned; the plan keeps
  // five arrays of bins + 1 within it), the groups' cursors in off_b throughout.
  const unsigned bins = plan.placement_bins, shift = plan.placement_bin_shift;
  std::uint32_t* const bin_counts = counts;
  std::uint32_t* const bin_offsets = bin_counts + (bins + 1);
  std::uint32_t* const bin_cursor = bin_offsets + (bins + 1);
  std::uint32_t* const tiles = bin_cursor + (bins + 1);
  std::uint32_t* const tile_start = tiles + (bins + 1);
  std::size_t per_slice = temp_bytes / (std::size_t{8} * plan.digit_windows);
  if (slice != 0) per_slice = std::min(per_slice, slice);
  if (per_slice == 0)
    throw std::logic_error("MSM: " + std::to_string(temp_bytes) + " bytes hold no slice of the two-pass placement");
  per_slice = std::min(per_slice, count);
  // A slice's tiles: at most one partial tile a bin besides its entries' full ones.
  const std::uint32_t tile = detail::msm_bin_tile(shift);
  const std::size_t max_tiles = bins + (per_slice * plan.digit_windows + tile - 1) / tile;
  for (std::size_t first = 0; first < count; first += per_slice) {
    const std::size_t n = std::min(per_slice, count - first);
    COPROVE_CUDA_TRY(cudaMemsetAsync(bin_counts, 0, (bins + 1) * 4, stream));
    detail::msm_count_bins(canonical, first, n, plan.window_bits, plan.digit_windows, plan.windows, shift, bins,
                           bin_counts, dense, stream);
    detail::msm_exclusive_scan(scratch, scratch_bytes, bin_counts, bin_offsets, bins + 1, stream);
    COPROVE_CUDA_TRY(cudaMemcpyAsync(bin_cursor, bin_offsets, bins * 4, cudaMemcpyDeviceToDevice, stream));
    detail::msm_place_bins(canonical, first, n, plan.window_bits, plan.digit_windows, plan.windows, stride, shift,
                           bins, bin_cursor, temp, dense, stream);
    detail::msm_bin_tiles(bin_offsets, bins, tile, tiles, dense, stream);
    detail::msm_exclusive_scan(scratch, scratch_bytes, tiles, tile_start, bins + 1, stream);
    detail::msm_unpack_bins(temp, bin_offsets, tile_start, bins, max_tiles, tile, shift, off_b, entries, dense,
                            stream);
  }
}

// One run: the sum into *result, or (windows != null) the window sums into *windows. With `placed`
// the entries are the ones placed for another run over the same scalars and an alike plan.
template <class Affine, class Xyzz, class Windows = void>
void run_msm(msm_context& context, const msm_bases<Affine>& bases, const field::fr* scalars, std::size_t count,
             Xyzz* result, cudaStream_t stream, const msm_gpu_options& options, Windows* windows = nullptr,
             const placed_entries* placed = nullptr) {
  constexpr msm_group group = affine_traits<Affine>::group;
  constexpr bool to_windows = !std::is_void_v<Windows>;
  if (!to_windows && result == nullptr) throw std::invalid_argument("MSM: null result");
  if (count > bases.size())
    throw std::invalid_argument("MSM: " + std::to_string(count) + " scalars for " + std::to_string(bases.size()) +
                                " bases");
  check_scalars(context, bases.device(), scalars, count);
  if (bases.copies() > 1 && options.window_bits != 0 && options.window_bits != bases.window_bits())
    throw std::invalid_argument("MSM: window of " + std::to_string(options.window_bits) +
                                " bits over bases copied for " + std::to_string(bases.window_bits()));
  if (placed != nullptr && options.level0_chunk != 0)
    throw std::invalid_argument("MSM: a level-0 chunk of its own for a run over entries placed for another");
  if (placed != nullptr && (options.placement != msm_placement::plan || options.placement_slice != 0))
    throw std::invalid_argument("MSM: a placement of its own for a run over entries placed for another");
  const msm_plan plan = plan_msm(group, count, bases.copies() > 1 ? bases.window_bits() : options.window_bits,
                                 bases.copies(), options.level0_chunk, options.placement);
  scoped_device scope(bases.device());
  if constexpr (to_windows) {
    if (windows == nullptr) throw std::invalid_argument("MSM: null window sums");
    device_view(windows, bases.device(), "the window sums");
    windows->windows = count == 0 ? 0 : plan.windows;
    windows->window_bits = plan.window_bits;
  } else {
    device_view(result, bases.device(), "the result");
  }
  const void* d_scalars = count > 0 ? device_view(scalars, bases.device(), "the scalars") : nullptr;

  if (placed != nullptr && count == 0) throw std::invalid_argument("MSM: placed entries for no scalars");
  std::optional<workspace> own;
  if (placed == nullptr) own.emplace(context, msm_workspace_bytes(plan), stream);
  workspace borrowed(placed != nullptr ? placed->run_region : nullptr);
  workspace& ws = placed != nullptr ? borrowed : *own;
  const std::size_t pb = plan.point_bytes;
  void* slot = ws.take<void>(pb);
  const auto mark = [&](cudaEvent_t msm_phase_events::*which) {
    if (options.phases != nullptr) COPROVE_CUDA_TRY(cudaEventRecord(options.phases->*which, stream));
  };
  if (count == 0) {
    mark(&msm_phase_events::start);
    mark(&msm_phase_events::placed);
    mark(&msm_phase_events::buckets);
    detail::msm_write_identity(group, slot, stream);
    // No windows: the identity as the ones' group alone.
    void* to = result;
    if constexpr (to_windows) to = windows->sums;
    COPROVE_CUDA_TRY(cudaMemcpyAsync(to, slot, pb, cudaMemcpyDefault, stream));
    mark(&msm_phase_events::done);
    return;
  }
  const std::size_t groups = plan.groups;
  const std::size_t scratch_bytes = detail::msm_scan_scratch_bytes(scan_items(plan));
  void* scratch = ws.take<void>(scratch_bytes);
  auto* canonical = placed != nullptr ? nullptr : ws.take<std::uint32_t>(count * 32);
  auto* counts = ws.take<std::uint32_t>((groups + 1) * 4);
  auto* off_a = ws.take<std::uint32_t>((groups + 1) * 4);
  auto* off_b = ws.take<std::uint32_t>((groups + 1) * 4);
  std::uint32_t* const own_entries = placed != nullptr ? nullptr : ws.take<std::uint32_t>(plan.entries * 4);
  const std::uint32_t* const entries = placed != nullptr ? placed->entries : own_entries;
  std::size_t even = 0, odd = 0;
  for (std::size_t k = 0; k < plan.level_capacity.size(); ++k) {
    std::size_t& buffer = k % 2 == 0 ? even : odd;
    buffer = std::max(buffer, plan.level_capacity[k]);
  }
  void* sums_a = ws.take<void>(even * pb);
  void* sums_b = ws.take<void>(odd * pb);
  std::size_t window_odd = 0;
  for (std::size_t k = 0; k < plan.window_level_capacity.size(); k += 2)
    window_odd = std::max(window_odd, plan.window_level_capacity[k]);
  void* segments_a = ws.take<void>(plan.windows * plan.segments * pb);
  void* segments_b = ws.take<void>(window_odd * pb);
  auto* window_counts = ws.take<std::uint32_t>((plan.windows + 1) * 4);
  auto* window_off_a = ws.take<std::uint32_t>((plan.windows + 1) * 4);
  auto* window_off_b = ws.take<std::uint32_t>((plan.windows + 1) * 4);
  void* gathered = to_windows ? ws.take<void>((plan.windows + 1) * pb) : nullptr;

  // Entries: count per group, offsets, placement (or the offsets of a placement made for another
  // run: the group sums below overwrite their offsets, so each run works on its own copy).
  mark(&msm_phase_events::start);
  if (placed != nullptr) {
    COPROVE_CUDA_TRY(cudaMemcpyAsync(off_a, placed->offsets, (groups + 1) * 4, cudaMemcpyDeviceToDevice, stream));
  } else {
    // The two-pass placement's temp: the sums' and windows' part of the workspace, free until then.
    place(plan, d_scalars, count, bases.size(), scratch, scratch_bytes, canonical, counts, off_a, off_b, own_entries,
          sums_a, plan.placement_temp_bytes, options.placement_slice, stream);
  }
  mark(&msm_phase_events::placed);

  // Group sums, level by level, until each group has one.
  const std::uint32_t* in_off = off_a;
  std::uint32_t* out_off = off_b;
  void* in_sums = nullptr;
  void* out_sums = sums_a;
  for (std::size_t level = 0; level < plan.level_chunk.size(); ++level) {
    const std::uint32_t chunk = plan.level_chunk[level];
    const bool spans = level == 0 && plan.level0_spans;
    if (spans) {
      detail::msm_span_counts(in_off, groups, chunk, counts, stream);
    } else {
      detail::msm_chunk_counts(in_off, groups, chunk, counts, stream);
    }
    detail::msm_exclusive_scan(scratch, scratch_bytes, counts, out_off, groups + 1, stream);
    if (spans) {
      detail::msm_sum_entry_spans(group, bases.data(), entries, in_off, out_off, groups, chunk, out_sums, plan.entries,
                                  stream);
    } else if (level == 0) {
      detail::msm_sum_entries(group, bases.data(), entries, in_off, out_off, groups, chunk, out_sums,
                              plan.level_capacity[level], stream);
    } else {
      detail::msm_sum_points(group, in_sums, in_off, out_off, groups, chunk, out_sums, plan.level_capacity[level],
                             stream);
    }
    std::uint32_t* const written_off = out_off;
    out_off = const_cast<std::uint32_t*>(in_off);
    in_off = written_off;
    in_sums = out_sums;
    out_sums = out_sums == sums_a ? sums_b : sums_a;
  }
  const void* bucket_sums = in_sums;
  const std::uint32_t* bucket_off = in_off;
  mark(&msm_phase_events::buckets);

  // Windows: weighted segment sums, then the segments of each window summed level by level.
  detail::msm_weight_segments(group, bucket_sums, bucket_off, plan.windows, plan.buckets, plan.segment, segments_a,
                              stream);
  detail::msm_regular_offsets(window_off_a, plan.windows, static_cast<std::uint32_t>(plan.segments), stream);
  const std::uint32_t* window_in_off = window_off_a;
  std::uint32_t* window_out_off = window_off_b;
  void* window_in = segments_a;
  void* window_out = segments_b;
  for (std::size_t level = 0; level < plan.window_level_chunk.size(); ++level) {
    const std::uint32_t chunk = plan.window_level_chunk[level];
    detail::msm_chunk_counts(window_in_off, plan.windows, chunk, window_counts, stream);
    detail::msm_exclusive_scan(scratch, scratch_bytes, window_counts, window_out_off, plan.windows + 1, stream);
    detail::msm_sum_points(group, window_in, window_in_off, window_out_off, plan.windows, chunk, window_out,
                           plan.window_level_capacity[level], stream);
    std::uint32_t* const written_off = window_out_off;
    window_out_off = const_cast<std::uint32_t*>(window_in_off);
    window_in_off = written_off;
    std::swap(window_in, window_out);
  }
  if constexpr (to_windows) {
    detail::msm_gather_windows(group, window_in, window_in_off, plan.windows, bucket_sums, bucket_off, groups - 1,
                               gathered, stream);
    COPROVE_CUDA_TRY(cudaMemcpyAsync(windows->sums, gathered, (plan.windows + 1) * pb, cudaMemcpyDefault, stream));
  } else {
    detail::msm_combine_windows(group, window_in, window_in_off, plan.windows, plan.window_bits, bucket_sums,
                                bucket_off, groups - 1, slot, stream);
    COPROVE_CUDA_TRY(cudaMemcpyAsync(result, slot, pb, cudaMemcpyDefault, stream));
  }
  mark(&msm_phase_events::done);
}

}  // namespace

msm_context::msm_context(int device, std::size_t retain_bytes, std::size_t max_bytes) : device_(device) {
  check_device(device);
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  props.maxSize = max_bytes;
  COPROVE_CUDA_TRY(cudaMemPoolCreate(&pool_, &props));
  std::uint64_t threshold = retain_bytes;
  const cudaError_t status = cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold);
  if (status != cudaSuccess) {
    COPROVE_CUDA_ASSERT_OK(cudaMemPoolDestroy(pool_));
    detail::throw_cuda_error(status, "cudaMemPoolSetAttribute", __FILE__, __LINE__);
  }
}

msm_context::msm_context(int device, msm_arena arena) : device_(device) {
  check_device(device);
  scoped_device scope(device);
  COPROVE_CUDA_TRY(cudaMalloc(&arena_, std::max<std::size_t>(arena.bytes, 256)));
  arena_bytes_ = arena.bytes;
}

msm_context::~msm_context() {
  if (pool_ != nullptr) COPROVE_CUDA_ASSERT_OK(cudaMemPoolDestroy(pool_));
  if (arena_ != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFree(arena_));
}

std::size_t msm_context::reserved_bytes() const {
  if (pool_ == nullptr) return arena_bytes_;
  std::uint64_t bytes = 0;
  COPROVE_CUDA_TRY(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &bytes));
  return bytes;
}

template <class Affine>
msm_bases<Affine>::msm_bases(std::span<const Affine> points, int device, const msm_precompute& precompute)
    : count_(points.size()), device_(device) {
  using traits = affine_traits<Affine>;
  using coordinate = typename Affine::field;
  static_assert(std::is_standard_layout_v<Affine> && offsetof(Affine, y) == sizeof(coordinate) &&
                    offsetof(Affine, infinity) == 2 * sizeof(coordinate) &&
                    traits::device_bytes == 2 * sizeof(coordinate),
                "the device layout is the host point's x and y");
  check_device(device);
  if (points.size() > msm_max_count)
    throw std::invalid_argument("MSM: " + std::to_string(points.size()) + " bases, at most " +
                                std::to_string(msm_max_count));
  const msm_precompute kept = msm_bases_precompute(traits::group, points.size(), precompute);
  copies_ = kept.copies;
  window_bits_ = kept.window_bits;
  scoped_device scope(device);
  if (points.empty()) return;
  cudaPointerAttributes attributes{};
  COPROVE_CUDA_TRY(cudaPointerGetAttributes(&attributes, points.data()));
  const bool page_locked = attributes.type == cudaMemoryTypeHost;
  constexpr std::size_t chunk = std::size_t{1} << 18;
  const std::size_t staged = std::min(chunk, points.size());
  const std::size_t half_bytes = staged * sizeof(Affine);
  void* staging = nullptr;
  void* host_staging = nullptr;  // pageable points pass through it, a chunk a half
  cudaEvent_t half_free[2] = {nullptr, nullptr};
  cudaStream_t stream = nullptr;
  try {
    COPROVE_CUDA_TRY(cudaMalloc(&data_, copies_ * points.size() * traits::device_bytes));
    COPROVE_CUDA_TRY(cudaMalloc(&staging, 2 * half_bytes));
    COPROVE_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (!page_locked) {
      COPROVE_CUDA_TRY(cudaHostAlloc(&host_staging, 2 * half_bytes, cudaHostAllocPortable));
      for (cudaEvent_t& e : half_free) COPROVE_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
    // Two staging halves on one stream: each copy waits only for the reformatting that used its half
    // two chunks ago, so the copy engine and the kernels overlap (and, from pageable memory, the
    // host's copy into the page-locked half overlaps both).
    for (std::size_t begin = 0, k = 0; begin < points.size(); begin += chunk, ++k) {
      const std::size_t n = std::min(chunk, points.size() - begin);
      auto* half = static_cast<unsigned char*>(staging) + (k % 2) * half_bytes;
      const void* from = points.data() + begin;
      if (!page_locked) {
        auto* host_half = static_cast<unsigned char*>(host_staging) + (k % 2) * half_bytes;
        if (k >= 2) COPROVE_CUDA_TRY(cudaEventSynchronize(half_free[k % 2]));
        std::memcpy(host_half, from, n * sizeof(Affine));
        from = host_half;
      }
      COPROVE_CUDA_TRY(cudaMemcpyAsync(half, from, n * sizeof(Affine), cudaMemcpyHostToDevice, stream));
      if (!page_locked) COPROVE_CUDA_TRY(cudaEventRecord(half_free[k % 2], stream));
      detail::msm_repack_bases(traits::group, half, sizeof(Affine), offsetof(Affine, infinity),
                               static_cast<unsigned char*>(data_) + begin * traits::device_bytes, n, stream);
    }
    COPROVE_CUDA_TRY(cudaStreamSynchronize(stream));
  } catch (...) {
    if (stream != nullptr) COPROVE_CUDA_ASSERT_OK(cudaStreamSynchronize(stream));
    if (stream != nullptr) COPROVE_CUDA_ASSERT_OK(cudaStreamDestroy(stream));
    for (cudaEvent_t e : half_free)
      if (e != nullptr) COPROVE_CUDA_ASSERT_OK(cudaEventDestroy(e));
    if (host_staging != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFreeHost(host_staging));
    if (staging != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFree(staging));
    release();
    throw;
  }
  COPROVE_CUDA_ASSERT_OK(cudaStreamDestroy(stream));
  for (cudaEvent_t e : half_free)
    if (e != nullptr) COPROVE_CUDA_ASSERT_OK(cudaEventDestroy(e));
  if (host_staging != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFreeHost(host_staging));
  COPROVE_CUDA_ASSERT_OK(cudaFree(staging));
  if (copies_ > 1) {
    try {
      make_copies();
    } catch (...) {
      release();
      throw;
    }
  }
}

template <class Affine>
void msm_bases<Affine>::make_copies() {
  using traits = affine_traits<Affine>;
  const unsigned shift = window_bits_ * msm_windows_per_copy(window_bits_, copies_);
  // The copies are made a slice of points at a time, so that the scratch stays bounded.
  const std::size_t slice = std::min(count_, std::size_t{1} << 17);
  const std::size_t rows = std::size_t{copies_ - 1} * slice;
  void* scratch = nullptr;
  void* products = nullptr;
  cudaStream_t stream = nullptr;
  const auto free_all = [&] {
    if (stream != nullptr) COPROVE_CUDA_ASSERT_OK(cudaStreamSynchronize(stream));
    if (stream != nullptr) COPROVE_CUDA_ASSERT_OK(cudaStreamDestroy(stream));
    if (scratch != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFree(scratch));
    if (products != nullptr) COPROVE_CUDA_ASSERT_OK(cudaFree(products));
  };
  try {
    COPROVE_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    COPROVE_CUDA_TRY(cudaMalloc(&scratch, rows * traits::xyzz_bytes));
    COPROVE_CUDA_TRY(cudaMalloc(&products, rows * traits::device_bytes / 2));
    for (std::size_t begin = 0; begin < count_; begin += slice) {
      detail::msm_shift_copies(traits::group, data_, count_, begin, std::min(slice, count_ - begin), copies_, shift,
                               scratch, products, stream);
    }
    COPROVE_CUDA_TRY(cudaStreamSynchronize(stream));
  } catch (...) {
    free_all();
    throw;
  }
  free_all();
}

template <class Affine>
msm_bases<Affine>::~msm_bases() {
  release();
}

template <class Affine>
msm_bases<Affine>::msm_bases(msm_bases&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      count_(std::exchange(other.count_, 0)),
      device_(other.device_),
      copies_(std::exchange(other.copies_, 1)),
      window_bits_(std::exchange(other.window_bits_, 0)) {}

template <class Affine>
msm_bases<Affine>& msm_bases<Affine>::operator=(msm_bases&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    count_ = std::exchange(other.count_, 0);
    device_ = other.device_;
    copies_ = std::exchange(other.copies_, 1);
    window_bits_ = std::exchange(other.window_bits_, 0);
  }
  return *this;
}

template <class Affine>
std::size_t msm_bases<Affine>::bytes() const noexcept {
  return std::size_t{copies_} * count_ * affine_traits<Affine>::device_bytes;
}

template <class Affine>
void msm_bases<Affine>::release() noexcept {
  if (data_ != nullptr) {
    int previous = 0;
    const bool restore = cudaGetDevice(&previous) == cudaSuccess && previous != device_;
    if (restore) COPROVE_CUDA_ASSERT_OK(cudaSetDevice(device_));
    COPROVE_CUDA_ASSERT_OK(cudaFree(data_));
    if (restore) COPROVE_CUDA_ASSERT_OK(cudaSetDevice(previous));
    data_ = nullptr;
  }
}

template class msm_bases<field::g1_affine>;
template class msm_bases<field::g2_affine>;

std::size_t msm_workspace_bytes(const msm_plan& plan) {
  return plan.workspace_bytes + ((detail::msm_scan_scratch_bytes(scan_items(plan)) + 255) & ~std::size_t{255});
}

std::size_t msm_proof_workspace_bytes(std::size_t h_count, std::size_t variables, std::size_t aux,
                                      const msm_precompute& key) {
  const msm_proof_plans plans = plan_proof_msms(h_count, variables, aux, key);
  // A, B_G1 and B_G2 placed once: the placement and the largest run, which is more than the largest
  // run placed apart takes (the shared placement holds what a run's own one does, and more).
  const std::size_t witness =
      shared_placement_bytes(plans.a, variables) + shared_run_bytes(plans.a, plans.b_g1, plans.b_g2, variables);
  return std::max({msm_workspace_bytes(plans.h), witness, msm_workspace_bytes(plans.l)});
}

void msm_async(msm_context& context, const msm_bases_g1& bases, const field::fr* scalars, std::size_t count,
               field::g1_xyzz* result, cudaStream_t stream, const msm_gpu_options& options) {
  run_msm(context, bases, scalars, count, result, stream, options);
}

void msm_async(msm_context& context, const msm_bases_g2& bases, const field::fr* scalars, std::size_t count,
               field::g2_xyzz* result, cudaStream_t stream, const msm_gpu_options& options) {
  run_msm(context, bases, scalars, count, result, stream, options);
}

void msm_windows_async(msm_context& context, const msm_bases_g1& bases, const field::fr* scalars, std::size_t count,
                       msm_window_sums_g1* out, cudaStream_t stream, const msm_gpu_options& options) {
  run_msm<field::g1_affine, field::g1_xyzz>(context, bases, scalars, count, nullptr, stream, options, out);
}

void msm_windows_async(msm_context& context, const msm_bases_g2& bases, const field::fr* scalars, std::size_t count,
                       msm_window_sums_g2* out, cudaStream_t stream, const msm_gpu_options& options) {
  run_msm<field::g2_affine, field::g2_xyzz>(context, bases, scalars, count, nullptr, stream, options, out);
}

namespace {

/// The plan a run over `bases` makes for `count` points (as run_msm makes it, default options).
template <class Affine>
msm_plan plan_of(const msm_bases<Affine>& bases, std::size_t count) {
  return plan_msm(affine_traits<Affine>::group, count, bases.copies() > 1 ? bases.window_bits() : 0, bases.copies());
}

/// One placement serves two plans over the same scalars when it is the same: the digits, the
/// groups they go to and where in the bases a copy starts.
bool place_alike(const msm_plan& a, std::size_t a_size, const msm_plan& b, std::size_t b_size) {
  // An entry indexes copy j of point i at j * size + i: with copies, the two sizes must agree.
  const bool same_stride = a.copies <= 1 || a_size == b_size;
  return a.window_bits == b.window_bits && a.digit_windows == b.digit_windows && a.windows == b.windows &&
         a.groups == b.groups && a.entries == b.entries && a.copies == b.copies && same_stride;
}

}  // namespace

bool msm_places_alike(const msm_bases_g1& g1_first, const msm_bases_g1& g1_second, const msm_bases_g2& g2,
                      std::size_t count) {
  if (count == 0 || count > g1_first.size() || count > g1_second.size() || count > g2.size()) return false;
  if (g1_first.device() != g1_second.device() || g1_first.device() != g2.device()) return false;
  const msm_plan first = plan_of(g1_first, count);
  return place_alike(first, g1_first.size(), plan_of(g1_second, count), g1_second.size()) &&
         place_alike(first, g1_first.size(), plan_of(g2, count), g2.size());
}

bool msm_windows_same_scalars_async(msm_context& context, const msm_bases_g1& g1_first, const msm_bases_g1& g1_second,
                                    const msm_bases_g2& g2, const field::fr* scalars, std::size_t count,
                                    msm_window_sums_g1* out_first, msm_window_sums_g1* out_second,
                                    msm_window_sums_g2* out_g2, cudaStream_t stream) {
  if (!msm_places_alike(g1_first, g1_second, g2, count)) {
    msm_windows_async(context, g1_first, scalars, count, out_first, stream);
    msm_windows_async(context, g1_second, scalars, count, out_second, stream);
    msm_windows_async(context, g2, scalars, count, out_g2, stream);
    return false;
  }
  check_scalars(context, g1_first.device(), scalars, count);  // before the placement is enqueued
  const msm_plan plan = plan_of(g1_first, count);
  scoped_device scope(g1_first.device());
  const void* d_scalars = device_view(scalars, g1_first.device(), "the scalars");
  const std::size_t groups = plan.groups;
  const std::size_t scratch_bytes = detail::msm_scan_scratch_bytes(scan_items(plan));
  const std::size_t run_bytes = shared_run_bytes(plan, plan_of(g1_second, count), plan_of(g2, count), count);
  workspace ws(context, shared_placement_bytes(plan, count) + run_bytes, stream);
  void* scratch = ws.take<void>(scratch_bytes);
  auto* canonical = ws.take<std::uint32_t>(count * 32);
  auto* counts = ws.take<std::uint32_t>((groups + 1) * 4);
  auto* off_a = ws.take<std::uint32_t>((groups + 1) * 4);
  auto* off_b = ws.take<std::uint32_t>((groups + 1) * 4);
  auto* entries = ws.take<std::uint32_t>(plan.entries * 4);
  void* const run_region = ws.take<void>(run_bytes);
  // The two-pass placement's temp: the runs' region, free until they start.
  place(plan, d_scalars, count, g1_first.size(), scratch, scratch_bytes, canonical, counts, off_a, off_b, entries,
        run_region, run_bytes, 0, stream);
  const placed_entries placed{off_a, entries, run_region};
  run_msm<field::g1_affine, field::g1_xyzz>(context, g1_first, scalars, count, nullptr, stream, {}, out_first, &placed);
  run_msm<field::g1_affine, field::g1_xyzz>(context, g1_second, scalars, count, nullptr, stream, {}, out_second,
                                            &placed);
  run_msm<field::g2_affine, field::g2_xyzz>(context, g2, scalars, count, nullptr, stream, {}, out_g2, &placed);
  return true;
}

}  // namespace coprove::cuda
