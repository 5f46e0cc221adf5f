#!/usr/bin/env bash
# Screenshots of every view of an opprof HTML report, with headless Chromium.
#   scripts/report-shots.sh REPORT.html OUTDIR [NAME] [WIDTHxHEIGHT]
# Writes OUTDIR/NAME-VIEW.png for each view the report has (its tabs), plus
# NAME-timeline-search.png when SEARCH is set in the environment. No network.
set -euo pipefail
report=$(realpath "$1"); out=$2; name=${3:-report}; size=${4:-1400x900}
chrome=${OPPROF_CHROMIUM:-/usr/bin/chromium}
[ -x "$chrome" ] || { echo "report-shots: no Chromium at $chrome (scripts/deps.sh installs it)" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")
run() { # run FRAGMENT ACTION...
  local frag=$1; shift
  local profile; profile=$(mktemp -d)
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    "--host-resolver-rules=MAP * ~NOTFOUND" --proxy-server=127.0.0.1:9 --user-data-dir="$profile" \
    --window-size="${size/x/,}" "$@" "file://$report#$frag" 2>/dev/null || true
  rm -rf "$profile"
}
views=$(run "view=overview" --dump-dom | grep -o 'data-view="[a-z]*"' | sed 's/data-view="\(.*\)"/\1/' | sort -u)
for v in overview operators timeline memory devices diff; do
  grep -qx "$v" <<<"$views" || continue
  run "view=$v" --screenshot="$out/$name-$v.png" >/dev/null
  echo "$out/$name-$v.png"
done
if [ -n "${SEARCH:-}" ]; then
  run "view=timeline&search=$SEARCH" --screenshot="$out/$name-timeline-search.png" >/dev/null
  echo "$out/$name-timeline-search.png"
fi
