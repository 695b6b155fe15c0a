// Device discovery and selection: how many GPUs there are (0, never an exception, without a
// driver), and a scope that makes one device current and restores the previous one.
#pragma once

#include <string>

namespace coprove::cuda {

/// Number of CUDA devices; 0 when there is no driver or no GPU (never throws).
int device_count() noexcept;

/// The calling thread's current device (throws cuda_error).
int current_device();

/// The device's name, e.g. "NVIDIA H200" (throws cuda_error).
std::string device_name(int device);

/// Makes `device` current for the calling thread for its lifetime, then restores the previous one.
class scoped_device {
 public:
  /// Throws cuda_error when the device cannot be selected.
  explicit scoped_device(int device);
  ~scoped_device();
  scoped_device(const scoped_device&) = delete;
  scoped_device& operator=(const scoped_device&) = delete;

 private:
  int previous_;
  bool changed_;
};

}  // namespace coprove::cuda
