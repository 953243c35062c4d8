// The gemm autotune cache (memlab::gemm_autotune_cache): its path, its keys, a round trip
// through the file, and every kind of corrupt file read as an empty cache with a one-line
// warning, never a throw. Pure host code: no GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "memlab/error.hpp"
#include "memlab/gemm.hpp"

namespace {
namespace fs = std::filesystem;

struct temp_dir {
  fs::path path;
  temp_dir() {
    path = fs::temp_directory_path() / ("memlab_autotune_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write(fs::path const& p, std::string const& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

memlab::gemm_shape shape(long long m, long long n, long long k, bool ta = false, bool tb = false) {
  memlab::gemm_shape s;
  s.m = m, s.n = n, s.k = k, s.trans_a = ta, s.trans_b = tb;
  return s;
}

/// Sets an environment variable for one scope and restores it.
struct scoped_env {
  std::string name;
  bool had;
  std::string old;
  scoped_env(char const* n, char const* value) : name(n) {
    char const* v = std::getenv(n);
    had = v != nullptr;
    if (had) old = v;
    if (value != nullptr)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~scoped_env() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

TEST(GemmAutotune, PathFollowsTheEnvironment) {
  scoped_env f("MEMLAB_GEMM_AUTOTUNE_FILE", nullptr), x("XDG_CACHE_HOME", "/xdg"), h("HOME", "/home/u");
  EXPECT_EQ(memlab::gemm_autotune_path(), "/xdg/memlab/gemm-autotune.json");
  {
    scoped_env x2("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(memlab::gemm_autotune_path(), "/home/u/.cache/memlab/gemm-autotune.json");
    scoped_env h2("HOME", nullptr);
    EXPECT_EQ(memlab::gemm_autotune_path(), "");
  }
  scoped_env f2("MEMLAB_GEMM_AUTOTUNE_FILE", "/tmp/mine.json");
  EXPECT_EQ(memlab::gemm_autotune_path(), "/tmp/mine.json");
}

TEST(GemmAutotune, KeysNameGpuShapeAndLayout) {
  EXPECT_EQ(memlab::gemm_autotune_key("NVIDIA H200", shape(4096, 8, 4096)), "NVIDIA H200|4096x8x4096b1|NN|a16");
  auto s = shape(3, 5, 7, true, false);
  s.batch = 4;
  s.aligned = false;
  EXPECT_EQ(memlab::gemm_autotune_key("X", s), "X|3x5x7b4|TN|u");
  EXPECT_NE(memlab::gemm_autotune_key("A", shape(1, 2, 3)), memlab::gemm_autotune_key("B", shape(1, 2, 3)));
  EXPECT_NE(memlab::gemm_autotune_key("A", shape(1, 2, 3)), memlab::gemm_autotune_key("A", shape(1, 2, 3, false, true)));
}

TEST(GemmAutotune, RoundTripThroughTheFile) {
  temp_dir d;
  fs::path const file = d.path / "sub" / "dir" / "gemm-autotune.json";  // directories created
  memlab::gemm_autotune_cache c;
  c.plans["NVIDIA H200|4096x8x4096b1|NN|a16"] = {"gemv/s3", 25.5};
  c.plans["NVIDIA H200|256x256x256b1|NN|a16"] = {"tile_32x64/s4", 6.25};
  ASSERT_NO_THROW(c.save(file.string()));
  std::string warning = "stale";
  auto const back = memlab::gemm_autotune_cache::load(file.string(), &warning);
  EXPECT_EQ(warning, "");
  ASSERT_EQ(back.plans.size(), 2u);
  EXPECT_EQ(back.plans.at("NVIDIA H200|4096x8x4096b1|NN|a16").plan, "gemv/s3");
  EXPECT_DOUBLE_EQ(back.plans.at("NVIDIA H200|256x256x256b1|NN|a16").us, 6.25);
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));  // renamed into place
  // Saving again replaces the file whole.
  memlab::gemm_autotune_cache one;
  one.plans["k"] = {"tile_64x64", 1.0};
  ASSERT_NO_THROW(one.save(file.string()));
  EXPECT_EQ(memlab::gemm_autotune_cache::load(file.string(), &warning).plans.size(), 1u);
}

TEST(GemmAutotune, MissingFileIsAnEmptyCacheWithoutWarning) {
  temp_dir d;
  std::string warning = "stale";
  auto const c = memlab::gemm_autotune_cache::load((d.path / "none.json").string(), &warning);
  EXPECT_TRUE(c.plans.empty());
  EXPECT_EQ(warning, "");
  EXPECT_TRUE(memlab::gemm_autotune_cache::load("", &warning).plans.empty());
  EXPECT_EQ(warning, "");
}

TEST(GemmAutotune, CorruptFilesWarnOnOneLineAndNeverThrow) {
  temp_dir d;
  fs::path const file = d.path / "c.json";
  std::string const good_entry = R"("k": {"plan": "tile_64x64/s4", "us": 1.5})";
  for (std::string const& text :
       {std::string(""), std::string("{"), std::string("\x00\xff garbage", 10), std::string("[1, 2]"),
        std::string(R"({"format": "other", "version": 1, "plans": {}})"),
        std::string(R"({"format": "memlab-gemm-autotune", "version": 2, "plans": {}})"),
        std::string(R"({"format": "memlab-gemm-autotune", "version": "1", "plans": {}})"),
        std::string(R"({"format": "memlab-gemm-autotune", "version": 1, "plans": []})"),
        std::string(R"({"format": "memlab-gemm-autotune", "version": 1, "plans": {)" + good_entry +
                    R"(, "bad": {"plan": 7}}})"),
        std::string(R"({"format": "memlab-gemm-autotune", "version": 1, "plans": {"x\ny": {"plan": "no_such/s2"}}})"),
        std::string(R"({"format": "memlab-gemm-autotune", "version": 1, "plans": {"k": "tile_64x64"}})")}) {
    SCOPED_TRACE(text);
    write(file, text);
    std::string warning;
    memlab::gemm_autotune_cache c;
    ASSERT_NO_THROW(c = memlab::gemm_autotune_cache::load(file.string(), &warning));
    EXPECT_TRUE(c.plans.empty());  // nothing half-read
    EXPECT_NE(warning.find(file.string()), std::string::npos) << warning;
    EXPECT_NE(warning.find("ignored"), std::string::npos) << warning;
    EXPECT_EQ(warning.find('\n'), std::string::npos) << warning;
  }
  // A directory where the file should be: unreadable, a warning, no throw.
  std::string warning;
  EXPECT_NO_THROW(memlab::gemm_autotune_cache::load(d.path.string(), &warning));
  EXPECT_NE(warning, "");
  // Null warning pointer: still no throw.
  write(file, "{");
  EXPECT_NO_THROW(memlab::gemm_autotune_cache::load(file.string(), nullptr));
}

TEST(GemmAutotune, SaveToAnUnwritablePlaceThrowsTheLibrarysError) {
  temp_dir d;
  fs::path const blocker = d.path / "file";
  write(blocker, "x");  // a file where a directory is needed
  memlab::gemm_autotune_cache c;
  c.plans["k"] = {"gemv", 1.0};
  EXPECT_THROW(c.save((blocker / "gemm-autotune.json").string()), memlab::error);
  EXPECT_THROW(c.save(""), memlab::error);
}

}  // namespace
