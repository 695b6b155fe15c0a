// coprove: keeps GPUs fed for zero-knowledge proving. `run` proves a batch workload and reports,
// `serve` is the HTTP daemon, `setup` makes a circuit's Groth16 keys, `verify` checks proofs
// against a verifying key, `info` describes the build, the devices and the memory plan. Exit
// status: 0 success, 1 a failed job, proof or record, 2 bad usage or configuration, or a file
// refused as input (not a regular file, over its limit, malformed), the message naming the file.
#include "cli.hpp"
#include "commands.hpp"
#include "keys.hpp"

#include <coprove/engine/memory_plan.hpp>
#include <coprove/groth16/key_files.hpp>
#include <coprove/r1cs/binfile.hpp>
#include <coprove/runtime/input_file.hpp>

#include <cstring>
#include <iostream>
#include <new>

namespace {

constexpr const char* usage_text =
    "usage: coprove <command> [flags]\n"
    "\n"
    "commands:\n"
    "  run      prove a workload (default: mimc 2^16 constraints, 16 partitions, 2 jobs) and report\n"
    "  prove    prove circom witnesses (.wtns) with a snarkjs zkey; proof.json / public.json out\n"
    "  serve    HTTP/1.1 + JSON daemon (Unix socket by default)\n"
    "  setup    make the Groth16 keys of a circuit into a key directory\n"
    "  verify   check the proofs of a result or report file against a verifying key\n"
    "  info     version, build, backend, devices and the memory plan a configuration gets\n"
    "\n"
    "coprove <command> --help lists a command's flags; docs/CONFIG.md documents every key.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace coprove::app;
  if (argc < 2) {
    std::cerr << usage_text;
    return exit_usage;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "run") return run_command(args);
    if (command == "prove") return prove_command(args);
    if (command == "serve") return serve_command(args);
    if (command == "setup") return setup_command(args);
    if (command == "verify") return verify_command(args);
    if (command == "info") return info_command(args);
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << usage_text;
      return exit_ok;
    }
    if (command == "--version" || command == "version") {
      std::cout << "coprove " << version() << "\n";
      return exit_ok;
    }
    std::cerr << "coprove: unknown command '" << command << "'\n\n" << usage_text;
    return exit_usage;
  } catch (const usage_error& e) {
    std::cerr << e.what() << "\n";
    return exit_usage;
  } catch (const coprove::engine::memory_plan_error& e) {
    std::cerr << "coprove " << command << ": invalid configuration: engine.memory_budget: the memory plan does not fit: "
              << e.what() << "\n";
    return exit_usage;
  } catch (const coprove::runtime::input_file_error& e) {
    // A file refused as input: not there, not a regular file, over its kind's limit, not its format.
    std::cerr << "coprove " << command << ": " << e.what() << "\n";
    return exit_usage;
  } catch (const coprove::r1cs::circom_file_error& e) {
    std::cerr << "coprove " << command << ": " << e.what() << "\n";
    return exit_usage;
  } catch (const coprove::groth16::key_file_error& e) {
    std::cerr << "coprove " << command << ": " << e.what() << "\n";
    return exit_usage;
  } catch (const key_dir_error& e) {
    std::cerr << "coprove " << command << ": " << e.what() << "\n";
    return exit_usage;
  } catch (const std::bad_alloc&) {
    // The readers size every input before allocating from it, so this is a workload (or a file
    // within its limit) that does not fit this machine's memory.
    std::cerr << "coprove " << command << ": out of memory (std::bad_alloc)\n";
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "coprove " << command << ": " << e.what() << "\n";
    return exit_failed;
  }
}
