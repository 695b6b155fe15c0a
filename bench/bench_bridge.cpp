// bench_bridge: the round trip from enqueueing an empty kernel to the awaiting coroutine running
// again, for each completion-bridge strategy, against the floor (launch + cudaStreamSynchronize
// on a blocked thread) and the naive path (cudaLaunchHostFunc -> asio::post) measured in the same
// run; plus the CPU the bridge uses with nothing in flight. Rows are interleaved in rounds so that
// drift of the host hits every row alike; ratios are to the floor of this run.
//
//   bench_bridge [--iterations N] [--json PATH]
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
#include <functional>
#include <memory>
#include <thread>
#endif

namespace {

struct options {
  std::size_t iterations = 5000;
  std::string json_path;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      o.json_path = argv[++i];
    } else if (a == "--iterations" && i + 1 < argc) {
      o.iterations = std::strtoull(argv[++i], nullptr, 10);
      if (o.iterations < 100) {
        std::cerr << "bench_bridge: --iterations must be at least 100\n";
        std::exit(2);
      }
    } else {
      std::cerr << "usage: bench_bridge [--iterations N (>= 100)] [--json PATH]\n";
      std::exit(2);
    }
  }
  return o;
}

std::string today() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

void write_json(const options& o, const boost::json::object& report) {
  if (o.json_path.empty()) return;
  std::ofstream out(o.json_path);
  out << boost::json::serialize(report) << "\n";
  if (!out) {
    std::cerr << "bench_bridge: cannot write " << o.json_path << "\n";
    std::exit(1);
  }
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

// An io_context on its own thread: either blocked in run() (the normal case), or spinning on
// poll() (shows how much of a round trip is the io thread waking up).
class io_thread {
 public:
  explicit io_thread(bool spinning) : work_(asio::make_work_guard(ioc_)) {
    thread_ = std::thread([this, spinning] {
      if (!spinning) {
        ioc_.run();
        return;
      }
      while (!stop_.load(std::memory_order_relaxed)) ioc_.poll();
    });
  }
  ~io_thread() {
    stop_ = true;
    work_.reset();
    ioc_.stop();
    thread_.join();
  }
  asio::io_context& context() { return ioc_; }

 private:
  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct row {
  std::string name;
  std::function<void(std::size_t n, std::vector<double>& out)> run;  // appends n samples (us)
  std::vector<double> samples;
};

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

  auto blocked_io = std::make_unique<io_thread>(false);
  auto spinning_io = std::make_unique<io_thread>(true);
  io_thread& blocked = *blocked_io;
  io_thread& spinning = *spinning_io;
  const completion_bridge::strategy strategies[] = {completion_bridge::strategy::host_func,
                                                    completion_bridge::strategy::event_poller,
                                                    completion_bridge::strategy::mapped_flag};
  std::vector<std::unique_ptr<completion_bridge>> bridges;
  for (auto st : strategies) bridges.push_back(std::make_unique<completion_bridge>(st));

  // A coroutine on `io` that measures n round trips with `await_once`.
  auto on_io = [](asio::io_context& io, auto await_once) {
    return [&io, await_once](std::size_t n, std::vector<double>& out) {
      asio::co_spawn(
          io,
          [&out, n, await_once]() -> asio::awaitable<void> {
            for (std::size_t i = 0; i < n; ++i) {
              const auto t0 = clock_type::now();
              co_await await_once();
              out.push_back(since_us(t0));
            }
          },
          asio::use_future)
          .get();
    };
  };

  std::vector<row> rows;
  rows.push_back({"floor: launch + cudaStreamSynchronize", [s](std::size_t n, std::vector<double>& out) {
                    for (std::size_t i = 0; i < n; ++i) {
                      const auto t0 = clock_type::now();
                      COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
                      COPROVE_CUDA_TRY(cudaStreamSynchronize(s));
                      out.push_back(since_us(t0));
                    }
                  }, {}});
  rows.push_back({"naive: cudaLaunchHostFunc -> asio::post", on_io(blocked.context(), [s]() -> asio::awaitable<void> {
                    COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
                    co_await async_host_func_post(s, asio::use_awaitable);
                  }), {}});
  for (int spin = 0; spin < 2; ++spin) {
    for (std::size_t k = 0; k < bridges.size(); ++k) {
      completion_bridge* bridge = bridges[k].get();
      auto& io = spin ? spinning.context() : blocked.context();
      rows.push_back({std::string("bridge ") + std::string(coprove::cuda::to_string(strategies[k])) +
                          (spin ? " (io thread polling)" : ""),
                      on_io(io, [s, bridge]() -> asio::awaitable<void> {
                        COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
                        coprove::runtime::completion_signal done;
                        bridge->signal_when_done(s, done);
                        auto [ec] = co_await done.async_wait(asio::as_tuple(asio::use_awaitable));
                        if (ec) throw std::system_error(ec);
                      }),
                      {}});
    }
  }

  // Warm up every row, then interleave rounds.
  for (auto& r : rows) {
    std::vector<double> discard;
    r.run(200, discard);
  }
  constexpr std::size_t rounds = 10;
  const std::size_t per_round = (o.iterations + rounds - 1) / rounds;
  for (std::size_t round = 0; round < rounds; ++round)
    for (auto& r : rows) r.run(per_round, r.samples);

  const summary floor = summarize(rows[0].samples);
  std::printf("bench_bridge on %s, %s: %zu round trips per row (empty kernel -> awaiting coroutine resumed)\n\n",
              gpu.c_str(), today().c_str(), rows[0].samples.size());
  std::printf("%-48s %9s %9s %9s %10s %10s\n", "path", "p50 us", "p99 us", "max us", "p50/floor", "p99/floor");
  boost::json::array json_rows;
  for (auto& r : rows) {
    const summary x = summarize(r.samples);
    std::printf("%-48s %9.2f %9.2f %9.1f %10.2f %10.2f\n", r.name.c_str(), x.p50, x.p99, x.max, x.p50 / floor.p50,
                x.p99 / floor.p99);
    json_rows.push_back({{"path", r.name},
                         {"samples", r.samples.size()},
                         {"p50_us", x.p50},
                         {"p99_us", x.p99},
                         {"max_us", x.max},
                         {"p50_ratio", x.p50 / floor.p50},
                         {"p99_ratio", x.p99 / floor.p99}});
  }

  // Idle CPU: the whole process (CUDA's own threads included) over 2 s with nothing in flight.
  std::printf("\nidle CPU over 2 s, nothing in flight (percent of one core, whole process)\n");
  boost::json::object idle;
  bridges.clear();
  rows.clear();
  spinning_io.reset();  // a polling io thread would use a whole core
  blocked_io.reset();
  const double baseline = idle_cpu_percent(2.0);
  std::printf("%-48s %9.3f\n", "no bridge", baseline);
  idle["no_bridge"] = baseline;
  for (auto st : strategies) {
    completion_bridge bridge(st);
    coprove::runtime::completion_signal done;  // one round trip so that its threads have run
    COPROVE_CUDA_TRY(coprove::cuda::launch_empty_kernel(s));
    bridge.signal_when_done(s, done);
    while (!done.is_set()) std::this_thread::yield();
    const double pct = idle_cpu_percent(2.0);
    std::printf("%-48s %9.3f\n", (std::string("bridge ") + std::string(coprove::cuda::to_string(st))).c_str(), pct);
    idle[std::string(coprove::cuda::to_string(st))] = pct;
  }
  std::printf("\ntargets: p50 <= 1.15x and p99 <= 1.3x the floor; idle <= 2%% of one core\n");
  std::printf("default strategy: %s\n", std::string(coprove::cuda::to_string(completion_bridge::default_strategy)).c_str());

  write_json(o, {{"bench", "bridge"},
                 {"gpu", gpu},
                 {"date", today()},
                 {"rows", json_rows},
                 {"idle_cpu_percent", idle},
                 {"default_strategy", std::string(coprove::cuda::to_string(completion_bridge::default_strategy))}});
  return 0;
}

#endif
