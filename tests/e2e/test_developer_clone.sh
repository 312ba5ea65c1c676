#!/usr/bin/env bash
# The developer clone of docs/user-guide.md (issue 21): `results clone`
# makes it in one command (the newest commit only, no run folder files
# over 1 KB: run.json, summary.md, about 100 KB a run; a sparse work
# tree without runs/, and git's sparse index: runs/ and index/ one entry
# each in .git/index) on a history of a few hundred runs whose oldest run
# folders are absent locally. Every command works in it: what a command
# reads and the clone lacks is fetched from the git remote on demand
# (results runs git, which libgit2 cannot do), all that one command
# needs in one git call (a git on PATH that logs its arguments counts
# them), and offline it says which file and remote. A full clone
# (`results clone --full`) keeps working too.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_developer_clone
command -v python3 >/dev/null || fail "python3 is needed"

# git as results runs it, each call's arguments logged to $GITLOG when set.
mkdir -p "$T/bin"
REAL_GIT=$(command -v git)
cat >"$T/bin/git" <<EOS
#!/bin/sh
[ -z "\${GITLOG:-}" ] || printf '%s\\n' "\$*" >>"\$GITLOG"
exec "$REAL_GIT" "\$@"
EOS
chmod +x "$T/bin/git"
export PATH="$T/bin:$PATH"
# git_calls COMMAND...: run it (expect_status 0), then $T/calls = its git calls, one a line.
git_calls() {
	: >"$T/calls"
	GITLOG="$T/calls" expect_status 0 "$@"
}
count() { grep -c -- "$1" "$T/calls" || true; }

store_repo
git -C "$T/results.git" config uploadpack.allowFilter true
T0=1577836800 # 2020-01-01
for i in 1 2 3; do
	gen --seed $i --size 40K -o "$T/s$i.pyisession"
	RESULTS_RECORDED_AT=$((T0 + i * 60)) "$RESULTS" add "$T/s$i.pyisession" \
		--commit "$(printf '%040d' $i)" --trigger nightly --branch main >/dev/null
done
mapfile -t REAL < <(run_ids)
git push -q origin main 2>/dev/null
python3 "$RS_SOURCE_DIR/tests/e2e/gen_history.py" 0 300 refs/heads/main "$T0" | git fast-import --quiet
git checkout -q -f main
GIT_LFS_SKIP_PUSH=1 git push -q origin main 2>/dev/null

# The developer clone, as docs/user-guide.md gives it: one command.
cd "$T"
expect_status 0 "$RESULTS" clone "file://$T/results.git" offline
expect_status 0 "$RESULTS" clone "file://$T/results.git" dev
grep -q "^cloned: *dev (developer clone" "$T/out" || fail "clone: $(cat "$T/out")"
grep -q "^remote: *$(store_url) (from .results.json" "$T/out" || fail "clone did no init: $(cat "$T/out")"
cd "$T/dev"
[ "$(git config results.remote)" = "$(store_url)" ] || fail "the clone is not set up for the store"
[ "$(git config lfs.standalonetransferagent)" = results ] || fail "no lfs-agent in the clone"
[ -x .git/hooks/pre-push ] || fail "the clone has no pre-push hook"
[ ! -e runs ] && [ ! -e index ] || fail "the sparse work tree holds runs/ or index/: $(ls)"
[ -f README.md ] && [ -f .results.json ] || fail "the work tree lacks README.md or .results.json: $(ls -A)"
[ "$(git rev-parse --is-shallow-repository)" = true ] || fail "the developer clone is not shallow"
[ "$(git rev-list --count HEAD)" = 1 ] || fail "the clone holds $(git rev-list --count HEAD) commits"
missing() { git rev-list --objects --missing=print HEAD | grep -c '^?' || true; }
before=$(missing)
[ "$before" -gt 0 ] || fail "the clone holds every blob"
[ -z "$(git status --porcelain)" ] || fail "git status in the clone: $(git status --porcelain | head -3)"
# git's sparse index: the folders outside the cone are one entry each
[ "$(git config index.sparse)" = true ] || fail "the clone's index is not sparse (index.sparse)"
[ "$(git ls-files --sparse -s | grep -c '^040000 .* 0	\(runs\|index\)/$')" = 2 ] ||
	fail "runs/ and index/ are not sparse folder entries: $(git ls-files --sparse -s | head -5)"
[ "$(git ls-files --sparse | wc -l)" -lt 10 ] || fail "the sparse index holds $(git ls-files --sparse | wc -l) entries"
git config --get extensions.worktreeConfig >/dev/null && fail "the clone sets extensions.worktreeConfig"
# sparse_ok WHAT: the index sparse and HEAD's (each sparse folder entry
# HEAD's tree of it), status clean, no file of the add in the work tree
# (`results fetch` puts sessions there: git then expands only the folders
# on their way)
sparse_ok() {
	[ -z "$(git status --porcelain)" ] || fail "$1: git status: $(git status --porcelain | head -3)"
	git diff --cached --quiet || fail "$1: git diff --cached is not empty"
	[ "$(git write-tree)" = "$(git rev-parse 'HEAD^{tree}')" ] || fail "$1: the index is not HEAD's tree"
	[ "$(git ls-files --sparse | wc -l)" -lt 200 ] || fail "$1: the index was expanded"
	git ls-files --sparse -s | awk '$1 == "040000" { print $2, $4 }' >"$T/dirs"
	[ -s "$T/dirs" ] || fail "$1: the index has no sparse folder"
	while read -r id dir; do
		[ "$id" = "$(git rev-parse "HEAD:${dir%/}")" ] || fail "$1: $dir is not HEAD's tree in the index"
	done <"$T/dirs"
	[ -z "$(find . -path ./.git -prune -o -path './runs/*' -type f ! -name '*.pyisession' -print -o -path './index/*' -print)" ] ||
		fail "$1: files of runs/ or index/ in the work tree: $(find runs index -type f | head -3)"
}
sparse_ok "the new clone"
diff <(git ls-files --sparse -s | awk '{print $1, $2, $4}') \
	<(git ls-tree HEAD | awk '{print $1, $3, $4 ($2 == "tree" ? "/" : "")}') >/dev/null ||
	fail "the new clone's index is not HEAD's top level with runs/ and index/ collapsed"
pass "results clone: shallow, partial, sparse and set up; $(du -sk .git | cut -f1) KB of .git, $before files left on the remote"

# gc and verify read every run's LFS pointers, which the clone holds, the
# index (one fetch of its shards) and the run.json of the 3 runs whose
# sessions the store holds: 4 git calls, none for the other runs' files
# (they fetched every run's).
cd "$T/offline"
git_calls "$RESULTS" gc --dry-run
grep -q "of 303 runs on 1 refs" "$T/out" || fail "gc --dry-run: $(cat "$T/out")"
[ "$(count 'cat-file\| fetch ')" -le 4 ] || fail "gc --dry-run fetched files in $(count 'cat-file\| fetch ') git calls: $(cut -c1-100 "$T/calls")"
: >"$T/calls"
GITLOG="$T/calls" expect_status 6 "$RESULTS" verify
[ "$(count 'cat-file\| fetch ')" = 0 ] || fail "verify fetched $(count 'cat-file\| fetch ') more run files"
[ "$(missing)" -ge $((before - 3 - $(git ls-tree -r HEAD index | wc -l))) ] || fail "gc and verify fetched $((before - $(missing))) files"
pass "gc --dry-run and verify in a fresh developer clone fetch only the index and the 3 records they judge"
cd "$T/dev"

# The index shards come on demand too: list's in one fetch, then none.
git_calls "$RESULTS" list --limit 5
grep -q "${REAL[2]}\|nightly" "$T/out" || fail "list: $(cat "$T/out")"
[ "$(count ' fetch ')" = 1 ] && [ "$(count .)" = 1 ] || fail "list ran git: $(cut -c1-120 "$T/calls")"
git_calls "$RESULTS" list --limit 5
[ "$(count .)" = 0 ] || fail "a second list ran git: $(cat "$T/calls")"
# A cold check: its window's 20 records come in one fetch (they came in
# one git call each), the newest run's own record in one more.
: >"$T/calls"
GITLOG="$T/calls" "$RESULTS" check >"$T/out" 2>"$T/err" || [ $? = 1 ] || fail "check: $(cat "$T/err")"
[ "$(count ' fetch ')" = 1 ] && [ "$(wc -l <"$T/calls")" -le 2 ] ||
	fail "a cold check ran git $(wc -l <"$T/calls") times: $(cut -c1-120 "$T/calls")"
n=$(grep ' fetch ' "$T/calls" | tr ' ' '\n' | grep -c '^[0-9a-f]\{40\}$' || true)
[ "$n" -ge 20 ] || fail "check's fetch asked for $n files, want its window of 20 or more"
git_calls "$RESULTS" check
[ "$(count .)" = 0 ] || fail "a second check fetched again: $(cat "$T/calls")"
pass "a cold list fetches its shards in one git fetch; a cold check its window's $n records in one"
git_calls "$RESULTS" trend
[ "$(count .)" -le 2 ] || fail "trend (its shards, its records) ran git $(count .) times: $(cut -c1-120 "$T/calls")"
# show reads every shard (a commit prefix must be unique): one fetch of them
git_calls "$RESULTS" show "${REAL[0]}"
grep -q "${REAL[0]}" "$T/out" || fail "show of an absent run folder: $(cat "$T/out")"
[ "$(count ' fetch ')" -le 1 ] && [ "$(count .)" -le 2 ] || fail "show ran git $(count .) times: $(cut -c1-120 "$T/calls")"
expect_status 0 "$RESULTS" show --json "${REAL[1]}"
expect_status 0 "$RESULTS" compare "${REAL[0]}" "${REAL[2]}"
git_calls "$RESULTS" site "$T/site"
[ -f "$T/site/index.html" ] || fail "site wrote no index.html"
[ "$(count ' fetch ')" -le 3 ] || fail "site ran git fetch $(count ' fetch ') times"
expect_status 0 "$RESULTS" fetch "${REAL[1]}"
expect_status 0 "$RESULTS" open "${REAL[1]}" -o "$T/open.html"
[ -s "$T/open.html" ] || fail "open wrote nothing"
expect_status 0 "$RESULTS" export "${REAL[1]}" --format collapsed -o "$T/stacks.txt"
[ -s "$T/stacks.txt" ] || fail "export wrote nothing"
expect_status 0 "$RESULTS" find "${REAL[0]}..${REAL[2]}"
expect_status 0 "$RESULTS" gc --dry-run
grep -q "of 303 runs on 1 refs" "$T/out" || fail "gc --dry-run: $(cat "$T/out")"
expect_status 6 "$RESULTS" verify
grep -q "^303 runs, 303 objects: 3 ok, 0 removed by retention, 300 missing" "$T/out" ||
	fail "verify: $(tail -n 1 "$T/out")"
[ "$(missing)" -lt "$before" ] || fail "nothing was fetched on demand"
"$RESULTS" doctor >"$T/out" 2>"$T/err" || [ $? = 6 ] || fail "doctor: $(cat "$T/err")"
grep -qi "index" "$T/err" && fail "doctor in the sparse index: $(cat "$T/err")"
grep -q "^FAIL .*index" "$T/out" && fail "doctor in the sparse index: $(grep FAIL "$T/out")"
sparse_ok "after the read-only commands"
pass "trend, show, compare, site, fetch, open, export, find, gc --dry-run, verify and doctor work in it ($(missing) files still on the remote)"

gen --seed 9 --size 40K -o "$T/s9.pyisession"
RESULTS_RECORDED_AT=$((T0 + 400 * 86400)) expect_status 0 "$RESULTS" add "$T/s9.pyisession" \
	--commit "$(printf '%040d' 9)" --trigger nightly --branch main
sparse_ok "after an add"
git push -q origin main 2>/dev/null || fail "push from the developer clone failed"
[ "$(git rev-parse HEAD)" = "$(git -C "$T/results.git" rev-parse main)" ] || fail "the push did not land"
# a fetch of the new commit from elsewhere: git moves the sparse folders itself
git -C "$T/offline" pull -q --ff-only 2>/dev/null || fail "pull into the other developer clone"
(cd "$T/offline" && sparse_ok "the other clone after git pull")
pass "add (the sparse index kept, spliced) and push from the developer clone"

# Offline: what is not here cannot be fetched, and the message says which file and remote.
cd "$T/offline"
git remote set-url origin "file://$T/nowhere.git"
expect_status 5 "$RESULTS" show "${REAL[0]}"
grep -q "is not in this partial clone and cannot be fetched from its git remote 'origin'" "$T/err" ||
	fail "offline show: $(cat "$T/err")"
expect_status 5 "$RESULTS" trend
grep -q "run.json' (and [0-9]* more of the files needed) is not in this partial clone and cannot be fetched from its git remote 'origin' (offline?): 'git fetch' failed" "$T/err" ||
	fail "offline trend: $(cat "$T/err")"
# check's errors are its exit 2 (docs/cli.md); the message is the same
expect_status 2 "$RESULTS" check
grep -q "run.json cannot be read: '.*' is not in this partial clone and cannot be fetched from its git remote 'origin' (offline?)" "$T/err" ||
	fail "offline check: $(cat "$T/err")"
expect_status 0 "$RESULTS" list
pass "offline, a file left on the remote is named in a clear error (exit 5); list needs none"

# A full clone keeps working: every commit and file but the sessions.
cd "$T"
expect_status 0 "$RESULTS" clone --full "file://$T/results.git" full
grep -q "^cloned: *full (full)" "$T/out" || fail "clone --full: $(cat "$T/out")"
cd "$T/full"
[ "$(git rev-parse --is-shallow-repository)" = false ] || fail "the full clone is shallow"
[ "$(missing)" = 0 ] || fail "the full clone lacks $(missing) files"
[ -d runs ] || fail "the full clone has no runs/"
[ "$(git config results.remote)" = "$(store_url)" ] || fail "the full clone is not set up"
: >"$T/calls"
GITLOG="$T/calls" "$RESULTS" check >"$T/out" 2>"$T/err" || [ $? = 1 ] || fail "check in the full clone: $(cat "$T/err")"
[ "$(count 'cat-file\| fetch ')" = 0 ] || fail "check in a full clone ran git: $(cat "$T/calls")"
expect_status 0 "$RESULTS" show "${REAL[0]}"
expect_status 0 "$RESULTS" gc --dry-run
grep -q "of 304 runs on 1 refs" "$T/out" || fail "gc --dry-run in the full clone: $(cat "$T/out")"
pass "results clone --full: every commit and file, and the commands read without git"

# Usage: one parser, one message; help lists the command.
expect_status 2 "$RESULTS" clone
expect_status 2 "$RESULTS" clone --depth x "file://$T/results.git"
expect_status 2 "$RESULTS" clone -- -u
cd "$T"
expect_status 5 "$RESULTS" clone "file://$T/results.git" dev
grep -q "cannot clone" "$T/err" || fail "clone into an existing folder: $(cat "$T/err")"
expect_status 0 "$RESULTS" clone --help
expect_status 0 "$RESULTS" help
grep -q "^ *clone " "$T/out" || fail "results help does not list clone"
pass "clone's usage errors (exit 2), an existing folder (exit 5), help"
