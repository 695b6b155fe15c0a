// bench_service: `coprove serve` under load, as a farm's clients drive it. Starts the binary on a
// Unix socket (CPU backend unless told otherwise, small jobs), then
//  1. endpoints: N concurrent clients on keep-alive connections, each sending R requests to one
//     endpoint after another (GET /healthz, GET /v1/status, GET /metrics, POST /v1/jobs followed
//     by GET /v1/jobs/{id}/result?wait=); throughput and p50/p99 latency per endpoint;
//  2. slow-loris (--slow-connections S): S connections that send a partial request a byte every
//     50 ms (reconnecting when the server closes one), while one client times GET /healthz on
//     fresh connections;
//  3. soak: J small jobs (submit, then await the result) from the same N clients, the server's RSS
//     (VmRSS of its /proc entry) sampled every `--sample-every` jobs; the RSS after the soak is
//     compared with the RSS after the first 1,000 jobs (the retention policy is set to keep 1,000
//     results, so that the service is in its steady state from there on).
// Every answer is checked (status 200/202, a result for every job); a failure ends the run with
// status 1.
#include "support/options.hpp"
#include "support/report.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using local = asio::local::stream_protocol;
using clock_type = std::chrono::steady_clock;

struct options {
  std::string coprove;
  std::size_t clients = 8;
  std::size_t requests = 200;  // per client and endpoint (jobs: per client 1/10 of it)
  std::size_t soak_jobs = 10000;
  std::size_t slow_connections = 0;  // slow-loris phase: connections that send a byte now and then
  std::size_t sample_every = 500;
  unsigned log_constraints = 10;
  std::string backend = "host";
  std::string json_path;
};

// One keep-alive connection over the service's Unix socket.
class connection {
 public:
  connection(asio::io_context& io, const std::string& path) : socket_(io) { socket_.connect(local::endpoint(path)); }
  // Sends one request and reads its answer; returns the status and body.
  std::pair<unsigned, std::string> exchange(http::verb method, const std::string& target, const std::string& body = {}) {
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "localhost");
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    http::write(socket_, req);
    http::response<http::string_body> res;
    http::read(socket_, buffer_, res);
    return {res.result_int(), std::move(res.body())};
  }

 private:
  local::socket socket_;
  beast::flat_buffer buffer_;
};

std::size_t rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6));
  throw std::runtime_error("no VmRSS for pid " + std::to_string(pid));
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "bench_service: " << what << "\n";
  std::exit(1);
}

struct endpoint_figures {
  std::string name;
  std::size_t requests = 0;
  double seconds = 0;
  std::vector<double> latencies_ms;
};

// Submits a small job and awaits its result on `c`; returns the two latencies (ms).
std::pair<double, double> prove_one(connection& c, std::uint64_t seed) {
  const auto t0 = clock_type::now();
  const auto [submit_status, submitted] =
      c.exchange(http::verb::post, "/v1/jobs", "{\"seed\": " + std::to_string(seed) + ", \"partitions\": 1}");
  const auto t1 = clock_type::now();
  if (submit_status != 202) fail("POST /v1/jobs answered " + std::to_string(submit_status) + ": " + submitted);
  const auto id = json::parse(submitted).at("job_id").to_number<std::uint64_t>();
  const auto [result_status, result] = c.exchange(http::verb::get, "/v1/jobs/" + std::to_string(id) + "/result?wait=120");
  const auto t2 = clock_type::now();
  if (result_status != 200) fail("GET result answered " + std::to_string(result_status) + ": " + result.substr(0, 200));
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(),
          std::chrono::duration<double, std::milli>(t2 - t1).count()};
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  o.coprove = (std::filesystem::path(argv[0]).parent_path().parent_path() / "coprove").string();
  coprove::bench::options("bench_service", "coprove serve under load: endpoints, slow connections, a soak with its RSS")
      .text("--coprove", o.coprove, "PATH", "the binary to serve (default ../coprove beside this bench)")
      .number("--clients", o.clients, "N", "concurrent keep-alive clients (default 8)", std::size_t{1}, std::size_t{4096})
      .number("--requests", o.requests, "R", "requests a client and endpoint (jobs: R / 10; default 200)", std::size_t{0},
              std::size_t{100'000'000})
      .number("--soak-jobs", o.soak_jobs, "J", "jobs of the soak (default 10000; 0: no soak)", std::size_t{0},
              std::size_t{100'000'000})
      .number("--slow-connections", o.slow_connections, "S", "slow-loris connections (default 0: none)", std::size_t{0},
              std::size_t{100'000})
      .number("--sample-every", o.sample_every, "K", "the server's RSS sampled every K soak jobs (default 500)",
              std::size_t{1}, std::size_t{100'000'000})
      .number("--log-constraints", o.log_constraints, "L", "a job's size, log2 constraints (default 10)", 10u, 28u)
      .choice("--backend", o.backend, {"host", "cuda"}, "the service's backend (default host)")
      .text("--json", o.json_path, "PATH", "write the report as JSON")
      .parse(argc, argv);

  char pattern[] = "/tmp/bench-service-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) fail("cannot make a scratch directory");
  const std::string dir = pattern;
  const std::string socket_path = dir + "/s.sock";
  const std::string log = std::to_string(o.log_constraints);
  const std::vector<std::string> args = {o.coprove, "serve", "--listen", "unix:" + socket_path, "--backend", o.backend,
                                         "--log-constraints", log, "--partitions", "1", "--key-cache", dir + "/keys",
                                         "--log-level", "warning", "--result-retention-jobs", "1000",
                                         "--max-queued-jobs", std::to_string(4 * o.clients)};
  const pid_t server = ::fork();
  if (server == 0) {
    std::vector<char*> cargs;
    for (const auto& s : args) cargs.push_back(const_cast<char*>(s.c_str()));
    cargs.push_back(nullptr);
    const std::string out = dir + "/serve.log";
    std::freopen(out.c_str(), "w", stdout);
    std::freopen(out.c_str(), "a", stderr);
    ::execv(cargs[0], cargs.data());
    std::_Exit(127);
  }
  const auto stop_server = [&] {
    ::kill(server, SIGTERM);
    int status = 0;
    ::waitpid(server, &status, 0);
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  };
  {
    const auto deadline = clock_type::now() + std::chrono::minutes(5);  // a development key is made first
    while (!std::filesystem::exists(socket_path)) {
      int status = 0;
      if (::waitpid(server, &status, WNOHANG) == server) fail("coprove serve exited; see " + dir + "/serve.log");
      if (clock_type::now() > deadline) fail("coprove serve did not start");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // 1. Endpoints.
  std::vector<endpoint_figures> endpoints;
  const std::vector<std::pair<std::string, std::string>> gets = {
      {"GET /healthz", "/healthz"}, {"GET /v1/status", "/v1/status"}, {"GET /metrics", "/metrics"}};
  for (const auto& [name, target] : gets) {
    endpoint_figures f{name, o.clients * o.requests, 0, {}};
    std::mutex mutex;
    const auto start = clock_type::now();
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < o.clients; ++t) {
      threads.emplace_back([&, target = target] {
        asio::io_context io;
        connection c(io, socket_path);
        std::vector<double> mine;
        for (std::size_t r = 0; r < o.requests; ++r) {
          const auto t0 = clock_type::now();
          const auto [status, body] = c.exchange(http::verb::get, target);
          mine.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
          if (status != 200) fail(target + " answered " + std::to_string(status));
        }
        std::lock_guard lock(mutex);
        f.latencies_ms.insert(f.latencies_ms.end(), mine.begin(), mine.end());
      });
    }
    for (auto& t : threads) t.join();
    f.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    endpoints.push_back(std::move(f));
  }
  {
    const std::size_t per_client = std::max<std::size_t>(1, o.requests / 10);
    endpoint_figures submit{"POST /v1/jobs", o.clients * per_client, 0, {}};
    endpoint_figures result{"GET /v1/jobs/{id}/result?wait", o.clients * per_client, 0, {}};
    std::mutex mutex;
    const auto start = clock_type::now();
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < o.clients; ++t) {
      threads.emplace_back([&, t] {
        asio::io_context io;
        connection c(io, socket_path);
        std::vector<double> s, r;
        for (std::size_t i = 0; i < per_client; ++i) {
          const auto [submit_ms, result_ms] = prove_one(c, 1000 + t * per_client + i);
          s.push_back(submit_ms);
          r.push_back(result_ms);
        }
        std::lock_guard lock(mutex);
        submit.latencies_ms.insert(submit.latencies_ms.end(), s.begin(), s.end());
        result.latencies_ms.insert(result.latencies_ms.end(), r.begin(), r.end());
      });
    }
    for (auto& t : threads) t.join();
    submit.seconds = result.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    endpoints.push_back(std::move(submit));
    endpoints.push_back(std::move(result));
  }
  std::cout << "bench_service: " << o.clients << " clients, " << o.backend << " backend, mimc 2^" << o.log_constraints
            << " x 1 partition\n";
  std::cout << std::left << std::setw(34) << "endpoint" << std::right << std::setw(10) << "requests" << std::setw(12)
            << "req/s" << std::setw(11) << "p50 ms" << std::setw(11) << "p99 ms" << "\n";
  json::array endpoints_json;
  for (const auto& f : endpoints) {
    const double rate = static_cast<double>(f.requests) / f.seconds;
    const double p50 = percentile(f.latencies_ms, 0.50), p99 = percentile(f.latencies_ms, 0.99);
    std::cout << std::left << std::setw(34) << f.name << std::right << std::setw(10) << f.requests << std::setw(12)
              << std::fixed << std::setprecision(1) << rate << std::setw(11) << std::setprecision(2) << p50
              << std::setw(11) << p99 << "\n";
    endpoints_json.push_back(
        json::object{{"endpoint", f.name}, {"requests", f.requests}, {"per_second", rate}, {"p50_ms", p50}, {"p99_ms", p99}});
  }

  // 2. Slow-loris: /healthz while slow connections try to hold every slot.
  json::value loris_json;
  if (o.slow_connections > 0) {
    std::atomic<bool> stop{false};
    std::atomic<std::size_t> reconnects{0};
    std::thread loris([&] {
      asio::io_context io;
      std::vector<std::unique_ptr<local::socket>> slow;
      const auto open_one = [&] {
        auto s = std::make_unique<local::socket>(io);
        boost::system::error_code ec;
        s->connect(local::endpoint(socket_path), ec);
        if (!ec) asio::write(*s, asio::buffer(std::string("GET /v1/status HTTP/1.1\r\nHo")), ec);
        return s;
      };
      for (std::size_t i = 0; i < o.slow_connections; ++i) slow.push_back(open_one());
      while (!stop) {
        for (auto& s : slow) {
          boost::system::error_code ec;
          asio::write(*s, asio::buffer(std::string("s")), ec);
          if (ec) {
            s = open_one();
            ++reconnects;
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::vector<double> latencies;
    for (std::size_t r = 0; r < o.requests; ++r) {
      asio::io_context io;
      const auto t0 = clock_type::now();
      connection c(io, socket_path);
      const auto [status, body] = c.exchange(http::verb::get, "/healthz");
      latencies.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
      if (status != 200) fail("/healthz under slow-loris answered " + std::to_string(status));
    }
    stop = true;
    loris.join();
    const double p50 = percentile(latencies, 0.50), p99 = percentile(latencies, 0.99);
    std::cout << "GET /healthz (new connection each) with " << o.slow_connections
              << " slow-loris connections: p50 " << std::setprecision(2) << p50 << " ms, p99 " << p99 << " ms, max "
              << percentile(latencies, 1.0) << " ms (" << reconnects << " slow connections closed by the server)\n";
    loris_json = json::object{{"slow_connections", o.slow_connections}, {"requests", latencies.size()},
                              {"p50_ms", p50}, {"p99_ms", p99}, {"max_ms", percentile(latencies, 1.0)},
                              {"slow_closed", reconnects.load()}};
  }

  // 3. Soak.
  std::atomic<std::size_t> next{0}, done{0};
  std::vector<std::pair<std::size_t, std::size_t>> curve;  // (jobs done, RSS KiB)
  std::vector<double> curve_seconds;
  std::mutex curve_mutex;
  std::size_t next_sample = o.sample_every;
  curve.emplace_back(0, rss_kib(server));
  curve_seconds.push_back(0);
  const auto soak_start = clock_type::now();
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < o.clients; ++t) {
    threads.emplace_back([&] {
      asio::io_context io;
      connection c(io, socket_path);
      for (std::size_t i = next++; i < o.soak_jobs; i = next++) {
        (void)prove_one(c, 100000 + i);
        const std::size_t finished = ++done;
        std::lock_guard lock(curve_mutex);
        if (finished >= next_sample || finished == o.soak_jobs) {
          curve.emplace_back(finished, rss_kib(server));
          curve_seconds.push_back(std::chrono::duration<double>(clock_type::now() - soak_start).count());
          while (next_sample <= finished) next_sample += o.sample_every;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double soak_seconds = std::chrono::duration<double>(clock_type::now() - soak_start).count();
  {
    asio::io_context io;
    connection c(io, socket_path);
    const auto [status, body] = c.exchange(http::verb::get, "/v1/status");
    if (status != 200) fail("GET /v1/status answered " + std::to_string(status));
    const auto s = json::parse(body);
    std::cout << "after the soak: jobs " << json::serialize(s.at("jobs")) << ", domains " << s.at("domains") << "\n";
  }
  stop_server();

  std::cout << "soak: " << o.soak_jobs << " jobs in " << std::setprecision(1) << soak_seconds << " s ("
            << static_cast<double>(o.soak_jobs) / soak_seconds << " jobs/s)\n";
  std::cout << std::setw(10) << "jobs" << std::setw(10) << "s" << std::setw(12) << "RSS MiB" << "\n";
  json::array curve_json;
  std::size_t rss_at_1000 = 0;
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const double mib = static_cast<double>(curve[i].second) / 1024.0;
    std::cout << std::setw(10) << curve[i].first << std::setw(10) << std::setprecision(1) << curve_seconds[i]
              << std::setw(12) << std::setprecision(1) << mib << "\n";
    curve_json.push_back(json::object{{"jobs", curve[i].first}, {"seconds", curve_seconds[i]}, {"rss_mib", mib}});
    if (rss_at_1000 == 0 && curve[i].first >= 1000) rss_at_1000 = curve[i].second;
  }
  const std::size_t rss_end = curve.back().second;
  const double growth = rss_at_1000 == 0 ? 0.0 : static_cast<double>(rss_end) / static_cast<double>(rss_at_1000) - 1.0;
  std::cout << "RSS after the soak / after 1,000 jobs: " << std::setprecision(3) << 1.0 + growth
            << (std::abs(growth) <= 0.10 ? " (within 10%)" : " (NOT within 10%)") << "\n";
  if (!o.json_path.empty()) {
    json::object out{{"clients", o.clients},        {"backend", o.backend},
                     {"log_constraints", o.log_constraints}, {"endpoints", endpoints_json},
                     {"soak_jobs", o.soak_jobs},    {"soak_seconds", soak_seconds},
                     {"rss_curve", curve_json},     {"rss_growth_after_1000", growth},
                     {"slow_loris", loris_json}};
    if (!coprove::bench::write_json_file(o.json_path, out, "bench_service")) return 1;
  }
  return std::abs(growth) <= 0.10 || rss_at_1000 == 0 ? 0 : 1;
}
