// The report `coprove run` prints: the engine's report JSON turned into a page a person can read
// (throughput, stage percentiles, GPU busy, dispatch maxima, pinned pool, PCE, memory plan).
#pragma once

#include <boost/json/object.hpp>

#include <string>

namespace coprove::app {

/// Formats a run report (engine report_json() plus the run's own keys) as readable text.
std::string format_report(const boost::json::object& report, const std::string& memory_plan_text);

/// "12.3 MiB" style.
std::string format_bytes(double bytes);

}  // namespace coprove::app
