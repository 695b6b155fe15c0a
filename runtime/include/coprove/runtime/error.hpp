// Error codes of the runtime primitives (std::error_code category "coprove.runtime"), and the
// one cancellation code every asynchronous operation in coprove completes with.
#pragma once

#include <system_error>

namespace coprove::runtime {

/// Errors reported by the runtime primitives through std::error_code.
enum class errc {
  already_set = 1,    ///< a one-shot completion_signal was set a second time
  exceeds_capacity,   ///< a request asks for more units than the semaphore has
  shut_down,          ///< the object was shut down while the operation waited
  invalid_argument,   ///< an asynchronous call was given a bad argument (e.g. zero units)
};

/// The category of coprove::runtime::errc ("coprove.runtime").
const std::error_category& runtime_category() noexcept;

/// Makes a std::error_code in runtime_category().
std::error_code make_error_code(errc e) noexcept;

/// The code a cancelled operation completes with: boost::asio::error::operation_aborted as a
/// std::error_code (compares equal to std::errc::operation_canceled).
std::error_code operation_aborted() noexcept;

}  // namespace coprove::runtime

template <>
struct std::is_error_code_enum<coprove::runtime::errc> : std::true_type {};
