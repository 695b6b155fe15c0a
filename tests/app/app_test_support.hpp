// What the coprove binary tests share: running a process with a time limit and its output in
// files, a scratch directory, and curl over the service's Unix socket.
#pragma once

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace coprove::test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

/// A fresh directory, removed with everything in it at the end of the scope. Short, so that
/// Unix socket paths inside it stay under the 107-byte limit.
class scratch_dir {
 public:
  scratch_dir() {
    std::string pattern = "/tmp/coprove-test-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~scratch_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A child process with stdout and stderr in files (in the test's scratch directory, where its
/// XDG_CACHE_HOME points too).
class child_process {
 public:
  child_process(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path)
      : out_path_(out_path), err_path_(err_path) {
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int in = ::open("/dev/null", O_RDONLY);
      if (out < 0 || err < 0 || in < 0) ::_exit(126);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      // Caches (the development keys) in the test's scratch directory, never in the user's.
      const std::string scratch = std::filesystem::path(out_path).parent_path().string();
      ::setenv("XDG_CACHE_HOME", (scratch + "/cache").c_str(), 1);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
  }
  ~child_process() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) { ::kill(pid_, sig); }

  /// The exit status (128 + signal when killed by one), or -1 when it did not end within `limit`
  /// (it is killed then).
  int wait(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exited_ = true;
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
        return -1;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        exited_ = true;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  bool running() {
    if (exited_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      return false;
    }
    return true;
  }
  std::string out() const { return read_file(out_path_); }
  std::string err() const { return read_file(err_path_); }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string out_path_, err_path_;
};

struct process_result {
  int exit_code = -1;
  std::string out, err;
};

/// Runs a command to completion (at most `limit`).
inline process_result run_process(const std::vector<std::string>& argv, const scratch_dir& dir,
                                  std::chrono::milliseconds limit = std::chrono::seconds(120)) {
  static int counter = 0;
  const std::string tag = std::to_string(counter++);
  child_process p(argv, dir.file("out" + tag), dir.file("err" + tag));
  process_result r;
  r.exit_code = p.wait(limit);
  r.out = p.out();
  r.err = p.err();
  return r;
}

/// Runs the coprove binary with arguments.
inline process_result run_coprove(std::vector<std::string> args, const scratch_dir& dir,
                              std::chrono::milliseconds limit = std::chrono::seconds(120)) {
  args.insert(args.begin(), COPROVE_BINARY);
  return run_process(args, dir, limit);
}

struct http_reply {
  int status = 0;
  std::string body;
  boost::json::value json() const {
    boost::system::error_code ec;
    auto v = boost::json::parse(body, ec);
    return ec ? boost::json::value() : v;
  }
  /// The error code of a {"error": {"code", "message"}} body, or "" when the body is not one.
  std::string error_code() const {
    const auto v = json();
    if (!v.is_object()) return "";
    const auto* e = v.get_object().if_contains("error");
    if (!e || !e->is_object()) return "";
    const auto* c = e->get_object().if_contains("code");
    const auto* m = e->get_object().if_contains("message");
    if (!c || !c->is_string() || !m || !m->is_string() || m->get_string().empty()) return "";
    return std::string(c->get_string());
  }
};

/// One request with curl over the Unix socket `socket`; `body` is sent from a file so that any
/// bytes (and large bodies) go through unchanged.
inline http_reply curl(const scratch_dir& dir, const std::string& socket, const std::string& method,
                       const std::string& target, const std::optional<std::string>& body = std::nullopt,
                       std::chrono::milliseconds limit = std::chrono::seconds(60),
                       const std::string& content_type = "application/json") {
  static int counter = 0;
  const std::string tag = std::to_string(counter++);
  std::vector<std::string> argv = {"curl", "-s", "-S", "--max-time", std::to_string(limit.count() / 1000),
                                   "--unix-socket", socket, "-X", method, "-o", dir.file("body" + tag),
                                   "-w", "%{http_code}"};
  if (body) {
    write_file(dir.file("request" + tag), *body);
    argv.push_back("-H");
    argv.push_back("Content-Type: " + content_type);
    argv.push_back("--data-binary");
    std::string data_file = "@";  // "@" + path trips GCC 12's -Wrestrict (a false positive)
    data_file += dir.file("request" + tag);
    argv.push_back(std::move(data_file));
  }
  argv.push_back("http://localhost" + target);
  const auto r = run_process(argv, dir, limit + std::chrono::seconds(5));
  http_reply reply;
  reply.status = std::atoi(r.out.c_str());
  reply.body = read_file(dir.file("body" + tag));
  return reply;
}

/// Waits until a file (the service's socket) exists.
inline bool wait_for_path(const std::string& path, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace coprove::test
