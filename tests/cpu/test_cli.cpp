#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "cli/cli.hpp"

namespace {
struct result {
  int code;
  std::string out, err;
};
result cli(std::vector<std::string> args) {
  args.insert(args.begin(), "memlab");
  std::ostringstream out, err;
  int const code = memlab::cli::run_cli(args, out, err);
  return {code, out.str(), err.str()};
}
bool have_gpu() {
  int n = 0;
  bool const ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  (void)cudaGetLastError();
  return ok;
}
int lines(std::string const& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST(Cli, ListPrintsOneExperimentPerLineIdFirst) {
  auto r = cli({"list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("coalescing.offset "), std::string::npos);
  EXPECT_EQ(r.out.rfind("ceilings.d2d_copy ", 0), 0u) << "ceilings come first";
  std::istringstream is(r.out);
  std::string line;
  while (std::getline(is, line)) {
    ASSERT_FALSE(line.empty());
    EXPECT_NE(line[0], ' ') << "the id is the first column: " << line;
  }
}

TEST(Cli, UnknownExperimentIsAUsageErrorOnOneLine) {
  auto r = cli({"run", "coalescing.nope", "-o", "/tmp/memlab_cli_unknown"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("coalescing.nope"), std::string::npos);
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(Cli, BadAxisValueIsAUsageError) {
  auto r = cli({"run", "coalescing.offset", "-a", "offset=abc", "-o", "/tmp/memlab_cli_axis"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("abc"), std::string::npos);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  auto range = cli({"run", "coalescing.offset", "-a", "offset=99", "-o", "/tmp/memlab_cli_axis"});
  EXPECT_EQ(range.code, 2);
  EXPECT_NE(range.err.find("out of range"), std::string::npos);
  auto missing = cli({"run", "coalescing.offset", "-a", "coalescing.offset:nope=1", "-o", "/tmp/memlab_cli_axis"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("nope"), std::string::npos);
}

TEST(Cli, BadOptionsAreUsageErrors) {
  EXPECT_EQ(cli({}).code, 2) << "a subcommand is required";
  EXPECT_EQ(cli({"frobnicate"}).code, 2);
  EXPECT_EQ(cli({"run", "--max-noise", "-1"}).code, 2);
  EXPECT_EQ(cli({"run", "--device", "zero"}).code, 2);
  auto flush = cli({"run", "--flush", "sideways"});
  EXPECT_EQ(flush.code, 2);
  EXPECT_NE(flush.err.find("flush"), std::string::npos) << flush.err;
  EXPECT_EQ(cli({"--help"}).code, 0);
  auto v = cli({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("memlab"), std::string::npos);
}

TEST(Cli, WithoutAGpuRunAndDeviceSaySoPlainly) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a GPU";
  auto dir = std::filesystem::temp_directory_path() / "memlab_cli_nogpu";
  std::filesystem::remove_all(dir);
  auto r = cli({"run", "coalescing", "-o", dir.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  auto d = cli({"device"});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.err.find("no CUDA device"), std::string::npos);
}

TEST(Cli, OutOfRangeDeviceIndexIsNamed) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU";
  auto r = cli({"run", "coalescing.offset", "-d", "99", "-o", "/tmp/memlab_cli_dev"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("device index 99"), std::string::npos) << r.err;
}

TEST(Cli, TimingOptionsParse) {
  // The run options are accepted (exit 1 for the missing GPU, not 2 for usage) ...
  if (!have_gpu()) {
    auto dir = std::filesystem::temp_directory_path() / "memlab_cli_timing_opts";
    std::filesystem::remove_all(dir);
    auto r = cli({"run", "coalescing", "--discard-throttled", "--persistence-check", "-o", dir.string()});
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
  }
  // ... and belong to their subcommands.
  EXPECT_EQ(cli({"run", "--repeat"}).code, 2);
  EXPECT_EQ(cli({"compare", "--discard-throttled", "a.json", "b.json"}).code, 2);
  auto help = cli({"compare", "--help"});
  EXPECT_NE(help.out.find("--repeat"), std::string::npos) << help.out;
}
