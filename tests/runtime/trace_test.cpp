// trace_writer: Chrome trace JSON that parses, names its lanes and stays bounded.
#include "coprove/runtime/trace.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace coprove::runtime;

namespace {

boost::json::array events_of(const std::string& text) {
  return boost::json::parse(text).as_object().at("traceEvents").as_array();
}

}  // namespace

TEST_CASE("the trace is Chrome trace JSON with complete events and lane names", "[runtime][trace][cpu]") {
  trace_writer trace(16);
  trace.name_lane({1, 2}, "gpu 0", "slot 2");
  const auto start = trace_writer::now_ns();
  trace.complete("quotient", "gpu", {1, 2}, start + 1000, 2500, {{"partition", 3}});
  trace.complete("synthesis", "cpu", {0, 5}, start, 500);
  CHECK(trace.size() == 2);
  CHECK(trace.dropped() == 0);

  const auto root = boost::json::parse(trace.to_json()).as_object();
  CHECK(root.at("displayTimeUnit").as_string() == "ns");
  const auto events = root.at("traceEvents").as_array();
  int complete = 0, metadata = 0;
  for (const auto& v : events) {
    const auto& e = v.as_object();
    const auto ph = e.at("ph").as_string();
    if (ph == "M") {
      ++metadata;
      CHECK(e.at("pid").to_number<int>() == 1);
      const auto name = e.at("args").as_object().at("name").as_string();
      CHECK((name == "gpu 0" || name == "slot 2"));
    } else {
      REQUIRE(ph == "X");
      ++complete;
      if (e.at("name").as_string() == "quotient") {
        CHECK(e.at("cat").as_string() == "gpu");
        CHECK(e.at("pid").to_number<int>() == 1);
        CHECK(e.at("tid").to_number<int>() == 2);
        CHECK(e.at("dur").to_number<double>() == Approx(2.5));
        CHECK(e.at("ts").to_number<double>() >= 1.0);
        CHECK(e.at("args").as_object().at("partition").to_number<int>() == 3);
      }
    }
  }
  CHECK(complete == 2);
  CHECK(metadata == 2);
}

TEST_CASE("the trace is bounded and counts what it drops", "[runtime][trace][cpu]") {
  trace_writer trace(10);
  auto fill = [&] {
    for (int i = 0; i < 15; ++i) trace.complete("e", "test", {0, 0}, trace_writer::now_ns(), 1);
  };
  std::thread t(fill);
  fill();
  t.join();
  CHECK(trace.size() == 10);
  CHECK(trace.dropped() == 20);
  const auto root = boost::json::parse(trace.to_json()).as_object();
  CHECK(root.at("traceEvents").as_array().size() == 10);
  CHECK(root.at("otherData").as_object().at("dropped_events").to_number<int>() == 20);
  CHECK_THROWS_AS(trace_writer(0), std::invalid_argument);
}

TEST_CASE("the trace is written to a file that parses back", "[runtime][trace][cpu]") {
  trace_writer trace;
  trace.complete("a \"quoted\" name", "test", {3, 4}, trace_writer::now_ns(), 10);
  const auto path = (std::filesystem::temp_directory_path() / "coprove_trace_test.json").string();
  trace.write(path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const auto events = events_of(text.str());
  REQUIRE(events.size() == 1);
  CHECK(events[0].as_object().at("name").as_string() == "a \"quoted\" name");
  std::filesystem::remove(path);
  CHECK_THROWS_AS(trace.write("/nonexistent-dir/x/trace.json"), std::system_error);
}
