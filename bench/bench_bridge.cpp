// bench_bridge: the round trip from enqueueing an empty kernel to the awaiting coroutine running
// again, for each completion-bridge strategy, against the floor (launch + cudaStreamSynchronize
// on a blocked thread) and the naive path (cudaLaunchHostFunc -> asio::post) measured in the same
// run; plus the CPU the bridge uses with nothing in flight. Each strategy runs with four io
// threads: blocked in run() (the normal case), spinning on poll() (no wake-up at all: the bound for
// the bridge itself), runtime::run_spinning (poll for a short window after each handler, then
// block: the wake-up removed during bursts, no CPU when idle), and run_spinning that also polls
// the bridge while it spins (the completion is set on the io thread: no cross-thread post). Two
// rows per strategy without Asio show where the time goes: the caller's thread spinning on the
// signal (the bridge's poller thread finds the completion) or polling the bridge itself. Rows are
// interleaved in rounds so that drift of the host hits every row alike; ratios are to the floor of
// this run. stream_write rows are left out, and say so, where the device cannot run them.
//
//   bench_bridge [--iterations N] [--spin-us US] [--json PATH]
#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#if defined(COPROVE_HAVE_CUDA)
#include "coprove/cuda/completion_bridge.hpp"
#include "coprove/cuda/device.hpp"
#include "coprove/cuda/error.hpp"
#include "coprove/cuda/stream.hpp"
#include "coprove/runtime/spin_runner.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <sys/resource.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <thread>
#endif

namespace {

struct options {
  std::size_t iterations = 5000;
  long spin_us = 100;  // run_spinning's window
  std::string json_path;
};

options parse(int argc, char** argv) {
  options o;
  coprove::bench::options("bench_bridge", "the completion bridge's round trip against launch + cudaStreamSynchronize")
      .number("--iterations", o.iterations, "N", "round trips a row (default 5000)", std::size_t{100},
              std::size_t{100'000'000})
      .number("--spin-us", o.spin_us, "US", "run_spinning's window, microseconds (default 100)", 0L, 1'000'000L)
      .text("--json", o.json_path, "PATH", "write the report as JSON")
      .parse(argc, argv);
  return o;
}

std::string today() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

void write_json(const options& o, const boost::json::object& report) {
  if (!o.json_path.empty() && !coprove::bench::write_json_file(o.json_path, report, "bench_bridge")) std::exit(1);
}

}  // namespace

#if !defined(COPROVE_HAVE_CUDA)

int main(int argc, char** argv) {
  const auto o = parse(argc, argv);
  std::cout << "bench_bridge: built without CUDA: nothing to measure\n";
  write_json(o, {{"bench", "bridge"}, {"skipped", "built without CUDA"}});
  return 0;
}

#else

namespace {

namespace asio = boost::asio;
using coprove::cuda::completion_bridge;
using clock_type = std::chrono::steady_clock;

void cpu_pause() noexcept {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

double since_us(clock_type::time_point t0) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

struct summary {
  double p50 = 0, p99 = 0, max = 0;
};

summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))]; };
  return {at(0.5), at(0.99), v.back()};
}

// The naive path: a host function that posts the handler straight to its executor.
template <class Token>
auto async_host_func_post(cudaStream_t s, Token&& token) {
  return asio::async_initiate<Token, void()>(
      [s](auto handler) {
        using handler_type = decltype(handler);
        auto* h = new handler_type(std::move(handler));
        COPROVE_CUDA_TRY(cudaLaunchHostFunc(
            s,
            [](void* p) {
              auto* held = static_cast<handler_type*>(p);
              auto ex = asio::get_associated_executor(*held);
              asio::post(ex, std::move(*held));
              delete held;
            },
            h));
      },
      token);
}

// How an io thread waits for its next handler.
enum class io_mode {
  blocking,         ///< io_context::run(): the normal case
  polling,          ///< polls within its rows (2 ms window): never wakes up (shows what the wake-up costs)
  spin_then_block,  ///< runtime::run_spinning: polls for a window after each handler, then blocks
  spin_polling_bridge,  ///< run_spinning that also polls the bridge (a spin_source) while it spins
};

const char* row_suffix(io_mode m) {
  switch (m) {
    case io_mode::blocking: return "";
    case io_mode::polling: return ", io thread polling";
    case io_mode::spin_then_block: return ", io spin-then-block";
    case io_mode::spin_polling_bridge: return ", io spin polls bridge";
  }
  return "";
}

// An io_context on its own thread, waiting for handlers in one of the io_modes.
class io_thread {
 public:
  io_thread(io_mode mode, std::chrono::microseconds spin, coprove::runtime::spin_source* source = nullptr)
      : work_(asio::make_work_guard(ioc_)) {
    thread_ = std::thread([this, mode, spin, source] {
      switch (mode) {
        case io_mode::blocking: ioc_.run(); return;
        case io_mode::spin_then_block: coprove::runtime::run_spinning(ioc_, spin, stats_); return;
        case io_mode::spin_polling_bridge: coprove::runtime::run_spinning(ioc_, spin, stats_, source); return;
        case io_mode::polling:
          // Polls without pause; blocks only after 2 ms without a handler (between its rows), so
          // that it does not take a core from the other rows.
          coprove::runtime::run_spinning(ioc_, std::chrono::milliseconds(2), stats_);
          return;
      }
    });
  }
  ~io_thread() {
    stop_ = true;
    work_.reset();
    ioc_.stop();
    thread_.join();
  }
  asio::io_context& context() { return ioc_; }
  /// run_spinning's counters: read only from a handler of context().
  const coprove::runtime::spin_stats& stats() const { return stats_; }

 private:
  coprove::runtime::spin_stats stats_;
  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Blocking waits of a spin-then-block io thread per round trip of one row.
struct io_wait_count {
  std::uint64_t round_trips = 0;
  std::uint64_t blocking_waits = 0;
  std::uint64_t source_completions = 0;  // completions the io thread found by polling the bridge
};

// Where a round trip's time goes: the kernel launch, the bridge's enqueue (signal_when_done), and
// the rest (the wait until the coroutine runs again). Warm-up samples are dropped.
struct parts_log {
  std::vector<double> launch, enqueue;
};

struct row {
  std::string name;
  std::function<void(std::size_t n, std::vector<double>& out)> run;  // appends n samples (us)
  std::vector<double> samples;
  std::shared_ptr<io_wait_count> io_waits = {};  // spin-then-block rows only
  std::shared_ptr<parts_log> parts = {};         // bridge rows and the floor
};

constexpr double p50_target = 1.15;
constexpr double p99_target = 1.3;
constexpr double idle_target_percent = 2.0;

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Percent of one core the process uses over `seconds` while this thread sleeps.
double idle_cpu_percent(double seconds) {
  const double c0 = process_cpu_seconds();
  const auto t0 = clock_type::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
  return 100.0 * (process_cpu_seconds() - c0) / wall;
}

}  // namespace

int main(int argc, char** argv) {
  const auto o = parse(argc, argv);
  if (coprove::cuda::device_count() == 0) {
    std::cout << "bench_bridge: no CUDA device: nothing to measure\n";
    write_json(o, {{"bench", "bridge"}, {"skipped", "no CUDA device"}});
    return 0;
  }
  const std::string gpu = coprove::cuda::device_name(0);
  coprove::cuda::stream stream;
  const cudaStream_t s = stream.get();

  const std::chrono::microseconds spin_window{o.spin_us};
  constexpr io_mode shared_modes[] = {io_mode::blocking, io_mode::polling, io_mode::spin_then_block};
  std::vector<std::unique_ptr<io_thread>> io_threads;
  for (auto m : shared_modes) io_threads.push_back(std::make_unique<io_thread>(m, spin_window));
  io_thread& blocked = *io_threads[0];
  std::vector<completion_bridge::strategy> strategies = {
      completion_bridge::strategy::host_func, completion_bridge::strategy::event_poller,
      completion_bridge::strategy::mapped_flag, completion_bridge::strategy::stream_write};
  std::string skipped;
  if (!completion_bridge::supported(completion_bridge::strategy::stream_write)) {
    skipped = "stream_write: the device cannot run 64-bit stream memory operations";
    std::printf("bench_bridge: %s; its rows are left out\n", skipped.c_str());
    strategies.pop_back();
  }
  std::vector<std::unique_ptr<completion_bridge>> bridges;
  for (auto st : strategies) bridges.push_back(std::make_unique<completion_bridge>(st));
  // One io thread per polling bridge that it polls while it spins.
  std::vector<std::unique_ptr<io_thread>> polling_io(bridges.size());
  for (std::size_t k = 0; k < bridges.size(); ++k)
    if (strategies[k] != completion_bridge::strategy::host_func)
      polling_io[k] = std::make_unique<io_thread>(io_mode::spin_polling_bridge, spin_window, &bridges[k]->as_spin_source());

  // A coroutine on `io` that measures n round trips with `await_once`; with `waits`, also counts
  // the blocking waits of a spin-then-block io thread (read on that thread, between handlers).
  auto on_io = [](io_thread& io, auto await_once, std::shared_ptr<io_wait_count> waits = {}) {
    return [&io, await_once, waits](std::size_t n, std::vector<double>& out) {
      asio::co_spawn(
          io.context(),
          [&io, &out, n, await_once, waits]() -> asio::awaitable<void> {
            const std::uint64_t waits_before = io.stats().blocking_waits;
            const std::uint64_t found_before = io.stats().source_completions;
            for (std::size_t i = 0; i < n; ++i) {
              const auto t0 = clock_type::now();
              co_await await_once();
              out.push_back(since_us(t0));
            }
            if (waits) {
              waits->round_trips += n;
              waits->blocking_waits += io.stats().blocking_waits - waits_before;
              waits->source_completions += io.stats().source_completions - found_before;
            }
          },
          asio::use_future)
          .get();
    };
  };

  std::vector<row> rows;
  auto floor_parts = std::make_shared<parts_log>();
  rows.push_back({"floor: launch + cudaStreamSynchronize", [s, floor_parts](std::size_t n, std::vector<double>& out) {
                    for (std::size_t i = 0; i < n; ++i) {
                      const auto t0 = clock_type::now();
                      COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
                      floor_parts->launch.push_back(since_us(t0));
                      floor_parts->enqueue.push_back(0.0);
                      COPROVE_CUDA_TRY(cudaStreamSynchronize(s));
                      out.push_back(since_us(t0));
                    }
                  }, {}, {}, floor_parts});
  rows.push_back({"naive: cudaLaunchHostFunc -> asio::post", on_io(blocked, [s]() -> asio::awaitable<void> {
                    COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
                    co_await async_host_func_post(s, asio::use_awaitable);
                  }), {}, {}});
  constexpr io_mode all_modes[] = {io_mode::blocking, io_mode::polling, io_mode::spin_then_block,
                                   io_mode::spin_polling_bridge};
  for (const io_mode mode : all_modes) {
    for (std::size_t k = 0; k < bridges.size(); ++k) {
      completion_bridge* bridge = bridges[k].get();
      io_thread* io = mode == io_mode::spin_polling_bridge ? polling_io[k].get()
                                                           : io_threads[static_cast<std::size_t>(mode)].get();
      if (io == nullptr) continue;  // host_func: nothing to poll
      const bool spins = mode == io_mode::spin_then_block || mode == io_mode::spin_polling_bridge;
      auto waits = spins ? std::make_shared<io_wait_count>() : nullptr;
      auto parts = std::make_shared<parts_log>();
      auto round_trip = [s, bridge, parts]() -> asio::awaitable<void> {
        const auto t0 = clock_type::now();
        COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
        const auto t1 = clock_type::now();
        coprove::runtime::completion_signal done;
        bridge->signal_when_done(s, done);
        parts->launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        parts->enqueue.push_back(since_us(t1));
        auto [ec] = co_await done.async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec) throw std::system_error(ec);
      };
      rows.push_back({std::string("bridge ") + std::string(coprove::cuda::to_string(strategies[k])) + row_suffix(mode),
                      on_io(*io, round_trip, waits), {}, waits, parts});
    }
  }
  // Without Asio: where the time goes.
  for (std::size_t k = 0; k < bridges.size(); ++k) {
    completion_bridge* bridge = bridges[k].get();
    const std::string name(coprove::cuda::to_string(strategies[k]));
    rows.push_back({"no asio: " + name + ", caller spins on the signal", [s, bridge](std::size_t n, std::vector<double>& out) {
                      for (std::size_t i = 0; i < n; ++i) {
                        const auto t0 = clock_type::now();
                        COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
                        coprove::runtime::completion_signal done;
                        bridge->signal_when_done(s, done);
                        while (!done.is_set()) {
                          for (int p = 0; p < 16; ++p) cpu_pause();  // is_set() takes the signal's mutex
                        }
                        out.push_back(since_us(t0));
                      }
                    }, {}, {}});
    if (strategies[k] == completion_bridge::strategy::host_func) continue;
    rows.push_back({"no asio: " + name + ", caller polls the bridge", [s, bridge](std::size_t n, std::vector<double>& out) {
                      for (std::size_t i = 0; i < n; ++i) {
                        const auto t0 = clock_type::now();
                        COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
                        coprove::runtime::completion_signal done;
                        bridge->signal_when_done(s, done);
                        while (!done.is_set()) bridge->poll();
                        out.push_back(since_us(t0));
                      }
                    }, {}, {}});
  }

  // Warm up every row, then interleave rounds.
  for (auto& r : rows) {
    std::vector<double> discard;
    r.run(200, discard);
    if (r.parts) *r.parts = {};
  }
  constexpr std::size_t rounds = 10;
  const std::size_t per_round = (o.iterations + rounds - 1) / rounds;
  for (std::size_t round = 0; round < rounds; ++round)
    for (auto& r : rows) r.run(per_round, r.samples);

  const summary floor = summarize(rows[0].samples);
  std::printf("bench_bridge on %s, %s: %zu round trips per row (empty kernel -> awaiting coroutine resumed)\n",
              gpu.c_str(), today().c_str(), rows[0].samples.size());
  std::printf("io spin-then-block: runtime::run_spinning with a %ld us window; 'io waits/trip': its blocking\n"
              "waits per round trip (0: every completion found it polling; 1: each one woke it)\n\n",
              o.spin_us);
  std::printf("'io found': share of the completions the io thread set itself by polling the bridge\n\n");
  std::printf("%-52s %8s %8s %8s %10s %9s %10s %10s %10s\n", "path", "p50 us", "p99 us", "max us", "io waits",
              "io found", "p50/floor", "p99/floor", "targets");
  boost::json::array json_rows;
  std::vector<std::string> meeting;
  for (auto& r : rows) {
    const summary x = summarize(r.samples);
    const double p50_ratio = x.p50 / floor.p50;
    const double p99_ratio = x.p99 / floor.p99;
    const bool is_floor = &r == &rows[0];
    const bool meets = !is_floor && p50_ratio <= p50_target && p99_ratio <= p99_target;
    if (meets) meeting.push_back(r.name);
    char waits_text[32] = "-";
    double waits_per_trip = -1;
    if (r.io_waits && r.io_waits->round_trips > 0) {
      waits_per_trip = static_cast<double>(r.io_waits->blocking_waits) / static_cast<double>(r.io_waits->round_trips);
      std::snprintf(waits_text, sizeof waits_text, "%.3f", waits_per_trip);
    }
    char found_text[32] = "-";
    double found_share = -1;
    if (r.io_waits && r.io_waits->round_trips > 0 && r.name.find("polls bridge") != std::string::npos) {
      found_share = static_cast<double>(r.io_waits->source_completions) / static_cast<double>(r.io_waits->round_trips);
      std::snprintf(found_text, sizeof found_text, "%.3f", found_share);
    }
    std::printf("%-52s %8.2f %8.2f %8.1f %10s %9s %10.2f %10.2f %10s\n", r.name.c_str(), x.p50, x.p99, x.max, waits_text,
                found_text, p50_ratio, p99_ratio, is_floor ? "-" : (meets ? "MET" : "no"));
    boost::json::object jr{{"path", r.name},
                           {"samples", r.samples.size()},
                           {"p50_us", x.p50},
                           {"p99_us", x.p99},
                           {"max_us", x.max},
                           {"p50_ratio", p50_ratio},
                           {"p99_ratio", p99_ratio},
                           {"meets_targets", meets}};
    if (waits_per_trip >= 0) jr["io_blocking_waits_per_round_trip"] = waits_per_trip;
    if (found_share >= 0) jr["io_found_share"] = found_share;
    if (r.parts && r.parts->launch.size() == r.samples.size()) {
      std::vector<double> wait(r.samples.size());
      for (std::size_t i = 0; i < wait.size(); ++i) wait[i] = r.samples[i] - r.parts->launch[i] - r.parts->enqueue[i];
      const summary l = summarize(r.parts->launch), e = summarize(r.parts->enqueue), w = summarize(wait);
      jr["parts_us"] = {{"launch_p50", l.p50}, {"launch_p99", l.p99}, {"enqueue_p50", e.p50}, {"enqueue_p99", e.p99},
                        {"wait_p50", w.p50}, {"wait_p99", w.p99}};
    }
    json_rows.push_back(std::move(jr));
  }
  // Where the time goes, per part (each part's own percentiles: they do not add up).
  std::printf("\nparts of a round trip, us: launch (the empty kernel), enqueue (signal_when_done), wait (until resumed)\n");
  std::printf("%-52s %9s %9s %9s %9s %9s %9s\n", "path", "launch50", "launch99", "enq50", "enq99", "wait50", "wait99");
  for (auto& jv : json_rows) {
    const auto& jr = jv.as_object();
    if (!jr.contains("parts_us")) continue;
    const auto& pj = jr.at("parts_us").as_object();
    std::printf("%-52s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", jr.at("path").as_string().c_str(),
                pj.at("launch_p50").as_double(), pj.at("launch_p99").as_double(), pj.at("enqueue_p50").as_double(),
                pj.at("enqueue_p99").as_double(), pj.at("wait_p50").as_double(), pj.at("wait_p99").as_double());
  }
  std::printf("\ntargets: p50 <= %.2fx and p99 <= %.2fx the floor; ", p50_target, p99_target);
  if (meeting.empty()) {
    std::printf("no row meets them\n");
  } else {
    std::printf("met by:\n");
    for (auto& name : meeting) std::printf("  %s\n", name.c_str());
  }

  // Idle CPU: the whole process (CUDA's own threads included) over 2 s with nothing in flight,
  // after one round trip so that every thread involved has run. The benchmark's own io threads
  // are stopped first (the polling one uses a whole core); each case then adds only what it names,
  // and its share is the difference to the baseline.
  std::printf("\nidle CPU over 2 s, nothing in flight (percent of one core; whole process, and above the baseline)\n");
  boost::json::object idle;
  rows.clear();
  polling_io.clear();
  bridges.clear();
  io_threads.clear();
  const double baseline = idle_cpu_percent(2.0);
  std::printf("%-52s %8.3f %8s\n", "baseline: no bridge, no io thread", baseline, "-");
  idle["baseline"] = baseline;
  bool idle_ok = true;
  auto report_idle = [&](const std::string& name, const std::string& key, double pct) {
    const double above = pct - baseline;
    const bool ok = above <= idle_target_percent;
    idle_ok = idle_ok && ok;
    std::printf("%-52s %8.3f %+8.3f %s\n", name.c_str(), pct, above, ok ? "MET" : "no");
    idle[key] = pct;
  };
  auto one_round_trip = [s](completion_bridge& bridge) {
    coprove::runtime::completion_signal done;
    COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
    bridge.signal_when_done(s, done);
    while (!done.is_set()) std::this_thread::yield();
  };
  for (auto st : strategies) {
    completion_bridge bridge(st);
    one_round_trip(bridge);
    report_idle("bridge " + std::string(coprove::cuda::to_string(st)), std::string(coprove::cuda::to_string(st)),
                idle_cpu_percent(2.0));
  }
  {
    io_thread io(io_mode::spin_then_block, spin_window);
    asio::post(io.context(), asio::use_future).get();
    report_idle("io spin-then-block alone", "io_spin_then_block", idle_cpu_percent(2.0));
  }
  // The configurations the spin rows measure: each polling bridge with a spin-then-block io thread,
  // and with one that polls it.
  for (auto st : strategies) {
    if (st == completion_bridge::strategy::host_func) continue;
    for (const bool polls : {false, true}) {
      completion_bridge bridge(st);
      io_thread io(polls ? io_mode::spin_polling_bridge : io_mode::spin_then_block, spin_window,
                   polls ? &bridge.as_spin_source() : nullptr);
      asio::co_spawn(
          io.context(),
          [&]() -> asio::awaitable<void> {
            COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
            coprove::runtime::completion_signal done;
            bridge.signal_when_done(s, done);
            co_await done.async_wait(asio::as_tuple(asio::use_awaitable));
          },
          asio::use_future)
          .get();
      const std::string name(coprove::cuda::to_string(st));
      report_idle("bridge " + name + (polls ? " + io spin polls bridge" : " + io spin-then-block"),
                  name + (polls ? "_io_spin_polls_bridge" : "_io_spin_then_block"), idle_cpu_percent(2.0));
    }
  }
  std::printf("idle target: <= %.1f%% of one core above the baseline: %s\n", idle_target_percent,
              idle_ok ? "met by every case" : "NOT met");
  std::printf("default strategy: %s\n", std::string(coprove::cuda::to_string(completion_bridge::default_strategy)).c_str());

  boost::json::array meeting_json;
  for (auto& name : meeting) meeting_json.push_back(boost::json::value(name));
  write_json(o, {{"bench", "bridge"},
                 {"gpu", gpu},
                 {"date", today()},
                 {"spin_window_us", o.spin_us},
                 {"targets", {{"p50_ratio", p50_target}, {"p99_ratio", p99_target}, {"idle_percent", idle_target_percent}}},
                 {"rows", json_rows},
                 {"rows_meeting_targets", meeting_json},
                 {"idle_cpu_percent", idle},
                 {"idle_target_met", idle_ok},
                 {"default_strategy", std::string(coprove::cuda::to_string(completion_bridge::default_strategy))},
                 {"skipped", skipped}});
  return 0;
}

#endif
