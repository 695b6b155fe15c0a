// bench_semaphore: hand-off latency (release -> waiter resumed) on one thread and across threads,
// and acquire+release throughput, for coprove::runtime::async_semaphore side by side with
// Boost.Asio's experimental::concurrent_channel used as a semaphore (capacity N: async_send
// acquires a place, try_receive gives it back).
//
//   bench_semaphore [--rounds N] [--json PATH]
#include "coprove/runtime/async_semaphore.hpp"

#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using coprove::runtime::async_semaphore;
using coprove::runtime::permit;
using channel = asio::experimental::concurrent_channel<void(boost::system::error_code)>;

namespace {

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

struct result {
  std::string case_name;
  std::string impl;
  double p50_ns = 0;
  double p99_ns = 0;
  double ops_per_s = 0;
};

// p50 / p99 of per-operation samples; ops_per_s from the total time of `ops` operations.
result summarise(std::string case_name, std::string impl, std::vector<double> samples, double ops,
                 double total_ns) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    if (samples.empty()) return 0.0;
    const auto i = static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1));
    return samples[i];
  };
  return {std::move(case_name), std::move(impl), at(0.5), at(0.99), ops / (total_ns * 1e-9)};
}

// --- hand-off on one thread: the waiter is queued, release() runs, run_one() resumes it -------

result handoff_one_thread_coprove(int rounds) {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 1);
  permit held = sem.try_acquire(1);
  auto work = asio::make_work_guard(ioc);  // run_one must not stop the context between rounds
  std::vector<double> samples(static_cast<std::size_t>(rounds));
  std::uint64_t resumed = 0;
  const auto begin = now_ns();
  for (int i = 0; i < rounds; ++i) {
    sem.async_acquire(1, [&](std::error_code, permit p) {
      resumed = now_ns();
      held = std::move(p);
    });
    const auto t0 = now_ns();
    held.release();
    ioc.run_one();
    samples[static_cast<std::size_t>(i)] = static_cast<double>(resumed - t0);
  }
  return summarise("handoff_one_thread", "coprove", std::move(samples), rounds, static_cast<double>(now_ns() - begin));
}

result handoff_one_thread_channel(int rounds) {
  asio::io_context ioc;
  channel ch(ioc.get_executor(), 1);
  ch.try_send(boost::system::error_code());  // the one place is taken
  auto work = asio::make_work_guard(ioc);  // run_one must not stop the context between rounds
  std::vector<double> samples(static_cast<std::size_t>(rounds));
  std::uint64_t resumed = 0;
  const auto begin = now_ns();
  for (int i = 0; i < rounds; ++i) {
    ch.async_send(boost::system::error_code(), [&](boost::system::error_code) { resumed = now_ns(); });
    const auto t0 = now_ns();
    ch.try_receive([](boost::system::error_code) {});  // release: the waiting send takes the place
    ioc.run_one();
    samples[static_cast<std::size_t>(i)] = static_cast<double>(resumed - t0);
  }
  return summarise("handoff_one_thread", "asio_channel", std::move(samples), rounds, static_cast<double>(now_ns() - begin));
}

// --- hand-off across threads: the waiter's io_context runs on another thread ---------------------

// Runs `rounds` hand-offs: `arm` (on the waiter thread) queues a waiter that calls `resumed_at`,
// `release` (on this thread) lets it through, `reacquire` takes the unit back for the next round.
template <class Arm, class Release, class Reacquire>
std::vector<double> cross_thread(asio::io_context& waiter_context, int rounds, Arm arm, Release release,
                                 Reacquire reacquire, std::atomic<bool>& armed, std::atomic<std::uint64_t>& resumed,
                                 bool spin) {
  std::atomic<bool> stop{false};
  auto work = asio::make_work_guard(waiter_context);
  std::thread waiter_thread([&] {
    if (spin) {
      while (!stop.load(std::memory_order_acquire)) waiter_context.poll();
    } else {
      waiter_context.run();
    }
  });
  std::vector<double> samples(static_cast<std::size_t>(rounds));
  for (int i = 0; i < rounds; ++i) {
    armed.store(false);
    resumed.store(0);
    asio::post(waiter_context, arm);
    while (!armed.load(std::memory_order_acquire)) std::this_thread::yield();
    const auto t0 = now_ns();
    release();
    std::uint64_t t1;
    while ((t1 = resumed.load(std::memory_order_acquire)) == 0) {
    }
    samples[static_cast<std::size_t>(i)] = static_cast<double>(t1 - t0);
    reacquire();
  }
  stop.store(true);
  work.reset();
  waiter_thread.join();
  return samples;
}

result handoff_cross_thread_coprove(int rounds, bool spin) {
  asio::io_context waiter_context;
  async_semaphore sem(waiter_context.get_executor(), 1);
  permit held = sem.try_acquire(1);
  std::atomic<bool> armed{false};
  std::atomic<std::uint64_t> resumed{0};
  const auto begin = now_ns();
  auto samples = cross_thread(
      waiter_context, rounds,
      [&] {
        sem.async_acquire(1, [&](std::error_code, permit p) {
          const auto t = now_ns();
          p.release();  // give it back at once so that the releasing thread can take it again
          resumed.store(t, std::memory_order_release);
        });
        armed.store(true, std::memory_order_release);
      },
      [&] { held.release(); },
      [&] {
        while (!(held = sem.try_acquire(1))) {
        }
      },
      armed, resumed, spin);
  return summarise(spin ? "handoff_cross_thread_spin" : "handoff_cross_thread", "coprove", std::move(samples), rounds,
                   static_cast<double>(now_ns() - begin));
}

result handoff_cross_thread_channel(int rounds, bool spin) {
  asio::io_context waiter_context;
  channel ch(waiter_context.get_executor(), 1);
  ch.try_send(boost::system::error_code());
  std::atomic<bool> armed{false};
  std::atomic<std::uint64_t> resumed{0};
  const auto begin = now_ns();
  auto samples = cross_thread(
      waiter_context, rounds,
      [&] {
        ch.async_send(boost::system::error_code(), [&](boost::system::error_code) {
          const auto t = now_ns();
          ch.try_receive([](boost::system::error_code) {});  // give the place back at once
          resumed.store(t, std::memory_order_release);
        });
        armed.store(true, std::memory_order_release);
      },
      [&] { ch.try_receive([](boost::system::error_code) {}); },
      [&] {
        while (!ch.try_send(boost::system::error_code())) {
        }
      },
      armed, resumed, spin);
  return summarise(spin ? "handoff_cross_thread_spin" : "handoff_cross_thread", "asio_channel", std::move(samples),
                   rounds, static_cast<double>(now_ns() - begin));
}

// --- uncontended acquire + release throughput ----------------------------------------------------

constexpr int batch = 64;

// Callback chain on one io_context: each completion releases and starts the next acquire.
result throughput_callback_coprove(int ops) {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 64);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(ops / batch + 1));
  int remaining = ops;
  std::uint64_t batch_start = now_ns();
  std::function<void()> next = [&] {
    if (remaining == 0) return;
    if (--remaining % batch == 0) {
      const auto t = now_ns();
      samples.push_back(static_cast<double>(t - batch_start) / batch);
      batch_start = t;
    }
    sem.async_acquire(1, [&](std::error_code, permit p) {
      p.release();
      next();
    });
  };
  const auto begin = now_ns();
  next();
  ioc.run();
  return summarise("throughput_callback", "coprove", std::move(samples), ops, static_cast<double>(now_ns() - begin));
}

result throughput_callback_channel(int ops) {
  asio::io_context ioc;
  channel ch(ioc.get_executor(), 64);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(ops / batch + 1));
  int remaining = ops;
  std::uint64_t batch_start = now_ns();
  std::function<void()> next = [&] {
    if (remaining == 0) return;
    if (--remaining % batch == 0) {
      const auto t = now_ns();
      samples.push_back(static_cast<double>(t - batch_start) / batch);
      batch_start = t;
    }
    ch.async_send(boost::system::error_code(), [&](boost::system::error_code) {
      ch.try_receive([](boost::system::error_code) {});
      next();
    });
  };
  const auto begin = now_ns();
  next();
  ioc.run();
  return summarise("throughput_callback", "asio_channel", std::move(samples), ops, static_cast<double>(now_ns() - begin));
}

// A coroutine that co_awaits each acquire.
result throughput_awaitable_coprove(int ops) {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 64);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(ops / batch + 1));
  auto body = [&]() -> asio::awaitable<void> {
    auto batch_start = now_ns();
    for (int i = 1; i <= ops; ++i) {
      auto [ec, p] = co_await sem.async_acquire(1, asio::use_awaitable);
      p.release();
      if (i % batch == 0) {
        const auto t = now_ns();
        samples.push_back(static_cast<double>(t - batch_start) / batch);
        batch_start = t;
      }
    }
  };
  const auto begin = now_ns();
  asio::co_spawn(ioc, body(), asio::detached);
  ioc.run();
  return summarise("throughput_awaitable", "coprove", std::move(samples), ops, static_cast<double>(now_ns() - begin));
}

result throughput_awaitable_channel(int ops) {
  asio::io_context ioc;
  channel ch(ioc.get_executor(), 64);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(ops / batch + 1));
  auto body = [&]() -> asio::awaitable<void> {
    auto batch_start = now_ns();
    for (int i = 1; i <= ops; ++i) {
      co_await ch.async_send(boost::system::error_code(), asio::use_awaitable);
      ch.try_receive([](boost::system::error_code) {});
      if (i % batch == 0) {
        const auto t = now_ns();
        samples.push_back(static_cast<double>(t - batch_start) / batch);
        batch_start = t;
      }
    }
  };
  const auto begin = now_ns();
  asio::co_spawn(ioc, body(), asio::detached);
  ioc.run();
  return summarise("throughput_awaitable", "asio_channel", std::move(samples), ops, static_cast<double>(now_ns() - begin));
}

// The synchronous fast path: try_acquire + release against try_send + try_receive.
result throughput_try_coprove(int ops) {
  asio::io_context ioc;
  async_semaphore sem(ioc.get_executor(), 64);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(ops / batch + 1));
  const auto begin = now_ns();
  auto batch_start = begin;
  for (int i = 1; i <= ops; ++i) {
    permit p = sem.try_acquire(1);
    p.release();
    if (i % batch == 0) {
      const auto t = now_ns();
      samples.push_back(static_cast<double>(t - batch_start) / batch);
      batch_start = t;
    }
  }
  return summarise("throughput_try", "coprove", std::move(samples), ops, static_cast<double>(now_ns() - begin));
}

result throughput_try_channel(int ops) {
  asio::io_context ioc;
  channel ch(ioc.get_executor(), 64);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(ops / batch + 1));
  const auto begin = now_ns();
  auto batch_start = begin;
  for (int i = 1; i <= ops; ++i) {
    ch.try_send(boost::system::error_code());
    ch.try_receive([](boost::system::error_code) {});
    if (i % batch == 0) {
      const auto t = now_ns();
      samples.push_back(static_cast<double>(t - batch_start) / batch);
      batch_start = t;
    }
  }
  return summarise("throughput_try", "asio_channel", std::move(samples), ops, static_cast<double>(now_ns() - begin));
}

// Two threads, each with its own io_context, share one semaphore / channel (capacity 64: never
// full, so no thread waits for the other).
template <class Start>
result two_threads(const char* impl, int ops, Start start) {
  asio::io_context contexts[2];
  std::vector<double> samples[2];
  const auto begin = now_ns();
  std::thread other([&] { start(contexts[1], samples[1], ops / 2); });
  start(contexts[0], samples[0], ops / 2);
  other.join();
  const auto total = static_cast<double>(now_ns() - begin);
  samples[0].insert(samples[0].end(), samples[1].begin(), samples[1].end());
  return summarise("throughput_callback_two_threads", impl, std::move(samples[0]), ops, total);
}

result throughput_two_threads_coprove(int ops) {
  asio::io_context shared;
  async_semaphore sem(shared.get_executor(), 64);
  return two_threads("coprove", ops, [&](asio::io_context& ioc, std::vector<double>& samples, int n) {
    int remaining = n;
    std::uint64_t batch_start = now_ns();
    std::function<void()> next = [&] {
      if (remaining == 0) return;
      if (--remaining % batch == 0) {
        const auto t = now_ns();
        samples.push_back(static_cast<double>(t - batch_start) / batch);
        batch_start = t;
      }
      sem.async_acquire(1, asio::bind_executor(ioc.get_executor(), [&](std::error_code, permit p) {
        p.release();
        next();
      }));
    };
    next();
    ioc.run();
  });
}

result throughput_two_threads_channel(int ops) {
  asio::io_context shared;
  channel ch(shared.get_executor(), 64);
  return two_threads("asio_channel", ops, [&](asio::io_context& ioc, std::vector<double>& samples, int n) {
    int remaining = n;
    std::uint64_t batch_start = now_ns();
    std::function<void()> next = [&] {
      if (remaining == 0) return;
      if (--remaining % batch == 0) {
        const auto t = now_ns();
        samples.push_back(static_cast<double>(t - batch_start) / batch);
        batch_start = t;
      }
      ch.async_send(boost::system::error_code(), asio::bind_executor(ioc.get_executor(), [&](boost::system::error_code) {
        ch.try_receive([](boost::system::error_code) {});
        next();
      }));
    };
    next();
    ioc.run();
  });
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20000;
  std::string json_path;
  coprove::bench::options("bench_semaphore", "runtime::async_semaphore against Asio's concurrent_channel as a semaphore")
      .number("--rounds", rounds, "N", "hand-offs a case (default 20000; throughput cases run 10 N operations)", 1,
              100'000'000)
      .text("--json", json_path, "PATH", "write the rows as JSON")
      .parse(argc, argv);
  const int ops = rounds * 10;

  // The machine may be shared: each case runs `repeats` times, alternating the two
  // implementations so that load changes hit both alike; the table shows the median p50 / p99 and
  // the best throughput of the repetitions.
  constexpr int repeats = 5;
  std::vector<result> results;
  auto run_case = [&](auto coprove_case, auto channel_case) {
    std::vector<result> runs[2];
    for (int r = 0; r < repeats; ++r) {
      runs[0].push_back(coprove_case());
      runs[1].push_back(channel_case());
    }
    for (auto& impl_runs : runs) {
      result combined = impl_runs.front();
      std::vector<double> p50, p99;
      combined.ops_per_s = 0;
      for (const auto& r : impl_runs) {
        p50.push_back(r.p50_ns);
        p99.push_back(r.p99_ns);
        combined.ops_per_s = std::max(combined.ops_per_s, r.ops_per_s);
      }
      std::sort(p50.begin(), p50.end());
      std::sort(p99.begin(), p99.end());
      combined.p50_ns = p50[p50.size() / 2];
      combined.p99_ns = p99[p99.size() / 2];
      results.push_back(combined);
    }
  };
  const int per_run = std::max(1, rounds / repeats);
  const int ops_per_run = std::max(batch, ops / repeats);
  run_case([&] { return handoff_one_thread_coprove(per_run); }, [&] { return handoff_one_thread_channel(per_run); });
  run_case([&] { return handoff_cross_thread_coprove(std::max(1, per_run / 4), false); },
           [&] { return handoff_cross_thread_channel(std::max(1, per_run / 4), false); });
  run_case([&] { return throughput_callback_coprove(ops_per_run); }, [&] { return throughput_callback_channel(ops_per_run); });
  run_case([&] { return throughput_awaitable_coprove(ops_per_run); },
           [&] { return throughput_awaitable_channel(ops_per_run); });
  run_case([&] { return throughput_try_coprove(ops_per_run); }, [&] { return throughput_try_channel(ops_per_run); });
  run_case([&] { return throughput_two_threads_coprove(ops_per_run); },
           [&] { return throughput_two_threads_channel(ops_per_run); });

  coprove::bench::report table({{"case", "case"},
                                 {"impl", "impl"},
                                 {"p50 ns", "p50_ns", 0},
                                 {"p99 ns", "p99_ns", 0},
                                 {"ops/s", "ops_per_s", 0}});
  for (const auto& r : results)
    table.add({{"case", r.case_name}, {"impl", r.impl}, {"p50_ns", r.p50_ns}, {"p99_ns", r.p99_ns}, {"ops_per_s", r.ops_per_s}});
  table.print();
  std::printf("\n%d runs per case (median p50 / p99, best ops/s). "
              "handoff_*: release() -> waiter resumed (cross-thread: the waiter's thread blocks in\n"
              "io_context::run()). throughput_*: per-operation time from batches of %d.\n", repeats, batch);
  if (!json_path.empty() && !table.write_json(json_path, "bench_semaphore")) return 1;
  return 0;
}
