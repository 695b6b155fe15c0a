// Partitions synthesized once, ahead of a run, and copied in on request: a synthesizer for
// engine_config::synthesizer that takes synthesis off the critical path while every partition
// stays the exact partition of its request. It keeps either a, b, c (copied into all three) or,
// for a circuit whose PCE applies, only the assignment and the shared matrices (copied into a; the
// backend evaluates A w, B w, C w, as for a PCE hit). bench_pipeline replays with it to measure the
// dispatch and the devices with synthesis capacity above GPU demand, whatever the host's core count.
#pragma once

#include <coprove/engine/engine.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>

namespace coprove::test {
using field::fr;
using r1cs::deferred_synthesis;
using r1cs::pce_matrices;
using r1cs::synthesis_output;
using engine::prove_request;
using engine::synthesizer_fn;


/// What synthesis_replay::record keeps of a partition.
enum class replay_content {
  abc,         ///< a, b and c: replayed by copying three vectors
  assignment,  ///< the assignment and the circuit's PCE matrices, where they apply (else a, b, c)
};
std::string_view to_string(replay_content c) noexcept;

class synthesis_replay {
 public:
  /// Synthesizes partitions [0, request.partitions) of the request (through one PCE cache, on the
  /// shared parallel_for pool) and keeps them as `content` says. Throws std::invalid_argument as
  /// make_circuit would for a bad circuit or size; a partition recorded before is kept as it was.
  void record(const prove_request& request, replay_content content = replay_content::abc);

  /// Partitions held; of them, those held as an assignment; and the bytes of their vectors.
  std::size_t partitions() const noexcept { return entries_.size(); }
  std::size_t assignments() const noexcept { return assignments_; }
  std::size_t bytes() const noexcept { return bytes_; }

  /// Copies the recorded partition in, as a synthesizer_fn does: an assignment into the start of a
  /// (returning its matrices), or a, b, c into all three; with b and c empty, a partition held as
  /// a, b, c answers needs_abc and writes nothing. Throws std::out_of_range naming the partition
  /// when it was not recorded, and std::invalid_argument when the spans are not its domain size
  /// (nothing written then). Safe to call from several threads (the recording is read-only).
  deferred_synthesis replay(const prove_request& request, std::size_t partition, std::span<fr> a,
                            std::span<fr> b, std::span<fr> c) const;

  /// replay() as an engine_config::synthesizer; it shares the recording, so it may outlive this.
  synthesizer_fn synthesizer() const;

 private:
  struct entry {
    std::vector<fr> a, b, c;  // a alone holds the assignment when matrices is set
    std::shared_ptr<const pce_matrices> matrices;
    std::size_t n = 0;  // the domain size
    synthesis_output output;
  };
  using key = std::tuple<std::string, unsigned, std::uint64_t, std::size_t>;  // circuit, log n, seed, partition
  using table = std::map<key, std::shared_ptr<const entry>>;
  static deferred_synthesis copy_out(const table& entries, const prove_request& request, std::size_t partition,
                                     std::span<fr> a, std::span<fr> b, std::span<fr> c);

  table entries_;
  std::size_t assignments_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace coprove::test
