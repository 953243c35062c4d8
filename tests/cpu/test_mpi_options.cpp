// memlab-mpi's command line and rank-to-GPU rule (src/mpi/options.hpp): pure functions, so they
// are checked here on any machine, whether or not MPI was found.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/experiment.hpp"
#include "mpi/options.hpp"

using namespace memlab;
using memlab::bench::usage_error;
using namespace memlab::mpi;
using link::collective;

namespace {
std::string usage_message(std::vector<std::string> const& args) {
  try {
    (void)parse_options(args);
  } catch (usage_error const& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(MpiOptions, DefaultsAreEveryCollectiveAndTheDefaultSweep) {
  options const o = parse_options({});
  EXPECT_EQ(6u, o.collectives.size());
  EXPECT_EQ(collective::all_reduce, o.collectives.front());
  EXPECT_EQ(collective::alltoall, o.collectives.back());
  EXPECT_TRUE(o.bytes.empty());  // link.nccl's sweep, filled in by the program
  EXPECT_EQ("memlab-mpi-results", o.output_dir);
  EXPECT_FALSE(o.allow_shared_gpu);
  EXPECT_FALSE(o.help);
}

TEST(MpiOptions, ReadsEveryOptionInBothSpellings) {
  options const o = parse_options({"--collectives", "reduce_scatter,all_reduce", "--bytes=1K,4M", "-o", "out",
                                   "--allow-shared-gpu", "--seed", "7"});
  ASSERT_EQ(2u, o.collectives.size());
  EXPECT_EQ(collective::reduce_scatter, o.collectives[0]);
  EXPECT_EQ(collective::all_reduce, o.collectives[1]);
  EXPECT_EQ((std::vector<std::int64_t>{1024, 4 << 20}), o.bytes);
  EXPECT_EQ("out", o.output_dir);
  EXPECT_TRUE(o.allow_shared_gpu);
  EXPECT_EQ(7u, o.seed);
  options const p = parse_options({"-c", "broadcast", "-b", "8", "--output=dir", "-h"});
  EXPECT_EQ(std::vector<collective>{collective::broadcast}, p.collectives);
  EXPECT_EQ(std::vector<std::int64_t>{8}, p.bytes);
  EXPECT_EQ("dir", p.output_dir);
  EXPECT_TRUE(p.help);
}

TEST(MpiOptions, SizesTakeBinarySuffixesAndPowersOfTwo) {
  EXPECT_EQ(8, parse_size("8"));
  EXPECT_EQ(64 << 10, parse_size("64K"));
  EXPECT_EQ(64 << 10, parse_size("64k"));
  EXPECT_EQ(16 << 20, parse_size("16M"));
  EXPECT_EQ(std::int64_t{4} << 30, parse_size("4G"));
  EXPECT_EQ(1 << 20, parse_size("2^20"));
  for (char const* bad : {"", "K", "4X", "4KB", "-8", "1.5M", "2^", "2^x", "2^99", "0x10", "1234567890123"})
    EXPECT_THROW(parse_size(bad), usage_error) << bad;
}

TEST(MpiOptions, ByteRangesDoubleOrMultiplyLikeNcclTests) {
  std::vector<std::int64_t> full;
  for (std::int64_t v = 8; v <= (std::int64_t{4} << 30); v *= 2) full.push_back(v);
  EXPECT_EQ(full, parse_bytes("8:4G"));  // nccl-tests -b 8 -e 4G -f 2: 30 sizes
  EXPECT_EQ(30u, full.size());
  EXPECT_EQ((std::vector<std::int64_t>{1024, 4096, 16384}), parse_bytes("1K:16K:4"));
  EXPECT_EQ((std::vector<std::int64_t>{1024, 4096, 16384}), parse_bytes("1K:20K:4"));  // stops at or below HI
  EXPECT_EQ((std::vector<std::int64_t>{8, 16, 1024}), parse_bytes("8:16,1K,16"));    // duplicates dropped
}

TEST(MpiOptions, BadBytesAreOneLineUsageErrors) {
  for (char const* bad : {"", "8,", ",8", "6", "2", "0", "8G", "8:oops", "16:8", "8:64:1", "8:64:x", "8:64:2:2", "1:4"}) {
    std::string const m = usage_message({"--bytes", bad});
    EXPECT_NE(std::string::npos, m.find("--bytes")) << bad << ": " << m;
    EXPECT_EQ(std::string::npos, m.find('\n')) << bad;
  }
}

TEST(MpiOptions, UnknownCollectivesAndArgumentsNameTheItem) {
  std::string const m = usage_message({"--collectives", "all_reduce,allreduce"});
  EXPECT_NE(std::string::npos, m.find("unknown collective 'allreduce'")) << m;
  EXPECT_NE(std::string::npos, m.find("all_gather")) << m;  // lists the choices
  // CLI11's messages, each one line naming the option.
  EXPECT_NE(std::string::npos, usage_message({"--frobnicate"}).find("not expected: --frobnicate"));
  EXPECT_NE(std::string::npos, usage_message({"--bytes"}).find("--bytes: 1 required TEXT missing"));
  EXPECT_NE(std::string::npos, usage_message({"--allow-shared-gpu=1"}).find("allow-shared-gpu was given a disallowed"));
  for (char const* bad : {"-3", "x"}) {
    std::string const m = usage_message({"--seed", bad});
    EXPECT_NE(std::string::npos, m.find("--seed")) << m;
    EXPECT_EQ(std::string::npos, m.find('\n')) << m;
  }
  EXPECT_NE(std::string::npos, usage_message({"-o", ""}).find("--output: needs a folder"));
  EXPECT_NE(std::string::npos, usage_message({"--collectives", ""}).find("no collective"));
  EXPECT_EQ(6u, parse_collectives("all,all_reduce").size());
}

TEST(MpiOptions, EachRankOfAHostGetsItsOwnGpu) {
  for (int gpus : {1, 2, 4, 8})
    for (int ranks = 1; ranks <= gpus; ++ranks)
      for (int r = 0; r < ranks; ++r) {
        gpu_choice const g = gpu_for_rank(r, ranks, gpus, false);
        EXPECT_TRUE(g.error.empty()) << g.error;
        EXPECT_EQ(r, g.device);
        EXPECT_FALSE(g.shared);
      }
}

TEST(MpiOptions, MoreRanksThanGpusIsAnErrorUnlessShared) {
  gpu_choice const g = gpu_for_rank(1, 3, 2, false);
  EXPECT_EQ(-1, g.device);
  EXPECT_NE(std::string::npos, g.error.find("3 ranks on this host but 2 GPUs")) << g.error;
  EXPECT_NE(std::string::npos, g.error.find("--allow-shared-gpu")) << g.error;
  EXPECT_EQ(std::string::npos, g.error.find('\n'));
  // Shared: modulo the GPUs; ranks 0 and 2 share GPU 0, rank 1 has GPU 1 alone.
  gpu_choice const a = gpu_for_rank(0, 3, 2, true), b = gpu_for_rank(1, 3, 2, true), c = gpu_for_rank(2, 3, 2, true);
  EXPECT_EQ(0, a.device);
  EXPECT_EQ(1, b.device);
  EXPECT_EQ(0, c.device);
  EXPECT_TRUE(a.shared);
  EXPECT_FALSE(b.shared);
  EXPECT_TRUE(c.shared);
}

TEST(MpiOptions, NoGpuIsAnErrorEvenWhenShared) {
  for (bool shared : {false, true}) {
    gpu_choice const g = gpu_for_rank(0, 1, 0, shared);
    EXPECT_EQ(-1, g.device);
    EXPECT_NE(std::string::npos, g.error.find("no GPU visible")) << g.error;
  }
  EXPECT_FALSE(gpu_for_rank(2, 2, 4, false).error.empty());  // not a rank of its host
}
