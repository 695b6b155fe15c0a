// The composition root's warm-up: `coprove run` and `serve` admit their first partition only once
// the pinned pool holds its prewarm.
#include "backend.hpp"

#include <coprove/engine/host_backend.hpp>

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

using namespace coprove;

TEST_CASE("waiting for the warm pool returns once every prewarmed buffer is allocated", "[app][backend][cpu]") {
  boost::asio::io_context io;
  engine::engine_config cfg;
  cfg.results = engine::result_kind::evaluation_record;
  cfg.max_log_constraints = 12;
  cfg.synthesis_threads = 2;
  cfg.memory_budget_bytes = std::size_t{1} << 30;
  engine::engine e(io.get_executor(), cfg, engine::make_host_backend(1, 2));
  const boost::json::object warm = app::wait_for_warm_pool(e);
  const pinned::pool_stats pool = e.status_snapshot().pinned_pool;
  // The most the measured depth may reach, where it starts (3 x 2 threads + 2 x 2 slots: 10
  // partitions), each an assignment and h (lean inputs), and the two sets of b and c for the slow
  // path that records the constraint cache.
  CHECK(e.depth_per_device() == 10);
  CHECK(e.status_json().at("dispatch").at("depth_max").to_number<std::size_t>() == 10);
  CHECK(pool.allocations == 10 * 2 + 2 * 2);
  CHECK(warm.at("pinned_buffers").to_number<std::uint64_t>() == pool.allocations);
  CHECK(warm.at("pinned_bytes").to_number<std::size_t>() == pool.bytes_allocated);
  CHECK(pool.bytes_allocated == pool.allocations * (std::size_t{1} << 12) * 32);
  CHECK(pool.waiting == 0);
  CHECK(warm.at("pinned_pool_s").to_number<double>() >= 0.0);
}
