#!/usr/bin/env bash
# Prints what the browser downloads before Monaco and xterm.js load: the
# release WASM, its JavaScript glue (with the loader of the split-off chunks,
# when built with --split) and the stylesheet, raw, gzipped (-9) and,
# when the build wrote them (`--precompress`), as the brotli copies the server
# sends. Run after `cargo leptos build --release`. File names may carry the
# build's content hash (`rivet.<hash>.wasm`).
#
# With `--max BYTES` it fails when the WASM and its JavaScript glue (the
# main module, rivet.js and the chunk loader), gzipped, weigh more.
set -euo pipefail
max=""
if [ "${1:-}" = "--max" ]; then max=${2:?--max needs a number of bytes}; fi
pkg="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target/site/pkg"
total=0; total_gz=0; total_br=0; code_gz=0
printf '| file | bytes | gzip -9 | brotli (served) |\n|---|---:|---:|---:|\n'
row() { # file label
  local f=$1 bytes gz br
  bytes=$(stat -c %s "$f")
  gz=$(gzip -9 -c "$f" | wc -c)
  br=$( [ -f "$f.br" ] && stat -c %s "$f.br" || echo 0)
  total=$((total + bytes)); total_gz=$((total_gz + gz)); total_br=$((total_br + br))
  case $2 in *.css) ;; *) code_gz=$((code_gz + gz)) ;; esac
  printf '| %s | %d | %d | %d |\n' "$2" "$bytes" "$gz" "$br"
}
for ext in wasm js css; do
  f=$(find "$pkg" -maxdepth 1 -name "rivet.*$ext" ! -name '*.d.*' | head -n 1)
  [ -n "$f" ] || { echo "no rivet*.$ext in $pkg" >&2; exit 1; }
  row "$f" "rivet.$ext"
done
split_js=$(find "$pkg" -maxdepth 1 -name "__wasm_split.*js" | head -n 1)
[ -z "$split_js" ] || row "$split_js" "__wasm_split.js"
printf '| **total** | **%d** | **%d** | **%d** |\n' "$total" "$total_gz" "$total_br"
# Chunks split off with #[lazy], fetched when first needed.
for f in $(find "$pkg" -maxdepth 1 -name 'split_*.wasm' | sort); do
  name=$(basename "$f"); name=${name#split_}; name=${name%%_[0-9]*}
  printf '| lazy: %s | %d | %d | %d |\n' "$name" "$(stat -c %s "$f")" "$(gzip -9 -c "$f" | wc -c)" \
    "$( [ -f "$f.br" ] && stat -c %s "$f.br" || echo 0)"
done
# Code two or more lazy chunks share, fetched with the first of them.
shared=$(find "$pkg" -maxdepth 1 -name 'chunk_*.wasm' | sort)
if [ -n "$shared" ]; then
  bytes=0; gz=0; br=0
  for f in $shared; do
    bytes=$((bytes + $(stat -c %s "$f"))); gz=$((gz + $(gzip -9 -c "$f" | wc -c)))
    br=$((br + $( [ -f "$f.br" ] && stat -c %s "$f.br" || echo 0)))
  done
  printf '| lazy: shared by chunks (%d files) | %d | %d | %d |\n' "$(echo "$shared" | wc -l)" "$bytes" "$gz" "$br"
fi
echo "WASM and glue before the chat is usable: $code_gz bytes gzip"
if [ -n "$max" ] && [ "$code_gz" -gt "$max" ]; then
  echo "the first load is over its limit of $max bytes gzip" >&2
  exit 1
fi
