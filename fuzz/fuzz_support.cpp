// The shared part of the file readers' fuzz targets (fuzz_support.hpp).
#include "fuzz_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <streambuf>
#include <typeinfo>

#include <unistd.h>

namespace coprove::fuzz {

namespace fs = std::filesystem;

void fail(std::string_view what) {
  std::fprintf(stderr, "fuzz: FAILED: %.*s\n", static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

void expect_named(const std::exception& refusal, std::string_view file) {
  const std::string_view message = refusal.what();
  if (message.find(file) == std::string_view::npos) {
    fail("a refusal does not name the file '" + std::string(file) + "': " + std::string(message));
  }
}

void unexpected(const std::exception& e) {
  fail(std::string("an undocumented exception (") + typeid(e).name() + "): " + e.what());
}

namespace {

void remove_scratch() {
  std::error_code ec;
  fs::remove_all(scratch_dir(), ec);
}

}  // namespace

const fs::path& scratch_dir() {
  static const fs::path dir = [] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    fs::path made = base / ("coprove-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(made);
    std::atexit(remove_scratch);
    return made;
  }();
  return dir;
}

fs::path write_scratch(std::string_view name, std::span<const std::uint8_t> bytes) {
  const fs::path path = scratch_dir() / fs::path(std::string(name));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail("cannot write the scratch file " + path.string());
  return path;
}

fs::path fixture(std::string_view relative) {
  const fs::path fixtures(COPROVE_FUZZ_FIXTURES);
  if (relative.starts_with("tests/")) return fixtures.parent_path().parent_path() / fs::path(std::string(relative));
  return fixtures / fs::path(std::string(relative));
}

std::vector<std::uint8_t> fixture_bytes(std::string_view relative) {
  const fs::path path = fixture(relative);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read the fixture " + path.string());
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

namespace {

class null_buffer : public std::streambuf {
 protected:
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

}  // namespace

void silence_streams() {
  static null_buffer nowhere;
  std::cout.rdbuf(&nowhere);
  std::cerr.rdbuf(&nowhere);
  std::clog.rdbuf(&nowhere);
}

}  // namespace coprove::fuzz
