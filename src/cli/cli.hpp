#pragma once
// The memlab command. `run_cli` is the whole program, callable in-process by tests.
#include <iosfwd>
#include <string>
#include <vector>

namespace memlab::cli {

/// Exit codes: 0 success; 1 a failed verification, a runtime error or no usable GPU;
/// 2 a usage error (unknown experiment, bad axis value, bad option).
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;

/// args[0] is the program name. Normal output to `out`, progress and errors to `err`.
int run_cli(std::vector<std::string> const& args, std::ostream& out, std::ostream& err);

}  // namespace memlab::cli
