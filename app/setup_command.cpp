// `coprove setup --circuit NAME --log-constraints K --out DIR [--insecure-seed N]`: makes the
// Groth16 keys of a built-in circuit into a key directory (keys.hpp), printing each stage with its
// time, the files with their sizes and the verifying key's SHA-256 (what others compare to know
// they hold the same key).
#include "cli.hpp"
#include "commands.hpp"
#include "keys.hpp"

#include <coprove/r1cs/circuits.hpp>
#include <coprove/runtime/log.hpp>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace coprove::app {

namespace {

const std::vector<extra_flag> setup_flags = {
    {"circuit", "NAME", "circuit family: mimc, merkle or bits"},
    {"log-constraints", "K", "log2 of the circuit's domain (10..27)"},
    {"out", "DIR", "key directory to create (absent or empty)"},
    {"insecure-seed", "N", "derive the toxic waste from seed N: reproducible, INSECURE, for tests only"},
    {"log-level", "LEVEL", "trace, debug, info, warning (default), error"},
};

std::uint64_t parse_unsigned_flag(const command_line& cl, const std::string& name) {
  const std::string text = cl.extra(name);
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    throw usage_error("coprove setup: --" + name + " '" + text + "' is not a non-negative integer");
  }
  return value;
}

std::string required_flag(const command_line& cl, const std::string& name, const std::string& what) {
  if (!cl.has(name)) throw usage_error("coprove setup: missing --" + name + " (" + what + "; see coprove setup --help)");
  return cl.extra(name);
}

}  // namespace

int setup_command(const std::vector<std::string>& args) {
  const command_line cl = parse_command_line("setup", args, setup_flags, false, 0);
  if (cl.help) {
    std::cout << command_help("setup", "--circuit NAME --log-constraints K --out DIR [--insecure-seed N]", setup_flags, false)
              << "\nWrites DIR/params (bellman Parameters), DIR/vk (bellman VerifyingKey), DIR/vk.json (snarkjs\n"
                 "verification_key.json) and DIR/key.json (what the key is for). The toxic waste comes from the\n"
                 "system CSPRNG and is wiped; this is a single-party setup, as trustworthy as this machine and run.\n";
    return exit_ok;
  }
  const std::string circuit = required_flag(cl, "circuit", "the circuit family");
  required_flag(cl, "log-constraints", "log2 of the domain size");
  const std::uint64_t log_constraints = parse_unsigned_flag(cl, "log-constraints");
  const std::filesystem::path out = required_flag(cl, "out", "the key directory to create");
  std::optional<std::uint64_t> insecure_seed;
  if (cl.has("insecure-seed")) insecure_seed = parse_unsigned_flag(cl, "insecure-seed");

  app_config logging;
  logging.log_level = cl.extra("log-level", "warning");
  if (!runtime::parse_severity(logging.log_level)) {
    throw usage_error("coprove setup: --log-level '" + logging.log_level + "' is not a level");
  }
  init_logging(logging);

  try {
    if (log_constraints > r1cs::max_log_constraints) throw std::invalid_argument("log_constraints out of range");
    r1cs::validate_circuit_parameters(circuit, static_cast<unsigned>(log_constraints));
  } catch (const std::invalid_argument&) {
    std::string known;
    for (const auto name : r1cs::circuit_families()) known += (known.empty() ? "" : ", ") + std::string(name);
    throw usage_error("coprove setup: no built-in circuit " + circuit + " at 2^" + std::to_string(log_constraints) +
                      " (circuits: " + known + "; --log-constraints " + std::to_string(r1cs::min_log_constraints) +
                      ".." + std::to_string(r1cs::max_log_constraints) + ")");
  }
  try {
    check_new_key_dir(out);
  } catch (const key_dir_error& e) {
    throw usage_error(std::string("coprove setup: ") + e.what());
  }

  if (insecure_seed) {
    std::cerr << "coprove setup: WARNING: --insecure-seed " << *insecure_seed
              << ": the toxic waste is derived from this seed, so anyone who knows it can forge proofs for this key; "
                 "for tests only, never for production\n";
  }
  std::cout << "coprove setup: " << circuit << "/" << log_constraints << " into " << out.string() << "\n";
  key_options options;
  options.insecure_seed = insecure_seed;
  options.progress = [](const key_stage& stage) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%8.3f s", stage.seconds);
    std::cout << "  " << stage.name << std::string(stage.name.size() < 10 ? 10 - stage.name.size() : 1, ' ')
              << seconds << "  " << stage.detail << "\n"
              << std::flush;
  };
  const key_set keys = make_key_dir(circuit, static_cast<unsigned>(log_constraints), out, options);

  std::cout << "files:\n";
  for (const auto name : {params_file_name, vk_file_name, vk_json_file_name, key_json_file_name}) {
    const auto path = keys.dir / name;
    std::cout << "  " << path.string() << "  " << std::filesystem::file_size(path) << " bytes\n";
  }
  std::cout << "vk sha256: " << keys.metadata.vk_sha256 << "\n"
            << "params sha256: " << keys.metadata.params_sha256 << "\n"
            << "done in " << keys.load_seconds << " s. This is a single-party setup: the key is as trustworthy as "
            << "this machine and this run.\n";
  if (insecure_seed) {
    std::cerr << "coprove setup: WARNING: this key was made from --insecure-seed " << *insecure_seed
              << " (key.json records it); it is not secret\n";
  }
  return exit_ok;
}

}  // namespace coprove::app
