// The API's plain responses: JSON bodies and the error body every refusal has.
#include "coprove/service/api_message.hpp"

#include <boost/json.hpp>

namespace coprove::service {

std::string api_response::field(std::string_view name) const {
  for (const auto& [key, value] : fields)
    if (key == name) return value;
  return {};
}

boost::json::value api_response::json() const { return boost::json::parse(body); }

api_response api_response::json_body(unsigned status, const boost::json::value& value) {
  api_response res;
  res.status = status;
  res.body = boost::json::serialize(value);
  res.body += '\n';
  return res;
}

api_response api_response::refusal(unsigned status, std::string_view code, std::string_view message) {
  api_response res;
  res.status = status;
  res.body = error_body(code, message);
  res.body += '\n';
  return res;
}

api_response api_response::refusal(const request_error& e) {
  api_response res = refusal(e.status(), e.code(), e.what());
  if (!e.allow().empty()) res.fields.emplace_back("Allow", e.allow());
  if (e.retry_after() != 0) res.fields.emplace_back("Retry-After", std::to_string(e.retry_after()));
  if (e.status() == 401) res.fields.emplace_back("WWW-Authenticate", "Bearer");
  return res;
}

}  // namespace coprove::service
