// Partitions synthesized once, ahead of a run, and copied into a, b, c on request: a synthesizer
// for engine_config::synthesizer that takes synthesis off the critical path while every partition
// stays the exact a, b, c of its request. bench_pipeline replays with it to measure the dispatch
// and the devices with synthesis capacity above GPU demand, whatever the host's core count.
#pragma once

#include <coprove/prover/engine.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace coprove::prover {

class synthesis_replay {
 public:
  /// Synthesizes partitions [0, request.partitions) of the request (through one PCE cache, on the
  /// shared parallel_for pool) and keeps their a, b, c. Throws std::invalid_argument as
  /// make_circuit would for a bad circuit or size; a partition recorded before is kept, not redone.
  void record(const prove_request& request);

  /// Partitions held, and the bytes of their a, b, c.
  std::size_t partitions() const noexcept { return entries_.size(); }
  std::size_t bytes() const noexcept { return bytes_; }

  /// Copies the recorded partition into a, b, c. Throws std::out_of_range naming the partition
  /// when it was not recorded, and std::invalid_argument when the spans are not its domain size;
  /// nothing is written then. Safe to call from several threads (the recording is read-only).
  synthesis_output replay(const prove_request& request, std::size_t partition, std::span<fr> a,
                          std::span<fr> b, std::span<fr> c) const;

  /// replay() as an engine_config::synthesizer; it shares the recording, so it may outlive this.
  synthesizer_fn synthesizer() const;

 private:
  struct entry {
    std::vector<fr> a, b, c;
    synthesis_output output;
  };
  using key = std::tuple<std::string, unsigned, std::uint64_t, std::size_t>;  // circuit, log n, seed, partition
  using table = std::map<key, std::shared_ptr<const entry>>;
  static synthesis_output copy_out(const table& entries, const prove_request& request, std::size_t partition,
                                   std::span<fr> a, std::span<fr> b, std::span<fr> c);

  table entries_;
  std::size_t bytes_ = 0;
};

}  // namespace coprove::prover
