// Recording partitions once and replaying their a, b, c.
#include <coprove/prover/synthesis_replay.hpp>

#include <coprove/prover/circuits.hpp>
#include <coprove/prover/parallel.hpp>
#include <coprove/prover/pce.hpp>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace coprove::prover {

void synthesis_replay::record(const prove_request& request) {
  validate_circuit_parameters(request.circuit, request.log_constraints);
  std::vector<std::size_t> missing;
  for (std::size_t p = 0; p < request.partitions; ++p)
    if (!entries_.contains({request.circuit, request.log_constraints, request.seed, p})) missing.push_back(p);
  if (missing.empty()) return;

  // A partition a chunk on the shared pool; the first exception is rethrown and nothing of this
  // call is kept.
  pce_cache cache;
  std::vector<std::shared_ptr<entry>> made(missing.size());
  parallel_for(
      0, missing.size(),
      [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) {
          const auto circ = make_circuit(request.circuit, request.log_constraints, request.seed, missing[i]);
          const std::size_t n = circ->domain_size();
          auto e = std::make_shared<entry>();
          e->a.resize(n);
          e->b.resize(n);
          e->c.resize(n);
          e->output = cache.synthesize(*circ, e->a, e->b, e->c);
          made[i] = std::move(e);
        }
      },
      1);
  for (std::size_t i = 0; i < missing.size(); ++i) {
    bytes_ += 3 * made[i]->a.size() * sizeof(fr);
    entries_.emplace(key{request.circuit, request.log_constraints, request.seed, missing[i]}, std::move(made[i]));
  }
}

synthesis_output synthesis_replay::copy_out(const table& entries, const prove_request& request,
                                            std::size_t partition, std::span<fr> a, std::span<fr> b,
                                            std::span<fr> c) {
  const auto it = entries.find({request.circuit, request.log_constraints, request.seed, partition});
  if (it == entries.end())
    throw std::out_of_range("synthesis replay: partition " + std::to_string(partition) + " of " + request.circuit +
                            "/" + std::to_string(request.log_constraints) + " seed " + std::to_string(request.seed) +
                            " was not recorded");
  const entry& e = *it->second;
  const std::size_t n = e.a.size();
  if (a.size() != n || b.size() != n || c.size() != n)
    throw std::invalid_argument("synthesis replay: a, b and c must each hold " + std::to_string(n) + " elements");
  std::memcpy(a.data(), e.a.data(), n * sizeof(fr));
  std::memcpy(b.data(), e.b.data(), n * sizeof(fr));
  std::memcpy(c.data(), e.c.data(), n * sizeof(fr));
  return e.output;
}

synthesis_output synthesis_replay::replay(const prove_request& request, std::size_t partition, std::span<fr> a,
                                          std::span<fr> b, std::span<fr> c) const {
  return copy_out(entries_, request, partition, a, b, c);
}

synthesizer_fn synthesis_replay::synthesizer() const {
  auto shared = std::make_shared<const table>(entries_);
  return [shared](const prove_request& request, std::size_t partition, std::span<fr> a, std::span<fr> b,
                  std::span<fr> c) { return copy_out(*shared, request, partition, a, b, c); };
}

}  // namespace coprove::prover
