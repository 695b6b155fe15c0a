// Command-line handling: Boost.Program_options reads the flags in the order given; --config files
// are applied first, then every flag on top, each through the configuration key table so that a
// flag and its file key are checked by the same code.
#include "cli.hpp"

#include <coprove/runtime/log.hpp>

#include <boost/program_options.hpp>

#include <algorithm>
#include <sstream>

namespace coprove::app {

namespace po = boost::program_options;

std::string command_line::extra(const std::string& name, const std::string& fallback) const {
  std::string value = fallback;
  for (const auto& [key, v] : extras) {
    if (key == name) value = v;
  }
  return value;
}

std::vector<std::string> command_line::values(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& [key, v] : extras)
    if (key == name) out.push_back(v);
  return out;
}

bool command_line::has(const std::string& name) const {
  return std::any_of(extras.begin(), extras.end(), [&](const auto& e) { return e.first == name; });
}

namespace {

po::options_description describe_flags(const std::vector<extra_flag>& extras, bool accepts_config) {
  po::options_description desc;
  desc.add_options()("help,h", po::value<std::string>()->implicit_value("true")->zero_tokens(), "show this help");
  for (const auto& e : extras) {
    if (e.value_name.empty()) {
      desc.add_options()(e.name.c_str(), po::value<std::string>()->implicit_value("true")->zero_tokens(), e.help.c_str());
    } else {
      desc.add_options()(e.name.c_str(), po::value<std::string>()->value_name(e.value_name), e.help.c_str());
    }
  }
  if (accepts_config) {
    desc.add_options()("config", po::value<std::string>()->value_name("FILE"), "JSON configuration file");
    for (const auto& key : app::config_keys()) {
      const std::string flag(key.flag);
      if (key.kind == app::config_kind::boolean) {
        desc.add_options()(flag.c_str(), po::value<std::string>()->implicit_value("true"), std::string(key.help).c_str());
      } else {
        desc.add_options()(flag.c_str(), po::value<std::string>(), std::string(key.help).c_str());
      }
    }
  }
  return desc;
}

const app::config_key* key_for_flag(std::string_view flag) {
  for (const auto& key : app::config_keys()) {
    if (key.flag == flag) return &key;
  }
  return nullptr;
}

bool is_boolean_word(std::string_view text) {
  for (std::string_view word : {"true", "false", "1", "0", "yes", "no", "on", "off"})
    if (text == word) return true;
  return false;
}

// A boolean flag stands alone (`--allow-remote`, meaning true) or takes its value as `=VALUE` or as
// the next argument when that is a boolean word (`--allow-remote false`); the last is joined here,
// since a flag with an implicit value takes only the `=` form.
std::vector<std::string> join_boolean_values(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) == 0 && arg.find('=') == std::string::npos && i + 1 < args.size() &&
        is_boolean_word(args[i + 1])) {
      const auto* key = key_for_flag(std::string_view(arg).substr(2));
      if (key && key->kind == app::config_kind::boolean) {
        out.push_back(arg + "=" + args[++i]);
        continue;
      }
    }
    out.push_back(arg);
  }
  return out;
}

}  // namespace

command_line parse_command_line(const std::string& command, const std::vector<std::string>& args,
                                const std::vector<extra_flag>& extras, bool accepts_config,
                                std::size_t max_positional) {
  po::options_description desc = describe_flags(extras, accepts_config);
  desc.add_options()("positional", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("positional", -1);

  po::parsed_options parsed(nullptr);
  try {
    parsed = po::command_line_parser(join_boolean_values(args))
                 .options(desc)
                 .positional(positional)
                 .style(po::command_line_style::unix_style & ~po::command_line_style::allow_guessing)
                 .run();
  } catch (const po::error& e) {
    throw usage_error("coprove " + command + ": " + e.what() + " (see coprove " + command + " --help)");
  }

  command_line out;
  std::vector<std::pair<const app::config_key*, std::string>> settings;
  std::vector<std::string> config_files;
  for (const auto& option : parsed.options) {
    const std::string value = option.value.empty() ? std::string() : option.value.front();
    if (option.string_key == "positional") {
      out.positional.insert(out.positional.end(), option.value.begin(), option.value.end());
    } else if (option.string_key == "help") {
      out.help = true;
    } else if (option.string_key == "config") {
      config_files.push_back(value);
    } else if (const auto* key = key_for_flag(option.string_key); key && accepts_config) {
      // A bare boolean flag carries no value here (Program_options applies implicit values only
      // when storing): it means true.
      settings.emplace_back(key, value.empty() && key->kind == app::config_kind::boolean ? "true" : value);
    } else {
      out.extras.emplace_back(option.string_key, value.empty() ? "true" : value);
    }
  }
  if (out.help) return out;
  if (out.positional.size() > max_positional) {
    throw usage_error("coprove " + command + ": unexpected argument '" + out.positional[max_positional] + "'");
  }
  try {
    for (const auto& file : config_files) app::apply_config_file(out.config, file);
    for (const auto& [key, value] : settings) app::apply_config_text(out.config, key->key, value);
    app::validate_config(out.config);
  } catch (const app::config_error& e) {
    throw usage_error("coprove " + command + ": invalid configuration: " + e.what());
  }
  return out;
}

std::string command_help(const std::string& command, const std::string& synopsis,
                         const std::vector<extra_flag>& extras, bool accepts_config) {
  std::ostringstream out;
  out << "usage: coprove " << command << " " << synopsis << "\n\n";
  const auto width = [](const std::string& s) { return s.size() < 30 ? std::string(30 - s.size(), ' ') : "  "; };
  for (const auto& e : extras) {
    std::string left = "  --" + e.name + (e.value_name.empty() ? "" : " " + e.value_name);
    out << left << width(left) << e.help << "\n";
  }
  if (accepts_config) {
    std::string left = "  --config FILE";
    out << left << width(left) << "JSON configuration file (flags override it; see docs/CONFIG.md)\n";
    out << "\nconfiguration flags (file key, default):\n";
    for (const auto& key : app::config_keys()) {
      std::string left = "  --" + std::string(key.flag);
      out << left << width(left) << key.key << " = " << key.default_value << "\n";
    }
  }
  return out.str();
}

void init_logging(const app::app_config& config) {
  runtime::log_config cfg;
  cfg.level = runtime::parse_severity(config.log_level).value_or(runtime::severity::info);
  cfg.json_file = config.log_json_file;
  try {
    runtime::init_logging(cfg);
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("invalid configuration: log.json_file: ") + e.what());
  }
}

}  // namespace coprove::app
