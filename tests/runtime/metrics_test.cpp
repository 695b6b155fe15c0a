// metrics: counters, gauges, histogram percentiles within 1% of the exact sample, the registry
// and its Prometheus text.
#include "coprove/runtime/metrics.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace coprove::runtime;

TEST_CASE("counters and gauges keep their values", "[runtime][metrics][cpu]") {
  counter c;
  c.inc();
  c.inc(41);
  CHECK(c.value() == 42);
  gauge g;
  g.set(2.5);
  g.add(-1.0);
  CHECK(g.value() == 1.5);
  g.set_max(1.0);
  CHECK(g.value() == 1.5);
  g.set_max(7.0);
  CHECK(g.value() == 7.0);
}

TEST_CASE("histogram percentiles are within 1% of the exact sample", "[runtime][metrics][cpu]") {
  std::mt19937_64 rng(7);
  // Latency-like: log-normal around 20 us with a long tail, in nanoseconds.
  std::lognormal_distribution<double> dist(std::log(20000.0), 1.0);
  std::vector<double> values(100000);
  histogram h;
  for (auto& v : values) {
    v = dist(rng);
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  CHECK(h.count() == values.size());
  CHECK(h.min() == values.front());
  CHECK(h.max() == values.back());
  double sum = 0;
  for (double v : values) sum += v;
  CHECK(h.sum() == Approx(sum).epsilon(1e-9));
  for (const double q : {0.5, 0.9, 0.99, 0.999}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    const double exact = values[rank - 1];
    INFO("q = " << q << " exact = " << exact << " estimate = " << h.percentile(q));
    CHECK(std::abs(h.percentile(q) - exact) / exact < 0.01);
  }
  CHECK(h.percentile(0.0) == values.front());
  CHECK(h.percentile(1.0) == values.back());
  CHECK_THROWS_AS(h.percentile(1.5), std::invalid_argument);
  h.reset();
  CHECK(h.count() == 0);
  CHECK(h.percentile(0.5) == 0.0);
}

TEST_CASE("a histogram handles zero, tiny, huge and uniform values", "[runtime][metrics][cpu]") {
  histogram h;
  h.record(0.0);
  h.record(1e-30);
  h.record(1e30);
  CHECK(h.count() == 3);
  CHECK(h.percentile(0.0) == 0.0);
  CHECK(h.percentile(1.0) == 1e30);

  histogram u;
  for (int i = 1; i <= 1000; ++i) u.record(i);
  CHECK(std::abs(u.percentile(0.5) - 500.0) / 500.0 < 0.01);
  CHECK(std::abs(u.percentile(0.99) - 990.0) / 990.0 < 0.01);
  CHECK(u.mean() == Approx(500.5));
}

TEST_CASE("metrics recorded from two threads are all counted", "[runtime][metrics][cpu]") {
  counter c;
  histogram h;
  gauge g;
  auto work = [&] {
    for (int i = 0; i < 20000; ++i) {
      c.inc();
      h.record(i % 100 + 1);
      g.add(1.0);
      g.add(-1.0);
    }
  };
  std::thread t(work);
  work();
  t.join();
  CHECK(c.value() == 40000);
  CHECK(h.count() == 40000);
  CHECK(g.value() == 0.0);
}

TEST_CASE("the registry returns the same metric for the same name and labels", "[runtime][metrics][cpu]") {
  registry r;
  counter& a = r.get_counter("coprove_test_total", "test counter", {{"device", "0"}});
  counter& b = r.get_counter("coprove_test_total", "ignored", {{"device", "0"}});
  counter& other = r.get_counter("coprove_test_total", "test counter", {{"device", "1"}});
  CHECK(&a == &b);
  CHECK(&a != &other);
  CHECK_THROWS_AS(r.get_gauge("coprove_test_total", "wrong type"), std::invalid_argument);
  CHECK_THROWS_AS(r.get_counter("bad name", "x"), std::invalid_argument);
  CHECK_THROWS_AS(r.get_counter("1bad", "x"), std::invalid_argument);
  CHECK_THROWS_AS(r.get_counter("ok", "x", {{"bad-label", "v"}}), std::invalid_argument);
  CHECK(&registry::global() == &registry::global());
}

TEST_CASE("the registry renders the Prometheus text format", "[runtime][metrics][cpu]") {
  registry r;
  r.get_counter("coprove_jobs_total", "Jobs finished", {{"state", "done"}}).inc(3);
  r.get_gauge("coprove_queue_depth", "Queued partitions\nper device", {{"device", "0"}, {"name", "a\"b\\c"}}).set(2.5);
  auto& h = r.get_histogram("coprove_wait_ns", "Wait time");
  for (int i = 1; i <= 100; ++i) h.record(i);
  const std::string text = r.prometheus_text();
  INFO(text);
  CHECK(text.find("# HELP coprove_jobs_total Jobs finished\n# TYPE coprove_jobs_total counter\n"
                  "coprove_jobs_total{state=\"done\"} 3\n") != std::string::npos);
  CHECK(text.find("# HELP coprove_queue_depth Queued partitions\\nper device\n") != std::string::npos);
  CHECK(text.find("coprove_queue_depth{device=\"0\",name=\"a\\\"b\\\\c\"} 2.5\n") != std::string::npos);
  CHECK(text.find("# TYPE coprove_wait_ns summary\n") != std::string::npos);
  CHECK(text.find("coprove_wait_ns{quantile=\"0.5\"} ") != std::string::npos);
  CHECK(text.find("coprove_wait_ns{quantile=\"0.999\"} ") != std::string::npos);
  CHECK(text.find("coprove_wait_ns_sum 5050\n") != std::string::npos);
  CHECK(text.find("coprove_wait_ns_count 100\n") != std::string::npos);
  // Every line is a comment or "series value".
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("#")) continue;
    const auto space = line.rfind(' ');
    REQUIRE(space != std::string::npos);
    CHECK_NOTHROW(std::stod(line.substr(space + 1)));
  }
}
