// A partition's inputs: acquisition in order, release in reverse by member order.
#include <coprove/engine/detail/partition_inputs.hpp>

#include <boost/asio/use_awaitable.hpp>

#include <system_error>
#include <utility>

namespace coprove::engine::detail {

circuit_count::circuit_count(full_input_counts& counts, const std::string& circuit_id)
    : counts_(&counts), entry_(counts.try_emplace(circuit_id, 0).first) {
  ++entry_->second;
}

circuit_count::circuit_count(circuit_count&& other) noexcept
    : counts_(std::exchange(other.counts_, nullptr)), entry_(other.entry_) {}

circuit_count& circuit_count::operator=(circuit_count&& other) noexcept {
  if (this != &other) {
    release();
    counts_ = std::exchange(other.counts_, nullptr);
    entry_ = other.entry_;
  }
  return *this;
}

void circuit_count::release() noexcept {
  full_input_counts* counts = std::exchange(counts_, nullptr);
  if (counts && --entry_->second == 0) counts->erase(entry_);
}

// Completion signatures here start with std::error_code, which use_awaitable hands back as the
// first element of a tuple rather than throwing.

boost::asio::awaitable<void> reserve_memory(partition_inputs& inputs, input_sources& from, std::size_t bytes) {
  auto [ec, permit] = co_await from.memory.async_acquire(bytes, boost::asio::use_awaitable);
  if (ec) throw std::system_error(ec);
  inputs.memory = std::move(permit);
}

boost::asio::awaitable<void> lease_buffers(partition_inputs& inputs, input_sources& from, std::size_t vector_bytes,
                                           bool lean, const std::string& circuit_id) {
  if (!lean && from.full_inputs) {
    inputs.full_count = circuit_count(from.full_counts, circuit_id);
    auto [ec, permit] = co_await from.full_inputs->async_acquire(1, boost::asio::use_awaitable);
    if (ec) throw std::system_error(ec);
    inputs.full_input = std::move(permit);
  }
  pinned::lease* const lean_set[] = {&inputs.a, &inputs.h};
  pinned::lease* const full_set[] = {&inputs.a, &inputs.b, &inputs.c, &inputs.h};
  for (pinned::lease* l : lean ? std::span<pinned::lease* const>(lean_set) : std::span<pinned::lease* const>(full_set)) {
    auto [ec, leased] = co_await from.pool.async_checkout(vector_bytes, boost::asio::use_awaitable);
    if (ec) throw std::system_error(ec);
    *l = std::move(leased);
  }
}

boost::asio::awaitable<void> acquire_late_abc(partition_inputs& inputs, input_sources& from, std::size_t vector_bytes,
                                              const std::string& circuit_id) {
  auto [ec, permit] = co_await from.full_inputs->async_acquire(1, boost::asio::use_awaitable);
  if (ec) throw std::system_error(ec);
  inputs.full_input = std::move(permit);
  inputs.full_count = circuit_count(from.full_counts, circuit_id);
  for (pinned::lease* l : {&inputs.b, &inputs.c}) {
    auto [checkout_ec, leased] = co_await from.pool.async_checkout(vector_bytes, boost::asio::use_awaitable);
    if (checkout_ec) throw std::system_error(checkout_ec);
    *l = std::move(leased);
  }
}

}  // namespace coprove::engine::detail
