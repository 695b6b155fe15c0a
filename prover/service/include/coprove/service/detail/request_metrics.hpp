// The service's count of answered requests (coprove_http_requests_total), shared by the job API
// and the connection, which answers what never reaches the API (malformed requests, timeouts).
#pragma once

#include <string_view>

namespace coprove::service::detail {

/// Counts one answered request by endpoint ("unknown" before one is routed) and status.
void count_request(std::string_view endpoint, unsigned status);

}  // namespace coprove::service::detail
