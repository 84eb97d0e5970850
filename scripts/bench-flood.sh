#!/usr/bin/env bash
# A process that prints without end, against a real `rivet serve`: a scripted
# answer runs a command in the project's sandbox that prints 64 KiB every
# millisecond for FLOOD_SECONDS (default 30); then rivet.db's growth is
# reported, the server is restarted, and the time until the reopened
# project's first snapshot arrives is measured (docs/security.md, "Output
# that never ends").
#
#   scripts/bench-flood.sh                  # builds target/release/rivet first
#   RIVET_BIN=path/to/rivet scripts/bench-flood.sh
#
# Needs bubblewrap, curl and python3 (for JSON).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_OF_FLOOD="${FLOOD_SECONDS:-30}"
TOKEN="rivet-bench-token-0123456789abcdef"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="${RIVET_BIN:-$TARGET/release/rivet}"
if [ -z "${RIVET_BIN:-}" ]; then
  (cd "$ROOT" && LEPTOS_OUTPUT_NAME=rivet cargo build --release --features ssr --bin rivet)
fi

WORK="$(mktemp -d)"
# The sandbox user must reach the data directory (docs/sandbox.md).
chmod 755 "$WORK"
DATA="$WORK/data"
mkdir -p "$DATA" "$WORK/script"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/script/flood.txt" <<EOF
#! match: flood output
Flooding the terminal.

<boltArtifact id="flood" title="Flood">
<boltAction type="shell">timeout ${SECONDS_OF_FLOOD} sh -c 'while :; do head -c 65536 /dev/zero | tr "\\\\0" x; sleep 0.001; done'</boltAction>
</boltArtifact>
EOF

"$BIN" mock-llm --port 0 --script "$WORK/script" --chunk-size 64 --delay-ms 0 \
  >"$WORK/mock.out" 2>/dev/null &
PIDS+=($!)
until [ -s "$WORK/mock.out" ]; do sleep 0.1; done
MOCK="$(head -n1 "$WORK/mock.out")"

# Starts `rivet serve` on $DATA; sets RIVET to its URL and SERVE to its pid.
serve() {
  (cd "$DATA" && RIVET_SERVER_TOKEN="$TOKEN" RIVET_SERVER_ADDR=127.0.0.1:0 \
    RIVET_SERVER_DATA_DIR="$DATA" LEPTOS_OUTPUT_NAME=rivet \
    LEPTOS_SITE_ROOT="$DATA/site" LEPTOS_SITE_PKG_DIR=pkg NO_COLOR=1 \
    RIVET_LLM_PROVIDER=custom RIVET_LLM_BASE_URL="http://$MOCK/v1" \
    RIVET_LLM_MODEL=rivet-replay RUST_LOG=warn,rivet=info \
    exec "$BIN" serve) >/dev/null 2>"$WORK/serve.log" &
  SERVE=$!
  PIDS+=("$SERVE")
  until grep -q "listening on http://" "$WORK/serve.log"; do sleep 0.1; done
  RIVET="http://$(grep -o 'listening on http://[^ ]*' "$WORK/serve.log" | tail -n1 | cut -d/ -f3)"
}
api() { curl -sf -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' "$@"; }
db_bytes() { du -cb "$DATA"/rivet.db* | tail -n1 | cut -f1; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

serve
ID="$(api -d '{"name": "flood"}' "$RIVET/api/v1/projects" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
before="$(db_bytes)"
rss_before="$(rss_kib "$SERVE")"
api -d '{"text": "flood output"}' "$RIVET/api/v1/projects/$ID/messages" >/dev/null
# The server's resident memory, sampled every half second through the flood.
rss_peak="$rss_before"
for _ in $(seq $(((SECONDS_OF_FLOOD + 5) * 2))); do
  sleep 0.5
  rss="$(rss_kib "$SERVE")"
  [ "$rss" -gt "$rss_peak" ] && rss_peak="$rss"
done
after="$(db_bytes)"
kill "$SERVE"
wait "$SERVE" 2>/dev/null || true
cp "$WORK/serve.log" "${FLOOD_LOG:-/dev/null}"
: >"$WORK/serve.log"  # the reopened server's log: `serve` waits for its line

serve
# The event stream never ends by itself: curl gives up after 30 s and says
# when the first byte (the reopened project's snapshot) arrived.
first_byte="$(curl -s -o /dev/null -H "Authorization: Bearer $TOKEN" --max-time 30 \
  -w '%{time_starttransfer}' "$RIVET/api/v1/projects/$ID/events" || true)"
reopened="$(db_bytes)"

echo "flood: ${SECONDS_OF_FLOOD} s of 64 KiB a millisecond"
echo "rivet.db growth: $(((after - before) / 1024)) KiB (rivet.db and its WAL, before reopening)"
echo "rivet serve resident memory: ${rss_before} KiB before, ${rss_peak} KiB at its peak (+$(((rss_peak - rss_before) / 1024)) MiB)"
echo "reopen, first byte of the event stream: ${first_byte} s"
echo "rivet.db after reopening: $((reopened / 1024)) KiB"
