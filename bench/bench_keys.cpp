// Loading a key directory: the first load, which tests every point (on the curve and in the
// subgroup) and records the check, beside the later loads, which verify the params' SHA-256
// against the record instead; and, for reference, params read as read_key_dir read it before
// records (groth16::read_params with every check, the file hashed again on a thread of its own for
// key.json); and the SHA-256 of params alone, the floor of a digest-verified load on one thread
// of hashing. Each round removes the record, then loads twice; the medians of --rounds rounds are
// printed side by side, each load's params time as a multiple of the digest-verified one's, and with
// --json PATH written as [{"case", "seconds" (read_key_dir in all), "params_seconds", "read_seconds",
// "check_seconds", "mb_per_s", "ratio", "params_bytes", "log_constraints", "threads"}].
//
// The key is a development-style key of a built-in circuit made once into --dir (default: a
// folder under the system's temporary directory, removed afterwards) from an insecure seed.
#include "keys.hpp"
#include "key_check_record.hpp"

#include <coprove/field/parallel.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/runtime/log.hpp>

#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace app = coprove::app;
namespace fs = std::filesystem;

double seconds_of(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct timings {
  std::vector<double> total, read, check;
  void add(const app::key_set& keys) {
    total.push_back(keys.load_seconds);
    read.push_back(keys.load.read_seconds);
    check.push_back(keys.load.check_seconds);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string circuit = "mimc";
  unsigned log_constraints = 16;
  int rounds = 3;
  std::string dir_flag, json_path;
  bool with_before = true;
  std::size_t threads = 0;
  coprove::bench::options("bench_keys", "a key directory's checked load beside its digest-verified load")
      .text("--circuit", circuit, "NAME", "the built-in circuit (default mimc)")
      .number("--log-constraints", log_constraints, "K", "the key's size, 2^K constraints (default 16)", 10u, 27u)
      .number("--rounds", rounds, "N", "rounds of (checked load, digest-verified load), medians kept (default 3)", 1, 100)
      .text("--dir", dir_flag, "DIR", "the key directory, made there when absent and kept (default: a temporary one)")
      .flag("--no-before", [&] { with_before = false; }, "leave out the load as it was before records")
      .number("--threads", threads, "N", "CPU threads for decoding and checking (default 0: all)", std::size_t{0},
              std::size_t{1024})
      .text("--json", json_path, "PATH", "write the rows as JSON")
      .parse(argc, argv);
  coprove::runtime::set_log_level(coprove::runtime::severity::warning);
  coprove::field::set_parallelism(threads);

  const bool temporary = dir_flag.empty();
  const fs::path dir = temporary ? fs::temp_directory_path() / ("bench_keys-" + circuit + "-" + std::to_string(log_constraints) +
                                                               "-" + std::to_string(::getpid()))
                                 : fs::path(dir_flag);
  struct remove_after {
    fs::path dir;
    bool remove;
    ~remove_after() {
      std::error_code ignored;
      if (remove) fs::remove_all(dir, ignored);
    }
  } cleanup{dir, temporary};
  try {
    if (!fs::exists(dir / app::key_json_file_name)) {
      app::key_options options;
      options.insecure_seed = 1;
      const double made = seconds_of([&] { (void)app::make_key_dir(circuit, log_constraints, dir, options); });
      std::printf("bench_keys: made the key of %s/%u in %s in %.1f s\n", circuit.c_str(), log_constraints,
                  dir.c_str(), made);
    }
    const std::uint64_t bytes = fs::file_size(dir / app::params_file_name);
    const fs::path record = dir / app::points_checked_file_name;

    timings checked, verified;
    std::vector<double> before, hashing;
    for (int r = 0; r < rounds; ++r) {
      fs::remove(record);
      const app::key_set first = app::read_key_dir(dir);
      const app::key_set second = app::read_key_dir(dir);
      if (!first.load.points_checked || !second.load.digest_verified) {
        std::fprintf(stderr, "bench_keys: the loads did not go as expected (first checked: %d, second digest-verified: %d)\n",
                     first.load.points_checked, second.load.digest_verified);
        return 2;
      }
      hashing.push_back(seconds_of([&] { (void)app::file_sha256(dir / app::params_file_name); }));
      checked.add(first);
      verified.add(second);
      if (with_before) {
        const auto& matrices = *first.matrices;
        const auto shape = coprove::groth16::key_shape::of(matrices);
        before.push_back(seconds_of([&] {
          // As read_key_dir read params before records: the SHA-256 on a thread of its own.
          auto sha256 = std::async(std::launch::async, [&] { return app::file_sha256(dir / app::params_file_name); });
          (void)coprove::groth16::read_params(dir / app::params_file_name, shape);
          (void)sha256.get();
        }));
      }
    }

    std::printf("bench_keys: %s/%u, params %.1f MiB, %zu threads, %d round(s) (medians)\n", circuit.c_str(),
                log_constraints, static_cast<double>(bytes) / (1 << 20), coprove::field::parallelism(), rounds);
    coprove::bench::report table({{"load", "case"},
                                  {"read_key_dir s", "seconds", 3},
                                  {"params s", "params_seconds", 3},
                                  {"read+decode s", "read_seconds", 3},
                                  {"subgroup s", "check_seconds", 3},
                                  {"params MB/s", "mb_per_s", 0},
                                  {"params s / digest's", "ratio", 2}});
    std::vector<double> verified_params;
    for (std::size_t i = 0; i < verified.read.size(); ++i) verified_params.push_back(verified.read[i] + verified.check[i]);
    const double digest_params_s = median(verified_params);
    const auto add = [&](const char* name, std::optional<double> seconds, double params_seconds, std::optional<double> read,
                         std::optional<double> check) {
      boost::json::object row{{"case", name},
                              {"params_seconds", params_seconds},
                              {"mb_per_s", static_cast<double>(bytes) / 1e6 / params_seconds},
                              {"ratio", params_seconds / digest_params_s},
                              {"params_bytes", bytes},
                              {"log_constraints", log_constraints},
                              {"threads", coprove::field::parallelism()}};
      if (seconds) row["seconds"] = *seconds;
      if (read) row["read_seconds"] = *read;
      if (check) row["check_seconds"] = *check;
      table.add(std::move(row));
    };
    std::vector<double> checked_params;
    for (std::size_t i = 0; i < checked.read.size(); ++i) checked_params.push_back(checked.read[i] + checked.check[i]);
    add("checked (first load)", median(checked.total), median(checked_params), median(checked.read), median(checked.check));
    add("digest verified (later)", median(verified.total), digest_params_s, median(verified.read), median(verified.check));
    add("SHA-256 of params alone (one thread)", std::nullopt, median(hashing), std::nullopt, std::nullopt);
    if (with_before) add("before records: read_params + SHA-256", std::nullopt, median(before), std::nullopt, std::nullopt);
    table.print();
    if (!json_path.empty() && !table.write_json(json_path, "bench_keys")) return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_keys: %s\n", e.what());
    return 2;
  }
  return 0;
}
