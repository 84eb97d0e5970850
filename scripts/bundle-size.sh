#!/usr/bin/env bash
# Prints what the browser downloads before Monaco and xterm.js load: the
# release WASM, its JavaScript glue and the stylesheet, raw and gzipped.
# Run after `cargo leptos build --release`.
set -euo pipefail
pkg="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target/site/pkg"
total=0; total_gz=0
printf '| file | bytes | gzip -9 |\n|---|---:|---:|\n'
for f in rivet.wasm rivet.js rivet.css; do
  bytes=$(stat -c %s "$pkg/$f")
  gz=$(gzip -9 -c "$pkg/$f" | wc -c)
  total=$((total + bytes)); total_gz=$((total_gz + gz))
  printf '| %s | %d | %d |\n' "$f" "$bytes" "$gz"
done
printf '| **total** | **%d** | **%d** |\n' "$total" "$total_gz"
