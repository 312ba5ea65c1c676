#!/usr/bin/env bash
# Every committed file is read through a cap checked BEFORE it is read
# (issue 21): the size comes from the object's header, so that a hostile
# or runaway repository (a 300 MB index shard, a 300 MB run.json) is
# refused with exit 7 naming the file, and the command's memory stays far
# below the file's size.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_capped_reads
command -v python3 >/dev/null || fail "python3 is needed"

# peak_rss_mb COMMAND...: run it (output in $T/out, $T/err), print its peak RSS in MB and status
peak() {
	python3 - "$@" <<'PY'
import resource, subprocess, sys, os
t = os.environ["T"]
with open(t + "/out", "wb") as o, open(t + "/err", "wb") as e:
    st = subprocess.call(sys.argv[1:], stdout=o, stderr=e)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, st)
PY
}
export T

results_repo "$T/repo"
"$RESULTS" add "$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_5.1.2.pyisession" \
	--commit 0123456789abcdef0123456789abcdef01234567 >/dev/null
run=$(ls -d runs/*/*/*/*)
# a 300 MB shard of an old month (compresses to almost nothing in git)
head -c 300000000 /dev/zero | tr '\0' ' ' >index/2020-01.jsonl
git add index/2020-01.jsonl && git commit -qm "a runaway shard"
rm -f index/2020-01.jsonl && git checkout -q -- index 2>/dev/null || true
read -r mb st < <(peak "$RESULTS" list --limit 0)
[ "$mb" -lt 120 ] || fail "list read the 300 MB shard: peak RSS $mb MB"
[ "$st" = 7 ] || fail "list with a 300 MB shard exited $st: $(cat "$T/err")"
grep -q "index/2020-01.jsonl' is too large" "$T/err" || fail "the message does not name the shard: $(cat "$T/err")"
pass "a 300 MB index shard: refused before it is read (exit 7, peak RSS $mb MB)"

git rm -q index/2020-01.jsonl && git commit -qm "shard gone"
id=$("$RESULTS" list --json | jq -r '.[0].id')
[ -n "$id" ] && [ "$id" != null ] || fail "no run id"
head -c 300000000 /dev/zero | tr '\0' ' ' >"$run/run.json"
git add "$run/run.json" && git commit -qm "a runaway run.json"
read -r mb st < <(peak "$RESULTS" show "$id" --json)
[ "$mb" -lt 120 ] || fail "show read the 300 MB run.json: peak RSS $mb MB"
[ "$st" = 7 ] || fail "show of a 300 MB run.json exited $st: $(cat "$T/err")"
grep -q "run.json' is too large" "$T/err" || fail "the message does not name run.json: $(cat "$T/err")"
pass "a 300 MB run.json: refused before it is read (exit $st, peak RSS $mb MB)"
