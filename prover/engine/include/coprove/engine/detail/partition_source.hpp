// Where a job's partitions come from. A source validates a request and prepares its job (the
// circuit's facts, the evaluation domain, the key), fills a partition's inputs on a synthesis
// thread, and says how the device treats them. One implementation a source: a built-in circuit
// through the constraint cache (circuit_source), the same with a configured synthesizer in place
// of the circuit (configured_source), and a circom circuit's zkey with one witness a partition
// (zkey_source). The engine picks one per request and never asks which it is.
#pragma once

#include <coprove/engine/detail/circuit_facts.hpp>
#include <coprove/engine/detail/job_table.hpp>
#include <coprove/engine/detail/key_registry.hpp>
#include <coprove/engine/detail/partition_inputs.hpp>
#include <coprove/engine/detail/partition_observer.hpp>
#include <coprove/engine/detail/partition_synthesis.hpp>
#include <coprove/engine/detail/pce_files.hpp>
#include <coprove/engine/quotient_task.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace coprove::engine::detail {

/// What a job takes from its source at submission.
struct prepared_job {
  circuit_facts facts;
  /// Null: the job table's domain of the request's size, taken once the job passes its checks.
  std::shared_ptr<const field::evaluation_domain> domain;
  std::shared_ptr<const key_entry> key;  ///< null when results are evaluation records
  std::shared_ptr<const groth16::zkey> zkey;  ///< a zkey circuit's key (its proofs' form and check)
};

class partition_source {
 public:
  virtual ~partition_source() = default;

  /// Throws std::invalid_argument naming the field when this source cannot prove the request.
  virtual void validate(const prove_request& request) const = 0;
  /// Completes the request (a zkey job's partitions and size come from its witnesses and key),
  /// validates it and prepares its job.
  virtual prepared_job prepare(prove_request& request) = 0;
  /// Its partitions most likely send only their assignment (they lease a and h alone).
  virtual bool sends_assignment(const job& j) const = 0;
  /// On a synthesis thread: partition `index`'s inputs into a, b, c (b and c empty while lean).
  /// `first_try` is false when the call repeats one that found the circuit's PCE being built. A
  /// failure is the outcome's error (or, for a witness, thrown).
  virtual synthesis_outcome synthesize(const job& j, std::size_t index, std::span<field::fr> a,
                                       std::span<field::fr> b, std::span<field::fr> c, std::uint32_t lane,
                                       bool first_try) const = 0;
  /// On the strand, once a partition's inputs are filled: records what it left behind (a PCE's
  /// file) and says which path it took.
  virtual synthesis_path synthesized(const job& j, const synthesis_outcome& s) = 0;
  /// The synthesis did something once that later ones do not (a PCE recorded): not a sample of
  /// the steady synthesis time for the measured depth.
  virtual bool one_off(const synthesis_outcome& s) const = 0;
  /// The device's quotient for the filled inputs: the assignment with the matrices, or the
  /// evaluations; in the form the source's proofs need.
  virtual quotient_task quotient(const job& j, std::size_t index, std::span<const field::fr> assignment,
                                 partition_inputs& inputs, const synthesis_outcome& s) const = 0;
};

/// The parts a source reads (the core's, for its lifetime).
struct source_parts {
  const engine_config& config;
  const key_registry& keys;
  job_table& jobs;
  r1cs::pce_cache& pce;
  pce_files& files;
};

/// A built-in circuit (r1cs::make_circuit) through the PCE cache, or, with
/// engine_config::synthesizer set, the configured synthesizer in its place.
std::unique_ptr<partition_source> make_circuit_source(source_parts parts);
/// A circom circuit from its zkey, one witness a partition.
std::unique_ptr<partition_source> make_zkey_source(source_parts parts);

}  // namespace coprove::engine::detail
