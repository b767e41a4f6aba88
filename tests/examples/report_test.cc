// The output side of the text-classification experiment: the results table (JSON and Markdown,
// statistics recomputed here) and the HTML report, checked for well-formedness by the tag
// matcher of html_checker.h and for the escaping of token text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "html_checker.h"
#include "test_files.h"
#include "report.h"
#include "results.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using sparcon_test::entries;
using sparcon_test::read;
using OutputTest = sparcon_test::TempDirTest;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// --- results -------------------------------------------------------------------------------

std::vector<spam::VariantResult> fixture_results() {
  return {
      {"softmax", "discrete", {0.91, 0.93, 0.95}, {10.0, 12.0, 17.0}, {1.0, 1.0, 1.0}},
      {"sparsemax", "discrete", {0.95, 0.94}, {11.0, 13.0}, {0.12, 0.16}},
      {"cont-sparsemax N=64", "continuous", {0.925}, {20.5}, {0.3}},
  };
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// The sample standard deviation; NaN for fewer than two values.
double sd_of(const std::vector<double>& v) {
  if (v.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

std::string fmt(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

TEST_F(OutputTest, ResultsJsonHasEverySeedMeansSampleSdsAndRunInfo) {
  const auto results = fixture_results();
  const nlohmann::json run_info = {{"date", "2025-01-02"}, {"machine", "2-core test box"}, {"command", "spam --quick"}};
  spam::write_results(dir_, results, run_info);
  const auto json = nlohmann::json::parse(read(dir_ / "results.json"));
  EXPECT_EQ(json["run"], run_info);
  ASSERT_EQ(json["variants"].size(), results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& v = json["variants"][i];
    const auto& r = results[i];
    SCOPED_TRACE(r.name);
    EXPECT_EQ(v["name"], r.name);
    EXPECT_EQ(v["family"], r.family);
    EXPECT_EQ(v["seeds"], r.accuracies.size());
    const std::vector<std::pair<const char*, const std::vector<double>*>> series = {
        {"accuracy", &r.accuracies}, {"train_seconds", &r.train_seconds}, {"sparsity", &r.sparsity}};
    for (const auto& [key, values] : series) {
      SCOPED_TRACE(key);
      EXPECT_EQ(v[key]["per_seed"].get<std::vector<double>>(), *values);
      EXPECT_NEAR(v[key]["mean"].get<double>(), mean_of(*values), 1e-12);
      if (values->size() < 2)
        EXPECT_TRUE(v[key]["sd"].is_null());
      else
        EXPECT_NEAR(v[key]["sd"].get<double>(), sd_of(*values), 1e-12);
    }
  }
  // Spot checks against hand-computed values: {0.91, 0.93, 0.95} has mean 0.93 and sample sd
  // sqrt((0.02^2 + 0 + 0.02^2) / 2) = 0.02; {0.95, 0.94}: sqrt(2 * 0.005^2 / 1).
  EXPECT_NEAR(json["variants"][0]["accuracy"]["mean"].get<double>(), 0.93, 1e-12);
  EXPECT_NEAR(json["variants"][0]["accuracy"]["sd"].get<double>(), 0.02, 1e-12);
  EXPECT_NEAR(json["variants"][1]["accuracy"]["sd"].get<double>(), 0.005 * std::sqrt(2.0), 1e-12);
  EXPECT_TRUE(json["variants"][2]["accuracy"]["sd"].is_null());  // one seed: no sample sd
  EXPECT_THAT(entries(dir_), ::testing::ElementsAre("results.json", "results.md"));
}

TEST_F(OutputTest, ResultsMarkdownHasAHeaderRowAndOneRowPerVariant) {
  const auto results = fixture_results();
  spam::write_results(dir_, results, {{"date", "2025-01-02"}});
  const std::string md = read(dir_ / "results.md");
  const std::string table = spam::results_table_markdown(results);
  EXPECT_THAT(md, HasSubstr(table));
  EXPECT_THAT(md, HasSubstr("- date: 2025-01-02"));

  std::vector<std::string> rows;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line.front() == '|') rows.push_back(line);
  ASSERT_EQ(rows.size(), 2 + results.size());
  EXPECT_THAT(rows[0], HasSubstr("variant"));
  EXPECT_THAT(rows[0], HasSubstr("accuracy"));
  EXPECT_THAT(rows[0], HasSubstr("seeds"));
  EXPECT_THAT(rows[0], HasSubstr("train time"));
  EXPECT_THAT(rows[0], HasSubstr("sparsity"));
  EXPECT_THAT(rows[1], ::testing::MatchesRegex("\\|[-:|]+\\|"));
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    SCOPED_TRACE(r.name);
    const std::string& row = rows[2 + i];
    EXPECT_EQ(count(row, " | ") + 2, 6u) << row;  // five cells
    EXPECT_THAT(row, HasSubstr("| " + r.name + " |"));
    const std::string sd = r.accuracies.size() < 2 ? "n/a" : fmt(100 * sd_of(r.accuracies), 2);
    EXPECT_THAT(row, HasSubstr(fmt(100 * mean_of(r.accuracies), 2) + " ± " + sd));
    EXPECT_THAT(row, HasSubstr("| " + std::to_string(r.accuracies.size()) + " |"));
    EXPECT_THAT(row, HasSubstr("| " + fmt(mean_of(r.train_seconds), 1) + " |"));
    EXPECT_THAT(row, HasSubstr("| " + fmt(100 * mean_of(r.sparsity), 1) + " |"));
  }
}

TEST_F(OutputTest, ResultsTableEscapesPipesInNames) {
  const std::string table = spam::results_table_markdown({{"a|b", "discrete", {0.5}, {1.0}, {1.0}}});
  EXPECT_THAT(table, HasSubstr("| a\\|b |"));
}

// --- the HTML report -----------------------------------------------------------------------

std::vector<spam::VariantDocuments> fixture_variants() {
  spam::DocumentView discrete;
  discrete.id = "spam-1/00042";
  discrete.label = 1;
  discrete.predicted = 1;
  discrete.spam_probability = 0.97;
  discrete.tokens = {"free", "<script>", "alert", "&", "at&t", "\"quoted\"", "it's", "money"};
  discrete.discrete_weights = {0.5F, 0.25F, 0.0F, 0.125F, 0.0F, 0.0F, 0.0F, 0.125F};

  spam::DocumentView continuous;
  continuous.id = "easy-ham-1/<007>";
  continuous.label = 0;
  continuous.predicted = 1;
  continuous.spam_probability = 0.61;
  continuous.tokens = {"meeting", "at", "<b>noon</b>", "&amp;", "bring", "the", "slides", "</svg>"};
  continuous.density = {0.0F, 0.0F, 2.0F, 3.5F, 0.0F, 0.0F, 0.0F, 0.0F};
  continuous.support_begin = 0.25;
  continuous.support_end = 0.5;

  spam::DocumentView softmax = continuous;
  softmax.id = "hard-ham-1/9";
  softmax.density = {0.5F, 0.7F, 1.0F, 1.2F, 1.1F, 1.0F, 0.9F, 0.8F};
  softmax.support_begin = softmax.support_end = std::numeric_limits<double>::quiet_NaN();

  return {{"sparsemax", {discrete}}, {"cont-sparsemax N=32", {continuous, softmax}}};
}

TEST_F(OutputTest, HtmlReportIsWellFormedEscapedAndDrawsTheDensity) {
  const auto file = dir_ / "report" / "report.html";
  const std::string table = spam::results_table_markdown(fixture_results());
  spam::write_html_report(file, "Spam <attention> & friends", fixture_variants(), "# Results\n\n- date: today\n\n" + table);
  const std::string html = read(file);
  EXPECT_THAT(entries(dir_ / "report"), ::testing::ElementsAre("report.html"));

  EXPECT_EQ(sparcon_test::check_html(html), "");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(sparcon_test::lower(html), Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http://")));   // no external resources
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, HasSubstr("<title>Spam &lt;attention&gt; &amp; friends</title>"));

  // The results table comes first, converted to HTML with one row per variant.
  const auto table_at = html.find("<table");
  ASSERT_NE(table_at, std::string::npos);
  EXPECT_LT(table_at, html.find("spam-1/00042"));
  EXPECT_EQ(count(html, "</th>"), 5u);
  EXPECT_EQ(count(html, "<tr>"), 1 + fixture_results().size());
  EXPECT_THAT(html, HasSubstr("cont-sparsemax N=64"));

  // Tokens, ids and labels escaped.
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;"));
  EXPECT_THAT(html, HasSubstr("at&amp;t"));
  EXPECT_THAT(html, HasSubstr("&quot;quoted&quot;"));
  EXPECT_THAT(html, HasSubstr("it&#39;s"));
  EXPECT_THAT(html, HasSubstr("&amp;amp;"));
  EXPECT_THAT(html, HasSubstr("&lt;b&gt;noon&lt;/b&gt;"));
  EXPECT_THAT(html, HasSubstr("easy-ham-1/&lt;007&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<b>noon")));

  // Discrete shading: the largest weight fully opaque, half of it at 0.5, zero weights plain.
  EXPECT_THAT(html, HasSubstr("rgba(214,39,40,1.000)\" title=\"token 0, weight 0.50000\">free</span>"));
  EXPECT_THAT(html, HasSubstr("rgba(214,39,40,0.500)\" title=\"token 1, weight 0.25000\">&lt;script&gt;</span>"));
  EXPECT_THAT(html, HasSubstr(" alert "));

  // One SVG per continuous document, none for the discrete one, with the curve and the support.
  EXPECT_EQ(count(html, "<svg"), 2u);
  EXPECT_EQ(count(html, "<polyline"), 2u);
  EXPECT_EQ(count(html, "class=\"support\""), 1u);
  EXPECT_THAT(html, HasSubstr("x=\"250.00\" y=\"0\" width=\"250.00\""));
  EXPECT_LT(html.find("<svg"), html.find(">meeting"));  // above the token text
  EXPECT_THAT(html, HasSubstr("attended interval: tokens 2&ndash;3"));
  EXPECT_THAT(html, HasSubstr("<span class=\"sup\">&lt;b&gt;noon&lt;/b&gt;</span>"));
  EXPECT_THAT(html, HasSubstr("unbounded support"));
  EXPECT_THAT(html, HasSubstr("&#10007; wrong"));
  EXPECT_THAT(html, HasSubstr("&#10003; correct"));
}

TEST_F(OutputTest, HtmlReportEmbedsAnHtmlTableAsIs) {
  const std::string html =
      spam::render_html_report("t", {}, "<table><tr><td>x</td></tr></table>");
  EXPECT_THAT(html, HasSubstr("<table><tr><td>x</td></tr></table>"));
  EXPECT_EQ(sparcon_test::check_html(html), "");
}

TEST_F(OutputTest, HtmlReportConvertsMarkdownAlignmentAndBareHeadings) {
  const std::string html =
      spam::render_html_report("t", {}, "#\n# Run\n| a | b | c | d |\n|---|:---|---:|:---:|\n| 1 | 2 | 3 | 4 |\n");
  EXPECT_EQ(sparcon_test::check_html(html), "");
  EXPECT_THAT(html, HasSubstr("<h2>Run</h2>"));
  EXPECT_THAT(html, HasSubstr("<td>1</td>"));
  EXPECT_THAT(html, HasSubstr("<td style=\"text-align:left\">2</td>"));
  EXPECT_THAT(html, HasSubstr("<td style=\"text-align:right\">3</td>"));
  EXPECT_THAT(html, HasSubstr("<td style=\"text-align:center\">4</td>"));
}

TEST_F(OutputTest, HtmlReportCapsTheTokensShown) {
  spam::DocumentView doc;
  doc.id = "long";
  for (int i = 0; i < 1000; ++i) doc.tokens.push_back(std::string("w").append(std::to_string(i)));
  doc.density.assign(doc.tokens.size(), 1.0F);
  doc.support_begin = 0.9;
  doc.support_end = 1.0;
  const std::string html = spam::render_html_report("t", {{"cont", {doc}}}, "");
  EXPECT_EQ(sparcon_test::check_html(html), "");
  EXPECT_THAT(html, HasSubstr(std::string(" w").append(std::to_string(spam::kMaxTokensShown - 1)).append("</p>")));
  EXPECT_THAT(html, Not(HasSubstr(std::string(" w").append(std::to_string(spam::kMaxTokensShown)).append(" "))));
  EXPECT_THAT(html, HasSubstr(std::to_string(1000 - spam::kMaxTokensShown) + " more tokens not shown"));
  EXPECT_THAT(html, HasSubstr("tokens 900&ndash;999"));
  EXPECT_EQ(count(html, "vector-effect"), 2u);
}

TEST_F(OutputTest, HtmlReportRejectsWeightsThatDoNotMatchTheTokens) {
  spam::DocumentView doc;
  doc.id = "bad";
  doc.tokens = {"a", "b"};
  doc.discrete_weights = {1.0F};
  EXPECT_THROW(spam::render_html_report("t", {{"softmax", {doc}}}, ""), std::invalid_argument);
}

TEST(AttendedTokenRange, TokenCentresInsideTheSupport) {
  // Centres of 8 tokens: 1/16, 3/16, ..., 15/16.
  EXPECT_EQ(spam::attended_token_range(0.25, 0.5, 8), std::make_pair(std::ptrdiff_t{2}, std::ptrdiff_t{3}));
  EXPECT_EQ(spam::attended_token_range(0.0, 1.0, 8), std::make_pair(std::ptrdiff_t{0}, std::ptrdiff_t{7}));
  EXPECT_EQ(spam::attended_token_range(-0.5, 2.0, 8), std::make_pair(std::ptrdiff_t{0}, std::ptrdiff_t{7}));
  EXPECT_EQ(spam::attended_token_range(0.0625, 0.0625, 8), std::make_pair(std::ptrdiff_t{0}, std::ptrdiff_t{0}));
  const auto none = spam::attended_token_range(0.26, 0.30, 8);  // between two centres
  EXPECT_GT(none.first, none.second);
  const auto unbounded = spam::attended_token_range(std::nan(""), std::nan(""), 8);
  EXPECT_GT(unbounded.first, unbounded.second);
}

}  // namespace
