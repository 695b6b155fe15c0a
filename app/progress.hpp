// Progress of a command's jobs on stderr while the engine proves them (run, prove).
#pragma once

#include <coprove/engine/engine.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace coprove::app {

/// Prints progress until `finished` is set (then draws once more): on a terminal (`interactive`)
/// one line rewritten in place, otherwise one line each time a partition completes.
boost::asio::awaitable<void> show_progress(engine::engine& engine, const std::vector<std::uint64_t>& ids,
                                           std::size_t total, bool interactive, const bool& finished);

}  // namespace coprove::app
