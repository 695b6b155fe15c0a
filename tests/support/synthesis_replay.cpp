// Recording partitions once and replaying them: a, b, c, or the assignment and its matrices.
#include <support/synthesis_replay.hpp>

#include <coprove/r1cs/circuits.hpp>
#include <coprove/field/parallel.hpp>
#include <coprove/r1cs/pce.hpp>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace coprove::test {
using field::fr;
using field::parallel_for;
using r1cs::deferred_synthesis;
using r1cs::make_circuit;
using r1cs::pce_cache;
using r1cs::validate_circuit_parameters;
using engine::prove_request;
using engine::synthesizer_fn;


std::string_view to_string(replay_content c) noexcept {
  switch (c) {
    case replay_content::abc:
      return "abc";
    case replay_content::assignment:
      return "assignment";
  }
  return "unknown";
}

void synthesis_replay::record(const prove_request& request, replay_content content) {
  validate_circuit_parameters(request.circuit, request.log_constraints);
  std::vector<std::size_t> missing;
  for (std::size_t p = 0; p < request.partitions; ++p)
    if (!entries_.contains({request.circuit, request.log_constraints, request.seed, p})) missing.push_back(p);
  if (missing.empty()) return;

  // One partition: as an assignment when the cache has the circuit's PCE to defer to, else as
  // a, b, c (the partition that builds the PCE, or a circuit whose assignment does not fit).
  pce_cache cache;
  auto synthesize = [&](std::size_t partition) {
    const auto circ = make_circuit(request.circuit, request.log_constraints, request.seed, partition);
    auto e = std::make_shared<entry>();
    e->n = circ->domain_size();
    e->a.resize(e->n);
    deferred_synthesis d;
    if (content == replay_content::assignment) d = cache.synthesize_deferred(*circ, e->a, {}, {});
    if (content == replay_content::abc || d.needs_abc) {
      e->b.resize(e->n);
      e->c.resize(e->n);
      if (content == replay_content::abc) {
        d = {};
        d.output = cache.synthesize(*circ, e->a, e->b, e->c);
      } else {
        d = cache.synthesize_deferred(*circ, e->a, e->b, e->c);
      }
    }
    if (d.matrices) {
      e->a.resize(d.assignment_size);
      e->a.shrink_to_fit();
      e->b = {};
      e->c = {};
      e->matrices = std::move(d.matrices);
    }
    e->output = std::move(d.output);
    return e;
  };

  // A partition a chunk on the shared pool; the first exception is rethrown and nothing of this
  // call is kept.
  std::vector<std::shared_ptr<entry>> made(missing.size());
  parallel_for(
      0, missing.size(),
      [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) made[i] = synthesize(missing[i]);
      },
      1);
  // The partitions that took the slow path (building the PCE) once more, now that it exists.
  if (content == replay_content::assignment)
    for (std::size_t i = 0; i < missing.size(); ++i)
      if (!made[i]->matrices) made[i] = synthesize(missing[i]);
  for (std::size_t i = 0; i < missing.size(); ++i) {
    const entry& e = *made[i];
    bytes_ += (e.a.size() + e.b.size() + e.c.size()) * sizeof(fr);
    if (e.matrices) ++assignments_;
    entries_.emplace(key{request.circuit, request.log_constraints, request.seed, missing[i]}, std::move(made[i]));
  }
}

deferred_synthesis synthesis_replay::copy_out(const table& entries, const prove_request& request,
                                              std::size_t partition, std::span<fr> a, std::span<fr> b,
                                              std::span<fr> c) {
  const auto it = entries.find({request.circuit, request.log_constraints, request.seed, partition});
  if (it == entries.end())
    throw std::out_of_range("synthesis replay: partition " + std::to_string(partition) + " of " + request.circuit +
                            "/" + std::to_string(request.log_constraints) + " seed " + std::to_string(request.seed) +
                            " was not recorded");
  const entry& e = *it->second;
  const std::size_t n = e.n;
  const bool only_a = b.empty() && c.empty();
  if (a.size() != n || (!only_a && (b.size() != n || c.size() != n)))
    throw std::invalid_argument("synthesis replay: a (and b and c, unless both are empty) must each hold " +
                                std::to_string(n) + " elements");
  deferred_synthesis out;
  if (e.matrices) {
    std::memcpy(a.data(), e.a.data(), e.a.size() * sizeof(fr));
    out.output = e.output;
    out.matrices = e.matrices;
    out.assignment_size = e.a.size();
    return out;
  }
  if (only_a) {
    out.needs_abc = true;
    return out;
  }
  std::memcpy(a.data(), e.a.data(), n * sizeof(fr));
  std::memcpy(b.data(), e.b.data(), n * sizeof(fr));
  std::memcpy(c.data(), e.c.data(), n * sizeof(fr));
  out.output = e.output;
  return out;
}

deferred_synthesis synthesis_replay::replay(const prove_request& request, std::size_t partition, std::span<fr> a,
                                            std::span<fr> b, std::span<fr> c) const {
  return copy_out(entries_, request, partition, a, b, c);
}

synthesizer_fn synthesis_replay::synthesizer() const {
  auto shared = std::make_shared<const table>(entries_);
  return [shared](const prove_request& request, std::size_t partition, std::span<fr> a, std::span<fr> b,
                  std::span<fr> c) { return copy_out(*shared, request, partition, a, b, c); };
}

}  // namespace coprove::test
