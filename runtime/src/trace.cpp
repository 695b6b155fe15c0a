// The Chrome trace-event writer: events are kept in memory (bounded) and serialised on demand.
#include "coprove/runtime/trace.hpp"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace coprove::runtime {

trace_writer::trace_writer(std::size_t max_events) : max_events_(max_events), origin_ns_(now_ns()) {
  if (max_events == 0) throw std::invalid_argument("trace_writer: max_events must be > 0");
}

std::uint64_t trace_writer::now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

void trace_writer::name_lane(trace_lane lane, std::string process_name, std::string thread_name) {
  std::lock_guard lock(mutex_);
  process_names_[lane.pid] = std::move(process_name);
  thread_names_[{lane.pid, lane.tid}] = std::move(thread_name);
}

void trace_writer::complete(std::string_view name, std::string_view category, trace_lane lane,
                            std::uint64_t start_ns, std::uint64_t duration_ns, boost::json::object args) {
  std::lock_guard lock(mutex_);
  if (events_.size() >= max_events_) {
    ++dropped_;
    return;
  }
  events_.push_back(event{std::string(name), std::string(category), lane, start_ns, duration_ns, std::move(args)});
}

std::size_t trace_writer::size() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

std::size_t trace_writer::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

std::string trace_writer::to_json() const {
  boost::json::array trace_events;
  std::lock_guard lock(mutex_);
  trace_events.reserve(events_.size() + process_names_.size() + thread_names_.size());
  for (const auto& [pid, name] : process_names_) {
    trace_events.push_back(boost::json::object{
        {"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
  }
  for (const auto& [lane, name] : thread_names_) {
    trace_events.push_back(boost::json::object{
        {"name", "thread_name"}, {"ph", "M"}, {"pid", lane.first}, {"tid", lane.second}, {"args", {{"name", name}}}});
  }
  for (const auto& e : events_) {
    // Chrome trace timestamps are microseconds; events before the writer existed start at 0.
    const std::uint64_t rel = e.start_ns > origin_ns_ ? e.start_ns - origin_ns_ : 0;
    boost::json::object obj{{"name", e.name},
                            {"cat", e.category},
                            {"ph", "X"},
                            {"pid", e.lane.pid},
                            {"tid", e.lane.tid},
                            {"ts", static_cast<double>(rel) / 1000.0},
                            {"dur", static_cast<double>(e.duration_ns) / 1000.0}};
    if (!e.args.empty()) obj["args"] = e.args;
    trace_events.push_back(std::move(obj));
  }
  boost::json::object root{{"traceEvents", std::move(trace_events)},
                           {"displayTimeUnit", "ns"},
                           {"otherData", {{"dropped_events", dropped_}, {"max_events", max_events_}}}};
  return boost::json::serialize(root);
}

void trace_writer::write(const std::string& path) const {
  const std::string text = to_json();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::system_error(errno, std::generic_category(), "trace_writer: cannot open '" + path + "'");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw std::system_error(errno, std::generic_category(), "trace_writer: cannot write '" + path + "'");
}

}  // namespace coprove::runtime
