// The compute-backend interface's out-of-line anchor (its vtable lives here), the defaults of its
// matrices calls (a backend that reads the host's matrices holds none of its own), the check every
// backend applies to a task, and what an abandoned completion does.
#include <coprove/engine/compute_backend.hpp>

#include <coprove/runtime/error.hpp>

#include <stdexcept>
#include <string>

namespace coprove::engine {
using r1cs::pce_matrices;


compute_backend::~compute_backend() = default;

void compute_backend::prepare_matrices(std::size_t /*device*/,
                                       const std::shared_ptr<const pce_matrices>& /*matrices*/) {}

bool compute_backend::matrices_resident(std::size_t /*device*/, const pce_matrices& /*matrices*/) const { return true; }

std::size_t compute_backend::resident_matrices_bytes() const noexcept { return 0; }

void compute_backend::prepare_key(std::size_t /*device*/, const std::shared_ptr<const groth16::proving_key>& /*key*/,
                                  std::string_view /*circuit*/) {}

bool compute_backend::key_resident(std::size_t /*device*/, const groth16::proving_key& /*key*/) const { return true; }

std::size_t compute_backend::resident_key_bytes() const noexcept { return 0; }

std::optional<device_memory> compute_backend::device_memory_of(std::size_t /*device*/) const { return std::nullopt; }

void compute_backend::settle_device_key_copies(std::size_t copies) {
  throw std::logic_error("compute backend " + std::string(name()) + ": its copies of a key's points are fixed (asked to settle " +
                         std::to_string(copies) + ")");
}

std::size_t compute_backend::device_working_bytes(std::size_t /*n*/, std::size_t /*variables*/,
                                                  std::size_t /*key_copies*/) const noexcept {
  return 0;
}

std::size_t compute_backend::device_shared_bytes(std::size_t /*n*/) const noexcept { return 0; }

void quotient_completion::abandon() noexcept {
  // A backend that lets go of an operation without completing it: the caller must not wait forever.
  complete(runtime::make_error_code(runtime::errc::shut_down), {});
}

std::string_view to_string(quotient_stage stage) noexcept {
  switch (stage) {
    case quotient_stage::upload_evaluations: return "upload_evaluations";
    case quotient_stage::upload_assignment: return "upload_assignment";
    case quotient_stage::spmv: return "spmv";
    case quotient_stage::quotient: return "quotient";
    case quotient_stage::evaluate_at_zeta: return "evaluate_at_zeta";
    case quotient_stage::copy_h_to_host: return "copy_h_to_host";
    case quotient_stage::proof_msms: return "proof_msms";
  }
  return "unknown";
}

void check_quotient_task(std::string_view backend, const quotient_task& task) {
  const std::string who = std::string(backend) + " backend: ";
  const auto refuse = [&](const std::string& why) { throw std::invalid_argument(who + why); };
  const auto has = [&](quotient_stage s) { return task.stages.contains(s); };
  if (task.domain == nullptr) refuse("quotient task without a domain");
  const std::size_t n = task.domain->size();
  const std::string elements = std::to_string(n) + " elements";

  if (has(quotient_stage::upload_evaluations) == has(quotient_stage::upload_assignment))
    refuse("a quotient task uploads either its evaluations or its assignment");
  if (!has(quotient_stage::quotient)) refuse("a quotient task without the quotient stage");
  if (has(quotient_stage::spmv) != has(quotient_stage::upload_assignment))
    refuse("a quotient task evaluates its matrices exactly when it uploads its assignment");

  const bool odd_coset = task.form == field::quotient_form::odd_coset_evaluations;
  if (odd_coset && has(quotient_stage::evaluate_at_zeta))
    refuse("a quotient task in the odd-coset form cannot be evaluated at zeta");
  if (has(quotient_stage::upload_evaluations)) {
    if (!task.witness.empty() && !has(quotient_stage::proof_msms))
      refuse("a quotient task with a witness needs its matrices or the proof's MSMs");
    if (task.matrices) refuse("a quotient task with a, b, c takes no matrices");
    if (odd_coset) {
      if (task.a.size() != n || task.b.size() != n || !task.c.empty())
        refuse("a quotient task in the odd-coset form takes a and b of " + elements + " each and no c");
    } else if (task.a.size() != n || task.b.size() != n || task.c.size() != n) {
      refuse("quotient task spans a, b, c must each hold " + elements);
    }
  } else {
    if (!task.matrices) refuse("a quotient task with a witness needs its matrices");
    const pce_matrices& m = *task.matrices;
    if (!task.a.empty() || !task.b.empty() || !task.c.empty()) refuse("a quotient task with matrices takes no a, b, c");
    if (m.domain_size != n)
      refuse("the matrices of " + m.circuit_id + " are for a domain of " + std::to_string(m.domain_size) +
             " rows, the task's has " + std::to_string(n));
    if (odd_coset && m.c.nonzeros() != 0)
      refuse("the matrices of " + m.circuit_id + " have a C, which the odd-coset form does not read");
    if (task.witness.size() != m.num_inputs + m.num_aux)
      refuse("the witness holds " + std::to_string(task.witness.size()) + " values, the matrices of " + m.circuit_id +
             " have " + std::to_string(m.num_inputs + m.num_aux) + " columns");
  }

  if (has(quotient_stage::proof_msms)) {
    if (!task.key) refuse("a quotient task with the proof's MSMs needs the proving key");
    const groth16::proving_key& pk = *task.key;
    if (pk.domain_size() != n)
      refuse("the proving key is for a domain of " + std::to_string(pk.domain_size()) + " rows, the task's has " +
             std::to_string(n));
    if (pk.h_form != task.form) refuse("the proving key's H points expect the other quotient form");
    if (task.witness.size() != pk.num_variables())
      refuse("the witness holds " + std::to_string(task.witness.size()) + " values, the proving key " +
             std::to_string(pk.num_variables()) + " variables");
    if (pk.b_g1.size() != pk.num_variables() || pk.b_g2.size() != pk.num_variables() ||
        pk.l.size() + pk.num_inputs() != pk.num_variables())
      refuse("the proving key's A, B and L queries do not agree on the number of variables");
  } else if (task.key) {
    refuse("a quotient task without the proof's MSMs takes no proving key");
  }

  if (has(quotient_stage::copy_h_to_host)) {
    if (task.h.size() != n) refuse("the quotient task's h must hold " + elements);
  } else if (!task.h.empty()) {
    refuse("a quotient task that does not copy h to the host takes no h");
  }
}

}  // namespace coprove::engine
