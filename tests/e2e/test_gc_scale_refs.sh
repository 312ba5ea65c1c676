#!/usr/bin/env bash
# gc and verify on a long history (issue 21, item 1): two refs at distinct
# commits of a 2,000-run history, each with its own policy and pins, give
# the keep set that each ref's policy says, computed here independently
# from the committed index, policy and pins (an oracle in Python). gc
# reads the run folders' LFS pointers, and run.json only for the runs
# whose sessions the store holds; this checks that the sessions it would
# drop are exactly those no ref keeps, that a run kept only by the other
# ref's pin is kept, and that verify lists every run.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_gc_scale_refs
command -v python3 >/dev/null || fail "python3 is needed"

store_repo
T0=1577836800 # 2020-01-01
# Eight real recordings (their sessions on the store) on three branches and three triggers.
BR=(main rare main rare feature rare main rare)
TR=(nightly nightly pr weekly nightly pr weekly nightly)
for i in 0 1 2 3 4 5 6 7; do
	gen --seed $((i + 1)) --size 40K -o "$T/s.pyisession"
	RESULTS_RECORDED_AT=$((T0 + i * 60)) "$RESULTS" add "$T/s.pyisession" \
		--commit "$(printf '%040d' $((i + 1)))" --trigger "${TR[$i]}" --branch "${BR[$i]}" >/dev/null
done
mapfile -t REAL < <(run_ids)
[ "${#REAL[@]}" = 8 ] || fail "expected 8 runs, got ${#REAL[@]}"
set_retention '{"keep_last": {"nightly": 2, "pr": 1}}'
"$RESULTS" pin "${REAL[0]}" >/dev/null
git push -q origin main 2>/dev/null

# 2,000 more runs written straight into git (tests/e2e/gen_history.py).
gen_history() { # FROM COUNT BRANCHREF
	python3 "$RS_SOURCE_DIR/tests/e2e/gen_history.py" "$1" "$2" "$3" "$T0" | git fast-import --quiet
}
gen_history 0 1000 refs/heads/main
# The other ref: forked after 1,000 runs, its own policy, and a pin of a run main drops.
git branch other main
gen_history 1000 1000 refs/heads/main
git checkout -q -f main
git checkout -q other
set_retention '{"keep_last": 400}'
"$RESULTS" pin "${REAL[2]}" >/dev/null
GIT_LFS_SKIP_PUSH=1 git push -q origin main other 2>/dev/null
git checkout -q main
[ "$(git rev-parse main)" != "$(git rev-parse other)" ] || fail "the refs are at one commit"

# The oracle: each ref's policy applied to its own index and pins, as docs/retention.md says.
expected=$(python3 - "${REAL[@]}" <<'PY'
import json, subprocess, sys
real = sys.argv[1:]
def git(*a):
    return subprocess.run(["git"] + list(a), check=True, capture_output=True).stdout.decode()
kept, named = set(), {}
for ref in ("main", "other"):
    pol = json.loads(git("show", ref + ":.results.json"))["retention"]
    pins = {l.strip() for l in git("show", ref + ":pins.txt").splitlines()
            if l.strip() and not l.strip().startswith("#")}
    runs = []
    for shard in sorted(s for s in git("ls-tree", "-r", "--name-only", ref, "index/").split()
                        if not s.startswith(("index/branches/", "index/commits/"))):
        runs += [json.loads(l) for l in git("show", ref + ":" + shard).splitlines() if l.strip()]
    runs.sort(key=lambda r: r["recorded_at"])
    kl = pol["keep_last"]
    seen = {}
    for r in reversed(runs):
        if isinstance(kl, dict):
            key = (r["branch"], r["trigger"])
            limit = kl.get(r["trigger"], kl.get("*"))
        else:
            key, limit = r["branch"], kl
        newer = seen.get(key, 0)
        seen[key] = newer + 1
        keep = r["id"] in pins or limit is None or newer < limit
        if r["id"] in real:
            named[r["id"]] = 1
            if keep:
                kept.add(r["id"])
drop = sorted(set(named) - kept)
assert drop and len(drop) < len(real), drop
print(" ".join(drop))
PY
)
[ -n "$expected" ] || fail "the oracle drops nothing"
case " $expected " in *" ${REAL[2]} "*) fail "the oracle drops the run the other ref pins" ;; esac

expect_status 0 "$RESULTS" gc --dry-run
got=$(sed -n 's/^would remove raw session of run \([^ ]*\) .*/\1/p' "$T/out" | sort | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$expected" ] || fail "gc --dry-run drops '$got', each ref's policy drops '$expected': $(cat "$T/out")"
grep -q "of 2008 runs on 2 refs" "$T/out" || fail "gc did not judge 2008 runs on 2 refs: $(cat "$T/out")"
pass "two refs at distinct commits of a 2,008-run history: gc --dry-run drops what no ref keeps ($expected)"

# verify lists every run of HEAD; the 2,000 never pushed are missing, the 8 real ones ok.
expect_status 6 "$RESULTS" verify
grep -q "^2008 runs, 2008 objects: 8 ok, 0 removed by retention, 2000 missing" "$T/out" ||
	fail "verify: $(tail -n 2 "$T/out")"
pass "verify judges every run of a 2,008-run history"

# A run whose session is on the store is judged from its run.json: one that does not parse stops gc.
p=$(git show "main:$(git ls-tree -r --name-only main index/ | grep -vE '^index/(branches|commits)/' | head -n 1)" |
	python3 -c 'import sys,json; [print(d["path"]) for d in map(json.loads, filter(str.strip, sys.stdin)) if d["id"] == sys.argv[1]]' "${REAL[4]}")
printf '{"files": [' >"$p/run.json"
git commit -qam "a broken run record" && GIT_LFS_SKIP_PUSH=1 git push -q origin main 2>/dev/null
gc_refuses 7 "run ${REAL[4]}: '$p/run.json' is not valid JSON"
pass "a broken run.json of a run whose session is on the store: gc deletes nothing"
