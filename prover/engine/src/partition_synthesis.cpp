// A partition's synthesis on a synthesis thread.
#include <coprove/engine/detail/partition_synthesis.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/runtime/trace.hpp>

#include <exception>
#include <stdexcept>

namespace coprove::engine::detail {
namespace {

// What a configured synthesizer answered, checked against what it was given.
void check_configured(const engine_config& cfg, const synthesis_outcome& s, std::span<const field::fr> a,
                      std::span<const field::fr> b) {
  const std::string who = "the configured synthesizer (" + cfg.synthesizer_name + ")";
  if (s.needs_abc && !b.empty()) throw std::logic_error(who + " asked for b and c, which it was given");
  if (s.matrices && !cfg.backend_spmv)
    throw std::logic_error(who +
                           " sent only the assignment, but the SpMV is on the host (backend_spmv is off): nothing "
                           "would evaluate its matrices");
  if (!s.needs_abc && !s.matrices && b.empty())
    throw std::logic_error(who + " returned neither matrices nor needs_abc, with only a leased");
  if (s.matrices && s.assignment_size > a.size())
    throw std::logic_error(who + " sent an assignment of " + std::to_string(s.assignment_size) +
                           " elements, more than a holds (" + std::to_string(a.size()) + ")");
}

}  // namespace

synthesis_outcome synthesize_partition(const engine_config& cfg, r1cs::pce_cache& pce, std::uint64_t job_id,
                                       const prove_request& request, std::size_t index, std::span<field::fr> a,
                                       std::span<field::fr> b, std::span<field::fr> c, std::uint32_t lane,
                                       bool run_hook) {
  synthesis_outcome s;
  s.lane = lane;
  s.start = runtime::trace_writer::now_ns();
  auto take = [&s](r1cs::deferred_synthesis d) {
    s.output = std::move(d.output);
    s.matrices = std::move(d.matrices);
    s.assignment_size = d.assignment_size;
    s.needs_abc = d.needs_abc;
    s.pce_building = d.pce_building;
    s.assignment = std::move(d.assignment);
  };
  try {
    if (run_hook && cfg.synthesis_hook) cfg.synthesis_hook(job_id, index);
    if (cfg.synthesizer) {
      take(cfg.synthesizer(request, index, a, b, c));
      check_configured(cfg, s, a, b);
    } else {
      const auto circ = r1cs::make_circuit(request.circuit, request.log_constraints, request.seed, index);
      take(pce.synthesize_unless_building(*circ, a, b, c, cfg.backend_spmv, cfg.results == result_kind::proof));
    }
  } catch (const std::exception& e) {
    s.error = e.what();
    if (s.error.empty()) s.error = "unknown error";
  } catch (...) {
    s.error = "unknown error";
  }
  s.end = runtime::trace_writer::now_ns();
  return s;
}

}  // namespace coprove::engine::detail
