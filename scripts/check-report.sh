#!/usr/bin/env bash
# Opens a report in headless Chromium as a reader would, saves a screenshot and the first
# screen (1400 x 900, `first-screen.png` beside the report), and fails if the page logs a
# console message, the verdict table does not end inside the first screen, a finding has
# no chart, a table, chart or flamegraph link is missing or does not resolve, the first
# section is not "Findings", or a section has a heading and nothing under it.
#
#   scripts/check-report.sh                 # renders the fixture run in a scratch folder
#   scripts/check-report.sh reports/index.html
#
# Installs Debian's chromium when it is missing (needs root, as on CI). Exits 1 when the
# page fails a check and 3 when no browser could be had.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if ! command -v chromium >/dev/null 2>&1; then
  echo "check-report: installing chromium (Debian package)" >&2
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; then
    # Exit 3 means "no browser to check with", distinct from a report that fails the check.
    echo "check-report: chromium could not be installed; the page was not checked" >&2
    exit 3
  fi
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ $# -ge 1 ]; then
  page=$(realpath "$1")
  min_tables=1 min_charts=1 min_flamegraphs=0
else
  cp -r crates/lab/tests/fixtures/small-run/. "$scratch/root"
  cp -r benches "$scratch/root/"
  cargo build --release --quiet -p lab
  LAB_ROOT="$scratch/root" target/release/lab report "$scratch/root/reports/data/fixture.json" >/dev/null
  page="$scratch/root/reports/fixture/index.html"
  # The fixture: 2 variants, 2 core counts, 15 profiled cells.
  min_tables=2 min_charts=4 min_flamegraphs=15
fi

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$scratch/profile")
chromium "${flags[@]}" --enable-logging=stderr --log-level=0 --dump-dom "file://$page" \
  >"$scratch/dom.html" 2>"$scratch/chromium.log"
mkdir -p "$repo/reports"
shot="$repo/reports/screenshot.png"
chromium "${flags[@]}" --window-size=1400,2200 --screenshot="$shot" "file://$page" \
  >/dev/null 2>&1

fail=0
# The first screen (1400 x 900): the verdict table must end inside it. A copy of the page
# beside it (so its links resolve) measures the table's bottom with one line of script;
# the report itself stays script-free.
dir=$(dirname "$page")
probe="$dir/.probe-$$.html"
trap 'rm -rf "$scratch" "$probe"' EXIT
sed 's#</body>#<script>var t=document.getElementById("verdicts");document.body.setAttribute("data-verdicts-bottom",t?Math.ceil(t.getBoundingClientRect().bottom):-1)</script></body>#' "$page" >"$probe"
chromium "${flags[@]}" --window-size=1400,900 --dump-dom "file://$probe" >"$scratch/probe.html" 2>/dev/null
rm -f "$probe"
bottom=$(sed -n 's/.*data-verdicts-bottom="\(-\{0,1\}[0-9]*\)".*/\1/p' "$scratch/probe.html" | head -1)
if [ -z "$bottom" ] || [ "$bottom" -lt 0 ]; then
  echo "check-report: no verdict table (<table id=\"verdicts\">) on the page" >&2
  fail=1
elif [ "$bottom" -gt 900 ]; then
  echo "check-report: the verdict table ends at ${bottom}px, below the first screen (900px)" >&2
  fail=1
fi
first_screen="$dir/first-screen.png"
# The fixture renders in a scratch folder that goes at exit: keep its first screen.
case "$page" in "$scratch"/*) first_screen="$repo/reports/first-screen.png" ;; esac
chromium "${flags[@]}" --window-size=1400,900 --screenshot="$first_screen" "file://$page" >/dev/null 2>&1
# Every finding has its chart.
flat_dom=$(tr -d '\n' <"$scratch/dom.html")
findings=$(grep -o '<section class="finding"' <<<"$flat_dom" | wc -l)
charted=$(grep -oE '<section class="finding"[^>]*>([^<]|<[^/]|</[^s]|</s[^e])*<img ' <<<"$flat_dom" | wc -l)
if [ "$findings" -gt 0 ] && [ "$charted" -lt "$findings" ]; then
  echo "check-report: $((findings - charted)) of $findings findings have no chart" >&2
  fail=1
fi
if grep -E 'CONSOLE' "$scratch/chromium.log"; then
  echo "check-report: the page logged console messages (above)" >&2
  fail=1
fi
count() { { grep -o "$1" "$scratch/dom.html" || true; } | wc -l; }
for check in "table class=\"matrix\":$min_tables" "<img :$min_charts" "class=\"flamegraph\":$min_flamegraphs"; do
  pattern=${check%:*} want=${check##*:}
  got=$(count "$pattern")
  if [ "$got" -lt "$want" ]; then
    echo "check-report: expected at least $want of '$pattern' in the loaded page, found $got" >&2
    fail=1
  fi
done
# The first section heading of the page and of summary.md is "Findings".
first_h2=$(grep -o '<h2>[^<]*</h2>' "$scratch/dom.html" | head -1)
if [ "$first_h2" != "<h2>Findings</h2>" ]; then
  echo "check-report: the first section is '$first_h2', not Findings" >&2
  fail=1
fi
summary="$(dirname "$page")/summary.md"
if [ -f "$summary" ] && [ "$(grep -m1 '^#' "$summary")" != "# Findings" ]; then
  echo "check-report: summary.md does not begin with '# Findings'" >&2
  fail=1
fi
# No empty section: a heading followed directly by a heading of the same or a higher
# level, or by the end of its section (a deeper heading opens its first subsection).
flat=$(tr -d '\n' <"$scratch/dom.html")
empty=$(for pair in '2:2' '3:23' '4:234'; do
  grep -oE "<h${pair%%:*}[^>]*>[^<]*</h${pair%%:*}>[[:space:]]*(<h[${pair##*:}][ >]|</section>|</body>)" <<<"$flat" || true
done)
if [ -n "$empty" ]; then
  echo "check-report: sections with a heading and nothing under it:" >&2
  echo "$empty" >&2
  fail=1
fi
if [ -f "$summary" ]; then
  # Markdown: a heading (or a "...:" label line) followed, past blank lines, by a heading
  # of the same or a higher level (a deeper one is its first subsection) or the end.
  if awk '
    function level(line) { match(line, /^#+/); return RSTART ? RLENGTH : 99 }
    /^#/ { if (h != "" && level($0) <= hl) { print h; bad=1 } h=$0; hl=level($0); next }
    /:$/ { if (h != "") { print h; bad=1 } h=$0; hl=99; next }
    /^[[:space:]]*$/ { next }
    { h="" }
    END { if (h != "") { print h; bad=1 } exit bad ? 1 : 0 }' "$summary" >"$scratch/empty-md"; then :; else
    echo "check-report: summary.md headings with nothing under them:" >&2
    cat "$scratch/empty-md" >&2
    fail=1
  fi
fi
while IFS= read -r link; do
  [ -z "$link" ] && continue
  case "$link" in
    http:*|https:*) echo "check-report: $link fetches from the network" >&2; fail=1 ;;
    '#'*) grep -q "id=\"${link#\#}\"" "$scratch/dom.html" || { echo "check-report: no anchor for $link" >&2; fail=1; } ;;
    *) [ -f "$dir/$link" ] || { echo "check-report: broken link $link" >&2; fail=1; } ;;
  esac
done < <(grep -oE '(src|href)="[^"]*"' "$scratch/dom.html" | sed -E 's/^(src|href)="//; s/"$//')

if [ "$fail" -ne 0 ]; then
  exit 1
fi
echo "check-report: $(count 'table class=\"matrix\"') tables, $(count '<img ') charts, $(count 'class=\"flamegraph\"') flamegraph links load and resolve; verdict table ends at ${bottom}px of the first screen; screenshots: reports/screenshot.png, $first_screen"
