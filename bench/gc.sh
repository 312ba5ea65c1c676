#!/usr/bin/env bash
# Retention and gc figures: a history of RUNS runs (generated sessions of
# SIZE each, successive runs of one model, so that chunks are shared where
# the generator's sessions share them), a policy keeping the newest KEEP,
# then `results gc --grace 0 --force` four times (set aside, clock, mark, sweep) and a
# `results verify --deep` of what is left.
#
#   RS_BIN_DIR=build bench/gc.sh            # RUNS=20 KEEP=5 SIZE=8M
#
# Prints the store's bytes before and after, sessions removed, packs
# freed, the seconds of each gc run against `find STORE -type f | xargs
# sha256sum` of the same store (a reference measured in the same run:
# reading every byte once), and verify --deep's verdict. Asserts nothing.
set -euo pipefail

: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
RUNS=${RUNS:-20}
KEEP=${KEEP:-5}
SIZE=${SIZE:-8M}
B=$(cd "$RS_BIN_DIR" && pwd)
RESULTS=$B/src/results
GEN=$B/tests/gen-session
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-gc.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"
export GIT_CONFIG_NOSYSTEM=1
bench_home "$T"
git init -q --bare "$T/results.git"
git clone -q "$T/results.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "file://$T/store" >/dev/null
for i in $(seq 1 "$RUNS"); do
	"$GEN" --seed "$i" --size "$SIZE" -o "$T/s.pyisession"
	RESULTS_RECORDED_AT=$((1700000000 + i * 3600)) "$RESULTS" add "$T/s.pyisession" \
		--commit "$(printf '%040d' "$i")" --trigger nightly --branch main >/dev/null
	git push -q origin main 2>/dev/null
done
python3 - "$KEEP" <<'PY'
import json, sys
d = json.load(open('.results.json'))
d['retention'] = {'keep_last': int(sys.argv[1])}
json.dump(d, open('.results.json', 'w'), indent=2)
PY
git commit -qam "keep the newest $KEEP" && git push -q origin main 2>/dev/null

bytes() { du -sb "$T/store" | cut -f1; }
packs() { find "$T/store/packs" -name '*.pack' | wc -l; }
before=$(bytes) packs_before=$(packs)
t0=$(now); find "$T/store" -type f -print0 | xargs -0 sha256sum >/dev/null; t1=$(now)
ref=$(awk "BEGIN { print $t1 - $t0 }")
for step in set-aside clock mark sweep; do
	t0=$(now); "$RESULTS" gc --grace 0 --force --no-fetch >"$T/gc.$step"; t1=$(now)
	awk -v s="$step" -v a="$t0" -v b="$t1" -v r="$ref" \
		'BEGIN { printf "gc (%s): %.3f s, %.2fx reading the store once\n", s, b - a, (b - a) / r }'
done
after=$(bytes) packs_after=$(packs)
echo "runs: $RUNS of $SIZE, policy keep_last=$KEEP"
head -n 1 "$T/gc.set-aside" | sed 's/^/first gc: /'
echo "store: $before bytes in $packs_before packs before, $after bytes in $packs_after packs after ($(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.1f", 100 * (a - b) / a }')% freed)"
"$RESULTS" verify --deep | tail -n 1 | sed 's/^/verify --deep: /'
