// The PCE cache: recording on the first slow synthesis, the CSR SpMV fast path, the wait / eager
// policies, and the checked file format.
#include <coprove/r1cs/pce.hpp>

#include <coprove/field/parallel.hpp>
#include <coprove/runtime/input_file.hpp>
#include <coprove/runtime/log.hpp>
#include <coprove/runtime/metrics.hpp>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

namespace coprove::r1cs {
using field::fr;
using field::parallel_for;


static_assert(std::endian::native == std::endian::little,
              "the PCE file format is written in the host's (little-endian) byte order");

std::string_view to_string(pce_policy p) noexcept {
  return p == pce_policy::wait ? "wait" : "eager";
}

std::optional<pce_policy> parse_pce_policy(std::string_view name) noexcept {
  if (name == "wait") return pce_policy::wait;
  if (name == "eager") return pce_policy::eager;
  return std::nullopt;
}

std::size_t csr_matrix::bytes() const noexcept {
  return row_offsets.capacity() * sizeof(std::uint32_t) + columns.capacity() * sizeof(std::uint32_t) +
         coefficients.capacity() * sizeof(std::uint32_t);
}

std::size_t coefficient_table_builder::limbs_hash::operator()(const std::array<std::uint64_t, 4>& l) const noexcept {
  std::uint64_t h = l[0] * 0x9e3779b97f4a7c15ULL;
  h ^= l[1] + 0x7f4a7c159e3779b9ULL + (h << 6) + (h >> 2);
  h ^= l[2] + 0x94d049bb133111ebULL + (h << 6) + (h >> 2);
  h ^= l[3] + 0xbf58476d1ce4e5b9ULL + (h << 6) + (h >> 2);
  return static_cast<std::size_t>(h);
}

coefficient_table_builder::coefficient_table_builder(std::vector<fr>& table) : table_(table) {
  table_ = {fr::one(), -fr::one()};
  index_.emplace(fr::one().limbs, pce_coefficient_one);
  index_.emplace((-fr::one()).limbs, pce_coefficient_minus_one);
}

std::uint32_t coefficient_table_builder::index(const fr& value) {
  auto [it, inserted] = index_.try_emplace(value.limbs, static_cast<std::uint32_t>(table_.size()));
  if (inserted) table_.push_back(value);
  return it->second;
}

std::size_t pce_matrices::bytes() const noexcept {
  return sizeof(pce_matrices) + circuit_id.capacity() + a.bytes() + b.bytes() + c.bytes() +
         coefficient_table.capacity() * sizeof(fr);
}

bool pce_matrices::matches(const circuit& circ) const {
  const circuit_shape s = circ.shape();
  return circuit_id == circ.id() && structure_digest == circ.structure_digest() &&
         num_inputs == s.num_inputs && num_aux == s.num_aux && num_rows == s.num_rows() &&
         domain_size == circ.domain_size();
}

namespace {

// One matrix as raw arrays: the SpMV's inner loop then keeps its pointers in registers instead of
// reloading them through the vectors after every store.
struct csr_view {
  const std::uint32_t* offsets;
  const std::uint32_t* columns;
  const std::uint32_t* coefficients;

  explicit csr_view(const csr_matrix& m) noexcept
      : offsets(m.row_offsets.data()), columns(m.columns.data()), coefficients(m.coefficients.data()) {}
};

// One term's value. Coefficient one needs no multiplication, and neither does the constant column
// (w[0] = 1, so the term is the coefficient itself); minus one is a negation.
[[gnu::always_inline]] inline fr term(std::uint32_t col, std::uint32_t coeff, const fr* w,
                                      const fr* table) noexcept {
  if (coeff == pce_coefficient_one) return w[col];
  if (col == 0) return table[coeff];
  if (coeff == pce_coefficient_minus_one) return -w[col];
  return w[col] * table[coeff];
}

// One row of one matrix against the assignment (the terms in order, each as term() computes it).
[[gnu::always_inline]] inline fr row_dot(const csr_view& m, std::size_t row, const fr* w,
                                         const fr* table) noexcept {
  const std::uint32_t begin = m.offsets[row];
  const std::uint32_t end = m.offsets[row + 1];
  if (begin == end) return fr::zero();
  // The first term starts the sum (no addition to zero); the most common row, a single variable
  // (s, q or y in a MiMC round), is then a copy.
  fr acc = term(m.columns[begin], m.coefficients[begin], w, table);
  for (std::uint32_t e = begin + 1; e < end; ++e) {
    const std::uint32_t col = m.columns[e];
    const std::uint32_t coeff = m.coefficients[e];
    if (coeff == pce_coefficient_one) {
      acc += w[col];
    } else if (col == 0) {
      acc += table[coeff];
    } else if (coeff == pce_coefficient_minus_one) {
      acc -= w[col];
    } else {
      acc += w[col] * table[coeff];
    }
  }
  return acc;
}

// Outputs at least this large (a, b and c together) are written with non-temporal stores: they
// exceed the caches anyway and go to the device next, so reading each line in before overwriting
// it (a third of the SpMV's memory traffic) buys nothing.
constexpr std::size_t streaming_store_min_bytes = std::size_t{24} << 20;

#if defined(__SSE2__)
[[gnu::always_inline]] inline void store_streaming(fr* out, const fr& v) noexcept {
  const auto* src = reinterpret_cast<const __m128i*>(v.limbs.data());
  auto* dst = reinterpret_cast<__m128i*>(out);
  _mm_stream_si128(dst, _mm_loadu_si128(src));
  _mm_stream_si128(dst + 1, _mm_loadu_si128(src + 1));
}
#endif

// Rows [lo, hi) of the three products, below num_rows (the caller zero-pads the rest).
template <bool Streaming>
void evaluate_rows(const csr_view& a, const csr_view& b, const csr_view& c, const fr* w,
                   const fr* table, fr* a_out, fr* b_out, fr* c_out, std::size_t lo,
                   std::size_t hi) noexcept {
  for (std::size_t i = lo; i < hi; ++i) {
    const fr va = row_dot(a, i, w, table);
    const fr vb = row_dot(b, i, w, table);
    const fr vc = row_dot(c, i, w, table);
#if defined(__SSE2__)
    if constexpr (Streaming) {
      store_streaming(a_out + i, va);
      store_streaming(b_out + i, vb);
      store_streaming(c_out + i, vc);
      continue;
    }
#endif
    a_out[i] = va;
    b_out[i] = vb;
    c_out[i] = vc;
  }
#if defined(__SSE2__)
  // Orders the streaming stores before whatever the caller does next (hand-off to other threads).
  if constexpr (Streaming) _mm_sfence();
#endif
}

constexpr std::size_t spmv_min_rows = 2048;

}  // namespace

void pce_matrices::evaluate(std::span<const fr> assignment, std::span<fr> a_out,
                            std::span<fr> b_out, std::span<fr> c_out,
                            spmv_stores stores) const {
  if (a_out.size() != domain_size || b_out.size() != domain_size || c_out.size() != domain_size) {
    throw std::invalid_argument("PCE evaluate for " + circuit_id + ": a, b and c must each hold " +
                                std::to_string(domain_size) + " elements");
  }
  if (assignment.size() != num_inputs + num_aux) {
    throw std::invalid_argument("PCE evaluate for " + circuit_id + ": the assignment holds " +
                                std::to_string(assignment.size()) + " values, expected " +
                                std::to_string(num_inputs + num_aux));
  }
  const fr* w = assignment.data();
  const fr* table = coefficient_table.data();
  const csr_view av(a), bv(b), cv(c);
  fr* const ao = a_out.data();
  fr* const bo = b_out.data();
  fr* const co = c_out.data();
  // Streaming stores need 16-byte aligned outputs (pinned buffers and vectors are).
  const bool aligned = ((reinterpret_cast<std::uintptr_t>(ao) | reinterpret_cast<std::uintptr_t>(bo) |
                         reinterpret_cast<std::uintptr_t>(co)) & 15) == 0;
  const bool streaming =
      aligned && (stores == spmv_stores::streaming ||
                  (stores == spmv_stores::automatic &&
                   3 * domain_size * sizeof(fr) >= streaming_store_min_bytes));
  parallel_for(
      0, domain_size,
      [&](std::size_t lo, std::size_t hi) {
        const std::size_t rows_end = std::min(hi, num_rows);
        if (lo < rows_end) {
          if (streaming) {
            evaluate_rows<true>(av, bv, cv, w, table, ao, bo, co, lo, rows_end);
          } else {
            evaluate_rows<false>(av, bv, cv, w, table, ao, bo, co, lo, rows_end);
          }
        }
        const std::size_t pad_begin = std::max(lo, num_rows);
        if (pad_begin < hi) {
          const std::size_t count = (hi - pad_begin) * sizeof(fr);
          std::memset(static_cast<void*>(a_out.data() + pad_begin), 0, count);
          std::memset(static_cast<void*>(b_out.data() + pad_begin), 0, count);
          std::memset(static_cast<void*>(c_out.data() + pad_begin), 0, count);
        }
      },
      spmv_min_rows);
}

void pce_matrices::validate() const {
  auto fail = [&](const std::string& why) {
    throw pce_error("PCE for \"" + circuit_id + "\" is invalid: " + why);
  };
  if (num_inputs == 0) fail("no inputs (the constant one is missing)");
  if (domain_size == 0 || (domain_size & (domain_size - 1)) != 0) {
    fail("domain size " + std::to_string(domain_size) + " is not a power of two");
  }
  if (num_rows > domain_size) {
    fail(std::to_string(num_rows) + " rows exceed the domain size " + std::to_string(domain_size));
  }
  constexpr std::size_t max_columns = std::numeric_limits<std::uint32_t>::max();
  if (num_inputs > max_columns || num_aux > max_columns || num_inputs + num_aux > max_columns) {
    fail("too many variables");
  }
  const std::size_t variables = num_inputs + num_aux;
  if (coefficient_table.size() < 2 || coefficient_table[0] != fr::one() ||
      coefficient_table[1] != -fr::one()) {
    fail("the coefficient table does not start with one and minus one");
  }
  for (const fr& x : coefficient_table) {
    const auto& l = x.limbs;
    const auto& r = field::detail::fr_modulus;
    bool below = false;
    for (int i = 3; i >= 0; --i) {
      if (l[i] != r[i]) {
        below = l[i] < r[i];
        break;
      }
    }
    if (!below) fail("a coefficient is not a reduced field element");
  }
  const char* names[] = {"A", "B", "C"};
  const csr_matrix* ms[] = {&a, &b, &c};
  for (int k = 0; k < 3; ++k) {
    const csr_matrix& m = *ms[k];
    const std::string name = names[k];
    if (m.row_offsets.size() != num_rows + 1) fail(name + " has the wrong number of row offsets");
    if (m.columns.size() != m.coefficients.size()) {
      fail(name + " has different numbers of columns and coefficients");
    }
    if (m.row_offsets.front() != 0 || m.row_offsets.back() != m.columns.size()) {
      fail(name + "'s row offsets do not span its entries");
    }
    for (std::size_t i = 0; i + 1 < m.row_offsets.size(); ++i) {
      if (m.row_offsets[i] > m.row_offsets[i + 1]) fail(name + "'s row offsets decrease");
    }
    for (std::uint32_t col : m.columns) {
      if (col >= variables) fail(name + " refers to column " + std::to_string(col) + " of " + std::to_string(variables));
    }
    for (std::uint32_t coeff : m.coefficients) {
      if (coeff >= coefficient_table.size()) fail(name + " refers to a missing coefficient");
    }
  }
}

std::size_t estimate_pce_bytes(const circuit_shape& shape) noexcept {
  const std::size_t offsets = 3 * (shape.num_rows() + 1) * sizeof(std::uint32_t);
  const std::size_t entries = shape.num_nonzeros * 2 * sizeof(std::uint32_t);
  const std::size_t table = shape.max_coefficients * sizeof(fr);
  // Vectors may hold up to twice what they use while they grow during recording; the estimate
  // charges the settled size plus a quarter for growth slack.
  const std::size_t settled = offsets + entries + table + sizeof(pce_matrices) + 64;
  return settled + settled / 4;
}

// ---------------------------------------------------------------------------------------------
// The cache.

struct pce_cache::entry {
  enum class status { building, ready, uncacheable, failed };
  status state = status::building;
  std::shared_ptr<const pce_matrices> matrices;
  bool verified = true;  // false for a loaded PCE until its first use passed the check
  std::vector<std::function<void()>> on_built;  // notify_when_built, while building
};

struct pce_cache::state {
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, std::shared_ptr<entry>, std::less<>> entries;
  std::size_t bytes = 0;
  pce_stats stats;
  // Assignment vectors kept for reuse, so that each synthesis does not fault in fresh pages. At
  // most one per synthesis that ran at the same time, which the memory plan's working set (per
  // concurrent synthesis) already charges; capped at the thread count.
  std::vector<std::vector<fr>> spare_assignments;

  std::vector<fr> take_spare() {
    std::lock_guard lock(mutex);
    if (spare_assignments.empty()) return {};
    std::vector<fr> out = std::move(spare_assignments.back());
    spare_assignments.pop_back();
    return out;
  }
  void give_spare(std::vector<fr> v) {
    std::lock_guard lock(mutex);
    if (spare_assignments.size() < std::max(2u, std::thread::hardware_concurrency())) {
      spare_assignments.push_back(std::move(v));
    }
  }

  runtime::counter& hits_total = runtime::registry::global().get_counter(
      "coprove_pce_hits_total", "Syntheses served by the PCE (SpMV path)");
  runtime::counter& slow_total = runtime::registry::global().get_counter(
      "coprove_pce_slow_path_total", "Syntheses that took the slow path");
  runtime::counter& builds_total = runtime::registry::global().get_counter(
      "coprove_pce_builds_total", "Slow syntheses that recorded a PCE");
  runtime::counter& waits_total = runtime::registry::global().get_counter(
      "coprove_pce_waits_total", "Syntheses that waited for a PCE being built");
  runtime::counter& rejected_total = runtime::registry::global().get_counter(
      "coprove_pce_rejected_total", "Loaded PCEs dropped because they did not match or check");
  runtime::counter& host_spmv_total = runtime::registry::global().get_counter(
      "coprove_pce_host_spmv_total", "PCE hits whose SpMV was asked of the backend but ran on the host");
  runtime::counter& over_capacity_total = runtime::registry::global().get_counter(
      "coprove_pce_over_capacity_total", "Recorded PCEs not kept because they exceed the capacity");
};

pce_cache::pce_cache(pce_policy policy, std::size_t capacity_bytes)
    : policy_(policy), capacity_bytes_(capacity_bytes), state_(std::make_unique<state>()) {
  // Synthesis rides on the Fr multiplication: say once which path it takes.
  field::log_fr_multiply_path_once();
}

pce_cache::~pce_cache() = default;

synthesis_output pce_cache::synthesize(const circuit& circ, std::span<fr> a, std::span<fr> b,
                                       std::span<fr> c_out) {
  return synthesize_impl(circ, a, b, c_out, false, true, false).output;
}

deferred_synthesis pce_cache::synthesize_deferred(const circuit& circ, std::span<fr> a, std::span<fr> b,
                                                  std::span<fr> c_out) {
  return synthesize_impl(circ, a, b, c_out, true, true, false);
}

deferred_synthesis pce_cache::synthesize_unless_building(const circuit& circ, std::span<fr> a, std::span<fr> b,
                                                         std::span<fr> c_out, bool defer_spmv,
                                                         bool keep_assignment) {
  return synthesize_impl(circ, a, b, c_out, defer_spmv, false, keep_assignment);
}

bool pce_cache::notify_when_built(std::string_view circuit_id, std::function<void()> ended) {
  std::lock_guard lock(state_->mutex);
  const auto it = state_->entries.find(circuit_id);
  if (it == state_->entries.end() || it->second->state != entry::status::building) return false;
  it->second->on_built.push_back(std::move(ended));
  return true;
}

bool pce_cache::expects_deferral(std::string_view circuit_id) const {
  std::lock_guard lock(state_->mutex);
  const auto it = state_->entries.find(circuit_id);
  if (it == state_->entries.end()) return false;
  const entry& e = *it->second;
  return (e.state == entry::status::ready && e.verified) ||
         (e.state == entry::status::building && policy_ == pce_policy::wait);
}

deferred_synthesis pce_cache::synthesize_impl(const circuit& circ, std::span<fr> a, std::span<fr> b,
                                              std::span<fr> c_out, bool defer, bool block_on_build,
                                              bool keep_assignment) {
  const std::size_t n = circ.domain_size();
  // Only a: the caller expects a deferral and leased b and c only if it turns out otherwise.
  const bool only_a = defer && b.empty() && c_out.empty() && a.size() == n;
  deferred_synthesis needs_abc;
  needs_abc.needs_abc = true;
  if (!only_a && (a.size() != n || b.size() != n || c_out.size() != n)) {
    throw std::invalid_argument("synthesis of " + circ.id() + ": a, b and c must each hold exactly " +
                                std::to_string(n) + " elements (got " + std::to_string(a.size()) +
                                ", " + std::to_string(b.size()) + ", " +
                                std::to_string(c_out.size()) + ")");
  }
  state& s = *state_;
  const std::string id = circ.id();
  // The assignment a synthesis computed outside `a`: kept for the caller, or lent back.
  auto finish_assignment = [&s, keep_assignment](deferred_synthesis& out, std::vector<fr>&& w) {
    if (keep_assignment)
      out.assignment = std::move(w);
    else
      s.give_spare(std::move(w));
  };
  auto slow_path = [&s, &finish_assignment](const circuit& circ, std::span<fr> a, std::span<fr> b,
                                            std::span<fr> c) {
    std::vector<fr> scratch = s.take_spare();
    deferred_synthesis out;
    out.output = synthesize_slow(circ, a, b, c, nullptr, &scratch);
    finish_assignment(out, std::move(scratch));
    return out;
  };
  std::unique_lock lock(s.mutex);
  for (;;) {
    auto it = s.entries.find(id);
    if (it == s.entries.end()) {
      if (only_a) return needs_abc;
      // The first synthesis of this circuit: record the PCE on the slow path.
      auto building = std::make_shared<entry>();
      s.entries.emplace(id, building);
      ++s.stats.builds;
      ++s.stats.slow_path;
      s.builds_total.inc();
      s.slow_total.inc();
      lock.unlock();
      auto recorded = std::make_shared<pce_matrices>();
      deferred_synthesis out;
      try {
        std::vector<fr> scratch = s.take_spare();
        out.output = synthesize_slow(circ, a, b, c_out, recorded.get(), &scratch);
        finish_assignment(out, std::move(scratch));
      } catch (...) {
        lock.lock();
        s.entries.erase(id);
        building->state = entry::status::failed;
        s.changed.notify_all();
        auto ended = std::move(building->on_built);
        lock.unlock();
        for (auto& f : ended) f();
        throw;
      }
      const std::size_t size = recorded->bytes();
      lock.lock();
      if (s.bytes + size > capacity_bytes_) {
        building->state = entry::status::uncacheable;
        ++s.stats.over_capacity;
        s.over_capacity_total.inc();
        const std::string message = "the PCE of " + id + " (" + std::to_string(size) +
                                    " bytes) does not fit the PCE capacity (" +
                                    std::to_string(capacity_bytes_ - s.bytes) +
                                    " bytes free): its partitions take the slow path";
        lock.unlock();
        runtime::warn_once("pce.over_capacity." + id, "pce", message);
        lock.lock();
      } else {
        building->matrices = std::move(recorded);
        building->state = entry::status::ready;
        s.bytes += size;
      }
      s.changed.notify_all();
      auto ended = std::move(building->on_built);
      lock.unlock();
      for (auto& f : ended) f();
      return out;
    }

    const std::shared_ptr<entry> found = it->second;
    switch (found->state) {
      case entry::status::ready: {
        if (!found->matrices->matches(circ)) {
          // Only a loaded PCE can disagree with the circuit of its id.
          s.bytes -= found->matrices->bytes();
          s.entries.erase(it);
          ++s.stats.rejected;
          s.rejected_total.inc();
          lock.unlock();
          COPROVE_LOG(warning, "pce") << "loaded PCE for " << id
                                      << " does not match the circuit (digest or sizes): dropped, rebuilding";
          lock.lock();
          continue;
        }
        const std::shared_ptr<const pce_matrices> matrices = found->matrices;
        const bool check = !found->verified;
        lock.unlock();
        const circuit_shape shape = circ.shape();
        const std::size_t variables = shape.num_variables();
        deferred_synthesis out;
        out.output.num_constraints = shape.num_rows();
        out.output.num_inputs = shape.num_inputs;
        out.output.pce_used = true;
        if (defer && !check && variables <= a.size()) {
          // The assignment straight into a; the caller evaluates the matrices.
          synthesize_witness_into(circ, a);
          out.output.public_inputs = public_inputs_of(shape, a);
          out.matrices = matrices;
          out.assignment_size = variables;
          lock.lock();
          ++s.stats.hits;
          ++s.stats.deferred;
          s.hits_total.inc();
          return out;
        }
        if (only_a) return needs_abc;
        if (defer && !check) {
          runtime::warn_once("pce.host_spmv." + id, "pce",
                             "the assignment of " + id + " (" + std::to_string(variables) +
                                 " variables) does not fit a vector of its domain (" + std::to_string(a.size()) +
                                 "): its SpMV runs on the host; counted in coprove_pce_host_spmv_total");
          s.host_spmv_total.inc();
        }
        std::vector<fr> w = synthesize_witness(circ, s.take_spare());
        matrices->evaluate(w, a, b, c_out);
        out.output.public_inputs = public_inputs_of(shape, w);
        finish_assignment(out, std::move(w));
        const std::optional<std::size_t> bad =
            check ? first_unsatisfied_row(a, b, c_out) : std::nullopt;
        lock.lock();
        if (check) {
          if (bad) {
            auto again = s.entries.find(id);
            if (again != s.entries.end() && again->second == found) {
              s.bytes -= found->matrices->bytes();
              s.entries.erase(again);
              ++s.stats.rejected;
              s.rejected_total.inc();
            }
            lock.unlock();
            COPROVE_LOG(warning, "pce") << "loaded PCE for " << id << " fails row " << *bad
                                        << " on its first use: dropped, rebuilding";
            lock.lock();
            continue;
          }
          found->verified = true;
        }
        if (defer && !check) ++s.stats.host_spmv;
        ++s.stats.hits;
        s.hits_total.inc();
        return out;
      }
      case entry::status::uncacheable: {
        if (only_a) return needs_abc;
        ++s.stats.slow_path;
        s.slow_total.inc();
        lock.unlock();
        return slow_path(circ, a, b, c_out);
      }
      case entry::status::building: {
        if (policy_ == pce_policy::eager) {
          if (only_a) return needs_abc;
          ++s.stats.slow_path;
          s.slow_total.inc();
          lock.unlock();
          runtime::warn_once("pce.eager", "pce",
                             "PCE policy eager: partitions that arrive while their circuit's PCE is "
                             "being built take the slow path");
          return slow_path(circ, a, b, c_out);
        }
        ++s.stats.waits;
        s.waits_total.inc();
        if (!block_on_build) {
          deferred_synthesis building;
          building.pce_building = true;
          return building;
        }
        s.changed.wait(lock, [&] { return found->state != entry::status::building; });
        continue;
      }
      case entry::status::failed:
        continue;  // erased already; the loop finds no entry and builds
    }
  }
}

std::size_t pce_cache::bytes() const {
  std::lock_guard lock(state_->mutex);
  return state_->bytes;
}

pce_stats pce_cache::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

bool pce_cache::contains(std::string_view circuit_id) const {
  std::lock_guard lock(state_->mutex);
  auto it = state_->entries.find(circuit_id);
  return it != state_->entries.end() && it->second->state == entry::status::ready;
}

std::vector<std::string> pce_cache::circuit_ids() const {
  std::lock_guard lock(state_->mutex);
  std::vector<std::string> out;
  for (const auto& [id, e] : state_->entries) {
    if (e->state == entry::status::ready) out.push_back(id);
  }
  return out;
}

std::shared_ptr<const pce_matrices> pce_cache::find(std::string_view circuit_id) const {
  std::lock_guard lock(state_->mutex);
  auto it = state_->entries.find(circuit_id);
  if (it == state_->entries.end() || it->second->state != entry::status::ready) return nullptr;
  return it->second->matrices;
}

void pce_cache::clear() {
  std::lock_guard lock(state_->mutex);
  for (auto it = state_->entries.begin(); it != state_->entries.end();) {
    if (it->second->state == entry::status::ready) {
      state_->bytes -= it->second->matrices->bytes();
      it = state_->entries.erase(it);
    } else {
      ++it;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The file format (little-endian):
//   "COPRVPCE" | u32 version | u32 reserved (0) | u64 entry count
//   per entry: u32 id length | id | u64 digest | u64 inputs | u64 aux | u64 rows | u64 domain
//              | u64 coefficients | u64 nnz A | u64 nnz B | u64 nnz C
//              | coefficients (32 bytes each, Montgomery limbs)
//              | A, B, C: offsets (rows + 1 x u32), columns (nnz x u32), coefficients (nnz x u32)
//   u64 checksum of everything before it
// The checksum chains a 64-bit hash of each field as written, so reader and writer agree.

namespace {

constexpr char pce_magic[8] = {'C', 'O', 'P', 'R', 'V', 'P', 'C', 'E'};
constexpr std::uint32_t pce_version = 1;

std::uint64_t mix_block(std::uint64_t h, const void* data, std::size_t size) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  constexpr std::uint64_t prime = 0x100000001b3ULL;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * prime;
    h ^= h >> 29;
  }
  std::uint64_t tail = 0;
  if (size > i) std::memcpy(&tail, p + i, size - i);  // an empty vector's data() may be null
  h = (h ^ tail ^ (static_cast<std::uint64_t>(size) << 56)) * prime;
  return h ^ (h >> 32);
}

class checked_writer {
 public:
  explicit checked_writer(const std::string& path) : path_(path), out_(path, std::ios::binary | std::ios::trunc) {
    if (!out_) throw pce_error("cannot write PCE file " + path);
  }
  void bytes(const void* data, std::size_t size) {
    hash_ = mix_block(hash_, data, size);
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out_) throw pce_error("writing PCE file " + path_ + " failed");
  }
  template <class T>
  void value(T v) { bytes(&v, sizeof v); }
  template <class T>
  void vector(const std::vector<T>& v) { bytes(v.data(), v.size() * sizeof(T)); }
  void finish() {
    const std::uint64_t sum = hash_;
    out_.write(reinterpret_cast<const char*>(&sum), sizeof sum);
    out_.flush();
    if (!out_) throw pce_error("writing PCE file " + path_ + " failed");
    out_.close();
  }

 private:
  std::string path_;
  std::ofstream out_;
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

class checked_reader {
 public:
  // Only a regular file is opened (a device, a directory or a pipe is refused without blocking),
  // and its size, known first, bounds every count read from it.
  explicit checked_reader(const std::string& path) : path_(path) {
    try {
      remaining_ = runtime::regular_file_size(path, runtime::input_limits::binary_file_bytes, "PCE file");
    } catch (const runtime::input_file_error& e) {
      throw pce_error(std::string("PCE file ") + e.what());
    }
    in_.open(path, std::ios::binary);
    if (!in_) throw pce_error("cannot open PCE file " + path);
  }
  void bytes(void* data, std::size_t size) {
    if (size > remaining_) {
      throw pce_error("PCE file " + path_ + " is truncated (needs " + std::to_string(size) +
                      " more bytes, " + std::to_string(remaining_) + " left)");
    }
    in_.read(static_cast<char*>(data), static_cast<std::streamsize>(size));
    if (!in_) throw pce_error("reading PCE file " + path_ + " failed");
    remaining_ -= size;
    hash_ = mix_block(hash_, data, size);
  }
  template <class T>
  T value() {
    T v;
    bytes(&v, sizeof v);
    return v;
  }
  // A count read from the file, checked against what is left before anything is allocated.
  std::size_t count(std::size_t element_size, const char* what) {
    const auto v = value<std::uint64_t>();
    if (element_size != 0 && v > remaining_ / element_size) {
      throw pce_error("PCE file " + path_ + " is corrupt: its " + what + " count " + std::to_string(v) +
                      " needs " + std::to_string(element_size) + " bytes each, more than the " +
                      std::to_string(remaining_) + " bytes that remain");
    }
    return static_cast<std::size_t>(v);
  }
  template <class T>
  void vector(std::vector<T>& v, std::size_t size) {
    if (size > remaining_ / sizeof(T)) {
      throw pce_error("PCE file " + path_ + " is truncated: " + std::to_string(size) + " values of " +
                      std::to_string(sizeof(T)) + " bytes, " + std::to_string(remaining_) + " bytes remain");
    }
    v.resize(size);
    bytes(v.data(), size * sizeof(T));
  }
  void finish() {
    const std::uint64_t expected = hash_;
    std::uint64_t stored;
    if (remaining_ < sizeof stored) throw pce_error("PCE file " + path_ + " is truncated (no checksum)");
    in_.read(reinterpret_cast<char*>(&stored), sizeof stored);
    remaining_ -= sizeof stored;
    if (!in_) throw pce_error("reading PCE file " + path_ + " failed");
    if (stored != expected) throw pce_error("PCE file " + path_ + " fails its checksum (corrupt)");
    if (remaining_ != 0) throw pce_error("PCE file " + path_ + " has trailing bytes after its checksum");
  }

 private:
  std::string path_;
  std::ifstream in_;
  std::uint64_t remaining_ = 0;
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

void write_matrix(checked_writer& w, const csr_matrix& m) {
  w.vector(m.row_offsets);
  w.vector(m.columns);
  w.vector(m.coefficients);
}

void read_matrix(checked_reader& r, csr_matrix& m, std::size_t rows, std::size_t nnz) {
  r.vector(m.row_offsets, rows + 1);
  r.vector(m.columns, nnz);
  r.vector(m.coefficients, nnz);
}

}  // namespace

void pce_cache::save(const std::string& path) const { save(path, std::nullopt); }

void pce_cache::save(const std::string& path, std::optional<std::string_view> circuit_id) const {
  std::vector<std::shared_ptr<const pce_matrices>> ready;
  {
    std::lock_guard lock(state_->mutex);
    for (const auto& [id, e] : state_->entries) {
      if (e->state == entry::status::ready && (!circuit_id || id == *circuit_id)) ready.push_back(e->matrices);
    }
  }
  const std::string temporary = path + ".tmp";
  try {
    checked_writer w(temporary);
    w.bytes(pce_magic, sizeof pce_magic);
    w.value(pce_version);
    w.value(std::uint32_t{0});
    w.value(static_cast<std::uint64_t>(ready.size()));
    for (const auto& m : ready) {
      w.value(static_cast<std::uint32_t>(m->circuit_id.size()));
      w.bytes(m->circuit_id.data(), m->circuit_id.size());
      for (std::uint64_t v : {m->structure_digest, std::uint64_t{m->num_inputs},
                              std::uint64_t{m->num_aux}, std::uint64_t{m->num_rows},
                              std::uint64_t{m->domain_size},
                              std::uint64_t{m->coefficient_table.size()},
                              std::uint64_t{m->a.nonzeros()}, std::uint64_t{m->b.nonzeros()},
                              std::uint64_t{m->c.nonzeros()}}) {
        w.value(v);
      }
      w.vector(m->coefficient_table);
      write_matrix(w, m->a);
      write_matrix(w, m->b);
      write_matrix(w, m->c);
    }
    w.finish();
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw pce_error("cannot move PCE file into place at " + path + ": " + ec.message());
  }
}

std::size_t pce_cache::load(const std::string& path) {
  checked_reader r(path);
  char magic[sizeof pce_magic];
  r.bytes(magic, sizeof magic);
  if (std::memcmp(magic, pce_magic, sizeof magic) != 0) {
    throw pce_error("PCE file " + path + " is not a PCE file (bad magic)");
  }
  const auto version = r.value<std::uint32_t>();
  if (version != pce_version) {
    throw pce_error("PCE file " + path + " has version " + std::to_string(version) +
                    ", this build reads version " + std::to_string(pce_version));
  }
  if (r.value<std::uint32_t>() != 0) throw pce_error("PCE file " + path + " is corrupt (reserved field)");
  const std::size_t count = r.count(8, "entry");
  std::vector<std::shared_ptr<pce_matrices>> loaded;
  for (std::size_t i = 0; i < count; ++i) {
    auto m = std::make_shared<pce_matrices>();
    const auto id_size = r.value<std::uint32_t>();
    if (id_size > 256) throw pce_error("PCE file " + path + " is corrupt (circuit id too long)");
    m->circuit_id.resize(id_size);
    r.bytes(m->circuit_id.data(), id_size);
    m->structure_digest = r.value<std::uint64_t>();
    m->num_inputs = r.count(0, "input");
    m->num_aux = r.count(0, "auxiliary");
    m->num_rows = r.count(3 * sizeof(std::uint32_t), "row");
    m->domain_size = r.count(0, "domain");
    const std::size_t coefficients = r.count(sizeof(fr), "coefficient");
    const std::size_t nnz_a = r.count(2 * sizeof(std::uint32_t), "nonzero");
    const std::size_t nnz_b = r.count(2 * sizeof(std::uint32_t), "nonzero");
    const std::size_t nnz_c = r.count(2 * sizeof(std::uint32_t), "nonzero");
    r.vector(m->coefficient_table, coefficients);
    read_matrix(r, m->a, m->num_rows, nnz_a);
    read_matrix(r, m->b, m->num_rows, nnz_b);
    read_matrix(r, m->c, m->num_rows, nnz_c);
    loaded.push_back(std::move(m));
  }
  r.finish();
  for (const auto& m : loaded) m->validate();

  std::lock_guard lock(state_->mutex);
  std::size_t added_bytes = 0;
  std::vector<std::shared_ptr<pce_matrices>> fresh;
  for (const auto& m : loaded) {
    if (state_->entries.count(m->circuit_id) != 0) continue;
    bool duplicate = false;
    for (const auto& f : fresh) duplicate = duplicate || f->circuit_id == m->circuit_id;
    if (duplicate) continue;
    added_bytes += m->bytes();
    fresh.push_back(m);
  }
  if (state_->bytes + added_bytes > capacity_bytes_) {
    throw pce_error("PCE file " + path + " needs " + std::to_string(added_bytes) +
                    " bytes, more than the PCE capacity leaves (" +
                    std::to_string(capacity_bytes_ - state_->bytes) + " bytes)");
  }
  for (auto& m : fresh) {
    auto e = std::make_shared<entry>();
    e->state = entry::status::ready;
    e->verified = false;
    e->matrices = std::move(m);
    state_->entries.emplace(e->matrices->circuit_id, e);
  }
  state_->bytes += added_bytes;
  state_->stats.loaded += fresh.size();
  return fresh.size();
}

}  // namespace coprove::r1cs
