#include <iostream>

#include "cli/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  return memlab::cli::run_cli(args, std::cout, std::cerr);
}
