// The command line: boolean configuration flags stand alone or take true/false, as `=VALUE` or as
// the next argument, and a flag that is not boolean still needs its value.
#include "cli.hpp"

#include <catch2/catch.hpp>

using coprove::app::parse_command_line;
using coprove::app::usage_error;

namespace {

coprove::app::command_line serve_flags(const std::vector<std::string>& args) {
  return parse_command_line("serve", args, {}, true, 0);
}

}  // namespace

TEST_CASE("a bare boolean flag means true", "[app][cli][cpu]") {
  const auto cl = serve_flags({"--allow-remote", "--pageable-fallback"});
  CHECK(cl.config.server.allow_remote);
  CHECK(cl.config.engine.pageable_fallback);
  CHECK(cl.positional.empty());
}

TEST_CASE("a boolean flag takes true or false after = or as the next argument", "[app][cli][cpu]") {
  CHECK(serve_flags({"--allow-remote=true"}).config.server.allow_remote);
  CHECK_FALSE(serve_flags({"--allow-remote=false"}).config.server.allow_remote);
  CHECK(serve_flags({"--allow-remote", "true"}).config.server.allow_remote);
  CHECK_FALSE(serve_flags({"--allow-remote", "false"}).config.server.allow_remote);
  const auto mixed = serve_flags({"--pageable-fallback", "off", "--allow-remote", "--max-connections", "8"});
  CHECK_FALSE(mixed.config.engine.pageable_fallback);
  CHECK(mixed.config.server.allow_remote);
  CHECK(mixed.config.server.max_connections == 8);
  // The last of repeated flags wins, bare or not.
  CHECK(serve_flags({"--allow-remote=false", "--allow-remote"}).config.server.allow_remote);
}

TEST_CASE("a boolean flag refuses a value that is not a boolean", "[app][cli][cpu]") {
  CHECK_THROWS_AS(serve_flags({"--allow-remote=maybe"}), usage_error);
  CHECK_THROWS_AS(serve_flags({"--allow-remote", "maybe"}), usage_error);  // an unexpected argument
}
