// HTML building blocks of the reports: escaping and the page around a body.
#pragma once

#include <string>
#include <string_view>

namespace kit {

/// text with &, <, >, " and ' replaced by entities (safe in element content and quoted
/// attribute values, SVG included); other C0 control characters except tab and line breaks,
/// and DEL, become U+FFFD.
std::string html_escape(std::string_view text);

/// A self-contained HTML5 page: doctype, <html lang="en">, a head with charset utf-8, the
/// viewport, <title>escaped title</title> and <style>style</style>, then <body>\n, body (as
/// is: already HTML) and </body></html>. Ends with a newline.
std::string html_document(std::string_view title, std::string_view style, std::string_view body);

}  // namespace kit
