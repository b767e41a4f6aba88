// Markdown of results files (kit/markdown.h).
#include "kit/markdown.h"

#include <vector>

#include "kit/html.h"

namespace kit {
namespace {

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

std::string trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  const auto end = s.find_last_not_of(" \t\r");
  return std::string(s.substr(begin, end - begin + 1));
}

// The cells of a Markdown table row "| a | b \| c |" -> {"a", "b | c"}.
std::vector<std::string> table_cells(const std::string& line) {
  std::string row = trim(line);
  if (!row.empty() && row.front() == '|') row.erase(0, 1);
  if (!row.empty() && row.back() == '|' && (row.size() < 2 || row[row.size() - 2] != '\\')) row.pop_back();
  std::vector<std::string> cells;
  std::string current;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {
      current += '|';
      ++i;
    } else if (row[i] == '|') {
      cells.push_back(trim(current));
      current.clear();
    } else {
      current += row[i];
    }
  }
  cells.push_back(trim(current));
  return cells;
}

bool is_separator_row(const std::vector<std::string>& cells) {
  for (const auto& c : cells) {
    if (c.empty() || c.find('-') == std::string::npos) return false;
    if (c.find_first_not_of("-: ") != std::string::npos) return false;
  }
  return !cells.empty();
}

}  // namespace

std::string markdown_to_html(std::string_view markdown) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= markdown.size();) {
    auto end = markdown.find('\n', start);
    if (end == std::string::npos) end = markdown.size();
    lines.emplace_back(markdown.substr(start, end - start));
    start = end + 1;
  }
  std::string html;
  bool in_list = false;
  auto close_list = [&] {
    if (in_list) html += "</ul>\n";
    in_list = false;
  };
  for (std::size_t i = 0; i < lines.size();) {
    const std::string line = trim(lines[i]);
    if (line.empty()) {
      close_list();
      ++i;
    } else if (line.front() == '|') {
      close_list();
      std::vector<std::vector<std::string>> rows;
      while (i < lines.size() && !trim(lines[i]).empty() && trim(lines[i]).front() == '|')
        rows.push_back(table_cells(lines[i++]));
      std::vector<std::string> align;
      std::size_t header_rows = 0;
      if (rows.size() >= 2 && is_separator_row(rows[1])) {
        header_rows = 1;
        for (const auto& c : rows[1]) {
          const bool left = c.front() == ':', right = c.back() == ':';
          align.push_back(left && right ? "center" : right ? "right" : left ? "left" : "");
        }
        rows.erase(rows.begin() + 1);
      }
      html += "<table class=\"results\">\n";
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const bool header = r < header_rows;
        if (r == 0 && header) html += "<thead>\n";
        if (r == header_rows) html += "<tbody>\n";
        html += "<tr>";
        for (std::size_t c = 0; c < rows[r].size(); ++c) {
          const char* tag = header ? "th" : "td";
          html += std::string("<") + tag;
          if (c < align.size() && !align[c].empty()) html += " style=\"text-align:" + align[c] + "\"";
          html += '>';
          html += html_escape(rows[r][c]);
          html += std::string("</") + tag + ">";
        }
        html += "</tr>\n";
        if (header && r + 1 == header_rows) html += "</thead>\n";
      }
      if (rows.size() > header_rows) html += "</tbody>\n";
      html += "</table>\n";
    } else if (line.front() == '#') {
      close_list();
      const auto text_start = line.find_first_not_of('#');  // npos for a line of '#' only
      const auto text = text_start == std::string::npos ? std::string() : trim(line.substr(text_start));
      html += "<h2>" + html_escape(text) + "</h2>\n";
      ++i;
    } else if (line.rfind("- ", 0) == 0 || line.rfind("* ", 0) == 0) {
      if (!in_list) html += "<ul class=\"run\">\n";
      in_list = true;
      html += "<li>" + html_escape(trim(line.substr(2))) + "</li>\n";
      ++i;
    } else {
      close_list();
      html += "<p>" + html_escape(line) + "</p>\n";
      ++i;
    }
  }
  close_list();
  return html;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string markdown_list(const nlohmann::json& info) {
  if (!info.is_object() || info.empty()) return "";
  std::string md;
  for (const auto& [key, value] : info.items())
    md += "- " + one_line(key) + ": " + one_line(value.is_string() ? value.get<std::string>() : value.dump()) + "\n";
  return md + "\n";
}

}  // namespace kit
