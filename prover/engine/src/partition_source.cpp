// The partition sources (see the header): a built-in circuit, the same with a configured
// synthesizer, and a zkey with its witnesses.
#include <coprove/engine/detail/partition_source.hpp>

#include <coprove/groth16/prover.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/runtime/trace.hpp>

#include <algorithm>
#include <stdexcept>

namespace coprove::engine::detail {
namespace {

using field::fr;

// The evaluations' or the assignment's quotient, evaluated at the partition's zeta: it depends
// only on the request, the partition and its public inputs (checked when the device is done).
quotient_task quotient_at_zeta(const job& j, std::size_t index, std::span<const fr> assignment,
                               partition_inputs& inputs, const synthesis_outcome& s) {
  quotient_task task = s.matrices ? quotient_task::from_assignment(assignment, s.matrices, *j.domain)
                                  : quotient_task::from_evaluations(inputs.a_span(), inputs.b_span(),
                                                                    inputs.c_span(), *j.domain);
  task.evaluate_at(field::derive_partition_zeta(j.request.circuit, j.request.log_constraints, j.request.seed, index,
                                                s.output.public_inputs));
  return task;
}

class circuit_source : public partition_source {
 public:
  explicit circuit_source(source_parts parts) : parts_(parts) {}

  void validate(const prove_request& request) const override {
    const engine_config& cfg = parts_.config;
    if (request.witnesses)
      throw std::invalid_argument("witnesses: given, but " + request.circuit + " is not a zkey circuit of the engine");
    r1cs::validate_circuit_parameters(request.circuit, request.log_constraints);
    if (cfg.results == result_kind::proof && !parts_.keys.find(request.circuit, request.log_constraints))
      throw std::invalid_argument("circuit: no proving key for " + key_name(request.circuit, request.log_constraints) +
                                  "; the engine has keys for " + parts_.keys.names());
    if (request.log_constraints > cfg.max_log_constraints)
      throw std::invalid_argument("log_constraints: " + std::to_string(request.log_constraints) +
                                  " exceeds the memory plan's " + std::to_string(cfg.max_log_constraints) +
                                  " (engine_config.max_log_constraints)");
    if (request.partitions == 0) throw std::invalid_argument("partitions: must be at least 1");
    if (cfg.max_open_partitions != 0 && request.partitions > cfg.max_open_partitions)
      throw std::invalid_argument("partitions: " + std::to_string(request.partitions) +
                                  " exceeds the unfinished partitions the engine holds at most, " +
                                  std::to_string(cfg.max_open_partitions) + " (engine_config.max_open_partitions)");
    if (request.partitions > cfg.max_partitions_per_job)
      throw std::invalid_argument("partitions: " + std::to_string(request.partitions) + " exceeds the limit of " +
                                  std::to_string(cfg.max_partitions_per_job) +
                                  " (engine_config.max_partitions_per_job)");
  }

  // The circuit's facts are remembered per size (building the circuit once) and its constraint
  // cache's file loaded the first time it is met.
  prepared_job prepare(prove_request& request) override {
    validate(request);
    prepared_job out;
    std::optional<circuit_facts> facts = parts_.jobs.facts(request.circuit, request.log_constraints);
    out.facts = facts ? *facts : facts_of(*r1cs::make_circuit(request.circuit, request.log_constraints, request.seed, 0));
    parts_.files.load(out.facts.id);
    if (parts_.config.results == result_kind::proof) out.key = parts_.keys.find(request.circuit, request.log_constraints);
    parts_.jobs.remember_facts(request.circuit, request.log_constraints, out.facts);
    return out;
  }

  bool sends_assignment(const job& j) const override { return parts_.pce.expects_deferral(j.circuit_id); }

  synthesis_outcome synthesize(const job& j, std::size_t index, std::span<fr> a, std::span<fr> b, std::span<fr> c,
                               std::uint32_t lane, bool first_try) const override {
    return synthesize_partition(parts_.config, parts_.pce, j.id, j.request, index, a, b, c, lane, first_try);
  }

  synthesis_path synthesized(const job& j, const synthesis_outcome& s) override {
    if (s.output.pce_used) return synthesis_path::pce;
    parts_.files.built(j.circuit_id, s.end - s.start);
    return synthesis_path::slow;
  }

  bool one_off(const synthesis_outcome& s) const override { return !s.output.pce_used; }

  quotient_task quotient(const job& j, std::size_t index, std::span<const fr> assignment, partition_inputs& inputs,
                         const synthesis_outcome& s) const override {
    return quotient_at_zeta(j, index, assignment, inputs, s);
  }

 protected:
  source_parts parts_;
};

// A built-in circuit's requests with the configured synthesizer filling a, b, c (checked by
// synthesize_partition): no constraint cache is built, and its partitions send the assignment
// when it says it does (planned lean by the sizing).
class configured_source final : public circuit_source {
 public:
  using circuit_source::circuit_source;
  bool sends_assignment(const job&) const override { return true; }
  synthesis_path synthesized(const job&, const synthesis_outcome&) override { return synthesis_path::configured; }
  bool one_off(const synthesis_outcome&) const override { return false; }
};

// A zkey circuit: its witness instead of a synthesis. Only the assignment goes to a backend that
// evaluates the matrices when it fits `a`; otherwise A w and B w are evaluated here into a and b
// (the leased set is full then) and the witness is kept for the proof. Its quotient is snarkjs's
// (odd coset, no C, no evaluation at zeta: the proof is the check).
class zkey_source final : public partition_source {
 public:
  explicit zkey_source(source_parts parts) : parts_(parts) {}

  void validate(const prove_request& request) const override {
    const std::shared_ptr<const zkey_entry> z = zkey_of(request);
    if (!request.witnesses || request.witnesses->empty())
      throw std::invalid_argument("witnesses: " + request.circuit +
                                  " is a zkey circuit; each partition needs its witness");
    if (request.witnesses->size() > parts_.config.max_partitions_per_job)
      throw std::invalid_argument("witnesses: " + std::to_string(request.witnesses->size()) + " exceed the limit of " +
                                  std::to_string(parts_.config.max_partitions_per_job) +
                                  " (engine_config.max_partitions_per_job)");
    for (std::size_t i = 0; i < request.witnesses->size(); ++i) {
      const auto& w = (*request.witnesses)[i];
      if (w.size() != z->key->num_variables())
        throw std::invalid_argument("witnesses: witness " + std::to_string(i) + " has " + std::to_string(w.size()) +
                                    " values, " + request.circuit + " " + std::to_string(z->key->num_variables()) +
                                    " signals (a witness of another circuit)");
      if (w[0] != fr::one())
        throw std::invalid_argument("witnesses: witness " + std::to_string(i) +
                                    " does not start with the constant one");
    }
  }

  // A partition holds its witness (given), a, b and h (leased) and the proof's scratch; the
  // assignment goes to the backend alone when it fits one vector of the domain.
  prepared_job prepare(prove_request& request) override {
    const std::shared_ptr<const zkey_entry> z = zkey_of(request);
    if (request.witnesses) {
      request.partitions = request.witnesses->size();
      request.log_constraints = z->domain->log_size();
    }
    validate(request);
    prepared_job out;
    out.facts = circuit_facts{1, z->key->matrices->circuit_id, z->key->num_variables() <= z->domain->size()};
    out.domain = z->domain;
    out.key = z->keys;
    out.zkey = z->key;
    return out;
  }

  bool sends_assignment(const job&) const override { return true; }

  synthesis_outcome synthesize(const job& j, std::size_t index, std::span<fr> a, std::span<fr> b, std::span<fr>,
                               std::uint32_t lane, bool) const override {
    synthesis_outcome out;
    out.lane = lane;
    out.start = runtime::trace_writer::now_ns();
    const std::vector<fr>& w = (*j.request.witnesses)[index];
    out.output.public_inputs.assign(w.begin() + 1, w.begin() + 1 + static_cast<std::ptrdiff_t>(j.zkey->num_public));
    if (parts_.config.backend_spmv && j.witness_fits) {
      std::copy(w.begin(), w.end(), a.begin());
      out.matrices = j.zkey->matrices;
      out.assignment_size = w.size();
    } else if (b.empty()) {
      out.needs_abc = true;
    } else {
      std::vector<fr> c(a.size());
      j.zkey->matrices->evaluate(w, a, b, c);
      out.assignment = w;
    }
    out.end = runtime::trace_writer::now_ns();
    return out;
  }

  synthesis_path synthesized(const job&, const synthesis_outcome&) override { return synthesis_path::witness; }

  bool one_off(const synthesis_outcome&) const override { return true; }

  quotient_task quotient(const job& j, std::size_t, std::span<const fr> assignment, partition_inputs& inputs,
                         const synthesis_outcome& s) const override {
    quotient_task task = s.matrices ? quotient_task::from_assignment(assignment, s.matrices, *j.domain)
                                    : quotient_task::from_evaluations(inputs.a_span(), inputs.b_span(),
                                                                      std::span<const fr>{}, *j.domain);
    task.in_odd_coset_form();
    return task;
  }

 private:
  std::shared_ptr<const zkey_entry> zkey_of(const prove_request& request) const {
    auto z = parts_.keys.find_zkey(request.circuit);
    if (!z) throw std::invalid_argument("circuit: " + request.circuit + " is not a zkey circuit of the engine");
    return z;
  }

  source_parts parts_;
};

}  // namespace

std::unique_ptr<partition_source> make_circuit_source(source_parts parts) {
  if (parts.config.synthesizer) return std::make_unique<configured_source>(parts);
  return std::make_unique<circuit_source>(parts);
}

std::unique_ptr<partition_source> make_zkey_source(source_parts parts) { return std::make_unique<zkey_source>(parts); }

}  // namespace coprove::engine::detail
