// The constraint cache's files on their own: a build is recorded and saved on the executor given
// (driven here with poll), a saved file loads into a fresh cache, a corrupt one is rejected and
// built again, and with no folder or a configured synthesizer nothing is written.
#include <coprove/engine/detail/pce_files.hpp>

#include <coprove/r1cs/circuits.hpp>

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include "engine_test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using coprove::engine::detail::pce_files;
using coprove::field::fr;
using coprove::r1cs::pce_cache;

using coprove::test::temp_dir;

// Synthesizes partition 0 of mimc/10 through the cache, which records its PCE; returns its id.
std::string build_pce(pce_cache& cache) {
  const auto circuit = coprove::r1cs::make_circuit("mimc", 10, 1, 0);
  std::vector<fr> a(circuit->domain_size()), b(a.size()), c(a.size());
  cache.synthesize(*circuit, a, b, c);
  REQUIRE(cache.contains(circuit->id()));
  return circuit->id();
}

}  // namespace

TEST_CASE("a built constraint cache is saved on the given executor and loads into a fresh cache",
          "[engine][pce_files][cpu]") {
  temp_dir dir;
  boost::asio::io_context io;
  auto cache = std::make_shared<pce_cache>();
  pce_files files((dir.path / "nested").string(), true, cache, io.get_executor());
  const std::string id = build_pce(*cache);
  files.load(id);  // no file yet: nothing recorded
  CHECK(files.entries().empty());

  files.built(id, 2'000'000'000);
  auto entries = files.entries();
  REQUIRE(entries.count(id) == 1);
  CHECK(entries.at(id).state == "built");
  CHECK(entries.at(id).seconds == Approx(2.0));
  CHECK(entries.at(id).file == files.file_of(id));
  CHECK(files.file_of(id).ends_with("mimc_10.pce"));
  CHECK_FALSE(std::filesystem::exists(files.file_of(id)));  // the save waits for the executor
  CHECK(io.poll() == 1);
  CHECK(std::filesystem::exists(files.file_of(id)));
  files.built(id, 1);  // once only
  CHECK(io.poll() == 0);

  auto fresh = std::make_shared<pce_cache>();
  pce_files again((dir.path / "nested").string(), true, fresh, io.get_executor());
  again.load(id);
  CHECK(fresh->contains(id));
  CHECK(again.entries().at(id).state == "loaded");
}

TEST_CASE("a corrupt constraint-cache file is rejected, built again and saved over", "[engine][pce_files][cpu]") {
  temp_dir dir;
  boost::asio::io_context io;
  auto cache = std::make_shared<pce_cache>();
  pce_files files(dir.path.string(), true, cache, io.get_executor());
  const std::string file = files.file_of("mimc/10");
  std::ofstream(file) << "not a constraint cache";
  files.load("mimc/10");
  CHECK_FALSE(cache->contains("mimc/10"));
  CHECK(files.entries().empty());
  const std::string id = build_pce(*cache);
  files.built(id, 1000);
  CHECK(files.entries().at(id).state == "built");
  CHECK(io.poll() == 1);
  auto fresh = std::make_shared<pce_cache>();
  pce_files again(dir.path.string(), true, fresh, io.get_executor());
  again.load(id);
  CHECK(again.entries().at(id).state == "loaded");
}

TEST_CASE("without a folder a build is recorded as off; with a configured synthesizer nothing is",
          "[engine][pce_files][cpu]") {
  boost::asio::io_context io;
  auto cache = std::make_shared<pce_cache>();
  const std::string id = build_pce(*cache);
  pce_files off("", true, cache, io.get_executor());
  off.load(id);
  off.built(id, 3000);
  CHECK(off.entries().at(id).state == "off");
  CHECK(off.entries().at(id).file.empty());
  CHECK(io.poll() == 0);

  temp_dir dir;
  pce_files unused(dir.path.string(), false, cache, io.get_executor());
  unused.load(id);
  unused.built(id, 3000);
  CHECK(unused.entries().empty());
  CHECK(io.poll() == 0);
  CHECK(std::filesystem::is_empty(dir.path));
}
