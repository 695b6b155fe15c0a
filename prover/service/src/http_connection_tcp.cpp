// The HTTP service's connection (http_connection.hpp) on a TCP socket.
#include "http_connection.hpp"

namespace coprove::service {

template boost::asio::awaitable<void> http_service::state::serve_connection(tcp_stream, std::uint64_t, std::string);

}  // namespace coprove::service
