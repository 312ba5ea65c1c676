#!/bin/bash
# Retention keep_flagged: a run that `results check` flags as a regression,
# and the baseline it was judged against, keep their raw sessions when
# keep_last alone would drop them; the others go.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_gc_flagged

git init -q --bare "$T/results.git"
git clone -q "$T/results.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "file://$T/store" >/dev/null
gen --list-functions >"$T/functions"
SLOWFN=$(awk 'NR > 1 && $2 !~ /\./ && $3 !~ /^</ { print $2; exit }' "$T/functions")
[ -n "$SLOWFN" ] || fail "no function to slow down"

CLOCK=1796097200
# record <n> <gen-session options...>
record() {
	local n=$1; shift
	CLOCK=$((CLOCK + 3600))
	gen --population 100 --months 6 --noise 2 "$@" -o "$T/s$n.pyisession"
	printf '{"months": 6, "population": 100}\n' >"$T/stats.json"
	RESULTS_RECORDED_AT=$CLOCK "$RESULTS" add "$T/s$n.pyisession" --commit "$(printf 'c%039d' "$n")" \
		--branch main --trigger nightly --stats "$T/stats.json" >/dev/null
}
record 1 --seed 1
record 2 --seed 2
record 3 --seed 3 --slow "$SLOWFN:4"
record 4 --seed 4
record 5 --seed 5
record 6 --seed 6
git push -q origin main 2>/dev/null
mapfile -t ID < <(git ls-tree -r --name-only HEAD index | grep -vE '^index/(branches|commits)/' | xargs -I{} git show HEAD:{} |
	python3 -c 'import sys,json; [print(json.loads(l)["id"]) for l in sys.stdin if l.strip()]')
[ "${#ID[@]}" = 6 ] || fail "expected 6 runs"
expect_status 1 "$RESULTS" check "${ID[2]}"
# What check says of each run (generated noise may flag another one too):
# the flagged runs and their baselines are what keep_flagged keeps.
declare -A KEEP=([${ID[5]}]=newest)
nflagged=0
for k in 0 1 2 3 4 5; do
	st=0
	"$RESULTS" check "${ID[$k]}" --format json >"$T/check.json" 2>/dev/null || st=$?
	[ "$st" = 0 ] || [ "$st" = 1 ] || fail "check ${ID[$k]} exited $st"
	[ "$st" = 1 ] || continue
	nflagged=$((nflagged + 1))
	KEEP[${ID[$k]}]=flagged
	for b in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["baseline"]))' "$T/check.json"); do
		KEEP[$b]=baseline
	done
done
[ -n "${KEEP[${ID[1]}]:-}" ] || fail "the slow run's baseline (${ID[1]}) is not its predecessor"

python3 - <<'PY'
import json
d = json.load(open('.results.json'))
d['retention'] = {'keep_last': 1, 'keep_flagged': True}
json.dump(d, open('.results.json', 'w'), indent=2)
PY
git commit -qam "keep the newest run and what check flags" && git push -q origin main 2>/dev/null
expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
grep -q "^$nflagged runs flagged by check" "$T/out" || fail "gc did not count the flagged runs: $(cat "$T/out")"
for k in 0 1 2 3 4 5; do
	if [ -n "${KEEP[${ID[$k]}]:-}" ]; then
		! grep -q "${ID[$k]}" "$T/out" || fail "would remove ${ID[$k]} (${KEEP[${ID[$k]}]})"
	else
		grep -q "would remove raw session of run ${ID[$k]}" "$T/out" || fail "would keep ${ID[$k]}: $(cat "$T/out")"
	fi
done
# Without keep_flagged the flagged run and its baseline go too.
python3 - <<'PY'
import json
d = json.load(open('.results.json'))
d['retention'] = {'keep_last': 1}
json.dump(d, open('.results.json', 'w'), indent=2)
PY
git commit -qam "keep the newest run only" && git push -q origin main 2>/dev/null
expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
grep -q '^would remove 5 raw sessions' "$T/out" || fail "without keep_flagged: $(cat "$T/out")"
echo ok
