// Bounded reading of untrusted files: only regular files, sized first, within the stated limit.
#include <coprove/runtime/input_file.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using coprove::runtime::input_file_error;
using coprove::runtime::read_input_file;
using coprove::runtime::read_input_text;
using coprove::runtime::regular_file_size;

namespace {

fs::path temp_dir() {
  const fs::path dir = fs::temp_directory_path() / ("coprove_input_file_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const input_file_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a regular file within its limit is read whole", "[runtime][input_file][cpu]") {
  const fs::path file = temp_dir() / "small.json";
  std::ofstream(file) << "{\"a\": 1}";
  CHECK(read_input_text(file, 64, "test input") == "{\"a\": 1}");
  CHECK(read_input_file(file, 8, "test input").size() == 8);
  CHECK(regular_file_size(file, 8, "test input") == 8);
}

TEST_CASE("a file over its limit is refused before it is read, naming the file and the limit",
          "[runtime][input_file][cpu]") {
  const fs::path file = temp_dir() / "big.json";
  std::ofstream(file) << std::string(2048, 'x');
  const std::string message = message_of([&] { (void)read_input_text(file, 1024, "run report"); });
  CHECK(message.find(file.string()) != std::string::npos);
  CHECK(message.find("run report of 2 KiB is larger than the limit of 1 KiB") != std::string::npos);
}

TEST_CASE("devices, directories and missing files are refused with what they are", "[runtime][input_file][cpu]") {
  const std::string zero = message_of([] { (void)read_input_file("/dev/zero", 1 << 20, "zkey"); });
  CHECK(zero.find("/dev/zero: is a character device, not a regular file") != std::string::npos);
  const fs::path dir = temp_dir();
  const std::string directory = message_of([&] { (void)read_input_text(dir, 1 << 20, "verifying key"); });
  CHECK(directory.find("is a directory, not a regular file") != std::string::npos);
  const std::string missing = message_of([&] { (void)read_input_text(dir / "absent", 1 << 20, "verifying key"); });
  CHECK(missing.find("cannot open verifying key") != std::string::npos);
}

TEST_CASE("a named pipe is refused without blocking on it", "[runtime][input_file][cpu]") {
  const fs::path fifo = temp_dir() / "pipe";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string message = message_of([&] { (void)read_input_text(fifo, 1 << 20, "witness"); });
  CHECK(message.find("is a pipe, not a regular file") != std::string::npos);
  fs::remove(fifo);
}

TEST_CASE("byte counts read as people write them", "[runtime][input_file][cpu]") {
  using coprove::runtime::describe_bytes;
  CHECK(describe_bytes(512) == "512 bytes");
  CHECK(describe_bytes(std::uint64_t{64} << 20) == "64 MiB");
  CHECK(describe_bytes(std::uint64_t{3} << 29) == "1.5 GiB");
}
