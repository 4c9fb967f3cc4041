#!/usr/bin/env bash
# Builds real-world vocabularies from the software installed on this machine,
# one name per line, into target/corpus/ (not committed: they depend on the
# machine). Use them with the harness and the benches:
#
#   perf/corpus.sh
#   cargo run --release -p perf -- --corpus target/corpus/symbols.txt,target/corpus/paths.txt
#   cargo bench -p benches --bench memory -- target/corpus/symbols.txt
#
# symbols.txt: the demangled names of the symbols that the shared libraries
#   under /usr/lib and the Rust toolchain export (C, C++ and Rust names; on
#   the development machine 251,452 names of 78.6 bytes on average).
# paths.txt: the paths of the regular files under /usr (111,884 paths of
#   72.2 bytes on average there); the harness's default `usr-paths`
#   vocabulary is the same list, walked at run time.
# symbols-20k.txt: the first 20,000 lines of symbols.txt, a real vocabulary
#   small enough for the arc-swap strategy (copy-on-write, quadratic to fill)
#   to be measured on it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/corpus
mkdir -p "$out"
command -v nm >/dev/null || { echo "corpus.sh: nm (binutils) is needed" >&2; exit 1; }

libs=(/usr/lib/x86_64-linux-gnu/*.so* /usr/lib/*.so*)
if sysroot=$(rustc --print sysroot 2>/dev/null); then
    libs+=("$sysroot"/lib/*.so)
fi
for lib in "${libs[@]}"; do
    [ -f "$lib" ] && nm -D --defined-only -C "$lib" 2>/dev/null || true
done | awk '{ $1 = ""; $2 = ""; sub(/^  /, ""); if (length($0) > 0) print }' \
    | LC_ALL=C sort -u > "$out/symbols.txt"

find /usr -type f 2>/dev/null | LC_ALL=C sort > "$out/paths.txt"
head -n 20000 "$out/symbols.txt" > "$out/symbols-20k.txt"

for f in "$out/symbols.txt" "$out/paths.txt" "$out/symbols-20k.txt"; do
    awk -v f="$f" '{ n++; s += length($0) } END { printf "%s: %d names, %.1f bytes on average\n", f, n, s / n }' "$f"
done
