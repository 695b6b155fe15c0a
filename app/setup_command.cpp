// `coprove setup --circuit NAME --log-constraints K --out DIR [--insecure-seed N]`: makes the
// Groth16 keys of a built-in circuit into a key directory (keys.hpp), printing each stage with its
// time, the files with their sizes and the verifying key's SHA-256 (what others compare to know
// they hold the same key).
//
// `coprove setup --r1cs C.r1cs --zkey OUT.zkey [--vk OUT.vk.json] [--insecure-seed N]`: a snarkjs
// Groth16 zkey for a circom circuit (BLS12-381), which `coprove prove` and `snarkjs groth16 prove`
// prove with, without a powers-of-tau file: the toxic waste is drawn here, as `snarkjs groth16
// setup` would take it from a ceremony. Neither form overwrites an existing key.
#include "cli.hpp"
#include "commands.hpp"
#include "keys.hpp"

#include <coprove/groth16/key_files.hpp>
#include <coprove/groth16/zkey.hpp>
#include <coprove/r1cs/circom_r1cs.hpp>
#include <coprove/r1cs/circuits.hpp>
#include <coprove/runtime/input_file.hpp>
#include <coprove/runtime/log.hpp>

#include <bit>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

namespace coprove::app {

namespace {

const std::vector<extra_flag> setup_flags = {
    {"circuit", "NAME", "circuit family: mimc, merkle or bits"},
    {"log-constraints", "K", "log2 of the circuit's domain (10..27)"},
    {"out", "DIR", "key directory to create (absent or empty)"},
    {"r1cs", "PATH", "a circom circuit (circom --prime bls12381) to make a snarkjs zkey for, instead of --circuit"},
    {"zkey", "PATH", "with --r1cs: the zkey to write (must not exist)"},
    {"vk", "PATH", "with --r1cs: also write its verification_key.json here (must not exist)"},
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

void print_stage(const key_stage& stage) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%8.3f s", stage.seconds);
  std::cout << "  " << stage.name << std::string(stage.name.size() < 10 ? 10 - stage.name.size() : 1, ' ') << seconds
            << "  " << stage.detail << "\n"
            << std::flush;
}

std::optional<std::uint64_t> insecure_seed_flag(const command_line& cl) {
  if (!cl.has("insecure-seed")) return std::nullopt;
  return parse_unsigned_flag(cl, "insecure-seed");
}

void warn_insecure_seed(std::uint64_t seed) {
  std::cerr << "coprove setup: WARNING: --insecure-seed " << seed
            << ": the toxic waste is derived from this seed, so anyone who knows it can forge proofs for this key; "
               "for tests only, never for production\n";
}

/// An output file of the --r1cs form: refused when it exists (a key is never overwritten).
void check_new_file(const std::filesystem::path& path, const std::string& flag) {
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec)))
    throw usage_error("coprove setup: --" + flag + " " + path.string() +
                      " exists; a key is never overwritten (remove it or choose another path)");
  if (std::filesystem::is_directory(path.parent_path().empty() ? "." : path.parent_path(), ec)) return;
  throw usage_error("coprove setup: --" + flag + " " + path.string() + ": the directory " +
                    path.parent_path().string() + " does not exist");
}

/// The --r1cs form: read the circuit, make the key with the odd-coset H, write the zkey (and vk).
int setup_zkey(const command_line& cl) {
  for (const char* other : {"circuit", "log-constraints", "out"})
    if (cl.has(other))
      throw usage_error(std::string("coprove setup: --") + other +
                        " is for a built-in circuit's key directory, not for --r1cs (see coprove setup --help)");
  const std::filesystem::path r1cs_path = cl.extra("r1cs");
  const std::filesystem::path zkey_path = required_flag(cl, "zkey", "the zkey to write");
  const std::optional<std::filesystem::path> vk_path =
      cl.has("vk") ? std::optional<std::filesystem::path>(cl.extra("vk")) : std::nullopt;
  const std::optional<std::uint64_t> insecure_seed = insecure_seed_flag(cl);
  check_new_file(zkey_path, "zkey");
  if (vk_path) {
    check_new_file(*vk_path, "vk");
    if (std::filesystem::absolute(*vk_path).lexically_normal() == std::filesystem::absolute(zkey_path).lexically_normal())
      throw usage_error("coprove setup: --vk and --zkey name the same file");
  }

  using clock_type = std::chrono::steady_clock;
  const auto started = clock_type::now();
  auto stage_start = started;
  const auto report = [&](std::string name, std::string detail) {
    const auto now = clock_type::now();
    print_stage({std::move(name), std::chrono::duration<double>(now - stage_start).count(), std::move(detail)});
    stage_start = now;
  };

  std::optional<r1cs::circom_r1cs> circuit;
  try {
    runtime::regular_file_size(r1cs_path, runtime::input_limits::binary_file_bytes, "r1cs file");
    circuit = r1cs::circom_r1cs::read(r1cs_path);
  } catch (const r1cs::circom_file_error& e) {
    throw usage_error(std::string("coprove setup: ") + e.what());
  } catch (const runtime::input_file_error& e) {
    throw usage_error(std::string("coprove setup: --r1cs ") + e.what());
  }
  if (insecure_seed) warn_insecure_seed(*insecure_seed);
  COPROVE_LOG(warning, "setup") << "coprove setup --r1cs makes a single-party development key (like `snarkjs groth16 "
                                   "setup` without a ceremony): whoever runs it could keep the toxic waste and forge "
                                   "proofs; do not use it where others must trust the key";
  std::cout << "coprove setup: " << r1cs_path.string() << " into " << zkey_path.string() << "\n";
  report("read", std::to_string(circuit->num_constraints()) + " constraints, " + std::to_string(circuit->num_wires()) +
                     " signals, " + std::to_string(circuit->num_public()) + " public");

  r1cs::pce_matrices matrices;
  try {
    matrices = circuit->matrices();
  } catch (const std::length_error& e) {
    throw usage_error(std::string("coprove setup: ") + e.what());
  }
  circuit.reset();
  report("matrices", std::to_string(matrices.num_rows) + " rows with the public signals' rows, domain 2^" +
                         std::to_string(std::countr_zero(matrices.domain_size)) + ", " +
                         std::to_string(matrices.a.nonzeros() + matrices.b.nonzeros()) + " A and B entries");

  auto secrets = insecure_seed ? groth16::secret_source::insecure_seeded(*insecure_seed, "coprove setup --r1cs")
                               : groth16::secret_source::system();
  const groth16::proving_key pk = groth16::setup(matrices, secrets, field::quotient_form::odd_coset_evaluations);
  report("setup", std::string(insecure_seed ? "toxic waste from an INSECURE seed" : "toxic waste from the system CSPRNG") +
                      ", wiped; " + std::to_string(pk.a.size() * 3 + pk.l.size() + pk.h.size() + pk.vk.ic.size()) +
                      " points");

  groth16::write_zkey(pk, matrices, zkey_path);
  report("write", zkey_path.string() + ", " + std::to_string(std::filesystem::file_size(zkey_path)) + " bytes");
  if (vk_path) {
    groth16::write_verifying_key_json(pk.vk, *vk_path);
    report("vk", vk_path->string() + ", " + std::to_string(std::filesystem::file_size(*vk_path)) + " bytes");
  }
  std::cout << "done in " << std::chrono::duration<double>(clock_type::now() - started).count()
            << " s. This is a single-party setup: the key is as trustworthy as this machine and this run.\n";
  if (insecure_seed) {
    std::cerr << "coprove setup: WARNING: this key was made from --insecure-seed " << *insecure_seed
              << "; it is not secret\n";
  }
  return exit_ok;
}

}  // namespace

int setup_command(const std::vector<std::string>& args) {
  const command_line cl = parse_command_line("setup", args, setup_flags, false, 0);
  if (cl.help) {
    std::cout << command_help("setup",
                              "--circuit NAME --log-constraints K --out DIR [--insecure-seed N]\n"
                              "       coprove setup --r1cs C.r1cs --zkey OUT.zkey [--vk OUT.vk.json] [--insecure-seed N]",
                              setup_flags, false)
              << "\nWith --circuit: writes DIR/params (bellman Parameters), DIR/vk (bellman VerifyingKey), DIR/vk.json\n"
                 "(snarkjs verification_key.json) and DIR/key.json (what the key is for).\n"
                 "With --r1cs: writes a snarkjs Groth16 zkey for the circom circuit (BLS12-381), which coprove prove\n"
                 "and snarkjs groth16 prove accept, and with --vk its verification_key.json; no powers-of-tau file.\n"
                 "Either way the toxic waste comes from the system CSPRNG and is wiped: this is a single-party\n"
                 "development setup (like snarkjs groth16 setup without a ceremony), as trustworthy as this\n"
                 "machine and run.\n";
    return exit_ok;
  }
  app_config logging;
  logging.log_level = cl.extra("log-level", "warning");
  if (!runtime::parse_severity(logging.log_level)) {
    throw usage_error("coprove setup: --log-level '" + logging.log_level + "' is not a level");
  }
  init_logging(logging);
  if (cl.has("r1cs")) return setup_zkey(cl);
  for (const char* only : {"zkey", "vk"})
    if (cl.has(only)) throw usage_error(std::string("coprove setup: --") + only + " goes with --r1cs");
  const std::string circuit = required_flag(cl, "circuit", "the circuit family");
  required_flag(cl, "log-constraints", "log2 of the domain size");
  const std::uint64_t log_constraints = parse_unsigned_flag(cl, "log-constraints");
  const std::filesystem::path out = required_flag(cl, "out", "the key directory to create");
  const std::optional<std::uint64_t> insecure_seed = insecure_seed_flag(cl);

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

  if (insecure_seed) warn_insecure_seed(*insecure_seed);
  std::cout << "coprove setup: " << circuit << "/" << log_constraints << " into " << out.string() << "\n";
  key_options options;
  options.insecure_seed = insecure_seed;
  options.progress = print_stage;
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
