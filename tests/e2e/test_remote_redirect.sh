#!/bin/bash
# A commit that changes the remote in .results.json (issue 18, item 14):
# anyone who can push to the results repository can commit a store of
# their own. No clone may follow it silently:
#  1. a set-up clone that pulls it: a bare `results init` keeps the
#     configured remote and fails naming both remotes and the commit and
#     author of the change; so do fetch, the pre-push hook and lfs-agent
#     (git lfs push); nothing reaches either store;
#  2. `results init --follow-remote` follows it, showing commit and author;
#  3. a fresh clone has nothing to compare with: a bare init takes the
#     committed remote and names the commit and author that set it; a CI
#     clone that passes its remote (--remote, a global lfs-agent
#     --remote) fails when the committed one differs;
#  4. the GitHub Action with its `remote` input fails the same way and
#     pushes nothing; without it, it names the commit in its log;
#  5. the commit named is the one that made the change: through a merge
#     it is the side branch's commit (not the merge); in a shallow clone
#     the message says the history stops there; an author's control
#     bytes reach no terminal.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_remote_redirect

STORE="$T/store"
EVIL="$T/evil-store"
SHA1=1111111111111111111111111111111111111111
SHA2=2222222222222222222222222222222222222222
cp "$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession" "$T/a.pyisession"
gen --seed 2 --size 150k -o "$T/b.pyisession"
mkdir -p "$T/bin"
ln -s "$RESULTS" "$T/bin/results"
ln -s "$AGENT" "$T/bin/lfs-agent"
export PATH="$T/bin:$PATH"
nothing_in() { [ -z "$(find "$1" -path '*/objects/*' -type f 2>/dev/null)" ]; }

results_ci "$STORE" "$T/a.pyisession" $SHA1
git clone -q "$T/results.git" "$T/dev" 2>/dev/null
(cd "$T/dev" && expect_status 0 "$RESULTS" init)

# Someone with push access commits their own store.
git clone -q "$T/results.git" "$T/mallory" 2>/dev/null
cd "$T/mallory"
git config user.name "Mallory"
git config user.email "mallory@evil.example"
expect_status 0 "$RESULTS" init --change-remote --remote "file://$EVIL"
git push -q origin main 2>/dev/null
CHANGE=$(git rev-parse --short=12 HEAD)
BY="commit $CHANGE by Mallory <mallory@evil.example> on "

# --- 1. a set-up clone keeps its remote and says who changed it -------------------
cd "$T/dev"
git pull -q --no-rebase origin main 2>/dev/null
cp .git/config "$T/dev.config"
names_all() { # FILE WHAT
	grep -qF "'file://$EVIL'" "$1" && grep -qF "'file://$STORE'" "$1" || fail "$2 does not name both remotes: $(cat "$1")"
	grep -qF "$BY" "$1" || fail "$2 does not name the commit and author of the change: $(cat "$1")"
}
expect_status 2 "$RESULTS" init
names_all "$T/err" "bare init"
grep -q -- "--follow-remote" "$T/err" || fail "bare init does not say how to follow: $(cat "$T/err")"
cmp -s .git/config "$T/dev.config" || fail "a refused init changed the config"
expect_status 8 "$RESULTS" fetch 1111111 -o "$T/f1"
names_all "$T/err" "fetch"
RESULTS_RECORDED_AT=1764494100 expect_status 0 "$RESULTS" add "$T/b.pyisession" --commit $SHA2 --trigger dev
head_before=$(git -C "$T/results.git" rev-parse main)
expect_status 1 git push origin main
grep -qF "$BY" "$T/err" && grep -qF "'file://$EVIL'" "$T/err" || fail "pre-push: $(cat "$T/err")"
[ "$(git -C "$T/results.git" rev-parse main)" = "$head_before" ] || fail "the push went through"
# lfs-agent itself (a push that skips the hook, or git lfs push) refuses too.
got=0
git lfs push --all origin main >"$T/out" 2>"$T/err" || got=$?
[ "$got" != 0 ] || fail "git lfs push went through lfs-agent"
grep -qF "$BY" "$T/err" || fail "lfs-agent does not name the commit: $(cat "$T/err")"
nothing_in "$EVIL" || fail "a session reached the committed store"
B=$(sha256sum "$T/b.pyisession" | cut -d' ' -f1)
[ ! -e "$STORE/objects/$B" ] || fail "the refused push still uploaded"
pass "1. a pulled change of remote: init, fetch, pre-push and lfs-agent keep the remote and name the commit"

# --- 2. --follow-remote is explicit, and says what it follows ------------------------
expect_status 2 "$RESULTS" init --follow-remote --remote "file://$EVIL"
expect_status 0 "$RESULTS" init --follow-remote
grep -qF "remote:     file://$EVIL (changed from file://$STORE: followed .results.json of $BY" "$T/out" ||
	fail "init --follow-remote: $(cat "$T/out")"
[ "$(git config --local results.remote)" = "file://$EVIL" ] || fail "--follow-remote did not follow"
[ "$(git config --local results.committedremote)" = "file://$EVIL" ] || fail "results.committedremote"
expect_status 0 "$RESULTS" init
grep -qF "remote:     file://$EVIL (from .results.json, set by $BY" "$T/out" || fail "init after following: $(cat "$T/out")"
pass "2. init --follow-remote follows, naming the commit and author"

# --- 3. fresh clones -------------------------------------------------------------
git clone -q "$T/results.git" "$T/fresh" 2>/dev/null
cd "$T/fresh"
expect_status 0 "$RESULTS" init
grep -qF "remote:     file://$EVIL (from .results.json, set by $BY" "$T/out" || fail "fresh init: $(cat "$T/out")"
git clone -q "$T/results.git" "$T/ci2" 2>/dev/null
cd "$T/ci2"
expect_status 2 "$RESULTS" init --remote "file://$STORE"
names_all "$T/err" "a CI clone's init --remote"
[ -z "$(git config --local results.remote || true)" ] || fail "a refused CI init left config"
# A machine set up once (--global) with an explicit store: its plain
# clones refuse the committed change through lfs-agent.
(
	export HOME="$T/home2" GIT_CONFIG_GLOBAL="$T/home2/.gitconfig"
	mkdir -p "$HOME"
	git config --global user.name "Dev"
	git config --global user.email "dev@example.com"
	git lfs install --skip-repo >/dev/null
	cd "$T"
	expect_status 0 "$RESULTS" init --global --repo "$T/results.git" --remote "file://$STORE"
	git clone -q "$T/results.git" "$T/machine" 2>/dev/null
	cd "$T/machine"
	got=0
	git lfs pull --include='runs/**' --exclude= >"$T/out" 2>"$T/err" || got=$?
	[ "$got" != 0 ] || fail "a global --remote clone followed the committed change"
	grep -qF "$BY" "$T/err" || fail "the global agent does not name the commit: $(cat "$T/err")"
)
pass "3. a fresh clone names who set its remote; a CI clone with an explicit remote refuses another one"

# --- 4. the GitHub Action ------------------------------------------------------------
git clone -q "$T/results.git" "$T/job" 2>/dev/null
head_before=$(git -C "$T/results.git" rev-parse main)
got=0
env GITHUB_OUTPUT="$T/job.output" GITHUB_STEP_SUMMARY="$T/job.summary" INPUT_REPOSITORY="$T/job" \
	INPUT_SESSION="$T/b.pyisession" INPUT_COMMIT=$SHA2 INPUT_REMOTE="file://$STORE" \
	bash "$RS_SOURCE_DIR/docs/github-action/run.sh" >"$T/job.out" 2>"$T/job.err" || got=$?
[ "$got" = 2 ] || { cat "$T/job.err"; fail "the action with its remote input exited $got, want 2"; }
names_all "$T/job.err" "the action"
[ "$(git -C "$T/results.git" rev-parse main)" = "$head_before" ] || fail "the action pushed"
nothing_in "$EVIL" || fail "the action uploaded to the committed store"
git clone -q "$T/results.git" "$T/job2" 2>/dev/null
got=0
env GITHUB_OUTPUT="$T/job2.output" GITHUB_STEP_SUMMARY="$T/job2.summary" INPUT_REPOSITORY="$T/job2" \
	INPUT_SESSION="$T/b.pyisession" INPUT_COMMIT=$SHA2 INPUT_PUSH=false \
	bash "$RS_SOURCE_DIR/docs/github-action/run.sh" >"$T/job2.out" 2>"$T/job2.err" || got=$?
grep -qF "file://$EVIL (from .results.json, set by $BY" "$T/job2.err" ||
	fail "the action without a remote input does not name who set the remote: $(cat "$T/job2.err")"
pass "4. the action with its remote input refuses a changed committed remote; without, its log names the commit"

# --- 5. the commit named: through merges, shallow clones, hostile names ------------------
git clone -q "$T/results.git" "$T/side" 2>/dev/null
cd "$T/side"
expect_status 0 "$RESULTS" init
git checkout -q -b side
git config user.name "$(printf 'Eve\033[2J')"
git config user.email eve@example.com
"$RESULTS" init --change-remote --remote "file://$T/third" >/dev/null
SIDE=$(git rev-parse --short=12 HEAD)
git checkout -q main
git commit -q --allow-empty -m "meanwhile on main"
git -c user.name="Merger" -c user.email=merger@example.com merge -q --no-ff -m "merge side" side
git push -q --no-verify origin main 2>/dev/null
cd "$T/dev"
git pull -q --no-rebase origin main 2>/dev/null
expect_status 2 "$RESULTS" init
grep -qF "commit $SIDE by Eve?[2J <eve@example.com> on " "$T/err" || fail "merge: the side commit is not named: $(cat "$T/err")"
! grep -q "Merger" "$T/err" || fail "the merge is named, not the change"
! grep -q "$(printf '\033')" "$T/err" || fail "an author's ESC byte reached the terminal"
git commit -q --allow-empty -m "a later commit"
git -C "$T/side" commit -q --allow-empty -m "another later commit"
git -C "$T/side" push -q --no-verify origin main 2>/dev/null
git clone -q --depth 1 "file://$T/results.git" "$T/shallow" 2>/dev/null
cd "$T/shallow"
git config results.remote "file://$STORE"
git config results.committedremote "file://$STORE"
expect_status 8 "$RESULTS" fetch 1111111 -o "$T/f5"
grep -qF "(or an earlier commit: this clone's history stops there)" "$T/err" ||
	fail "a shallow clone names a commit as if it were the change: $(cat "$T/err")"
pass "5. the change's own commit is named (not a merge); shallow clones say the history stops; no control bytes"

echo "ok: test_remote_redirect"
