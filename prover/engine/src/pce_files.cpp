// The constraint cache's files (see the header).
#include <coprove/engine/detail/pce_files.hpp>

#include <coprove/runtime/log.hpp>
#include <coprove/runtime/metrics.hpp>
#include <coprove/runtime/trace.hpp>

#include <boost/asio/post.hpp>

#include <cctype>
#include <exception>
#include <filesystem>
#include <system_error>

namespace coprove::engine::detail {
namespace {

std::uint64_t now_ns() { return runtime::trace_writer::now_ns(); }

double seconds_since(std::uint64_t start) { return static_cast<double>(now_ns() - start) / 1e9; }

// Counts what became of constraint-cache files, so that a rejected file (rebuilt at the cost of a
// slow synthesis) or a failed save shows in metrics as well as in the warning.
void count_pce_file(std::string_view outcome) {
  runtime::registry::global()
      .get_counter("coprove_engine_pce_cache_files_total",
                   "Constraint-cache files by outcome (loaded, rejected and rebuilt, saved, save_failed)",
                   {{"outcome", std::string(outcome)}})
      .inc();
}

}  // namespace

pce_files::pce_files(std::string dir, bool in_use, std::shared_ptr<r1cs::pce_cache> cache,
                     boost::asio::any_io_executor save_on)
    : dir_(std::move(dir)), in_use_(in_use), cache_(std::move(cache)), save_on_(std::move(save_on)) {}

std::string pce_files::file_of(const std::string& circuit_id) const {
  std::string name;
  for (char ch : circuit_id)
    name += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-') ? ch : '_';
  return (std::filesystem::path(dir_) / (name + ".pce")).string();
}

void pce_files::load(const std::string& circuit_id) {
  if (dir_.empty() || !in_use_) return;
  std::lock_guard lock(mutex_);
  if (entries_.count(circuit_id) != 0) return;
  pce_cache_entry& entry = entries_[circuit_id];
  entry.file = file_of(circuit_id);
  std::error_code ec;
  if (!std::filesystem::exists(entry.file, ec)) return;
  const std::uint64_t start = now_ns();
  try {
    cache_->load(entry.file);
    if (cache_->contains(circuit_id)) {
      entry.state = "loaded";
      entry.seconds = seconds_since(start);
      count_pce_file("loaded");
      COPROVE_LOG(info, "engine") << "constraint cache of " << circuit_id << " loaded from " << entry.file << " in "
                                  << entry.seconds * 1e3 << " ms";
      return;
    }
    COPROVE_LOG(warning, "engine") << "constraint cache file " << entry.file << " holds no PCE of " << circuit_id
                                   << ": rebuilt by its first partition and saved again";
  } catch (const std::exception& e) {
    COPROVE_LOG(warning, "engine") << "constraint cache file " << entry.file << " is unusable (" << e.what()
                                   << "): rebuilt by its first partition and saved again";
  }
  count_pce_file("rejected");
}

void pce_files::built(const std::string& circuit_id, std::uint64_t build_ns) {
  if (!in_use_ || !cache_->contains(circuit_id)) return;
  std::string file;
  {
    std::lock_guard lock(mutex_);
    pce_cache_entry& entry = entries_[circuit_id];
    if (entry.state == "built" || entry.state == "off") return;
    entry.seconds = static_cast<double>(build_ns) / 1e9;
    if (dir_.empty()) {
      entry.state = "off";
      return;
    }
    entry.state = "built";
    entry.file = file_of(circuit_id);
    file = entry.file;
  }
  // The task holds the cache, not this: it may outlive the engine (a configured executor).
  boost::asio::post(save_on_, [cache = cache_, circuit_id, file] {
    const std::uint64_t start = now_ns();
    try {
      std::filesystem::create_directories(std::filesystem::path(file).parent_path());
      cache->save(file, circuit_id);
      count_pce_file("saved");
      COPROVE_LOG(info, "engine") << "constraint cache of " << circuit_id << " saved to " << file << " in "
                                  << seconds_since(start) * 1e3 << " ms";
    } catch (const std::exception& e) {
      COPROVE_LOG(warning, "engine") << "constraint cache of " << circuit_id << " could not be saved to " << file
                                     << ": " << e.what() << " (the next process builds it again)";
      count_pce_file("save_failed");
    }
  });
}

std::map<std::string, pce_cache_entry> pce_files::entries() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, pce_cache_entry> out;
  for (const auto& [id, e] : entries_)
    if (!e.state.empty()) out.emplace(id, e);
  return out;
}

}  // namespace coprove::engine::detail
