// The compute-backend interface's out-of-line anchor (its vtable lives here), the defaults of its
// matrices calls (a backend that reads the host's matrices holds none of its own) and the task
// check every backend applies.
#include <coprove/engine/compute_backend.hpp>

#include <stdexcept>
#include <string>

namespace coprove::engine {
using r1cs::pce_matrices;


compute_backend::~compute_backend() = default;

void compute_backend::prepare_matrices(std::size_t /*device*/,
                                       const std::shared_ptr<const pce_matrices>& /*matrices*/) {}

bool compute_backend::matrices_resident(std::size_t /*device*/, const pce_matrices& /*matrices*/) const { return true; }

std::size_t compute_backend::resident_matrices_bytes() const noexcept { return 0; }

void check_quotient_task(std::string_view backend, const quotient_task& task) {
  const std::string who(backend);
  if (task.domain == nullptr) throw std::invalid_argument(who + " backend: quotient task without a domain");
  const std::size_t n = task.domain->size();
  if (!task.matrices) {
    if (!task.witness.empty())
      throw std::invalid_argument(who + " backend: a quotient task with a witness needs its matrices");
    if (task.a.size() != n || task.b.size() != n || task.c.size() != n || task.h.size() != n)
      throw std::invalid_argument(who + " backend: quotient task spans must each hold " + std::to_string(n) +
                                  " elements");
    return;
  }
  const pce_matrices& m = *task.matrices;
  if (!task.a.empty() || !task.b.empty() || !task.c.empty())
    throw std::invalid_argument(who + " backend: a quotient task with matrices takes no a, b, c");
  if (task.h.size() != n)
    throw std::invalid_argument(who + " backend: the quotient task's h must hold " + std::to_string(n) + " elements");
  if (m.domain_size != n)
    throw std::invalid_argument(who + " backend: the matrices of " + m.circuit_id + " are for a domain of " +
                                std::to_string(m.domain_size) + " rows, the task's has " + std::to_string(n));
  if (task.witness.size() != m.num_inputs + m.num_aux)
    throw std::invalid_argument(who + " backend: the witness holds " + std::to_string(task.witness.size()) +
                                " values, the matrices of " + m.circuit_id + " have " +
                                std::to_string(m.num_inputs + m.num_aux) + " columns");
}

}  // namespace coprove::engine
