// Bounded reading of untrusted files (see input_file.hpp).
#include <coprove/runtime/input_file.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace coprove::runtime {

namespace {

/// A file descriptor closed on scope exit.
class file_descriptor {
 public:
  explicit file_descriptor(int fd) noexcept : fd_(fd) {}
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  ~file_descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// Opens `path` without blocking on a FIFO and checks the open file (not the name, which could be
/// swapped between a stat and the open) is regular and within the limit.
int open_checked(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what,
                 std::uint64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw input_file_error(path.string(), "cannot open " + std::string(what) + ": " + std::strerror(errno));
  file_descriptor guard(fd);
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw input_file_error(path.string(), std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    throw input_file_error(path.string(), "is " + kind_of(info.st_mode) + ", not a regular file (a " +
                                              std::string(what) + " must be one)");
  size = static_cast<std::uint64_t>(info.st_size);
  if (size > max_bytes)
    throw input_file_error(path.string(), std::string(what) + " of " + describe_bytes(size) +
                                              " is larger than the limit of " + describe_bytes(max_bytes));
  // Regular files never block; clear O_NONBLOCK so reads behave as usual.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return ::dup(fd);
}

template <class Buffer>
Buffer read_whole(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what) {
  std::uint64_t size = 0;
  const file_descriptor fd(open_checked(path, max_bytes, what, size));
  if (fd.get() < 0) throw input_file_error(path.string(), std::string("cannot open: ") + std::strerror(errno));
  Buffer out;
  out.resize(static_cast<std::size_t>(size));
  std::size_t at = 0;
  while (at < out.size()) {
    const ssize_t got = ::read(fd.get(), reinterpret_cast<char*>(out.data()) + at, out.size() - at);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw input_file_error(path.string(), std::string("read failed: ") + std::strerror(errno));
    }
    if (got == 0)
      throw input_file_error(path.string(), "shrank while it was read (" + std::to_string(at) + " of " +
                                                std::to_string(size) + " bytes)");
    at += static_cast<std::size_t>(got);
  }
  char extra = 0;
  ssize_t more = 0;
  do more = ::read(fd.get(), &extra, 1);
  while (more < 0 && errno == EINTR);
  if (more > 0) throw input_file_error(path.string(), "grew while it was read (past " + std::to_string(size) + " bytes)");
  return out;
}

}  // namespace

input_file_error::input_file_error(std::string file, std::string why)
    : std::runtime_error(file + ": " + why), file_(std::move(file)), why_(std::move(why)) {}

std::uint64_t regular_file_size(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what) {
  std::uint64_t size = 0;
  const file_descriptor fd(open_checked(path, max_bytes, what, size));
  return size;
}

std::vector<std::uint8_t> read_input_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                                          std::string_view what) {
  return read_whole<std::vector<std::uint8_t>>(path, max_bytes, what);
}

std::string read_input_text(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what) {
  return read_whole<std::string>(path, max_bytes, what);
}

std::string describe_bytes(std::uint64_t bytes) {
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (value == static_cast<double>(static_cast<std::uint64_t>(value)))
    std::snprintf(text, sizeof text, "%.0f %s", value, units[unit]);
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace coprove::runtime
