// One partition's synthesis, as it runs on a synthesis thread: the configured synthesizer (with
// the checks of what it answers) or the circuit through the PCE cache, straight into the leased
// buffers, timed. It never blocks on a PCE being built: it says so (pce_building) and the caller
// waits for the build on its own executor, then calls again.
#pragma once

#include <coprove/engine/engine.hpp>
#include <coprove/r1cs/pce.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace coprove::engine::detail {

struct synthesis_outcome {
  r1cs::synthesis_output output;
  std::shared_ptr<const r1cs::pce_matrices> matrices;  ///< set: a holds the assignment, the backend does the SpMV
  std::size_t assignment_size = 0;
  /// With results = proof, the assignment where it is not the start of `a` (matrices null).
  std::vector<field::fr> assignment;
  bool needs_abc = false;     ///< leased a and h only, and the synthesis needs b and c
  bool pce_building = false;  ///< nothing ran: the circuit's PCE is being built under `wait`
  std::uint64_t start = 0, end = 0;
  std::uint32_t lane = 0;  ///< the synthesis thread's trace lane
  std::string error;       ///< set when the circuit, the hook or the synthesizer failed
};

/// Synthesizes partition `index` of `request` into a, b, c (b and c empty while lean). Never
/// throws: a failure is in the outcome's error. `lane` is stored in the outcome as it is.
/// `run_hook`: call engine_config::synthesis_hook first (false when this call repeats one that
/// found the PCE being built).
synthesis_outcome synthesize_partition(const engine_config& cfg, r1cs::pce_cache& pce, std::uint64_t job_id,
                                       const prove_request& request, std::size_t index, std::span<field::fr> a,
                                       std::span<field::fr> b, std::span<field::fr> c, std::uint32_t lane,
                                       bool run_hook);

}  // namespace coprove::engine::detail
