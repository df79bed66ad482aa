#!/usr/bin/env bash
# check-tracked-files.sh — fail when git tracks a build output or a blob too
# big for a source tree:
#
#   - any ELF file (a compiled binary: the first four bytes are \x7fELF);
#   - any file over MAX_BYTES (default 1 MiB = 1048576 bytes).
#
# Every entry of `git ls-files` is checked as it is in the work tree;
# symlinks and submodules are skipped (git stores no content for them that
# could be a binary). Prints one line per offending file and exits 1 if there
# is any; make lint runs it.
#
# Environment:
#   MAX_BYTES   the largest size allowed, in bytes (default 1048576)
set -euo pipefail
export LC_ALL=C

max=${MAX_BYTES:-1048576}
case $max in
'' | *[!0-9]*) echo "check-tracked-files: MAX_BYTES must be a number of bytes, not '$max'" >&2; exit 2 ;;
esac
cd "$(git rev-parse --show-toplevel)"

bad=0
files=()
while IFS= read -r -d '' f; do
	files+=("./$f") # ./ so that a name starting with - is never an option
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	magic=""
	IFS= read -r -N 4 magic <"$f" || true
	if [ "$magic" = $'\x7fELF' ]; then
		echo "tracked ELF binary: $f (a build output: git rm --cached it and ignore it in .gitignore)" >&2
		bad=1
	fi
done < <(git ls-files -z)

# find -size Nc is exact in bytes; -prune keeps it from walking into
# directories (submodules), -type f skips symlinks.
while IFS= read -r -d '' f; do
	size=$(wc -c <"$f" | tr -d ' ')
	echo "tracked file over $max bytes: ${f#./} ($size bytes; keep large files out of git)" >&2
	bad=1
done < <([ "${#files[@]}" = 0 ] || printf '%s\0' "${files[@]}" | xargs -0 -r sh -c 'exec find "$@" -prune -type f -size +'"$max"'c -print0' sh)

if [ "$bad" != 0 ]; then
	echo "check-tracked-files: tracked build outputs or oversized files (see above)" >&2
	exit 1
fi
