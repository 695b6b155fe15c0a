// The completion bridge on a GPU: every strategy delivers 10,000 completions in order with none
// lost or doubled (also with an io thread that polls the bridge while it spins), refuses a stream
// being captured, lets a waiter be cancelled and still drains, and fails (never hangs) on a device
// fault. The fault ruins the CUDA context, so it runs in a child process (this executable, a
// hidden test).
#include "coprove/cuda/completion_bridge.hpp"

#include "coprove/cuda/device.hpp"
#include "coprove/cuda/error.hpp"
#include "coprove/cuda/event.hpp"
#include "coprove/cuda/stream.hpp"
#include "coprove/runtime/metrics.hpp"
#include "coprove/runtime/spin_runner.hpp"
#include "cuda_test_kernels.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using coprove::cuda::completion_bridge;
using namespace std::chrono_literals;

namespace {

const completion_bridge::strategy all_strategies[] = {
    completion_bridge::strategy::host_func, completion_bridge::strategy::event_poller,
    completion_bridge::strategy::mapped_flag, completion_bridge::strategy::stream_write};

template <class Pred>
void run_until(asio::io_context& ioc, Pred done, std::chrono::seconds limit = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) FAIL("condition not reached");
    ioc.restart();
    ioc.run_one_for(5ms);
  }
}

}  // namespace

TEST_CASE("device_count never throws and finds the GPU", "[gpu][bridge]") {
  const int n = coprove::cuda::device_count();
  REQUIRE(n >= 1);
  coprove::cuda::scoped_device on(n - 1);
  CHECK(coprove::cuda::current_device() == n - 1);
  CHECK_FALSE(coprove::cuda::device_name(0).empty());
}

TEST_CASE("stream and event wrappers record and observe completion", "[gpu][bridge]") {
  coprove::cuda::stream s;
  coprove::cuda::event e;
  REQUIRE(coprove::cuda::testing::launch_delay_kernel(s.get(), 1'000'000) == cudaSuccess);
  e.record(s.get());
  e.synchronize();
  CHECK(e.query() == cudaSuccess);
  CHECK(s.ready());
  coprove::cuda::stream moved(std::move(s));
  CHECK(moved.get() != nullptr);
  CHECK(s.get() == nullptr);
}

TEST_CASE("stream_write runs where the device has 64-bit stream memory operations, else it is refused",
          "[gpu][bridge]") {
  if (completion_bridge::supported(completion_bridge::strategy::stream_write)) {
    completion_bridge bridge(completion_bridge::strategy::stream_write);
    CHECK(bridge.get_strategy() == completion_bridge::strategy::stream_write);
  } else {
    try {
      completion_bridge bridge(completion_bridge::strategy::stream_write);
      FAIL("an unsupported stream_write bridge was built");
    } catch (const coprove::cuda::cuda_error& e) {
      CHECK(e.status() == cudaErrorNotSupported);
      CHECK(std::string(e.what()).find("stream memory operations") != std::string::npos);
    }
  }
}

TEST_CASE("each bridge strategy delivers 10,000 completions in order, none lost or doubled", "[gpu][bridge]") {
  const auto strategy = GENERATE(from_range(std::begin(all_strategies), std::end(all_strategies)));
  // true: the handlers' io thread runs run_spinning and polls the bridge itself while it spins.
  const bool io_polls = GENERATE(false, true);
  INFO("strategy " << coprove::cuda::to_string(strategy) << (io_polls ? ", io thread polls the bridge" : ""));
  if (!completion_bridge::supported(strategy)) {
    WARN("not supported on this device: " << coprove::cuda::to_string(strategy));
    return;
  }
  auto& double_sets = coprove::runtime::registry::global().get_counter("coprove_completion_signal_double_set_total", "");
  const auto doubles_before = double_sets.value();

  completion_bridge bridge(strategy);
  CHECK(bridge.get_strategy() == strategy);
  std::array<coprove::cuda::stream, 2> streams;
  asio::io_context ioc;
  constexpr int total = 10'000;
  std::array<std::vector<int>, 2> seen;
  std::vector<int> times_completed(total, 0);
  int errors = 0;
  for (int i = 0; i < total; ++i) {
    const int lane = i % 2;
    cudaStream_t s = streams[lane].get();
    // Now and then a kernel that runs long enough for later calls to queue up behind it.
    const cudaError_t launched = i % 97 == 0 ? coprove::cuda::testing::launch_delay_kernel(s, 50'000)
                                             : coprove::cuda::launch_empty_kernel(s);
    REQUIRE(launched == cudaSuccess);
    coprove::runtime::completion_signal done;
    bridge.signal_when_done(s, done);
    done.async_wait(asio::bind_executor(ioc, [&, i, lane](std::error_code ec) {
      if (ec) ++errors;
      ++times_completed[i];
      seen[lane].push_back(i);
    }));
  }
  coprove::runtime::spin_stats stats;
  if (io_polls) {
    // The waiters are already queued on the signals; the io thread both polls the bridge and runs
    // them. Delay kernels outlast its 100 us window now and then, so both threads deliver.
    auto work = asio::make_work_guard(ioc);
    std::thread io_thread([&] {
      coprove::runtime::run_spinning(ioc, coprove::runtime::default_spin_window, stats, &bridge.as_spin_source());
    });
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (bridge.in_flight() != 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    std::promise<void> drained;
    asio::post(ioc, [&] { drained.set_value(); });  // after every waiter posted so far
    drained.get_future().wait_for(10s);
    ioc.stop();
    io_thread.join();
    ioc.restart();
    ioc.poll();  // a doubled completion would show up here
  } else {
    run_until(ioc, [&] { return seen[0].size() + seen[1].size() >= static_cast<std::size_t>(total); });
    ioc.restart();
    ioc.poll();  // a doubled completion would show up here
  }
  CHECK(errors == 0);
  CHECK(seen[0].size() + seen[1].size() == static_cast<std::size_t>(total));
  for (int lane = 0; lane < 2; ++lane)
    for (std::size_t k = 0; k < seen[lane].size(); ++k) {
      if (seen[lane][k] != static_cast<int>(2 * k) + lane) FAIL("out of order on stream " << lane << " at " << k);
    }
  CHECK(std::count(times_completed.begin(), times_completed.end(), 1) == total);
  CHECK(double_sets.value() == doubles_before);
  CHECK(bridge.in_flight() == 0);
  if (io_polls && strategy != completion_bridge::strategy::host_func) {
    UNSCOPED_INFO("completions found by the io thread: " << stats.source_completions);
    CHECK(stats.source_completions <= static_cast<std::uint64_t>(total));
  }
}

TEST_CASE("a cancelled wait leaves at once; the bridge still sets its signal and drains", "[gpu][bridge]") {
  const auto strategy = GENERATE(from_range(std::begin(all_strategies), std::end(all_strategies)));
  INFO("strategy " << coprove::cuda::to_string(strategy));
  if (!completion_bridge::supported(strategy)) {
    WARN("not supported on this device: " << coprove::cuda::to_string(strategy));
    return;
  }
  completion_bridge bridge(strategy);
  coprove::cuda::stream s;
  asio::io_context ioc;
  REQUIRE(coprove::cuda::testing::launch_delay_kernel(s.get(), 20'000'000) == cudaSuccess);  // 20 ms
  coprove::runtime::completion_signal done;
  bridge.signal_when_done(s.get(), done);
  CHECK(bridge.in_flight() == 1);
  asio::cancellation_signal cancel;
  bool completed = false;
  std::error_code result;
  done.async_wait(asio::bind_cancellation_slot(cancel.slot(), asio::bind_executor(ioc, [&](std::error_code ec) {
                                                 completed = true;
                                                 result = ec;
                                               })));
  cancel.emit(asio::cancellation_type::terminal);
  run_until(ioc, [&] { return completed; });
  CHECK(result == std::errc::operation_canceled);
  CHECK_FALSE(done.is_set());  // the GPU is still busy
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!done.is_set() && std::chrono::steady_clock::now() < deadline) {
    bridge.poll();  // any thread may poll; the poller thread would set it too
    std::this_thread::sleep_for(100us);
  }
  REQUIRE(done.is_set());
  CHECK_FALSE(done.result());
  CHECK(bridge.in_flight() == 0);
  CHECK(s.ready());
}

TEST_CASE("the bridge refuses a stream that is being captured", "[gpu][bridge]") {
  const auto strategy = GENERATE(from_range(std::begin(all_strategies), std::end(all_strategies)));
  INFO("strategy " << coprove::cuda::to_string(strategy));
  completion_bridge bridge(strategy);
  coprove::cuda::stream s;
  REQUIRE(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeRelaxed) == cudaSuccess);
  coprove::runtime::completion_signal done;
  bridge.signal_when_done(s.get(), done);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(s.get(), &graph) == cudaSuccess);
  if (graph != nullptr) cudaGraphDestroy(graph);
  REQUIRE(done.is_set());
  CHECK(done.result() == coprove::cuda::make_error_code(cudaErrorStreamCaptureUnsupported));
  CHECK(bridge.in_flight() == 0);
}

TEST_CASE("the bridge waits for the work in flight before it is destroyed", "[gpu][bridge]") {
  const auto strategy = GENERATE(from_range(std::begin(all_strategies), std::end(all_strategies)));
  INFO("strategy " << coprove::cuda::to_string(strategy));
  coprove::cuda::stream s;
  coprove::runtime::completion_signal done;
  {
    completion_bridge bridge(strategy);
    REQUIRE(coprove::cuda::testing::launch_delay_kernel(s.get(), 20'000'000) == cudaSuccess);  // 20 ms
    bridge.signal_when_done(s.get(), done);
  }
  REQUIRE(done.is_set());
  CHECK_FALSE(done.result());
  CHECK(s.ready());
}

// Run only in a child process (see below): the fault ruins this process's CUDA context.
TEST_CASE("a device fault fails the signal instead of hanging in a child process", "[.][gpu_fault]") {
  const char* name = std::getenv("COPROVE_FAULT_STRATEGY");
  REQUIRE(name != nullptr);
  auto strategy = completion_bridge::strategy::event_poller;
  for (auto s : all_strategies)
    if (coprove::cuda::to_string(s) == name) strategy = s;
  completion_bridge bridge(strategy);
  coprove::cuda::stream s;
  REQUIRE(coprove::cuda::testing::launch_fault_kernel(s.get()) == cudaSuccess);
  coprove::runtime::completion_signal done;
  bridge.signal_when_done(s.get(), done);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!done.is_set() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  REQUIRE(done.is_set());
  REQUIRE(done.result());
  CHECK(done.result().category() == coprove::cuda::cuda_category());
  CHECK(done.result() != coprove::cuda::make_error_code(cudaSuccess));
  UNSCOPED_INFO("fault reported as " << done.result().message());
}

TEST_CASE("a device fault fails the signal with the CUDA error for every strategy", "[gpu][bridge]") {
  const auto strategy = GENERATE(from_range(std::begin(all_strategies), std::end(all_strategies)));
  const std::string name(coprove::cuda::to_string(strategy));
  INFO("strategy " << name);
  // Resolved here: inside the shell that std::system starts, /proc/self/exe would be the shell.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "COPROVE_FAULT_STRATEGY=" + name + " '" + self +
                              "' \"a device fault fails the signal instead of hanging in a child process\""
                              " >/dev/null 2>&1";
  CHECK(std::system(command.c_str()) == 0);
}
