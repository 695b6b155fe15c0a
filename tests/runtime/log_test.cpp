// log: severities, the JSON-lines sink with structured fields, warn_once and the macros.
#include "coprove/runtime/log.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace coprove::runtime;

TEST_CASE("severity names parse and print", "[runtime][log][cpu]") {
  CHECK(parse_severity("WARN") == severity::warning);
  CHECK(parse_severity("debug") == severity::debug);
  CHECK_FALSE(parse_severity("loud").has_value());
  CHECK(to_string(severity::error) == "error");
}

TEST_CASE("records go to the JSON-lines file with their fields", "[runtime][log][cpu]") {
  const auto path = (std::filesystem::temp_directory_path() / "coprove_log_test.jsonl").string();
  std::filesystem::remove(path);
  log_config cfg;
  cfg.level = severity::info;
  cfg.console = false;
  cfg.json_file = path;
  init_logging(cfg);
  set_log_level(severity::info);  // COPROVE_LOG_LEVEL may be set in the environment

  int evaluated = 0;
  auto side_effect = [&] { return ++evaluated; };
  COPROVE_LOG(debug, "test") << "hidden " << side_effect();
  CHECK(evaluated == 0);  // a disabled record does not evaluate its stream
  COPROVE_LOG(info, "test") << "plain " << 1;
  log_fields fields;
  fields.job = 7;
  fields.partition = 3;
  fields.device = 1;
  COPROVE_LOG_F(error, "engine", fields) << "with fields";
  CHECK(warn_once("log_test.key", "pinned", "first"));
  CHECK_FALSE(warn_once("log_test.key", "pinned", "second"));
  flush_logs();

  std::ifstream in(path);
  std::vector<boost::json::object> records;
  for (std::string line; std::getline(in, line);) records.push_back(boost::json::parse(line).as_object());
  REQUIRE(records.size() == 3);
  CHECK(records[0].at("message").as_string() == "plain 1");
  CHECK(records[0].at("severity").as_string() == "info");
  CHECK(records[0].at("channel").as_string() == "test");
  CHECK_FALSE(records[0].at("time").as_string().empty());
  CHECK_FALSE(records[0].contains("job"));
  CHECK(records[1].at("job").to_number<int>() == 7);
  CHECK(records[1].at("partition").to_number<int>() == 3);
  CHECK(records[1].at("device").to_number<int>() == 1);
  CHECK(records[2].at("severity").as_string() == "warning");
  CHECK(records[2].at("message").as_string() == "first");

  log_config console_only;
  console_only.level = severity::warning;
  init_logging(console_only);  // closes the file sink
  std::filesystem::remove(path);

  log_config bad;
  bad.console = false;
  bad.json_file = "/nonexistent-dir/x/log.jsonl";
  CHECK_THROWS_AS(init_logging(bad), std::invalid_argument);
  CHECK(log_level() == severity::warning);  // the failed call changed nothing
}
