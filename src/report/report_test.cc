// The report's pieces: ticks, escaping, charts whose paths carry exactly the values they were
// drawn from, and a whole report of a synthetic run directory.
#include <gtest/gtest.h>

#include <regex>

#include "core/file_util.h"
#include "core/test_util.h"
#include "train/run_metrics.h"
#include "report/run_report.h"
#include "report/svg_chart.h"

namespace trail::report {
namespace {

// The report of a run directory, without a data copy or an audit section.
RunReportOptions Options(const std::string& run) {
  RunReportOptions o;
  o.run_dir = run;
  return o;
}

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(SvgChart, NiceTicksAreOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_EQ(NiceTicks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(NiceTicks(0.13, 0.91, 4), (std::vector<double>{0.2, 0.4, 0.6, 0.8}));
  EXPECT_EQ(NiceTicks(-3, 3, 6), (std::vector<double>{-3, -2, -1, 0, 1, 2, 3}));
  EXPECT_TRUE(NiceTicks(1, 1, 5).empty());
}

TEST(SvgChart, EscapesTextAndCarriesTheExactValuesOfEachSeries) {
  EXPECT_EQ(EscapeHtml("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  Chart c{"t", "A <title>", "x", "y", false, {}, {{"floor", 0.5}}};
  c.series.push_back({"s1", {1, 2, 3}, {0.1, NAN, 0.30000000000000004}});
  const std::string svg = RenderSvg(c);
  EXPECT_NE(svg.find("id=\"chart-t\""), std::string::npos);
  EXPECT_NE(svg.find("A &lt;title&gt;"), std::string::npos);
  EXPECT_NE(svg.find("data-y=\"0.10000000000000001 nan 0.30000000000000004\""), std::string::npos)
      << svg;
  // The non-finite point breaks the line: two subpaths, each one move.
  const std::smatch d = [&] {
    std::smatch match;
    std::regex_search(svg, match, std::regex("class=\"series\"[^>]* d=\"([^\"]*)\""));
    return match;
  }();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(Count(d[1].str(), "M"), 2u);
  EXPECT_EQ(Count(d[1].str(), "L"), 0u);
  EXPECT_NE(svg.find("class=\"reference\" data-name=\"floor\" data-y=\"0.5\""), std::string::npos);
}

TEST(SvgChart, LogAxisLeavesOutNonPositiveValuesAndEmptyChartsSaySo) {
  Chart c{"g", "g", "x", "y", true, {{"s", {1, 2, 3}, {0, 10, 100}}}, {}};
  const std::string svg = RenderSvg(c);
  EXPECT_NE(svg.find("(log)"), std::string::npos);
  EXPECT_EQ(Count(svg, "M"), 1u + 0u);  // the zero is not drawn; 10 and 100 form one line
  Chart empty{"e", "e", "x", "y", false, {{"s", {}, {}}}, {}};
  EXPECT_NE(RenderSvg(empty).find("no data"), std::string::npos);
}

TEST(RunReport, AWholeReportFromARunDirectory) {
  TempDir dir;
  const std::string run = dir / "run";
  std::filesystem::create_directories(run);
  WriteFileAtomic(run + "/run.json",
                  R"({"format": "trail.run.v1", "genesis": ")" + std::string(64, 'a') +
                      R"(", "parameters": 1234, "flops_per_token": 7404.0, "recipe_sha256": "r",
                      "manifest_sha256": "m", "data_manifest": "/nowhere/manifest.json",
                      "val_unigram_entropy": {"web": 5.5}})");
  WriteFileAtomic(run + "/trajectory.jsonl", "");
  WriteFileAtomic(
      run + "/metrics.jsonl",
      R"({"step":0,"loss":6.5,"lr":0.001,"tokens":64,"grad_norm":2.0,"grad_norm_clipped":1.0,"skipped":"","tok_s":100,"weight_norms":{"embed":3.0}}
{"step":1,"loss":6.25,"lr":0.002,"tokens":128,"grad_norm":9.0,"grad_norm_clipped":0,"skipped":"spike","tok_s":120,"alerts":[{"kind":"spike","step":1}]}
{"step":2,"loss":6.0,"lr":0.003,"tokens":192,"grad_norm":1.5,"grad_norm_clipped":1.0,"skipped":"","tok_s":130,"val":{"web":6.1},"weight_norms":{"embed":3.5}}
)");
  const std::string html = RunReportHtml(Options(run));
  for (const char* id :
       {"chart-loss", "chart-lr", "chart-grad-norm", "chart-throughput", "chart-weight-norms"}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
  EXPECT_NE(html.find("data-name=\"training loss\" data-x=\"64 128 192\" data-y=\"6.5 6.25 6\""),
            std::string::npos);
  EXPECT_NE(html.find("data-name=\"skipped update\" data-x=\"128\" data-y=\"9\""),
            std::string::npos);
  EXPECT_NE(html.find("data-name=\"unigram entropy web\" data-y=\"5.5\""), std::string::npos);
  EXPECT_NE(html.find("1 spike-monitor alert(s); 1 skipped update(s)"), std::string::npos);
  EXPECT_NE(html.find("not here; give a copy with --data"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no links out
  // A trajectory that does not chain is shown as such; the rest of the report is still written.
  WriteFileAtomic(run + "/trajectory.jsonl", "{\"step\": 0, \"chain\": \"00\"}\n");
  EXPECT_NE(RunReportHtml(Options(run)).find("the trajectory does not verify"), std::string::npos);
  WriteFileAtomic(run + "/metrics.jsonl", "{\"loss\": 1}\n");
  EXPECT_NE(
      ErrorOf([&] { RunReportHtml(Options(run)); }).find("metrics.jsonl:1: not a metrics record"),
      std::string::npos);
}

}  // namespace
}  // namespace trail::report
