// CUDA errors as std::error_code (their own category) and the check macros every CUDA call goes
// through. Each macro clears cudaGetLastError() first, so a stale error from an earlier call is
// never blamed on this one.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <system_error>

namespace coprove::cuda {

/// The error category of cudaError_t values.
const std::error_category& cuda_category() noexcept;

inline std::error_code make_error_code(cudaError_t e) noexcept {
  return {static_cast<int>(e), cuda_category()};
}

/// Thrown by COPROVE_CUDA_TRY: carries the error code and "expr@file:line".
class cuda_error : public std::system_error {
 public:
  cuda_error(cudaError_t e, const std::string& where) : std::system_error(make_error_code(e), where) {}
  cudaError_t status() const noexcept { return static_cast<cudaError_t>(code().value()); }
};

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line);
void report_cuda_error(cudaError_t e, const char* expr, const char* file, int line) noexcept;
}  // namespace detail

}  // namespace coprove::cuda

/// Evaluates a CUDA runtime call and throws coprove::cuda::cuda_error when it fails.
#define COPROVE_CUDA_TRY(expr)                                                       \
  do {                                                                               \
    (void)cudaGetLastError();                                                        \
    const cudaError_t coprove_status_ = (expr);                                      \
    if (coprove_status_ != cudaSuccess)                                              \
      ::coprove::cuda::detail::throw_cuda_error(coprove_status_, #expr, __FILE__, __LINE__); \
  } while (0)

/// Evaluates a CUDA runtime call and returns its status from the enclosing function when it fails
/// (for noexcept paths whose return type is cudaError_t).
#define COPROVE_CUDA_TRY_STATUS(expr)                  \
  do {                                                 \
    (void)cudaGetLastError();                          \
    const cudaError_t coprove_status_ = (expr);        \
    if (coprove_status_ != cudaSuccess) return coprove_status_; \
  } while (0)

/// For destructors: evaluates the call and reports (logs, never throws) a failure.
#define COPROVE_CUDA_ASSERT_OK(expr)                                                 \
  do {                                                                               \
    (void)cudaGetLastError();                                                        \
    const cudaError_t coprove_status_ = (expr);                                      \
    if (coprove_status_ != cudaSuccess)                                              \
      ::coprove::cuda::detail::report_cuda_error(coprove_status_, #expr, __FILE__, __LINE__); \
  } while (0)

/// After every kernel launch: throws when the launch itself failed.
#define COPROVE_CUDA_CHECK_LAUNCH()                                                  \
  do {                                                                               \
    const cudaError_t coprove_status_ = cudaGetLastError();                          \
    if (coprove_status_ != cudaSuccess)                                              \
      ::coprove::cuda::detail::throw_cuda_error(coprove_status_, "kernel launch", __FILE__, __LINE__); \
  } while (0)
