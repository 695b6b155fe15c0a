// A Chrome trace-event writer (the JSON that chrome://tracing and Perfetto open): complete "X"
// events in lanes (pid = device or process group, tid = worker) plus "M" metadata naming the
// lanes. Thread-safe and bounded: events beyond max_events are dropped and counted.
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coprove::runtime {

/// One horizontal track of the trace view: pid groups tracks, tid is the track within the group.
struct trace_lane {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
};

class trace_writer {
 public:
  /// Keeps at most max_events complete events (max_events must be > 0, else
  /// std::invalid_argument).
  explicit trace_writer(std::size_t max_events = std::size_t{1} << 20);

  /// Names a lane's process (pid) and thread (tid) in the viewer; a later call for the same lane
  /// replaces the names.
  void name_lane(trace_lane lane, std::string process_name, std::string thread_name);

  /// Records a complete event ("X") that started at start_ns (now_ns() clock) and lasted
  /// duration_ns.
  void complete(std::string_view name, std::string_view category, trace_lane lane,
                std::uint64_t start_ns, std::uint64_t duration_ns, boost::json::object args = {});

  /// Number of complete events kept.
  std::size_t size() const;
  /// Number of complete events dropped because the writer was full.
  std::size_t dropped() const;
  /// The maximum number of complete events kept.
  std::size_t max_events() const noexcept { return max_events_; }

  /// The trace as JSON: {"traceEvents": [...], "displayTimeUnit": "ns", ...}; timestamps in
  /// microseconds relative to the writer's creation.
  std::string to_json() const;
  /// Writes to_json() to path; throws std::system_error when the file cannot be written.
  void write(const std::string& path) const;

  /// Monotonic (steady clock) time in nanoseconds.
  static std::uint64_t now_ns();

 private:
  struct event {
    std::string name;
    std::string category;
    trace_lane lane;
    std::uint64_t start_ns;
    std::uint64_t duration_ns;
    boost::json::object args;
  };

  std::size_t max_events_;
  std::uint64_t origin_ns_;
  mutable std::mutex mutex_;
  std::vector<event> events_;
  std::size_t dropped_ = 0;
  std::map<std::uint32_t, std::string> process_names_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> thread_names_;
};

}  // namespace coprove::runtime
