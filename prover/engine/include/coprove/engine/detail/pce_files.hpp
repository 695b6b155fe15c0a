// The constraint cache's files: each circuit's PCE loaded from <dir>/<circuit id>.pce once, the
// first time the engine meets the circuit, and saved there once its first partition has built it
// (on the executor given, off the partition's path); what became of each file is kept for the
// status and counted in coprove_engine_pce_cache_files_total{outcome}. A missing file is built; an
// unusable one is rebuilt and saved again (said at warning).
#pragma once

#include <coprove/engine/engine_report.hpp>
#include <coprove/r1cs/pce.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace coprove::engine::detail {

/// Thread-safe: load() runs on a submitter's thread, built() on the strand, entries() anywhere.
class pce_files {
 public:
  /// `dir` empty: no file is read or written (built() still records how long a build took, as
  /// "off"). `in_use` false (partitions come from a configured synthesizer, not their circuits):
  /// nothing is loaded, saved or recorded. Saves run on `save_on` and hold the cache, not this.
  pce_files(std::string dir, bool in_use, std::shared_ptr<r1cs::pce_cache> cache,
            boost::asio::any_io_executor save_on);

  /// Loads the circuit's file into the cache, once (later calls return at once); holds a lock
  /// while it reads, so that each file is read once.
  void load(const std::string& circuit_id);

  /// After a slow-path synthesis that took `build_ns`: when it left the circuit's PCE in the cache
  /// and none was recorded as built yet (a first build, or a rebuild of a rejected file), records
  /// the time and saves the file.
  void built(const std::string& circuit_id, std::uint64_t build_ns);

  /// Per circuit id, the files that were loaded, built or rejected (not the ones merely looked for).
  std::map<std::string, pce_cache_entry> entries() const;

  /// The file of a circuit id: anything but letters, digits, '.', '-' becomes '_'.
  std::string file_of(const std::string& circuit_id) const;

  const std::string& dir() const noexcept { return dir_; }

 private:
  std::string dir_;
  bool in_use_ = true;
  std::shared_ptr<r1cs::pce_cache> cache_;
  boost::asio::any_io_executor save_on_;
  mutable std::mutex mutex_;  // held while a file loads
  std::map<std::string, pce_cache_entry> entries_;
};

}  // namespace coprove::engine::detail
