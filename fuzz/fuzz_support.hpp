// What the file readers' libFuzzer targets share: how a refusal is judged (the documented error
// type, naming the file) and where an input goes when the reader under test takes a path (a
// per-process folder under /dev/shm, removed at exit).
//
// A target fails the run (abort, which libFuzzer reports with the input that caused it) when the
// reader throws anything but its documented refusal, when a refusal does not name the file, or
// when a property of an accepted input does not hold. Allocations out of proportion to the input
// are caught by libFuzzer itself (-malloc_limit_mb, -rss_limit_mb; scripts/fuzz.sh sets them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace coprove::fuzz {

/// Says what went wrong on stderr and aborts (libFuzzer saves the input as a crash).
[[noreturn]] void fail(std::string_view what);

/// fail(what) unless `condition`.
inline void check(bool condition, std::string_view what) {
  if (!condition) fail(what);
}

/// A documented refusal: fails unless its message names `file` (the name or path the reader was
/// given for the input).
void expect_named(const std::exception& refusal, std::string_view file);

/// Fails naming the exception's type and message: a reader threw something it does not document.
[[noreturn]] void unexpected(const std::exception& e);

/// This process's scratch folder under /dev/shm (created on first use, removed at exit).
const std::filesystem::path& scratch_dir();

/// Writes `bytes` to scratch_dir()/name (replacing it) and returns the path.
std::filesystem::path write_scratch(std::string_view name, std::span<const std::uint8_t> bytes);

/// A file of the fixtures the targets are built against (fuzz/fixtures, or tests/data when the
/// relative path starts with "tests/").
std::filesystem::path fixture(std::string_view relative);

/// The bytes of a fixture file.
std::vector<std::uint8_t> fixture_bytes(std::string_view relative);

/// Sends std::cout, std::cerr and std::clog to nowhere: the commands under test print their
/// verdicts.
void silence_streams();

/// The input as bytes.
inline std::vector<std::uint8_t> bytes_of(const std::uint8_t* data, std::size_t size) {
  return std::vector<std::uint8_t>(data, data + size);
}

}  // namespace coprove::fuzz
