// The memory plan: the one place where memory is accounted. From the budget (given, or the
// machine's available memory) and the circuit sizes it charges the pinned pool (slots x 3 x n x 32
// bytes of a/b/c inputs, or slots x 1 x n x 32 of assignments plus 2 x n x 32 for each slot set
// aside for a, b, c when the backend does the SpMV; plus slots x n x 32 bytes of outputs), the PCE
// cache, the synthesis working set times the synthesis concurrency, and a margin; it refuses to
// start when they do not fit.
// Each byte is counted once, here: the pinned pool never charges a budget of its own.
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace coprove::r1cs {
class circuit;
}  // namespace coprove::r1cs
namespace coprove::groth16 {
struct proving_key;
}  // namespace coprove::groth16
namespace coprove::engine {
using r1cs::circuit;

/// What the plan is computed from.
struct memory_plan_input {
  std::size_t budget_bytes = 0;                  ///< 0: MemAvailable from /proc/meminfo
  std::size_t pinned_slots = 0;                  ///< partitions in flight (each holds a/b/c and h)
  std::size_t domain_size = 0;                   ///< n, a power of two
  std::size_t synthesis_concurrency = 1;         ///< syntheses running at once
  std::size_t pce_bytes = 0;                     ///< the PCE cache (estimate_pce_bytes)
  std::size_t synthesis_working_set_bytes = 0;   ///< per synthesis (estimate_synthesis_working_set)
  std::size_t margin_bytes = std::size_t{256} << 20;  ///< held back for everything else
  /// Input vectors a partition in flight holds: 3 (a, b, c) or 1 (its assignment, when the backend
  /// does the SpMV and the assignment fits a vector).
  std::size_t input_vectors_per_slot = 3;
  /// With 1 input vector: partitions that may hold b and c as well at once (the slow path that
  /// records a PCE); more of them wait for the pool.
  std::size_t full_input_slots = 0;
  std::size_t backend_bytes = 0;  ///< host memory the compute backend holds (host_working_bytes)
  std::size_t key_bytes = 0;      ///< the proving keys held (groth16::proving_key::bytes, summed)
  /// Per partition in flight: the proof's MSM working memory (groth16::estimate_prove_working_set).
  std::size_t proving_working_set_bytes = 0;
};

/// The input filled from a circuit's shape: n, the PCE and working-set estimates.
memory_plan_input memory_plan_input_for(const circuit& c, std::size_t pinned_slots,
                                        std::size_t synthesis_concurrency,
                                        std::size_t budget_bytes = 0);

/// The budget split; every field in bytes unless named otherwise.
struct memory_plan {
  std::size_t budget_bytes = 0;
  bool budget_from_available_memory = false;  ///< budget read from /proc/meminfo
  std::size_t pinned_slots = 0;
  std::size_t domain_size = 0;
  std::size_t vector_bytes = 0;          ///< n x 32: one of a, b, c or h
  std::size_t input_vectors_per_slot = 3;  ///< 3: a, b, c; 1: the assignment (SpMV on the backend)
  std::size_t full_input_slots = 0;        ///< with 1: slots also holding b and c (the slow path)
  std::size_t pinned_input_bytes = 0;    ///< (slots x inputs per slot + full slots x 2) x n x 32
  std::size_t pinned_output_bytes = 0;   ///< slots x n x 32
  std::size_t pinned_pool_bytes = 0;     ///< inputs + outputs: the pool's capacity
  std::size_t pce_bytes = 0;
  std::size_t synthesis_concurrency = 0;
  std::size_t synthesis_working_set_bytes = 0;  ///< per synthesis
  std::size_t synthesis_bytes = 0;              ///< working set x concurrency
  std::size_t backend_bytes = 0;                ///< the compute backend's host memory
  std::size_t key_bytes = 0;                    ///< the proving keys
  std::size_t proving_working_set_bytes = 0;    ///< per partition in flight
  std::size_t proving_bytes = 0;                ///< proving working set x pinned slots
  std::size_t margin_bytes = 0;
  std::size_t total_bytes = 0;     ///< pinned pool + PCE + synthesis + backend + keys + proving + margin
  std::size_t headroom_bytes = 0;  ///< budget - total (0 when it does not fit)

  bool fits() const noexcept { return total_bytes <= budget_bytes; }
  /// A readable table, one line a component, with MiB figures.
  std::string describe() const;
  boost::json::object to_json() const;
};

/// The plan does not fit (or its numbers overflow); what() names the numbers.
class memory_plan_error : public std::runtime_error {
 public:
  memory_plan_error(const std::string& message, memory_plan plan);
  const memory_plan& plan() const noexcept { return plan_; }

 private:
  memory_plan plan_;
};

/// MemAvailable from /proc/meminfo in bytes; nullopt when it cannot be read.
std::optional<std::size_t> available_memory_bytes();

/// Computes the plan; throws std::invalid_argument on bad input (no slots, n not a power of two,
/// zero concurrency) and memory_plan_error when it does not fit the budget or the budget cannot
/// be determined.
memory_plan plan_memory(const memory_plan_input& input);

/// As plan_memory, with `available` standing in for /proc/meminfo when budget_bytes is 0.
memory_plan plan_memory(const memory_plan_input& input, std::optional<std::size_t> available);

/// Device memory a proving key takes when its points are resident on a device (affine, without the
/// infinity flag: 96 bytes a G1 point, 192 a G2 point).
std::size_t device_key_bytes(const groth16::proving_key& key) noexcept;
/// The same for a key of this shape before it is made (a, b_g1, b_g2 per variable, l per
/// auxiliary, n - 1 h points).
std::size_t device_key_bytes(std::size_t num_inputs, std::size_t num_aux, std::size_t domain_size) noexcept;

/// What one device's memory plan is computed from (a backend whose devices have memory of their
/// own; the keys of a host backend are charged in the host plan).
struct device_memory_plan_input {
  std::size_t device = 0;
  std::string device_name;
  std::size_t total_bytes = 0;     ///< the device's memory
  std::size_t in_use_bytes = 0;    ///< in use before the backend's (device_memory::in_use_at_start_bytes)
  std::size_t key_bytes = 0;       ///< the proving keys resident there (device_key_bytes, summed)
  std::string circuits;            ///< their circuits, for the message
  std::size_t matrices_bytes = 0;  ///< the circuits' matrices, when the backend evaluates them
  std::size_t slots = 0;           ///< worker slots of the device
  std::size_t slot_bytes = 0;      ///< per slot: buffers and MSM workspace (device_working_bytes)
  std::size_t shared_bytes = 0;    ///< once a device, shared by its slots (device_shared_bytes: NTT tables)
  std::size_t margin_bytes = std::size_t{1} << 30;  ///< the driver's later growth (kernels' local memory)
};

/// One device's plan: in use at start + keys + matrices + shared + slots x slot bytes + margin against
/// its memory.
struct device_memory_plan {
  device_memory_plan_input input;
  std::size_t slots_bytes = 0;  ///< slots x slot bytes
  std::size_t total_bytes = 0;  ///< in use + keys + matrices + shared + slots + margin (saturated on overflow)
  bool overflow = false;        ///< the sum could not be counted in a size_t

  bool fits() const noexcept { return !overflow && total_bytes <= input.total_bytes; }
  /// One line with MiB figures.
  std::string describe() const;
  boost::json::object to_json() const;
};

/// Computes one device's plan; throws std::runtime_error naming the device, the circuits and the
/// bytes when it does not fit (or its numbers overflow).
device_memory_plan plan_device_memory(const device_memory_plan_input& input);
/// The same figures without the refusal (fits() says).
device_memory_plan size_device_memory(const device_memory_plan_input& input) noexcept;

/// How many copies of each proving key's points the devices keep (the CUDA backend's shifted
/// copies for the MSM), and why.
struct device_key_copies_choice {
  std::size_t copies = 1;
  std::string source = "configured";  ///< "configured" (msm_copies set) or "auto"
  std::string reason;                 ///< one line: what fitted, or which device did not
  boost::json::object to_json() const;
};

/// The engine's choice when the backend leaves it to the device memory plan (msm_copies "auto"):
/// the first of `candidates` (the fastest first) for which every device's plan, computed with that
/// many copies (`inputs(copies)`, one input a device: keys charged `copies` times, the slots' bytes
/// at that many copies), fits; otherwise 1. The reason names, for each count passed over, the
/// first device that does not hold it, with its figures.
device_key_copies_choice choose_device_key_copies(
    const std::function<std::vector<device_memory_plan_input>(std::size_t copies)>& inputs,
    const std::vector<std::size_t>& candidates);

}  // namespace coprove::engine
