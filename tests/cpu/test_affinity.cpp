#include <gtest/gtest.h>

#include "bench/affinity.hpp"
#include "memlab/error.hpp"

using memlab::bench::bind_near_device;
using memlab::bench::parse_cpu_list;

TEST(Affinity, ParsesSysfsCpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_EQ(parse_cpu_list("2-3,1-2"), (std::vector<int>{1, 2, 3})) << "sorted, no duplicates";
}

TEST(Affinity, RejectsTextThatIsNoCpuList) {
  EXPECT_THROW(parse_cpu_list(""), memlab::error);
  EXPECT_THROW(parse_cpu_list("3-1"), memlab::error);
  EXPECT_THROW(parse_cpu_list("a-b"), memlab::error);
  EXPECT_THROW(parse_cpu_list("0-"), memlab::error);
}

TEST(Affinity, AMissingDeviceLeavesTheProcessUnboundAndSaysWhy) {
  auto const j = bind_near_device("ffff:ff:ff.7");
  EXPECT_FALSE(j.at("applied").get<bool>());
  EXPECT_NE(j.at("reason").get<std::string>().find("local_cpulist"), std::string::npos) << j.dump();
}
