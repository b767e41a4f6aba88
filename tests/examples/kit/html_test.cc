// kit/html.h and kit/markdown.h: escaping, the page, and Markdown results converted to HTML
// (checked by the tag matcher of html_checker.h, itself tested first).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "html_checker.h"
#include "kit/html.h"
#include "kit/markdown.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using sparcon_test::check_html;

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

TEST(HtmlEscape, EscapesTheFiveCharactersAndControls) {
  EXPECT_EQ(kit::html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(kit::html_escape(std::string("a\0b", 3)), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(kit::html_escape("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(HtmlDocument, WrapsTheBodyInOneEscapedSelfContainedPage) {
  const std::string page = kit::html_document("a <b> & c", "p { color: red; }", "<p>body</p>\n");
  EXPECT_EQ(check_html(page), "");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_THAT(page, HasSubstr("<title>a &lt;b&gt; &amp; c</title>"));
  EXPECT_THAT(page, HasSubstr("<style>p { color: red; }</style>"));
  EXPECT_THAT(page, HasSubstr("<body>\n<p>body</p>\n</body>\n</html>\n"));
}

TEST(Markdown, CellsEscapePipesAndLineBreaks) {
  EXPECT_EQ(kit::markdown_cell("a|b\nc\rd"), "a\\|b c d");
}

TEST(Markdown, RunListHasOneLinePerEntryAndNothingForAnEmptyObject) {
  EXPECT_EQ(kit::markdown_list({{"b", 2}, {"a", "x\ny"}}), "- a: x y\n- b: 2\n\n");
  EXPECT_EQ(kit::markdown_list(nlohmann::json::object()), "");
  EXPECT_EQ(kit::markdown_list(nlohmann::json::array({1})), "");
}

TEST(Markdown, TablesHeadingsListsAndParagraphsBecomeEscapedHtml) {
  const std::string html = kit::markdown_to_html(
      "# Results <1>\n\n- date: 2026 & later\n\n| name | value |\n|:---|---:|\n| a\\|b | <3 |\n\nplain & text\n");
  EXPECT_EQ(check_html(html), "");
  EXPECT_THAT(html, HasSubstr("<h2>Results &lt;1&gt;</h2>"));
  EXPECT_THAT(html, HasSubstr("<ul class=\"run\">\n<li>date: 2026 &amp; later</li>\n</ul>"));
  EXPECT_THAT(html, HasSubstr("<thead>\n<tr><th style=\"text-align:left\">name</th>"
                              "<th style=\"text-align:right\">value</th></tr>\n</thead>"));
  EXPECT_THAT(html, HasSubstr("<tr><td style=\"text-align:left\">a|b</td><td style=\"text-align:right\">&lt;3</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<p>plain &amp; text</p>"));
  EXPECT_THAT(html, Not(HasSubstr("<3")));
  // A table without a separator row has no header.
  EXPECT_THAT(kit::markdown_to_html("| x |\n"), Not(HasSubstr("<thead>")));
}

}  // namespace
