// A partition's inputs acquired step by step on an io_context: lean and full sets, the per-circuit
// count, and everything back when the struct goes, including after a wait that was cancelled.
#include <coprove/engine/detail/partition_inputs.hpp>

#include <coprove/pinned/host_allocator.hpp>
#include <coprove/runtime/error.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <exception>
#include <optional>
#include <system_error>

namespace {

using namespace coprove::engine::detail;
namespace pinned = coprove::pinned;
namespace runtime = coprove::runtime;

constexpr std::size_t vector_bytes = 4096;

struct resources {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{io.get_executor()};
  runtime::async_semaphore memory{io.get_executor(), 100};
  runtime::async_semaphore full_inputs{io.get_executor(), 1};
  pinned::pool pool{io.get_executor(), pinned::make_pageable_allocator(),
                    pinned::pool_config{.capacity_bytes = 8 * vector_bytes, .prewarm_count = 8,
                                        .prewarm_bytes = vector_bytes}};
  full_input_counts counts;
  input_sources sources() { return {memory, &full_inputs, pool, counts}; }

  resources() { pool.wait_idle(); }

  // Runs one step to its end; returns the error it threw (none: success).
  template <class Step>
  std::error_code run(Step step, boost::asio::cancellation_slot slot = {}) {
    std::optional<std::error_code> result;
    boost::asio::co_spawn(io, std::move(step), boost::asio::bind_cancellation_slot(slot, [&](std::exception_ptr e) {
                            result = std::error_code{};
                            if (!e) return;
                            try {
                              std::rethrow_exception(e);
                            } catch (const std::system_error& error) {
                              result = error.code();
                            }
                          }));
    while (!result && io.poll_one() != 0) {
    }
    REQUIRE(result);
    return *result;
  }

  void require_all_back() {
    CHECK(memory.available() == memory.capacity());
    CHECK(full_inputs.available() == full_inputs.capacity());
    CHECK(pool.stats().bytes_in_use == 0);
    CHECK(counts.empty());
  }
};

}  // namespace

TEST_CASE("a lean partition leases a and h, a full one a, b, c and h under the full-input permit",
          "[engine][partition_inputs][cpu]") {
  resources r;
  auto from = r.sources();
  {
    partition_inputs lean, full;
    CHECK_FALSE(r.run(reserve_memory(lean, from, 30)));
    CHECK_FALSE(r.run(lease_buffers(lean, from, vector_bytes, true, "mimc/10")));
    CHECK(lean.memory.units() == 30);
    CHECK((lean.a && lean.h));
    CHECK_FALSE((lean.b || lean.c || lean.full_input || lean.full_count));
    CHECK(r.counts.empty());

    CHECK_FALSE(r.run(lease_buffers(full, from, vector_bytes, false, "mimc/10")));
    CHECK((full.a && full.b && full.c && full.h));
    CHECK(full.full_input.units() == 1);
    CHECK(r.counts.at("mimc/10") == 1);
    CHECK(r.pool.stats().bytes_in_use == 6 * vector_bytes);
    CHECK(r.memory.available() == 70);

    // The lean one finds no PCE after all: b and c late, counted like the full one.
    full.full_input.release();
    CHECK_FALSE(r.run(acquire_late_abc(lean, from, vector_bytes, "mimc/10")));
    CHECK((lean.b && lean.c));
    CHECK(r.counts.at("mimc/10") == 2);
    CHECK(lean.b_span().size() == vector_bytes / sizeof(coprove::field::fr));
  }
  r.require_all_back();
}

TEST_CASE("a partition cancelled while it waits for its inputs gives back what it had",
          "[engine][partition_inputs][cpu]") {
  resources r;
  auto from = r.sources();
  partition_inputs holder;
  CHECK_FALSE(r.run(lease_buffers(holder, from, vector_bytes, false, "mimc/10")));  // holds the full-input permit
  {
    partition_inputs waiting;
    CHECK_FALSE(r.run(reserve_memory(waiting, from, 40)));
    boost::asio::cancellation_signal cancel;
    std::optional<std::error_code> result;
    const std::string circuit = "mimc/11";  // the coroutine holds a reference to it
    boost::asio::co_spawn(r.io, lease_buffers(waiting, from, vector_bytes, false, circuit),
                          boost::asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e) {
                            try {
                              if (e) std::rethrow_exception(e);
                              result = std::error_code{};
                            } catch (const std::system_error& error) {
                              result = error.code();
                            }
                          }));
    while (r.io.poll_one() != 0) {
    }
    CHECK_FALSE(result);  // waits for the full-input permit, counted already
    CHECK(r.counts.at("mimc/11") == 1);
    cancel.emit(boost::asio::cancellation_type::terminal);
    while (!result && r.io.poll_one() != 0) {
    }
    REQUIRE(result);
    CHECK(*result == std::errc::operation_canceled);
    CHECK(waiting.memory.units() == 40);
  }
  CHECK_FALSE(r.counts.contains("mimc/11"));
  CHECK(r.memory.available() == r.memory.capacity());
  holder = partition_inputs{};
  r.require_all_back();
}

TEST_CASE("a circuit count moves with its owner and is given back once", "[engine][partition_inputs][cpu]") {
  full_input_counts counts;
  {
    circuit_count first(counts, "a");
    circuit_count second(counts, "a");
    CHECK(counts.at("a") == 2);
    circuit_count moved = std::move(first);
    CHECK_FALSE(first);
    CHECK(moved);
    CHECK(counts.at("a") == 2);
    second.release();
    second.release();
    CHECK(counts.at("a") == 1);
  }
  CHECK(counts.empty());
}
