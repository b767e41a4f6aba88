// A small HTML well-formedness checker for the tests of the reports and their building blocks
// (tests/examples and tests/examples/kit).
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace sparcon_test {

inline bool is_void_element(const std::string& name) {
  static const std::vector<std::string> kVoid = {"area", "base", "br",   "col",   "embed", "hr",     "img",
                                                 "input", "link", "meta", "param", "source", "track", "wbr"};
  return std::find(kVoid.begin(), kVoid.end(), name) != kVoid.end();
}

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "" when html is well-formed in the sense of the test, otherwise what is wrong and where: every
// '<' starts a comment, a doctype or a tag; void elements have no end tag; every other element
// is closed, in order, by an explicit end tag; no raw '>' in text; every '&' starts an entity;
// no <script> at all; the content of <style> is skipped up to its end tag.
inline std::string check_html(const std::string& html) {
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

}  // namespace sparcon_test
