#!/usr/bin/env bash
# What a whole-tree clang-format (make format-all) would change, changing
# nothing: per file the lines of the file that would change, then the total.
# Always exits 0 (the tree is not yet formatted; make format formats the
# lines a change touches).
#
#   scripts/format-check.sh FILE...
set -u
command -v clang-format >/dev/null || { echo "format-check: clang-format not found (make deps)" >&2; exit 2; }
total=0; files=0
for f in "$@"; do
	n=$(clang-format --assume-filename="$f" <"$f" | diff "$f" - | grep -c '^<')
	if [ "$n" -gt 0 ]; then
		printf '%6d  %s\n' "$n" "$f"
		total=$((total + n)); files=$((files + 1))
	fi
done
echo "format-check: $total lines in $files of $# files differ from .clang-format"
