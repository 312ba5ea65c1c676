#!/usr/bin/env bash
# Every reader of a committed run.json decodes it through the typed run
# record (src/runrec), so that a renamed or mistyped key fails, naming
# the key, instead of reading as "absent":
#  - a run.json whose "files" is renamed: fetch and gc used to skip its
#    sessions (gc then protected none of them); now both refuse (fetch
#    exits 7, gc deletes nothing and names the key);
#  - "metrics" renamed: compare used to compare nothing; now exit 7;
#  - summary.functions[].self renamed: check, compare and trend (text
#    and HTML) exit 7 naming the key and the file;
#  - a run.json of a newer format: exit 9 (upgrade) from show --json and
#    compare, naming the version;
#  - the oldest run.json format (tests/data/run_format1_oldest.json,
#    written by the first `results add`) is still read by show and compare.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_run_record_strict

has() { grep "$@" >/dev/null; }

store_repo

SHA_A=1234aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
SHA_B=1234bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
cp "$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession" "$T/a.pyisession"
cp "$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_5.1.2.pyisession" "$T/b.pyisession"
RESULTS_RECORDED_AT=1796097200 expect_status 0 "$RESULTS" add "$T/b.pyisession" --commit "$SHA_A" --trigger ci
RESULTS_RECORDED_AT=1796097300 expect_status 0 "$RESULTS" add "$T/a.pyisession" --commit "$SHA_B" --trigger ci
RUN_A=$(ls -d runs/2026/12/01/*-1234aaa)
RUN_B=$(ls -d runs/2026/12/01/*-1234bbb)
GOOD=$(git rev-parse HEAD)
git push -q origin main 2>/dev/null
expect_status 0 "$RESULTS" compare 1234aaa 1234bbb
pass "two runs recorded and compared"

# edit_run FOLDER PYTHON: rewrite FOLDER/run.json with the python
# expression applied to `d`, committed.
edit_run() {
	python3 - "$1/run.json" "$2" <<'EOF'
import json, sys
path, code = sys.argv[1], sys.argv[2]
d = json.load(open(path))
exec(code)
open(path, "w").write(json.dumps(d, indent=1, sort_keys=True))
EOF
	git add "$1/run.json"
	git commit -qm "edit $1/run.json"
}

# --- "files" renamed --------------------------------------------------
edit_run "$RUN_B" 'd["stored_files"] = d.pop("files")'
# (the session is on the remote: a readable record would be fetched)
rm -rf "$RUN_B"/*.pyisession .git/lfs/objects/*

expect_status 7 "$RESULTS" fetch 1234bbb
has -F "lacks the required key 'files'" "$T/err" || fail "fetch does not name 'files': $(cat "$T/err")"
has -F "$RUN_B/run.json" "$T/err" || fail "fetch does not name the file: $(cat "$T/err")"
pass "fetch refuses a run.json without 'files', naming it"

# gc with a policy that would drop the older run's session: the record it
# cannot read is a doubt, and nothing is deleted.
git checkout -q "$GOOD" -- "$RUN_B"
git commit -qm "run B mended"
set_retention '{"keep_last": 1}'
git push -q origin main 2>/dev/null
# without the damage gc would delete the older run's session
expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
has "would remove raw session of run $(basename "$RUN_A" | sed 's/^/20261201-/')" "$T/out" ||
	fail "gc --dry-run would not drop the older session: $(cat "$T/out" "$T/err")"
edit_run "$RUN_A" 'd["stored_files"] = d.pop("files")'
git push -q origin main 2>/dev/null
gc_refuses 7 "lacks the required key 'files'"
pass "gc deletes nothing when a run.json lacks 'files', and names it"

# --- "metrics" renamed, a wrong type ------------------------------------
git reset -q --hard "$GOOD"
edit_run "$RUN_B" 'd["metric"] = d.pop("metrics")'
expect_status 7 "$RESULTS" compare 1234aaa 1234bbb
has -F "lacks the required key 'metrics'" "$T/err" || fail "compare: $(cat "$T/err")"
git reset -q --hard "$GOOD"
edit_run "$RUN_B" 'd["summary"]["functions"][2]["self"] = "0.5"'
expect_status 7 "$RESULTS" compare 1234aaa 1234bbb
has -F "key 'summary.functions[2].self' is a string, expected a number" "$T/err" ||
	fail "compare: $(cat "$T/err")"
pass "compare refuses a renamed or mistyped key, naming it"

# --- a summary's "self" renamed: check and trend judge typed records -----
git reset -q --hard "$GOOD"
edit_run "$RUN_B" 'for f in d["summary"]["functions"]: f["selff"] = f.pop("self")'
# (check exits 2 for every error, docs/cli.md: CI tells a broken job from a slower commit)
for cmd in "2 check 1234bbb" "7 compare 1234aaa 1234bbb" "7 trend" "7 trend --html $T/trend.html"; do
	# shellcheck disable=SC2086
	set -- $cmd
	want=$1
	shift
	expect_status "$want" "$RESULTS" "$@"
	has -F "summary.functions[0] lacks the required key 'self'" "$T/err" ||
		fail "$*: $(cat "$T/err")"
	has -F "$RUN_B/run.json" "$T/err" || fail "$* does not name the file: $(cat "$T/err")"
done
pass "check, compare and trend refuse a summary whose 'self' is renamed, naming key and file"

# --- a newer format ---------------------------------------------------
git reset -q --hard "$GOOD"
edit_run "$RUN_B" 'd["format"] = 2'
expect_status 9 "$RESULTS" show --json 1234bbb
has -F "format 2" "$T/err" || fail "show: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "show printed a record it refuses"
expect_status 9 "$RESULTS" compare 1234aaa 1234bbb
pass "a run.json of a newer format asks for an upgrade (exit 9)"

# --- the oldest format ------------------------------------------------
git reset -q --hard "$GOOD"
OLD=runs/2025/11/30/093012-ci-0123456
mkdir -p "$OLD"
cp "$RS_SOURCE_DIR/tests/data/run_format1_oldest.json" "$OLD/run.json"
python3 - "$OLD/run.json" >index/2025-11.jsonl <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({k: d[k] for k in ("id", "commit", "branch", "trigger", "recorded_at", "metrics")}
                 | {"path": "runs/2025/11/30/093012-ci-0123456"}, separators=(",", ":")))
EOF
# as a results that predates the branch and commit maps left it: no maps,
# so readers read every shard (the first add of a newer results builds them)
git rm -r -q index/branches index/commits
git add "$OLD" index/2025-11.jsonl && git commit -qm "a run of the oldest format"
expect_status 0 "$RESULTS" show --json 0123456
has -F '"oldest format"' "$T/out" || fail "show --json: $(cat "$T/out")"
expect_status 0 "$RESULTS" compare 0123456 1234aaa
pass "the oldest run.json format is still read"
