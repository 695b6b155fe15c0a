// The cudaError_t error category and the out-of-line halves of the check macros.
#include "coprove/cuda/error.hpp"

#include "coprove/runtime/log.hpp"

#include <string>

namespace coprove::cuda {
namespace {
class cuda_error_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "cuda"; }
  std::string message(int value) const override {
    const auto e = static_cast<cudaError_t>(value);
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  }
};
}  // namespace

const std::error_category& cuda_category() noexcept {
  static const cuda_error_category category;
  return category;
}

namespace detail {
void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
  throw cuda_error(e, std::string(expr) + "@" + file + ":" + std::to_string(line));
}

void report_cuda_error(cudaError_t e, const char* expr, const char* file, int line) noexcept {
  try {
    COPROVE_LOG(error, "cuda") << expr << "@" << file << ":" << line << " failed: " << cudaGetErrorName(e)
                               << ": " << cudaGetErrorString(e);
  } catch (...) {
  }
}
}  // namespace detail
}  // namespace coprove::cuda
