// The Markdown of results.md, written and read back: table cells, the run-information list,
// and the conversion of such Markdown to HTML for the report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kit {

/// text as one Markdown table cell: '|' becomes "\|" (it would end the cell), line breaks
/// become spaces (they would end the row).
std::string markdown_cell(std::string_view text);

/// The entries of a JSON object as a list, one "- key: value\n" line each (strings as they
/// are, other values as compact JSON, line breaks as spaces), then an empty line; "" when
/// info is not an object or is empty.
std::string markdown_list(const nlohmann::json& info);

/// Markdown as written by these functions to HTML, every text escaped: "#" headings become
/// <h2>, "- " or "* " lines a <ul class="run"> list, runs of "|" lines a <table
/// class="results"> (a second row of dashes and colons makes the first a <thead> and sets each
/// column's text-align), other lines <p> paragraphs; "\|" inside a cell is a literal '|'.
std::string markdown_to_html(std::string_view markdown);

}  // namespace kit
