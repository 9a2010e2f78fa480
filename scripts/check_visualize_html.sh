#!/usr/bin/env bash
# Opens the offline attention page written by 07_visualize in headless Chromium, checks that its
# script ran (the page marks <body data-ready="yes"> once drawn) and saves a screenshot.
#   scripts/check_visualize_html.sh <attention.html> [screenshot.png]
# Skips (exit 0, with a message) when Chromium is not installed.
set -euo pipefail
page="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shot="${2:-${page%.html}.png}"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [[ -z "$browser" ]]; then
  echo "skipped: no Chromium here (scripts/setup.sh installs Debian's chromium)"
  exit 0
fi
[[ -f "$page" ]] || { echo "no page at $page"; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --disable-extensions --no-first-run --window-size=1400,1000)
dom="$(timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" 2>/dev/null)"
if ! grep -q 'data-ready="yes"' <<<"$dom"; then
  echo "the page did not finish drawing (no data-ready marker): its script failed"
  exit 1
fi
rows="$(grep -o '<tr' <<<"$dom" | wc -l)"
((rows > 2)) || { echo "the page drew no heatmap rows"; exit 1; }
timeout 120 "$browser" "${flags[@]}" --screenshot="$shot" "file://$page" >/dev/null 2>&1
[[ -s "$shot" ]] || { echo "no screenshot written"; exit 1; }
echo "ok attention page: drawn ($rows heatmap rows), screenshot $shot ($(stat -c %s "$shot") bytes)"
