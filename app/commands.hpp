// The coprove commands. Each takes the arguments after the command word and returns the exit
// status; usage_error (exit 2) propagates to main.
#pragma once

#include <string>
#include <vector>

namespace coprove::app {

/// The version the binary reports.
std::string version();

int run_command(const std::vector<std::string>& args);
int prove_command(const std::vector<std::string>& args);
int serve_command(const std::vector<std::string>& args);
int setup_command(const std::vector<std::string>& args);
int verify_command(const std::vector<std::string>& args);
int info_command(const std::vector<std::string>& args);

}  // namespace coprove::app
