#include <gtest/gtest.h>

#include "bench/runner.hpp"
#include "memlab/error.hpp"

using namespace memlab::bench;

namespace {
experiment sample_experiment() {
  experiment e;
  e.id = "demo.sample";
  e.axes = {variant_axis({"a", "b"}), int_axis("n", {1, 2, 3}, {1}), pow2_axis("size", 10, 12)};
  e.axes[1].min_value = 1;
  e.axes[1].max_value = 100;
  e.body = [](state&) {};
  return e;
}
}  // namespace

TEST(Axes, Pow2AxisAndRange) {
  auto a = pow2_axis("x", 3, 5, 3, 3);
  ASSERT_EQ(a.values.size(), 3u);
  EXPECT_EQ(std::get<std::int64_t>(a.values[2]), 32);
  ASSERT_EQ(a.quick_values.size(), 1u);
  EXPECT_EQ(range(0, 10, 5), (std::vector<std::int64_t>{0, 5, 10}));
}

TEST(Axes, CartesianProductFirstAxisSlowest) {
  auto e = sample_experiment();
  auto pts = expand_points(e, false, {});
  ASSERT_EQ(pts.size(), 2u * 3u * 3u);
  EXPECT_EQ(std::get<std::string>(pts.front().at("variant")), "a");
  EXPECT_EQ(std::get<std::string>(pts.back().at("variant")), "b");
  EXPECT_EQ(std::get<std::int64_t>(pts[1].at("size")), 2048);
  EXPECT_EQ(expand_points(e, true, {}).size(), 2u * 1u * 3u) << "quick values replace the sweep";
}

TEST(Axes, OverridesParseListsRangesAndPowers) {
  auto e = sample_experiment();
  auto pts = expand_points(e, false, {parse_axis_override("n=5:9:2"), parse_axis_override("demo.sample:variant=b")});
  ASSERT_EQ(pts.size(), 1u * 3u * 3u);
  EXPECT_EQ(std::get<std::int64_t>(pts[0].at("n")), 5);
  EXPECT_EQ(std::get<std::int64_t>(pts[8].at("n")), 9);
  auto p2 = parse_axis_values(e.axes[2], "2^4:2^6,7");
  ASSERT_EQ(p2.size(), 4u);
  EXPECT_EQ(std::get<std::int64_t>(p2[0]), 16);
  EXPECT_EQ(std::get<std::int64_t>(p2[2]), 64);
  EXPECT_EQ(std::get<std::int64_t>(p2[3]), 7);
}

TEST(Axes, BadOverridesAreUsageErrorsThatNameTheProblem) {
  auto e = sample_experiment();
  EXPECT_THROW(parse_axis_override("novalue"), usage_error);
  EXPECT_THROW(parse_axis_override("=3"), usage_error);
  try {
    parse_axis_values(e.axes[1], "abc");
    FAIL();
  } catch (usage_error const& err) {
    EXPECT_NE(std::string(err.what()).find("abc"), std::string::npos);
  }
  EXPECT_THROW(parse_axis_values(e.axes[1], "0"), usage_error) << "below min_value";
  EXPECT_THROW(parse_axis_values(e.axes[1], "101"), usage_error) << "above max_value";
  EXPECT_THROW(parse_axis_values(e.axes[1], "9:3"), usage_error) << "empty range";
  EXPECT_THROW(parse_axis_values(e.axes[0], "c"), usage_error) << "unknown variant";
  EXPECT_THROW(parse_axis_values(e.axes[1], "1,,2"), usage_error);
  EXPECT_THROW(expand_points(e, false, {parse_axis_override("demo.sample:nope=1")}), usage_error);
  axis closed = int_axis("w", {4, 16});
  closed.allowed = {std::int64_t{4}, std::int64_t{8}, std::int64_t{16}};
  EXPECT_NO_THROW(parse_axis_values(closed, "8"));
  EXPECT_THROW(parse_axis_values(closed, "5"), usage_error);
}

// "-a variant=rule" on `memlab run gemm.tc_split_k` must not reach ceilings.tensor, which the run
// adds first and whose variant axis has no "rule": unscoped overrides go to the named experiments.
TEST(Axes, UnscopedOverridesApplyToTheNamedExperimentsOnly) {
  experiment named = sample_experiment();
  experiment ceiling;
  ceiling.id = "ceilings.demo";
  ceiling.axes = {variant_axis({"x", "y"}), int_axis("n", {7})};
  ceiling.body = [](state&) {};
  auto const scoped = scope_overrides({parse_axis_override("variant=b"), parse_axis_override("ceilings.demo:n=7"),
                                       parse_axis_override("n=2")},
                                      {&named});
  ASSERT_EQ(scoped.size(), 3u);
  EXPECT_EQ(scoped[0].experiment, "demo.sample");
  EXPECT_EQ(scoped[1].experiment, "ceilings.demo") << "a scoped override stays as typed";
  EXPECT_EQ(scoped[2].experiment, "demo.sample");
  auto const ceiling_points = expand_points(ceiling, false, scoped);
  ASSERT_EQ(ceiling_points.size(), 2u) << "the ceiling keeps both variants";
  EXPECT_EQ(std::get<std::string>(ceiling_points[1].at("variant")), "y");
  auto const named_points = expand_points(named, false, scoped);
  ASSERT_EQ(named_points.size(), 3u) << "variant b, n 2, three sizes";
  EXPECT_EQ(std::get<std::string>(named_points[0].at("variant")), "b");
  EXPECT_EQ(std::get<std::int64_t>(named_points[0].at("n")), 2);
  try {
    (void)scope_overrides({parse_axis_override("nope=1")}, {&named});
    FAIL() << "an axis no named experiment has";
  } catch (usage_error const& err) {
    EXPECT_NE(std::string(err.what()).find("'nope'"), std::string::npos);
  }
}

TEST(Registry, SelectsIdsAndFamiliesAndRejectsUnknownNames) {
  auto& reg = registry::instance();
  auto fam = reg.select({"coalescing"});
  ASSERT_GE(fam.size(), 3u);
  for (auto const* e : fam) EXPECT_EQ(e->family(), "coalescing");
  auto one = reg.select({"coalescing.stride", "coalescing.stride"});
  ASSERT_EQ(one.size(), 1u) << "duplicates collapse";
  EXPECT_THROW(reg.select({"coalescing.nope"}), usage_error);
  auto def = reg.select({});
  EXPECT_FALSE(def.empty());
  EXPECT_EQ(def.front()->family(), "ceilings") << "ceilings run first";
}

namespace {

std::string add_error(experiment e) {
  try {
    registry::instance().add(std::move(e));
  } catch (memlab::error const& x) {
    return x.what();
  }
  return "";
}

}  // namespace

/// A declaration that names what the experiment lacks would draw an empty plot or pick no
/// headline; registration refuses it, naming the experiment and the name.
TEST(Registry, RefusesADeclarationNamingAnAxisOrMetricItLacks) {
  experiment e = sample_experiment();
  e.id = "demo.declared";
  EXPECT_THROW(e.describe_axis("nope", "bytes", "x"), memlab::error);
  e.describe_axis("size", "bytes", "bytes copied", true);
  EXPECT_EQ(e.axes[2].unit, "bytes");
  EXPECT_TRUE(e.axes[2].log_scale);
  e.metrics = {metrics::time(), metrics::gbps()};

  experiment bad_x = e;
  bad_x.plots = {line_plot("p.png", "t", "elements", "gbps")};
  EXPECT_NE(add_error(bad_x).find("plot p.png has x axis 'elements'"), std::string::npos) << add_error(bad_x);
  experiment bad_y = e;
  bad_y.plots = {line_plot("p.png", "t", "n", "tflops")};
  EXPECT_NE(add_error(bad_y).find("undeclared metric 'tflops'"), std::string::npos);
  experiment bad_headline = e;
  bad_headline.headline = best_row("q?", {{"shape", {"max"}}}, "gbps");
  EXPECT_NE(add_error(bad_headline).find("headline names axis 'shape'"), std::string::npos);
  experiment no_baseline = e;
  no_baseline.headline = best_row("q?", {{"n", {"max"}}}, "median_ms", "baseline");
  EXPECT_NE(add_error(no_baseline).find("names none"), std::string::npos);
  EXPECT_FALSE(no_baseline.headline.higher_is_better);  // a time is better low
  EXPECT_TRUE(best_row("q?", {}, "gbps").higher_is_better);
  EXPECT_FALSE(best_row("q?", {}, "extra.cycles_per_load").higher_is_better);
  experiment short_row = e;
  short_row.tables = {{"atlas", {{"a", ""}, {"b", ""}}, {{"level", {published(1, "src")}}}, ""}};
  EXPECT_NE(add_error(short_row).find("has 1 cells for 2 columns"), std::string::npos) << add_error(short_row);
  experiment two_sources = e;
  table_cell both = from_device("l2_bytes");
  both.value = 3;
  two_sources.tables = {{"atlas", {{"a", ""}}, {{"level", {both}}}, ""}};
  EXPECT_NE(add_error(two_sources).find("two sources"), std::string::npos);
  experiment bad_pick = e;
  bad_pick.tables = {{"atlas", {{"a", ""}}, {{"level", {from_row("x.y", {}, "gbps", "best")}}}, ""}};
  EXPECT_NE(add_error(bad_pick).find("picks 'best'"), std::string::npos);
  EXPECT_EQ(registry::instance().find("demo.declared"), nullptr);  // none of them was added
}
