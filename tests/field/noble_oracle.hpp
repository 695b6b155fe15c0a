// The C++ side of the noble oracle: runs `node tests/field/noble_oracle.mjs` (@noble/curves 2.x,
// an implementation independent of coprove) once per test process and exchanges one JSON line per
// request with it, so that the field tests can compare their points, encodings and pairings with
// it. The ops and their fields are documented at the top of noble_oracle.mjs.
//
// When node or node_modules/@noble/curves is missing the first request throws, and the test that
// made it fails with a message that says to run scripts/setup.sh: a cross-check that cannot run is
// a failure, never a skip.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace coprove::field::testing {

/// A running node process serving noble_oracle.mjs; one per test process (instance()).
class noble_oracle {
 public:
  /// The process-wide oracle, started on first use; throws std::runtime_error when node or the
  /// npm packages are missing (the message says to run scripts/setup.sh).
  static noble_oracle& instance();

  /// Sends one request and returns its answer; throws std::runtime_error when the oracle answers
  /// with an error or stops answering.
  boost::json::object call(boost::json::object request);

  noble_oracle(const noble_oracle&) = delete;
  noble_oracle& operator=(const noble_oracle&) = delete;
  ~noble_oracle();

 private:
  noble_oracle();
  std::string read_line();

  pid_t pid_ = -1;
  int to_node_ = -1;    // write end of node's stdin
  int from_node_ = -1;  // read end of node's stdout
  std::string buffer_;  // bytes read past the last full line
  std::uint64_t next_id_ = 1;
};

/// Lower-case hex of bytes.
std::string to_hex(std::span<const std::uint8_t> bytes);

/// Bytes of an even-length hex string; throws std::invalid_argument on anything else.
std::vector<std::uint8_t> from_hex(std::string_view hex);

/// The string field `key` of an oracle answer (throws when absent or not a string).
std::string answer_string(const boost::json::object& answer, std::string_view key);

}  // namespace coprove::field::testing
