// bench_pipeline: the three dispatch policies (semaphore, poll, unbounded) side by side in one run,
// each on a fresh engine with the same memory plan: partitions/s, device busy fraction, maximum
// concurrent syntheses, pinned pool allocations vs reuses, H2D GB/s and p50/p99 partition latency
// (admission to verified record). The default configuration is sized for a CPU machine (host
// backend); --h200 runs the CUDA backend at 2^24 constraints a partition, 16 partitions a job.
// --synthesis replay synthesizes each partition once before the runs and has the engine copy it
// into the pinned buffers instead of synthesizing it (every job then proves the same partitions):
// synthesis capacity is then far above GPU demand, so the dispatch and the devices are what is
// measured, whatever the host's core count. --synthesis replay-assignment keeps only each
// partition's assignment and copies that into its pinned `a` (the device evaluates the matrices, as
// for a PCE hit, and partitions lease two vectors): the pipeline as it runs with a PCE, less the
// witness computation. --depths measured,8,16,... runs the semaphore policy once per depth instead of
// the policies ("measured" leaves engine.depth_per_device unset) and reports the measured depth's
// steady-state throughput against the best fixed depth of the same call, and its steady busy.
// --proofs makes every partition a Groth16 proof (the five MSMs on the backend, the blinding and the
// check on the CPU) with a key from a seeded setup made before the runs (for benchmarks only),
// instead of ending at the quotient's evaluation record.
#include <coprove/engine/engine.hpp>
#include <coprove/engine/host_backend.hpp>
#include <support/synthesis_replay.hpp>
#include <support/test_keys.hpp>

#include "support/options.hpp"

#include <coprove/runtime/log.hpp>
#include <coprove/runtime/spin_runner.hpp>
#include <coprove/runtime/trace.hpp>
#ifdef COPROVE_HAVE_CUDA
#include <coprove/cuda/cuda_backend.hpp>
#endif

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

#ifdef COPROVE_HAVE_CUDA
namespace cuda = coprove::cuda;
#endif
namespace runtime = coprove::runtime;
using namespace coprove::field;
using namespace coprove::r1cs;
using namespace coprove::engine;
using coprove::test::replay_content;
using coprove::test::synthesis_replay;

struct options {
  bool h200 = false;
  unsigned log_n = 13;
  std::size_t jobs = 3;
  std::size_t partitions = 8;
  std::size_t devices = 1;  // host backend: simulated devices; CUDA: the first N GPUs (0 = all)
  std::size_t slots = 3;
  unsigned msm_copies = 1;  ///< copies of each key's points on the device (--msm-copies, --h200 only)
  std::size_t synthesis_threads = 0;
  std::size_t depth = 0;  // per device; 0: measured (the engine's default)
  std::vector<std::size_t> depths;  // --depths: semaphore runs, one per depth (0: measured)
  std::size_t budget_gib = 0;  // 0: the plan reads available memory
  std::size_t rounds = 1;  // each round runs every policy once, starting one policy later each round
  std::string circuit = "mimc";
  bool replay = false;  // --synthesis replay or replay-assignment
  replay_content replayed = replay_content::abc;
  bool backend_spmv = true;  // --spmv backend|host
  bool proofs = false;       // --proofs: Groth16 proofs instead of evaluation records
  std::shared_ptr<const coprove::groth16::proving_key> key;  // with --proofs, made before the runs
  std::string json_path;
  std::string trace_prefix;
  std::vector<dispatch_policy> policies{dispatch_policy::semaphore, dispatch_policy::poll, dispatch_policy::unbounded};
};

options parse(int argc, char** argv) {
  options o;
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (std::find(args.begin(), args.end(), "--h200") != args.end()) {  // its defaults, whatever comes after
    o.h200 = true;
    o.log_n = 24;
    o.partitions = 16;
    o.jobs = 4;
    o.devices = 0;
  }
  constexpr std::size_t most = std::size_t{1} << 32;
  std::string synthesis = "circuit", spmv = "backend";
  std::vector<std::string> policies;
  coprove::bench::options cli("bench_pipeline", "the dispatch policies side by side on the engine's pipeline");
  cli.flag("--h200", o.h200, "the CUDA backend, 2^24 constraints, 16 partitions x 4 jobs (any NVIDIA card)")
      .number("--log-n", o.log_n, "N", "log2 constraints a partition (default 13; --h200 24)", 1u, 30u)
      .number("--jobs", o.jobs, "N", "jobs a run (default 3; --h200 4)", std::size_t{1}, most)
      .number("--partitions", o.partitions, "N", "partitions a job (default 8; --h200 16)", std::size_t{1}, most)
      .number("--devices", o.devices, "N", "devices (host: simulated, default 1; CUDA: the first N, 0 = all)",
              std::size_t{0}, std::size_t{1024})
      .number("--slots", o.slots, "N", "worker slots a device (default 3)", std::size_t{1}, std::size_t{1024})
      .number("--depth", o.depth, "N", "partitions in flight a device (default 0: measured)", std::size_t{0}, most)
      .number("--synthesis-threads", o.synthesis_threads, "N", "synthesis threads (default 0: the engine's)",
              std::size_t{0}, std::size_t{4096})
      .number("--budget-gib", o.budget_gib, "N", "the memory plan's budget (default 0: available memory)",
              std::size_t{0}, most)
      .text("--circuit", o.circuit, "NAME", "the circuit (default mimc)")
      .names("--policies", policies, {"semaphore", "poll", "unbounded"}, "the policies run (default all three)")
      .value("--depths", "measured,N,...", "the semaphore policy once per depth instead of the policies",
             [&](const std::string& v) {
               o.depths.clear();
               for (const std::string& item : coprove::bench::parse_items("--depths", v))
                 o.depths.push_back(item == "measured" ? 0 : coprove::bench::parse_list("--depths", item, std::size_t{0}, most)[0]);
             })
      .number("--rounds", o.rounds, "N", "run the variants N times, rotating which goes first (default 1)",
              std::size_t{1}, std::size_t{1000})
      .choice("--synthesis", synthesis, {"circuit", "replay", "replay-assignment"},
              "synthesize each partition, or replay partitions synthesized once before the runs")
      .choice("--spmv", spmv, {"backend", "host"}, "where A w, B w, C w are evaluated (default backend)")
      .flag("--proofs", o.proofs, "every partition ends with a Groth16 proof (MSMs on the backend)")
      .value("--msm-copies", "N|auto", "with --h200: copies of each key's points on the device (default 1)",
             [&](const std::string& v) {
               o.msm_copies = v == "auto" ? 0 : coprove::bench::parse_list("--msm-copies", v, 1u, 64u)[0];
             })
      .text("--trace", o.trace_prefix, "PREFIX", "write each run's trace to PREFIX<variant>[-round<R>].json")
      .text("--json", o.json_path, "PATH", "write the runs and the summary as JSON")
      .note("  --rounds: each variant's median over the rounds is reported (drift of the machine hits all alike)")
      .note("  --synthesis replay: all jobs prove the same partitions: the dispatch and the devices are measured")
      .note("      with synthesis capacity above GPU demand; replay-assignment keeps only each partition's")
      .note("      assignment (the device evaluates the matrices, as for a PCE hit)")
      .note("  --depths: measured leaves the depth to the engine; the summary sets it against the best fixed depth")
      .note("  --msm-copies auto: 13 where the device memory plan holds them, else 12, else 1 (coprove's default)")
      .note("  --proofs: the key comes from a seeded setup made before the runs (for benchmarks only); a proof")
      .note("      needs the assignment (--synthesis circuit or replay-assignment)")
      .parse(argc, argv);
  o.replay = synthesis != "circuit";
  o.replayed = synthesis == "replay-assignment" ? replay_content::assignment : replay_content::abc;
  o.backend_spmv = spmv == "backend";
  if (!policies.empty()) {
    o.policies.clear();
    for (const std::string& name : policies) o.policies.push_back(*parse_dispatch_policy(name));
  }
  if (o.replay && o.replayed == replay_content::assignment && !o.backend_spmv)
    cli.refuse("--synthesis replay-assignment: needs --spmv backend (the device evaluates the matrices)");
  if (o.proofs && o.replay && o.replayed == replay_content::abc)
    cli.refuse("--proofs: a proof needs the assignment, which --synthesis replay does not keep "
               "(use circuit or replay-assignment)");
  if (!o.h200 && o.devices == 0) cli.refuse("--devices: must be at least 1 for the host backend");
  if (!o.h200 && o.msm_copies != 1) cli.refuse("--msm-copies: the CUDA backend's (--h200)");
  return o;
}

std::unique_ptr<compute_backend> make_backend(const options& o) {
  if (!o.h200) return make_host_backend(o.devices, o.slots);
#ifdef COPROVE_HAVE_CUDA
  std::vector<int> devices;
  for (std::size_t d = 0; d < o.devices; ++d) devices.push_back(static_cast<int>(d));
  return cuda::make_cuda_backend(devices, o.slots, {}, 0, o.msm_copies);
#else
  throw std::runtime_error("--h200 needs the CUDA backend, and this build has none (COPROVE_WITH_CUDA=OFF)");
#endif
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(rank, v.size() - 1)];
}

double num(const boost::json::value& v) { return v.to_number<double>(); }

// The median (the mean of the middle two for an even count).
double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

// One configuration run side by side with the others: a policy, and its depth (0: measured).
struct variant {
  dispatch_policy policy = dispatch_policy::semaphore;
  std::size_t depth = 0;
  std::string label;  // the policy, or with --depths "depth N" / "measured"
};

struct policy_result {
  variant run;
  boost::json::object row;
};

// The io thread, run as the coprove binary runs it: spin after each handler, polling the backend's
// completion bridges meanwhile. Declared after the engine, so it stops before the engine goes.
class io_runner {
 public:
  io_runner(boost::asio::io_context& io, coprove::runtime::spin_source* source)
      : guard_(boost::asio::make_work_guard(io)),
        thread_([&io, source] {
          coprove::runtime::spin_stats stats;
          coprove::runtime::run_spinning(io, coprove::runtime::default_spin_window, stats, source);
        }) {}
  ~io_runner() {
    guard_.reset();
    thread_.join();
  }
  io_runner(const io_runner&) = delete;
  io_runner& operator=(const io_runner&) = delete;

 private:
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::thread thread_;
};

// Every job's seed: distinct per job, except under replay, where all prove the recorded partitions.
std::uint64_t job_seed(const options& o, std::size_t job) { return o.replay ? 1 : job + 1; }

policy_result run_policy(const options& o, const synthesis_replay* replay, const variant& v, std::size_t round) {
  const dispatch_policy policy = v.policy;
  boost::asio::io_context io;
  boost::json::object row;
  std::string failure;
  try {
    engine_config cfg;
    // Proofs with the seeded key, or the quotient pipeline alone: partitions end with their
    // evaluation record (said at warning).
    cfg.results = o.proofs ? result_kind::proof : result_kind::evaluation_record;
    if (o.proofs) cfg.keys = {circuit_keys{o.circuit, o.log_n, o.key, "bench_pipeline: seeded setup"}};
    cfg.policy = policy;
    cfg.max_log_constraints = o.log_n;
    cfg.plan_circuit = o.circuit;
    cfg.synthesis_threads = o.synthesis_threads;
    cfg.depth_per_device = v.depth;
    cfg.memory_budget_bytes = o.budget_gib << 30;
    cfg.trace = !o.trace_prefix.empty();
    cfg.backend_spmv = o.backend_spmv;
    if (replay != nullptr) {
      cfg.synthesizer = replay->synthesizer();
      cfg.synthesizer_sends_assignment = o.replayed == replay_content::assignment;
      cfg.synthesizer_name = "bench_pipeline --synthesis replay: " + std::to_string(replay->partitions()) +
                             " partitions synthesized before the run";
    }
    engine e(io.get_executor(), cfg, make_backend(o));
    io_runner runner(io, e.backend().completion_source());

    // Warm-up: one partition builds the PCE, so every policy starts from the same cache.
    e.wait_for_prewarm();  // measure from a warm pool: "allocations" below are after the pre-warm
    prove_request warm;
    warm.circuit = o.circuit;
    warm.log_constraints = o.log_n;
    warm.partitions = 1;
    warm.seed = o.replay ? job_seed(o, 0) : 1000;
    auto [warm_ec, warm_result] = e.async_prove(warm, boost::asio::use_future).get();
    if (warm_ec) throw std::runtime_error("warm-up failed: " + warm_ec.message());
    const auto before = e.report_json();
    const auto allocations_before = before.at("pinned_pool").at("allocations").to_number<std::uint64_t>();
    const auto reuses_before = before.at("pinned_pool").at("reuses").to_number<std::uint64_t>();
    const auto checkouts_before = before.at("pinned_pool").at("checkouts").to_number<std::uint64_t>();
    e.reset_report();

    std::vector<std::future<std::tuple<std::error_code, prove_result>>> futures;
    for (std::size_t j = 0; j < o.jobs; ++j) {
      prove_request r;
      r.circuit = o.circuit;
      r.log_constraints = o.log_n;
      r.partitions = o.partitions;
      r.seed = job_seed(o, j);
      futures.push_back(e.async_prove(r, boost::asio::use_future));
    }
    // The steady state: from the first job's end (the pipeline is full by then) to the end of the
    // last job after which partitions still wait for admission (so the drain has not begun). Busy
    // time and verified partitions are read from the report at both ends and differenced. Too few
    // jobs leave no window (reported as 0).
    struct snapshot {
      double elapsed_s = 0, busy_s = 0, verified = 0;
    };
    auto take_snapshot = [&e] {
      const auto r = e.report_json();
      const double elapsed = num(r.at("elapsed_s"));
      return snapshot{elapsed, num(r.at("gpu_busy_fraction")) * elapsed, num(r.at("verified"))};
    };
    snapshot steady_begin, steady_end;
    bool steady = false;
    std::vector<double> latency_ms;
    std::size_t verified = 0, pinned = 0;
    for (std::size_t job = 0; job < futures.size(); ++job) {
      auto& f = futures[job];
      auto [ec, result] = f.get();
      const bool queued = e.status_json().at("dispatch").at("queued").to_number<std::size_t>() > 0;
      if (job == 0) {
        steady_begin = take_snapshot();
      } else if (queued) {
        steady_end = take_snapshot();
        steady = true;
      }
      if (ec) throw std::runtime_error("job " + std::to_string(result.job_id) + " failed: " + ec.message());
      for (const auto& p : result.partitions) {
        latency_ms.push_back(static_cast<double>(p.timings.total_ns - p.timings.queue_wait_ns) / 1e6);
        verified += p.verified ? 1 : 0;
        pinned += p.is_pinned ? 1 : 0;
      }
    }
    const auto report = e.report_json();
    const auto& pool = report.at("pinned_pool").as_object();
    // Each device's memory in use once the runs are done (every slot's buffers, plans and MSM arena
    // are still held), beside what was in use before the backend's: the plan's figures are checked
    // against it.
    boost::json::array device_memory;
    for (std::size_t d = 0; d < e.backend().device_count(); ++d) {
      if (const auto m = e.backend().device_memory_of(d))
        device_memory.push_back({{"device", d},
                                 {"total_bytes", m->total_bytes},
                                 {"used_bytes", m->total_bytes - m->free_bytes},
                                 {"in_use_at_start_bytes", m->in_use_at_start_bytes}});
    }
    const auto allocations = pool.at("allocations").to_number<std::uint64_t>() - allocations_before;
    const auto reuses = pool.at("reuses").to_number<std::uint64_t>() - reuses_before;
    const auto checkouts = pool.at("checkouts").to_number<std::uint64_t>() - checkouts_before;
    const double steady_s = steady ? steady_end.elapsed_s - steady_begin.elapsed_s : 0.0;
    row = boost::json::object{
        {"policy", std::string(to_string(policy))},
        {"variant", v.label},
        {"round", round},
        {"backend", report.at("backend")},
        {"partitions", latency_ms.size()},
        {"verified", verified},
        {"pinned", pinned},
        {"elapsed_s", report.at("elapsed_s")},
        {"partitions_per_s", report.at("throughput_partitions_per_s")},
        {"gpu_busy_fraction", report.at("gpu_busy_fraction")},
        {"max_in_flight", report.at("dispatch").at("max_in_flight")},
        {"max_concurrent_synthesis", report.at("dispatch").at("max_concurrent_synthesis")},
        {"depth_per_device", e.depth_per_device()},
        {"depth_source", report.at("dispatch").at("depth_source")},
        {"depth_max", report.at("dispatch").at("depth_max")},
        {"depth_basis", report.at("dispatch").at("depth_basis")},
        {"bottleneck", report.at("bottleneck")},
        {"device_keys", report.at("device_keys")},
        {"pool_allocations", allocations},
        {"pool_reuses", reuses},
        {"pool_reuse_fraction", checkouts > 0 ? static_cast<double>(reuses) / static_cast<double>(checkouts) : 0.0},
        {"pool_fallbacks", pool.at("fallbacks")},
        {"h2d_gb_per_s", report.at("h2d_gb_per_s")},
        {"syntheses", report.at("syntheses")},
        {"steady_partitions_per_s", steady_s > 0 ? (steady_end.verified - steady_begin.verified) / steady_s : 0.0},
        {"steady_gpu_busy_fraction", steady_s > 0 ? (steady_end.busy_s - steady_begin.busy_s) / steady_s : 0.0},
        {"steady_window_s", steady_s},
        {"steady_device_ms_per_partition",
         steady_end.verified > steady_begin.verified
             ? 1e3 * (steady_end.busy_s - steady_begin.busy_s) / (steady_end.verified - steady_begin.verified)
             : 0.0},
        {"latency_p50_ms", percentile(latency_ms, 0.5)},
        {"latency_p99_ms", percentile(latency_ms, 0.99)},
        {"stages", report.at("stages")},
        {"memory_plan_total_bytes", report.at("memory_plan").at("total_bytes")},
        {"device_memory", device_memory}};
    if (e.trace() != nullptr) {
      const std::string suffix = o.rounds > 1 ? "-round" + std::to_string(round) : std::string();
      std::string name = v.label;
      std::replace(name.begin(), name.end(), ' ', '-');
      e.trace()->write(o.trace_prefix + name + suffix + ".json");
    }
    e.async_shutdown(true, boost::asio::use_future).get();
  } catch (const std::exception& ex) {
    failure = ex.what();
  }
  if (!failure.empty()) throw std::runtime_error(v.label + ": " + failure);
  return {v, std::move(row)};
}

// The table is printed a row at a time, as each run ends, so a run cut short keeps what it measured.
void print_header(const options& o) {
  std::printf("bench_pipeline: %s backend, %s 2^%u, %zu job(s) x %zu partitions per policy, %zu round(s), SpMV on the %s\n",
              o.h200 ? "cuda" : "host", o.circuit.c_str(), o.log_n, o.jobs, o.partitions, o.rounds,
              o.backend_spmv ? "backend" : "host");
  if (o.replay)
    std::printf("SYNTHESIS REPLAYED: the %zu partitions were synthesized before the runs and their %s copied into "
                "the pinned buffers (every job proves them); this measures dispatch and devices, not synthesis\n",
                o.partitions, o.replayed == replay_content::assignment ? "assignments are" : "a, b, c are");
  std::printf("%-10s %5s %5s %10s %8s %11s %11s %9s %9s %7s %7s %8s %9s %9s %9s %9s\n", "run", "round", "depth", "part/s",
              "busy", "steady p/s", "steady busy", "max_synth", "max_fly", "allocs", "reuses", "reuse%", "H2D GB/s",
              "p50 ms", "p99 ms", "dev ms/p");
  std::fflush(stdout);
}

void print_row(const policy_result& r) {
  const auto& row = r.row;
  std::printf("%-10s %5.0f %5.0f %10.2f %7.1f%% %11.2f %10.1f%% %9.0f %9.0f %7.0f %7.0f %7.1f%% %9.2f %9.2f %9.2f %9.1f\n",
              r.run.label.c_str(), num(row.at("round")), num(row.at("depth_per_device")), num(row.at("partitions_per_s")),
              100.0 * num(row.at("gpu_busy_fraction")), num(row.at("steady_partitions_per_s")),
              100.0 * num(row.at("steady_gpu_busy_fraction")), num(row.at("max_concurrent_synthesis")),
              num(row.at("max_in_flight")), num(row.at("pool_allocations")), num(row.at("pool_reuses")),
              100.0 * num(row.at("pool_reuse_fraction")), num(row.at("h2d_gb_per_s")), num(row.at("latency_p50_ms")),
              num(row.at("latency_p99_ms")), num(row.at("steady_device_ms_per_partition")));
  // With proofs on a device: how many copies of the key's points the MSMs ran over, and why.
  const auto& keys = row.at("device_keys").as_object();
  if (keys.at("source").as_string() == "auto" || num(keys.at("copies")) > 1)
    std::printf("           device keys: %.0f copies (%s): %s\n", num(keys.at("copies")),
                keys.at("source").as_string().c_str(), keys.at("reason").as_string().c_str());
  constexpr double mib = 1024.0 * 1024.0;
  for (const auto& m : row.at("device_memory").as_array())
    std::printf("           device %.0f memory after the run: %.1f MiB in use of %.1f MiB (%.1f MiB of it before the "
                "backend's)\n",
                num(m.at("device")), num(m.at("used_bytes")) / mib, num(m.at("total_bytes")) / mib,
                num(m.at("in_use_at_start_bytes")) / mib);
  std::fflush(stdout);
}

void print_legend() {
  std::printf("(latency: admission to verified record; busy: fraction of the run a device had work; steady: from "
              "the first job's end to the last job end after which partitions still waited for admission, so no "
              "ramp-up or drain (0: too few jobs for such a window); allocations and reuses after the pre-warm and one warm-up "
              "partition; dev ms/p: device busy time per verified partition in the steady window)\n");
}

// Each policy's medians over the rounds, and semaphore against the best other policy.
boost::json::object summarize_depths(const options& o, const std::vector<variant>& variants,
                                     const std::vector<policy_result>& results);

boost::json::object summarize(const options& o, const std::vector<variant>& variants,
                              const std::vector<policy_result>& results) {
  if (!o.depths.empty()) return summarize_depths(o, variants, results);
  boost::json::object per_policy;
  auto median_of = [&](dispatch_policy p, const char* key) {
    std::vector<double> v;
    for (const auto& r : results)
      if (r.run.policy == p) v.push_back(num(r.row.at(key)));
    return median(std::move(v));
  };
  for (dispatch_policy p : o.policies) {
    per_policy[std::string(to_string(p))] = boost::json::object{
        {"partitions_per_s", median_of(p, "partitions_per_s")},
        {"gpu_busy_fraction", median_of(p, "gpu_busy_fraction")},
        {"steady_partitions_per_s", median_of(p, "steady_partitions_per_s")},
        {"steady_gpu_busy_fraction", median_of(p, "steady_gpu_busy_fraction")},
        {"latency_p50_ms", median_of(p, "latency_p50_ms")},
        {"latency_p99_ms", median_of(p, "latency_p99_ms")}};
  }
  boost::json::object out{{"rounds", o.rounds}, {"medians", per_policy}};
  const bool has_semaphore =
      std::find(o.policies.begin(), o.policies.end(), dispatch_policy::semaphore) != o.policies.end();
  if (o.rounds > 1) std::printf("medians over %zu rounds:\n", o.rounds);
  for (dispatch_policy p : o.policies) {
    if (o.rounds == 1) break;
    std::printf("%-10s %10.2f part/s %7.1f%% busy  steady %8.2f part/s %6.1f%% busy  p50 %9.2f ms  p99 %9.2f ms\n",
                std::string(to_string(p)).c_str(), median_of(p, "partitions_per_s"),
                100.0 * median_of(p, "gpu_busy_fraction"), median_of(p, "steady_partitions_per_s"),
                100.0 * median_of(p, "steady_gpu_busy_fraction"),
                median_of(p, "latency_p50_ms"), median_of(p, "latency_p99_ms"));
  }
  if (has_semaphore && o.policies.size() > 1) {
    double best = 0.0, best_p99 = 0.0;
    std::string best_name;
    for (dispatch_policy p : o.policies) {
      if (p == dispatch_policy::semaphore) continue;
      if (median_of(p, "partitions_per_s") > best) {
        best = median_of(p, "partitions_per_s");
        best_p99 = median_of(p, "latency_p99_ms");
        best_name = std::string(to_string(p));
      }
    }
    const double throughput_ratio = best > 0.0 ? median_of(dispatch_policy::semaphore, "partitions_per_s") / best : 0.0;
    const double p99_ratio = median_of(dispatch_policy::semaphore, "latency_p99_ms") > 0.0
                                 ? best_p99 / median_of(dispatch_policy::semaphore, "latency_p99_ms")
                                 : 0.0;
    std::printf("semaphore against the best other policy (%s): throughput %.3fx, p99 %.2fx lower\n",
                best_name.c_str(), throughput_ratio, p99_ratio);
    out["semaphore_vs_best"] = boost::json::object{
        {"best_other", best_name}, {"throughput_ratio", throughput_ratio}, {"p99_lower_by", p99_ratio}};
  }
  return out;
}

// With --depths: each depth's medians over the rounds, and the measured depth's steady throughput
// against the best fixed depth's, with its steady busy fraction.
boost::json::object summarize_depths(const options& o, const std::vector<variant>& variants,
                                     const std::vector<policy_result>& results) {
  auto median_of = [&](const std::string& label, const char* key) {
    std::vector<double> v;
    for (const auto& r : results)
      if (r.run.label == label) v.push_back(num(r.row.at(key)));
    return median(std::move(v));
  };
  boost::json::object per_depth;
  if (o.rounds > 1) std::printf("medians over %zu rounds:\n", o.rounds);
  double best = 0.0;
  std::string best_label;
  for (const variant& v : variants) {
    per_depth[v.label] = boost::json::object{
        {"depth_per_device", median_of(v.label, "depth_per_device")},
        {"partitions_per_s", median_of(v.label, "partitions_per_s")},
        {"steady_partitions_per_s", median_of(v.label, "steady_partitions_per_s")},
        {"steady_gpu_busy_fraction", median_of(v.label, "steady_gpu_busy_fraction")},
        {"latency_p99_ms", median_of(v.label, "latency_p99_ms")}};
    if (o.rounds > 1)
      std::printf("%-10s depth %5.0f  steady %8.2f part/s %6.1f%% busy\n", v.label.c_str(),
                  median_of(v.label, "depth_per_device"), median_of(v.label, "steady_partitions_per_s"),
                  100.0 * median_of(v.label, "steady_gpu_busy_fraction"));
    if (v.depth != 0 && median_of(v.label, "steady_partitions_per_s") > best) {
      best = median_of(v.label, "steady_partitions_per_s");
      best_label = v.label;
    }
  }
  boost::json::object out{{"rounds", o.rounds}, {"medians", per_depth}};
  const bool has_measured = std::any_of(variants.begin(), variants.end(), [](const variant& v) { return v.depth == 0; });
  if (has_measured && best > 0.0) {
    const double measured = median_of("measured", "steady_partitions_per_s");
    const double busy = median_of("measured", "steady_gpu_busy_fraction");
    std::printf("measured depth against the best fixed depth (%s): steady throughput %.3fx, steady busy %.1f%%\n",
                best_label.c_str(), measured / best, 100.0 * busy);
    out["measured_vs_best_fixed"] = boost::json::object{{"best_fixed", best_label},
                                                        {"steady_throughput_ratio", measured / best},
                                                        {"measured_steady_gpu_busy_fraction", busy}};
  } else if (has_measured) {
    std::printf("measured depth: no fixed depth had a steady window to compare with (more --jobs)\n");
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_pipeline: " << e.what() << "\n";
    return 2;
  }
  runtime::log_config log;
  log.level = runtime::severity::warning;
  runtime::init_logging(log);
  try {
    std::vector<policy_result> results;
    std::unique_ptr<synthesis_replay> replay;
    if (o.replay) {
      replay = std::make_unique<synthesis_replay>();
      prove_request r;
      r.circuit = o.circuit;
      r.log_constraints = o.log_n;
      r.partitions = o.partitions;
      r.seed = job_seed(o, 0);
      const auto start = std::chrono::steady_clock::now();
      replay->record(r, o.replayed);
      std::printf("recorded %zu partitions for replay (%zu as assignments; %.2f GiB) in %.1f s\n",
                  replay->partitions(), replay->assignments(), static_cast<double>(replay->bytes()) / double(1 << 30),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    if (o.proofs) {
      const auto start = std::chrono::steady_clock::now();
      o.key = coprove::test::test_key(o.circuit, o.log_n);
      std::printf("PROOFS: Groth16 key for %s 2^%u from a seeded setup (for benchmarks only) made in %.1f s\n",
                  o.circuit.c_str(), o.log_n,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::vector<variant> variants;
    if (o.depths.empty()) {
      for (dispatch_policy p : o.policies) variants.push_back({p, o.depth, std::string(to_string(p))});
    } else {
      for (std::size_t d : o.depths)
        variants.push_back({dispatch_policy::semaphore, d, d == 0 ? std::string("measured") : "depth " + std::to_string(d)});
    }
    print_header(o);
    for (std::size_t round = 0; round < o.rounds; ++round) {
      for (std::size_t i = 0; i < variants.size(); ++i) {
        results.push_back(run_policy(o, replay.get(), variants[(i + round) % variants.size()], round));
        print_row(results.back());
      }
    }
    print_legend();
    boost::json::object summary = summarize(o, variants, results);
    if (!o.json_path.empty()) {
      boost::json::array rows;
      for (auto& r : results) rows.push_back(std::move(r.row));
      boost::json::object out{{"benchmark", "pipeline"},
                              {"backend", o.h200 ? "cuda" : "host"},
                              {"circuit", o.circuit},
                              {"synthesis", !o.replay ? std::string("circuit")
                                          : o.replayed == replay_content::assignment ? std::string("replay-assignment")
                                                                                     : std::string("replay")},
                              {"spmv", o.backend_spmv ? "backend" : "host"},
                              {"results", o.proofs ? "proof" : "evaluation_record"},
                              {"log_n", o.log_n},
                              {"jobs", o.jobs},
                              {"partitions_per_job", o.partitions},
                              {"devices", o.devices},
                              {"slots_per_device", o.slots},
                              {"policies", std::move(rows)},
                              {"summary", std::move(summary)}};
      std::ofstream file(o.json_path);
      if (!file) throw std::runtime_error("cannot write " + o.json_path);
      file << boost::json::serialize(out) << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_pipeline: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
