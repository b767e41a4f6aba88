// The output side of the text-classification experiment: atomic file replacement, the results
// table (JSON and Markdown, statistics recomputed here) and the HTML report, checked for
// well-formedness by a small tag matcher and for the escaping of token text.
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

#include "atomic_file.h"
#include "report.h"
#include "results.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A fresh directory per test.
class OutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("spam_report_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// --- a small HTML well-formedness checker -------------------------------------------------

bool is_void_element(const std::string& name) {
  static const std::vector<std::string> kVoid = {"area", "base", "br",   "col",   "embed", "hr",     "img",
                                                 "input", "link", "meta", "param", "source", "track", "wbr"};
  return std::find(kVoid.begin(), kVoid.end(), name) != kVoid.end();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "" when html is well-formed in the sense of the test, otherwise what is wrong and where: every
// '<' starts a comment, a doctype or a tag; void elements have no end tag; every other element
// is closed, in order, by an explicit end tag; no raw '>' in text; every '&' starts an entity;
// no <script> at all; the content of <style> is skipped up to its end tag.
std::string check_html(const std::string& html) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  auto where = [&](std::size_t at) { return " at offset " + std::to_string(at) + ": \"" + html.substr(at, 40) + "\""; };
  while (i < html.size()) {
    const char c = html[i];
    if (c == '&') {
      std::size_t j = i + 1;
      if (j < html.size() && html[j] == '#') {
        ++j;
        const bool hex = j < html.size() && (html[j] == 'x' || html[j] == 'X');
        if (hex) ++j;
        const std::size_t start = j;
        while (j < html.size() && (hex ? std::isxdigit(static_cast<unsigned char>(html[j])) != 0
                                       : std::isdigit(static_cast<unsigned char>(html[j])) != 0))
          ++j;
        if (j == start) return "bad numeric entity" + where(i);
      } else {
        const std::size_t start = j;
        while (j < html.size() && std::isalnum(static_cast<unsigned char>(html[j])) != 0) ++j;
        if (j == start) return "raw '&'" + where(i);
      }
      if (j >= html.size() || html[j] != ';') return "unterminated entity" + where(i);
      i = j + 1;
      continue;
    }
    if (c == '>') return "raw '>' in text" + where(i);
    if (c != '<') {
      ++i;
      continue;
    }
    if (html.compare(i, 4, "<!--") == 0) {
      const auto end = html.find("-->", i + 4);
      if (end == std::string::npos) return "unterminated comment" + where(i);
      i = end + 3;
      continue;
    }
    if (html.compare(i, 2, "<!") == 0) {
      if (lower(html.substr(i, 9)) != "<!doctype") return "unexpected '<!'" + where(i);
      const auto end = html.find('>', i);
      if (end == std::string::npos) return "unterminated doctype" + where(i);
      i = end + 1;
      continue;
    }
    const bool closing = i + 1 < html.size() && html[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    const std::size_t name_start = j;
    if (j >= html.size() || std::isalpha(static_cast<unsigned char>(html[j])) == 0) return "raw '<'" + where(i);
    while (j < html.size() && (std::isalnum(static_cast<unsigned char>(html[j])) != 0 || html[j] == '-')) ++j;
    const std::string name = lower(html.substr(name_start, j - name_start));
    // The rest of the tag, with quoted attribute values that may not contain a raw '<' or '>'.
    char quote = 0;
    while (j < html.size() && (quote != 0 || html[j] != '>')) {
      if (quote != 0 && (html[j] == '<' || html[j] == '>')) return "raw '<' or '>' in an attribute" + where(i);
      if (quote == 0 && html[j] == '<') return "'<' inside a tag" + where(i);
      if (quote == 0 && (html[j] == '"' || html[j] == '\'')) quote = html[j];
      else if (quote != 0 && html[j] == quote) quote = 0;
      ++j;
    }
    if (j >= html.size()) return "unterminated tag" + where(i);
    const bool self_closing = html[j - 1] == '/';
    if (name == "script") return "a <script> element" + where(i);
    if (closing) {
      if (is_void_element(name)) return "end tag of a void element" + where(i);
      if (stack.empty()) return "</" + name + "> without an open element" + where(i);
      if (stack.back() != name) return "</" + name + "> closes <" + stack.back() + ">" + where(i);
      stack.pop_back();
      i = j + 1;
      continue;
    }
    if (self_closing && !is_void_element(name)) return "self-closing <" + name + "/>" + where(i);
    i = j + 1;
    if (is_void_element(name)) continue;
    if (name == "style") {  // raw text up to </style>
      const auto end = lower(html).find("</style>", i);
      if (end == std::string::npos) return "unterminated <style>" + where(i);
      if (html.substr(i, end - i).find('<') != std::string::npos) return "'<' inside <style>" + where(i);
      i = end + 8;
      continue;
    }
    stack.push_back(name);
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + "> (and " + std::to_string(stack.size() - 1) + " more)";
  return "";
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

TEST(HtmlChecker, AcceptsWellFormedAndRejectsBrokenMarkup) {
  EXPECT_EQ(check_html("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>p{a:b}</style></head>"
                       "<body><p a=\"x\">a &amp; b &#39; <br> <svg><rect></rect></svg></p></body></html>"),
            "");
  EXPECT_THAT(check_html("<p><b></p></b>"), HasSubstr("closes"));
  EXPECT_THAT(check_html("<p>x"), HasSubstr("unclosed"));
  EXPECT_THAT(check_html("<p>a < b</p>"), HasSubstr("raw '<'"));
  EXPECT_THAT(check_html("<p>a & b</p>"), HasSubstr("raw '&'"));
  EXPECT_THAT(check_html("<p>a > b</p>"), HasSubstr("raw '>'"));
  EXPECT_THAT(check_html("<p><script>x</script></p>"), HasSubstr("script"));
  EXPECT_THAT(check_html("<p><rect/></p>"), HasSubstr("self-closing"));
  EXPECT_THAT(check_html("<p></br></p>"), HasSubstr("void"));
}

// --- write_atomically ----------------------------------------------------------------------

TEST_F(OutputTest, WriteAtomicallyReplacesContentAndLeavesNoTempFile) {
  const auto file = dir_ / "out.txt";
  spam::write_atomically(file, "first version, rather long\n");
  EXPECT_EQ(read(file), "first version, rather long\n");
  spam::write_atomically(file, "second");
  EXPECT_EQ(read(file), "second");
  spam::write_atomically(file, "");
  EXPECT_EQ(read(file), "");
  EXPECT_THAT(entries(dir_), ::testing::ElementsAre("out.txt"));
}

TEST_F(OutputTest, WriteAtomicallyThrowsNamingThePath) {
  const auto file = dir_ / "missing" / "out.txt";
  try {
    spam::write_atomically(file, "x");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(file.string()));
  }
  EXPECT_THAT(entries(dir_), ::testing::IsEmpty());
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

  EXPECT_EQ(check_html(html), "");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(lower(html), Not(HasSubstr("<script")));
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
  EXPECT_EQ(check_html(html), "");
}

TEST_F(OutputTest, HtmlReportConvertsMarkdownAlignmentAndBareHeadings) {
  const std::string html =
      spam::render_html_report("t", {}, "#\n# Run\n| a | b | c | d |\n|---|:---|---:|:---:|\n| 1 | 2 | 3 | 4 |\n");
  EXPECT_EQ(check_html(html), "");
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
  EXPECT_EQ(check_html(html), "");
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

TEST(HtmlEscape, EscapesTheFiveCharactersAndControls) {
  EXPECT_EQ(spam::html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(spam::html_escape(std::string("a\0b", 3)), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(spam::html_escape("caf\xC3\xA9"), "caf\xC3\xA9");
}

}  // namespace
