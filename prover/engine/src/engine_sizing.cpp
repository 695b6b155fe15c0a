// The engine's sizing (see the header): the depth's limit from the CPU and the memory budget, the
// plan for that many partitions in flight, each device's plan with the keys' copies, and the
// pinned pool's pre-warm.
#include <coprove/engine/detail/engine_sizing.hpp>

#include <coprove/groth16/prover.hpp>
#include <coprove/r1cs/circuits.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace coprove::engine::detail {
namespace {

std::size_t threads_of(const engine_config& cfg) {
  return cfg.synthesis_threads != 0 ? cfg.synthesis_threads : std::max(1u, std::thread::hardware_concurrency());
}

// Each device's plan input with the keys in `copies` copies.
std::vector<device_memory_plan_input> device_inputs(const engine_config& cfg, const compute_backend& backend,
                                                    const key_sizes& keys, const memory_plan& plan,
                                                    std::size_t copies) {
  std::size_t key_bytes = 0, n = std::size_t{1} << cfg.max_log_constraints, variables = 0;
  std::string circuits;
  for (const device_key_size& k : keys.device) {
    key_bytes += k.bytes;
    n = std::max(n, k.domain_size);
    variables = std::max(variables, k.variables);
    circuits += (circuits.empty() ? "" : ", ") + k.name;
  }
  const std::vector<std::string> names = backend.device_names();
  std::vector<device_memory_plan_input> out;
  for (std::size_t d = 0; d < backend.device_count(); ++d) {
    const std::optional<device_memory> memory = backend.device_memory_of(d);
    if (!memory) continue;
    device_memory_plan_input input;
    input.device = d;
    input.device_name = d < names.size() ? names[d] : std::string();
    input.total_bytes = memory->total_bytes;
    input.in_use_bytes = memory->in_use_at_start_bytes;
    input.key_bytes = key_bytes * copies;
    input.circuits = circuits.empty() ? std::string("no circuit") : circuits;
    if (copies > 1) input.circuits += " (" + std::to_string(copies) + " copies of each key's points)";
    input.matrices_bytes = cfg.backend_spmv ? plan.pce_bytes : 0;
    input.slots = backend.worker_slots_per_device();
    input.slot_bytes = backend.device_working_bytes(n, variables, copies);
    input.shared_bytes = backend.device_shared_bytes(n);
    out.push_back(std::move(input));
  }
  return out;
}

// The device memory plan of each device of a backend with memory of its own: every proving key
// resident, the matrices (the PCE estimate, when the backend evaluates them) and every worker
// slot's buffers and MSM workspace at the largest size, within the device's memory; refuses,
// naming the device, the circuits and the bytes.
void size_devices(const engine_config& cfg, const compute_backend& backend, const key_sizes& keys,
                  engine_sizing& out) {
  const std::vector<std::size_t> wanted = backend.device_key_copies_wanted();
  out.key_copies.copies = backend.device_key_copies();
  out.key_copies.source = !wanted.empty() ? "auto" : "configured";
  out.key_copies.reason = !wanted.empty() ? "no proving key goes to a device in this engine (results or backend)"
                                          : "as the backend was configured (msm_copies)";
  if (cfg.results != result_kind::proof || !backend.copies_to_device()) return;
  const auto inputs = [&](std::size_t copies) { return device_inputs(cfg, backend, keys, out.plan, copies); };
  if (!wanted.empty()) {
    // msm_copies auto: the fastest copies every device holds beside its slots, else one.
    out.key_copies = choose_device_key_copies(inputs, wanted);
    out.key_copies_auto = true;
    out.key_copies_fallback = out.key_copies.copies != wanted.front();
  }
  for (const device_memory_plan_input& input : inputs(out.key_copies.copies))
    out.device_plans.push_back(plan_device_memory(input));
}

}  // namespace

void check_config(const engine_config& cfg, const compute_backend* backend) {
  if (!backend) throw std::invalid_argument("engine: backend must not be null");
  if (backend->device_count() == 0) throw std::invalid_argument("engine: the backend has no devices");
  if (backend->worker_slots_per_device() == 0) throw std::invalid_argument("engine: the backend has no worker slots");
  if (cfg.policy == dispatch_policy::poll) {
    if (cfg.poll_interval.count() <= 0)
      throw std::invalid_argument("engine_config.poll_interval: must be positive for the poll policy");
    if (cfg.poll_queue_limit == 0)
      throw std::invalid_argument("engine_config.poll_queue_limit: must be at least 1 for the poll policy");
  }
  if (cfg.trace_max_events == 0) throw std::invalid_argument("engine_config.trace_max_events: must be positive");
  if (cfg.max_partitions_per_job == 0)
    throw std::invalid_argument("engine_config.max_partitions_per_job: must be at least 1");
  if (cfg.synthesizer_sends_assignment && !cfg.synthesizer)
    throw std::invalid_argument("engine_config.synthesizer_sends_assignment: set, but no synthesizer is configured");
  if (cfg.synthesizer_sends_assignment && !cfg.backend_spmv)
    throw std::invalid_argument(
        "engine_config.synthesizer_sends_assignment: needs backend_spmv (the backend evaluates the matrices)");
  try {
    r1cs::validate_circuit_parameters(cfg.plan_circuit, cfg.max_log_constraints);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("engine_config (plan_circuit / max_log_constraints): ") + e.what());
  }
  if (cfg.first_job_id == 0) throw std::invalid_argument("engine_config.first_job_id: must be at least 1");
}

engine_sizing size_engine(const engine_config& cfg, const compute_backend& backend, const key_sizes& keys) {
  check_config(cfg, &backend);
  engine_sizing out;
  out.devices = backend.device_count();
  out.slots = backend.worker_slots_per_device();
  out.synthesis_threads = threads_of(cfg);
  out.depth = cfg.depth_per_device;

  // The plan: every partition in flight holds a/b/c and h pinned and one synthesis working set
  // (and, proving, the MSMs' scratch); the proving keys are held once.
  const auto plan_circuit = r1cs::make_circuit(cfg.plan_circuit, cfg.max_log_constraints, 1, 0);
  // With the SpMV on the backend, a partition of a circuit whose PCE exists holds only its
  // assignment (in its `a` vector) and h; b and c are leased for the slow path, which under `wait`
  // is one partition a circuit. Two sets of them are planned; more wait for the pool. A configured
  // synthesizer that sends the assignment is planned the same way.
  out.plan_facts = facts_of(*plan_circuit);
  out.lean_inputs = cfg.backend_spmv && out.plan_facts.witness_fits &&
                    (cfg.synthesizer ? cfg.synthesizer_sends_assignment : cfg.pce == r1cs::pce_policy::wait);
  const auto plan_for = [&](std::size_t in_flight) {
    memory_plan_input plan_input = memory_plan_input_for(*plan_circuit, in_flight, in_flight, cfg.memory_budget_bytes);
    plan_input.key_bytes = std::max(keys.host_bytes, cfg.key_memory_bytes);  // key_memory_bytes: loads at run time
    // The proof's MSMs run on the backend: on the host backend in its worker slots (charged per
    // partition in flight, which bounds it), on a GPU in device memory (the device plan's).
    if (cfg.results == result_kind::proof && !backend.copies_to_device())
      plan_input.proving_working_set_bytes = groth16::estimate_prove_working_set(
          plan_circuit->shape().num_variables(), plan_circuit->domain_size());
    if (out.lean_inputs) {
      plan_input.input_vectors_per_slot = 1;
      plan_input.full_input_slots = 2;
    }
    if (cfg.backend_spmv) plan_input.backend_bytes = backend.host_working_bytes(plan_circuit->domain_size());
    return plan_memory(plan_input);
  };
  if (cfg.depth_per_device != 0) {
    out.depth_max = cfg.depth_per_device;
    out.plan = plan_for(out.depth_max * out.devices);
  } else {
    // Measured: the plan is sized for the most the depth may reach, what the CPU can use or, when
    // the budget does not hold that, the largest depth it does.
    depth_limits limits{out.devices, out.slots, out.synthesis_threads, 1};
    out.depth_max = depth_controller::cpu_limit(limits);
    out.depth_max_reason = "cpu";
    try {
      out.plan = plan_for(out.depth_max * out.devices);
    } catch (const memory_plan_error&) {
      std::size_t fits = 0, too_many = out.depth_max;
      while (too_many - fits > 1) {
        const std::size_t mid = fits + (too_many - fits) / 2;
        try {
          plan_for(mid * out.devices);
          fits = mid;
        } catch (const memory_plan_error&) {
          too_many = mid;
        }
      }
      if (fits == 0) throw;  // not even one partition a device: the error names the numbers
      out.depth_max = fits;
      out.depth_max_reason = "memory";
      out.plan = plan_for(out.depth_max * out.devices);
    }
    limits.plan_limit = out.depth_max;
    out.measured = limits;
    out.depth = depth_controller(limits).depth();
  }
  size_devices(cfg, backend, keys, out);
  if (cfg.prewarm_partitions > out.most_in_flight())
    throw std::invalid_argument("engine_config.prewarm_partitions: " + std::to_string(cfg.prewarm_partitions) +
                                " exceeds the partitions in flight (" + std::to_string(out.most_in_flight()) + ")");

  out.pool.capacity_bytes = out.plan.pinned_pool_bytes;
  // By default the pool is warmed for the most the depth may reach (what the plan charges), so a
  // measured depth that rises never page-locks on a partition's path: page-locking a buffer while
  // partitions run costs the run more than the buffers' memory, which the plan holds anyway.
  const std::size_t prewarm = cfg.prewarm_partitions == 0 ? out.most_in_flight() : cfg.prewarm_partitions;
  // Every vector the plan holds for `prewarm` partitions: a/b/c (or the assignment) and h, and with
  // one input vector a partition, the slow path's b and c sets too when all partitions prewarm (the
  // first partition of a circuit records its PCE on the slow path).
  out.pool.prewarm_count = prewarm * (out.plan.input_vectors_per_slot + 1) +
                           (prewarm >= out.most_in_flight() ? 2 * out.plan.full_input_slots : 0);
  out.pool.prewarm_bytes = out.plan.vector_bytes;
  if (cfg.pageable_fallback) out.pool.fallback = pinned::pool_config::fallback_policy::pageable;
  return out;
}

}  // namespace coprove::engine::detail
