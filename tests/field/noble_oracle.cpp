// Starting node with pipes on its stdin and stdout, and the line protocol of noble_oracle.mjs.
// The script's path and the repository root come from compile definitions set in
// tests/field/CMakeLists.txt.
#include "field/noble_oracle.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace coprove::field::testing {

namespace {

constexpr std::string_view setup_hint = "; run scripts/setup.sh (it installs node and the npm packages)";

/// The first executable named `node` on PATH, or an empty path.
std::filesystem::path find_node() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::string_view rest(path);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / "node";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace

noble_oracle& noble_oracle::instance() {
  static noble_oracle oracle;
  return oracle;
}

noble_oracle::noble_oracle() {
  const std::filesystem::path script = COPROVE_NOBLE_ORACLE_SCRIPT;
  const std::filesystem::path noble =
      std::filesystem::path(COPROVE_SOURCE_DIR) / "node_modules" / "@noble" / "curves" / "package.json";
  const std::filesystem::path node = find_node();
  if (node.empty()) throw std::runtime_error(std::string("node is not on PATH") + std::string(setup_hint));
  if (!std::filesystem::exists(noble))
    throw std::runtime_error("@noble/curves is not installed (" + noble.string() + " is missing)" +
                             std::string(setup_hint));
  if (!std::filesystem::exists(script)) throw std::runtime_error("oracle script missing: " + script.string());

  // A dead node must surface as a failed read, not kill the test process on its next write.
  std::signal(SIGPIPE, SIG_IGN);
  int in_pipe[2];
  int out_pipe[2];
  if (::pipe(in_pipe) != 0) throw std::runtime_error("pipe failed");
  if (::pipe(out_pipe) != 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, in_pipe[1]);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  std::string node_arg = node.string();
  std::string script_arg = script.string();
  char* argv[] = {node_arg.data(), script_arg.data(), nullptr};
  const int rc = ::posix_spawn(&pid_, node.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  to_node_ = in_pipe[1];
  from_node_ = out_pipe[0];
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("could not start " + node.string() + std::string(setup_hint));
  }
}

noble_oracle::~noble_oracle() {
  if (to_node_ >= 0) ::close(to_node_);  // end of input: the script exits
  if (from_node_ >= 0) ::close(from_node_);
  if (pid_ > 0) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::string noble_oracle::read_line() {
  for (;;) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    char chunk[65536];
    const ssize_t n = ::read(from_node_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(std::string("the noble oracle stopped answering (node exited)") +
                               std::string(setup_hint));
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

boost::json::object noble_oracle::call(boost::json::object request) {
  const std::uint64_t id = next_id_++;
  request["id"] = id;
  std::string line = boost::json::serialize(request);
  line.push_back('\n');
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::write(to_node_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(std::string("the noble oracle does not take requests (node exited)") +
                               std::string(setup_hint));
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  const std::string answer_line = read_line();
  boost::json::value answer = boost::json::parse(answer_line);
  if (!answer.is_object()) throw std::runtime_error("oracle answer is not an object: " + answer_line);
  boost::json::object& object = answer.as_object();
  const auto* answered_id = object.if_contains("id");
  if (answered_id == nullptr || !answered_id->is_number() || answered_id->to_number<std::uint64_t>() != id)
    throw std::runtime_error("oracle answer out of order: " + answer_line);
  if (const auto* error = object.if_contains("error"))
    throw std::runtime_error("noble oracle refused " + boost::json::serialize(request) + ": " +
                             boost::json::serialize(*error));
  return std::move(object);
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

std::vector<std::uint8_t> from_hex(std::string_view hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) throw std::invalid_argument("odd-length hex");
  std::vector<std::uint8_t> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = nibble(hex[2 * i]);
    const int lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw std::invalid_argument("not hex: " + std::string(hex));
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return out;
}

std::string answer_string(const boost::json::object& answer, std::string_view key) {
  const auto* value = answer.if_contains(key);
  if (value == nullptr || !value->is_string())
    throw std::runtime_error("oracle answer lacks string field " + std::string(key) + ": " +
                             boost::json::serialize(answer));
  return std::string(value->as_string());
}

}  // namespace coprove::field::testing
