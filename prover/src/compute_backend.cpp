// The compute-backend interface's out-of-line anchor (its vtable lives here).
#include <coprove/prover/compute_backend.hpp>

namespace coprove::prover {

compute_backend::~compute_backend() = default;

}  // namespace coprove::prover
