#!/usr/bin/env bash
# Runs the browser benchmarks of the README's "Speed" table in one Playwright
# session (end2end/bench/, kept out of the test suite), against the release
# build, which it makes first unless RIVET_BENCH_NO_BUILD=1. Prints the
# bundle's size and writes the timings to end2end/test-results/bench/speed.json
# and ship.json (push and publish of the todo app).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export LEPTOS_OUTPUT_NAME=rivet
export PATH="$ROOT/node_modules/.bin:$PATH"
# The benchmarks measure the whole browser a person runs (end2end/serve-env.ts).
RIVET_SETUP_BROWSER=full bash scripts/setup.sh
if [ "${RIVET_BENCH_NO_BUILD:-0}" != 1 ]; then
  cargo leptos build --release --split --precompress
fi
./scripts/bundle-size.sh
npx playwright test --config end2end/bench.config.ts
cat end2end/test-results/bench/speed.json end2end/test-results/bench/ship.json
