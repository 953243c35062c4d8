#pragma once
// Helpers shared by the report and compare tests: a scratch folder per test and
// small run records written to it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include <unistd.h>

namespace memlab::test {

/// A fresh folder under the system's temp dir, removed when the test ends.
class scratch_dir {
 public:
  scratch_dir() {
    auto const* info = ::testing::UnitTest::GetInstance()->current_test_info();
    // The pid keeps concurrent runs of the test binary (several build folders) apart.
    std::string name = std::string("memlab_") + (info ? info->test_suite_name() : "t") + "_" +
                       (info ? info->name() : "x") + "_" + std::to_string(::getpid());
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  scratch_dir(scratch_dir const&) = delete;
  scratch_dir& operator=(scratch_dir const&) = delete;
  std::filesystem::path const& path() const { return path_; }
  std::string file(std::string const& name) const { return (path_ / name).string(); }
  std::string write(std::string const& name, std::string const& text) const {
    std::ofstream(path_ / name) << text;
    return file(name);
  }
  std::string write(std::string const& name, nlohmann::json const& j) const { return write(name, j.dump()); }

 private:
  std::filesystem::path path_;
};

inline std::string slurp(std::string const& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline int count_of(std::string const& hay, std::string const& needle) {
  int n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace memlab::test
