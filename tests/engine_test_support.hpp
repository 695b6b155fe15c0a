// Shared by the engine tests on the host and the CUDA backends: an io_context on its own thread,
// a blocking prove, a request builder, and the check that everything the engine acquired is back.
#pragma once

#include <coprove/engine/engine.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <mutex>
#include <cstdint>
#include <system_error>
#include <thread>
#include <tuple>

namespace coprove::test {

/// The pipeline's mechanics with evaluation records (no keys): a small plan on two synthesis
/// threads and a 1 GiB budget.
inline engine::engine_config record_engine_config(unsigned max_log_constraints) {
  engine::engine_config cfg;
  cfg.results = engine::result_kind::evaluation_record;
  cfg.max_log_constraints = max_log_constraints;
  cfg.synthesis_threads = 2;
  cfg.memory_budget_bytes = std::size_t{1} << 30;
  return cfg;
}

/// Holds every synthesis that passes it while closed (an engine_config::synthesis_hook calls
/// pass()), so that the jobs behind it stay queued or running; counts the syntheses that came.
struct synthesis_gate {
  std::mutex mutex;
  std::condition_variable cv, entered_cv;
  bool open = true;
  std::atomic<int> entered{0};
  void close() {
    std::lock_guard lock(mutex);
    open = false;
  }
  void pass() {
    std::unique_lock lock(mutex);
    ++entered;
    entered_cv.notify_all();
    cv.wait(lock, [&] { return open; });
  }
  /// Blocks until `count` syntheses have come to the gate.
  void wait_for_entered(int count) {
    std::unique_lock lock(mutex);
    entered_cv.wait(lock, [&] { return entered.load() >= count; });
  }
  void release() {
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    cv.notify_all();
  }
};

/// A fresh folder under the system's temporary directory, removed at the end of the scope.
struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "coprove-engine-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

/// An io_context running on its own thread for as long as the object lives.
struct running_io {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{io.get_executor()};
  std::thread thread{[this] { io.run(); }};
  ~running_io() {
    guard.reset();
    thread.join();
  }
};

/// An engine configuration that ends partitions with their evaluation record (no keys), with a
/// 1 GiB memory budget.
inline engine::engine_config records_config(unsigned max_log_constraints, std::size_t synthesis_threads) {
  engine::engine_config cfg;
  cfg.results = engine::result_kind::evaluation_record;
  cfg.max_log_constraints = max_log_constraints;
  cfg.synthesis_threads = synthesis_threads;
  cfg.memory_budget_bytes = std::size_t{1} << 30;
  return cfg;
}

inline engine::prove_request mimc_request(std::size_t partitions, unsigned log_constraints, std::uint64_t seed) {
  engine::prove_request r;
  r.circuit = "mimc";
  r.log_constraints = log_constraints;
  r.partitions = partitions;
  r.seed = seed;
  return r;
}

/// use_future hands back the (std::error_code, prove_result) completion as a tuple.
inline std::tuple<std::error_code, engine::prove_result> prove(engine::engine& e, engine::prove_request r) {
  return e.async_prove(std::move(r), boost::asio::use_future).get();
}

/// Everything the engine acquires is back where it started.
inline void require_at_baseline(const engine::engine& e) {
  const engine::engine_status s = e.status_snapshot();
  CHECK(s.gpu_slots.available == s.gpu_slots.capacity);
  CHECK(s.memory_reservation.available == s.memory_reservation.capacity);
  CHECK(s.pinned_pool.bytes_in_use == 0);
  CHECK(s.full_input_slots.available == s.full_input_slots.capacity);
  CHECK(s.dispatch.in_flight == 0);
  CHECK(s.dispatch.synthesizing == 0);
  CHECK(s.dispatch.gpu_queue == 0);
  CHECK(s.dispatch.queued == 0);
}

}  // namespace coprove::test
