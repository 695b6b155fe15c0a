// Reading a finished task's results off its staging areas and events (backend_staging.hpp).
#include "backend_staging.hpp"

#include <coprove/runtime/log.hpp>

#include <exception>
#include <new>

namespace coprove::cuda::detail {

namespace {

std::uint64_t elapsed_ns(const event& from, const event& to) {
  return static_cast<std::uint64_t>(static_cast<double>(to.elapsed_ms_since(from)) * 1e6);
}

}  // namespace

engine::quotient_result staged_result(const stage_events& events, std::error_code& ec) {
  engine::quotient_result result;
  if (!ec) {
    const bool evaluated = events.stages.contains(engine::quotient_stage::evaluate_at_zeta);
    if (evaluated)
      result.values = engine::evaluation_values{events.values.data[0], events.values.data[1],
                                                events.values.data[2], events.values.data[3]};
    try {
      engine::quotient_timings& t = result.timings;
      t.h2d_ns = elapsed_ns(events.start, events.h2d);
      t.h2d_bytes = events.h2d_bytes;
      t.d2h_bytes = events.d2h_bytes;
      t.spmv_ns = events.stages.contains(engine::quotient_stage::spmv) ? elapsed_ns(events.h2d, events.spmv) : 0;
      t.compute_ns = elapsed_ns(events.evaluated, events.compute);
      t.msm_ns = elapsed_ns(events.h_evaluated, events.msm);
      t.d2h_ns = elapsed_ns(events.msm, events.d2h);
      t.evaluation_ns =
          evaluated ? elapsed_ns(events.spmv, events.evaluated) + elapsed_ns(events.compute, events.h_evaluated) : 0;
    } catch (const std::exception& e) {
      COPROVE_LOG(warning, "cuda") << "reading the stage timings failed: " << e.what();
    }
    result.h_copied = events.stages.contains(engine::quotient_stage::copy_h_to_host);
    if (events.stages.contains(engine::quotient_stage::proof_msms)) {
      try {
        auto parts = std::make_shared<const copied_sums>(*events.sums.data);
        result.combine_sums = [parts] { return parts->combine(); };
      } catch (const std::bad_alloc&) {
        ec = std::make_error_code(std::errc::not_enough_memory);
      }
    }
  }
  return result;
}

}  // namespace coprove::cuda::detail
