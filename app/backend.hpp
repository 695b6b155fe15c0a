// Backend selection, the binary's composition root: the CUDA backend when it is compiled in and a
// GPU is visible (or asked for), otherwise the host backend, said loudly. An explicit request for
// CUDA that cannot be met is an error, never a silent switch.
#pragma once

#include <coprove/engine/compute_backend.hpp>
#include "config.hpp"
#include <coprove/engine/engine.hpp>
#include <coprove/groth16/key_files.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/object.hpp>

#include <memory>
#include <optional>
#include <string>

namespace coprove::app {
using engine::engine_config;


/// True when this build contains the CUDA backend.
bool cuda_compiled_in() noexcept;

/// Visible CUDA devices (0 without the CUDA backend, a driver or a GPU).
std::size_t visible_gpus() noexcept;

/// The backend `backend: auto` picks on this machine: "cuda" or "host".
std::string auto_backend_name();

/// Builds the backend the configuration asks for. Throws usage_error when `cuda` (or a device
/// list) is asked for and cannot be had; logs at warning (once) and counts in
/// coprove_backend_cpu_fallback_total when `auto` finds no GPU.
std::unique_ptr<engine::compute_backend> make_backend(const app::app_config& config);

/// The proving keys' subgroup tests on the GPU the configuration's backend resolves to (its first
/// device), for load_engine_keys; nullopt on the host backend, where the decoders test each point
/// on the CPU. Said at info when a GPU makes them. Throws make_backend's usage_error when "cuda"
/// was asked for and cannot be had, so that no key is loaded first.
std::optional<groth16::bulk_subgroup_test> key_subgroup_test(const app::app_config& config);

/// Builds the backend and the engine on `control`. A configuration the engine refuses becomes a
/// usage_error naming `command`; a memory plan that does not fit stays a memory_plan_error.
std::unique_ptr<engine::engine> make_engine(boost::asio::any_io_executor control, const app::app_config& config,
                                            const engine::engine_config& engine_config, std::string_view command);

/// Blocks until the engine's pinned pool holds its prewarm (the buffers of the depth at start), so
/// that the first partition is admitted to a warm pool; call it before the control executor runs.
/// Returns the wait for the report: pinned_pool_s, pinned_buffers and pinned_bytes.
boost::json::object wait_for_warm_pool(engine::engine& engine);

}  // namespace coprove::app
