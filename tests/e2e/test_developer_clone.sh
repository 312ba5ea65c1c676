#!/usr/bin/env bash
# The developer clone of docs/user-guide.md (issue 21, item 2): a partial
# clone without the blobs over 1 KB (run.json, summary.md: about 100 KB a
# run) and a sparse work tree without runs/, on a history of a few
# hundred runs whose oldest run folders are absent locally. Every command
# works in it: what a command reads and the clone lacks is fetched from
# the git remote on demand (results runs git, which libgit2 cannot do),
# and offline it says which file and remote.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_developer_clone
command -v python3 >/dev/null || fail "python3 is needed"

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

# The developer clone, as docs/user-guide.md gives it.
dev_clone() {
	cd "$T"
	GIT_LFS_SKIP_SMUDGE=1 git clone -q --filter=blob:limit=1k --no-checkout "file://$T/results.git" "$1"
	cd "$1"
	git config core.sparseCheckout true
	printf '/*\n!/runs/\n' >.git/info/sparse-checkout
	GIT_LFS_SKIP_SMUDGE=1 git checkout -q main
	"$RESULTS" init --remote "$(store_url)" >/dev/null
}
dev_clone offline
dev_clone dev
[ ! -e runs ] || fail "the sparse work tree holds runs/"
missing() { git rev-list --objects --missing=print HEAD | grep -c '^?' || true; }
before=$(missing)
[ "$before" -gt 0 ] || fail "the clone holds every blob"
pass "a developer clone of 303 runs: $(du -sk .git | cut -f1) KB of .git, $before files left on the remote"

expect_status 0 "$RESULTS" list --limit 5
grep -q "${REAL[2]}\|nightly" "$T/out" || fail "list: $(cat "$T/out")"
expect_status 0 "$RESULTS" show "${REAL[0]}"
grep -q "${REAL[0]}" "$T/out" || fail "show of an absent run folder: $(cat "$T/out")"
expect_status 0 "$RESULTS" compare "${REAL[0]}" "${REAL[2]}"
"$RESULTS" check >"$T/out" 2>"$T/err" || [ $? = 1 ] || fail "check: $(cat "$T/err")"
expect_status 0 "$RESULTS" trend
expect_status 0 "$RESULTS" site "$T/site"
[ -f "$T/site/index.html" ] || fail "site wrote no index.html"
expect_status 0 "$RESULTS" fetch "${REAL[1]}"
expect_status 0 "$RESULTS" gc --dry-run
grep -q "of 303 runs on 1 refs" "$T/out" || fail "gc --dry-run: $(cat "$T/out")"
expect_status 6 "$RESULTS" verify
grep -q "^303 runs, 303 objects: 3 ok, 0 removed by retention, 300 missing" "$T/out" ||
	fail "verify: $(tail -n 1 "$T/out")"
[ "$(missing)" -lt "$before" ] || fail "nothing was fetched on demand"
pass "list, show, compare, check, trend, site, fetch, gc --dry-run and verify work in it ($(missing) files still on the remote)"

gen --seed 9 --size 40K -o "$T/s9.pyisession"
RESULTS_RECORDED_AT=$((T0 + 400 * 86400)) expect_status 0 "$RESULTS" add "$T/s9.pyisession" \
	--commit "$(printf '%040d' 9)" --trigger nightly --branch main
git push -q origin main 2>/dev/null || fail "push from the developer clone failed"
[ "$(git rev-parse HEAD)" = "$(git -C "$T/results.git" rev-parse main)" ] || fail "the push did not land"
pass "add and push from the developer clone"

# Offline: what is not here cannot be fetched, and the message says which file and remote.
cd "$T/offline"
git remote set-url origin "file://$T/nowhere.git"
expect_status 5 "$RESULTS" show "${REAL[0]}"
grep -q "is not in this partial clone and cannot be fetched from its git remote 'origin'" "$T/err" ||
	fail "offline show: $(cat "$T/err")"
pass "offline, a file left on the remote is named in a clear error"
