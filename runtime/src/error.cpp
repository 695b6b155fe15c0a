// The coprove.runtime error category.
#include "coprove/runtime/error.hpp"

#include <boost/asio/error.hpp>
#include <boost/system/error_code.hpp>

#include <string>

namespace coprove::runtime {
namespace {

class runtime_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "coprove.runtime"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::already_set: return "the completion signal was already set";
      case errc::exceeds_capacity: return "the request exceeds the semaphore's capacity";
      case errc::shut_down: return "the object was shut down";
      case errc::invalid_argument: return "invalid argument";
    }
    return "unknown coprove.runtime error " + std::to_string(value);
  }
  std::error_condition default_error_condition(int value) const noexcept override {
    if (static_cast<errc>(value) == errc::invalid_argument) return std::errc::invalid_argument;
    return {value, *this};
  }
};

}  // namespace

const std::error_category& runtime_category() noexcept {
  static const runtime_category_impl category;
  return category;
}

std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), runtime_category()}; }

std::error_code operation_aborted() noexcept {
  return boost::system::error_code(boost::asio::error::operation_aborted);
}

}  // namespace coprove::runtime
