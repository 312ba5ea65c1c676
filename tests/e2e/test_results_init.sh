#!/bin/bash
# results init, end to end against the real git and git-lfs:
#  - errors: outside a repository (3), no remote known (2);
#  - a CI clone: init --remote writes local config, hooks and ONE commit of
#    .gitattributes/.lfsconfig/.results.json; a second init changes nothing;
#    a session committed with plain git goes through lfs-agent on push;
#  - a developer clone: plain clone + bare `results init` reads the remote
#    from .results.json, holds only pointers (the committed .lfsconfig keeps
#    sessions out), and the pre-push hook refuses a raw session blob;
#  - init --global: a plain clone on a "machine" with only the global
#    config pulls a session through lfs-agent (what git-lfs honours).
set -euo pipefail

. "$(dirname "$0")/lib.sh" test_results_init

unset GIT_DIR GIT_WORK_TREE

git init -q --bare "$T/results.git"
STORE="$T/store"

# --- errors ---------------------------------------------------------------
mkdir "$T/plain"
(cd "$T/plain" && expect_status 3 "$RESULTS" init --remote "file://$STORE")
grep -q "^results: not a results repository" "$T/err" || fail "message for no repository: $(cat "$T/err")"
git clone -q "$T/results.git" "$T/ci" 2>/dev/null
cd "$T/ci"
expect_status 2 "$RESULTS" init
grep -q "results init --remote URL" "$T/err" || fail "no-remote message does not say what to do"
expect_status 2 "$RESULTS" init --remote "nosuchscheme://x"
[ -z "$(git config --local --get results.remote || true)" ] || fail "a failed init left config behind"

# --- CI clone -----------------------------------------------------------------
expect_status 0 "$RESULTS" init --remote "file://$STORE"
[ "$(git rev-list --count HEAD)" = 1 ] || fail "init should make exactly one commit"
[ "$(git show --name-only --format= HEAD | sort | tr '\n' ' ')" = ".gitattributes .lfsconfig .results.json " ] ||
	fail "init commit holds: $(git show --name-only --format= HEAD)"
[ -z "$(git status --porcelain)" ] || fail "working tree not clean after init: $(git status --porcelain)"
[ "$(git config --local lfs.standalonetransferagent)" = results ] || fail "standalone agent not set"
[ -x "$(git config --local lfs.customtransfer.results.path)" ] || fail "agent path not executable"
case "$(git config --local lfs.customtransfer.results.path)" in /*) ;; *) fail "agent path not absolute" ;; esac
[ "$(git config --local results.remote)" = "file://$STORE" ] || fail "results.remote"
[ "$(git config -f .lfsconfig lfs.fetchexclude)" = "*.pyisession" ] || fail ".lfsconfig fetchexclude"
grep -q '^\*\.pyisession filter=lfs diff=lfs merge=lfs -text' .gitattributes || fail ".gitattributes"
grep -q "\"remote\": \"file://$STORE\"" .results.json || fail ".results.json remote"
for h in pre-push post-checkout post-commit post-merge; do
	[ -x .git/hooks/$h ] || fail "hook $h not installed"
	cmp -s .git/hooks/$h "$RS_SOURCE_DIR/hooks/$h" || fail "hook $h differs from hooks/$h"
done

# doctor: all good after init; each breakage is named with its status.
expect_status 0 "$RESULTS" doctor
grep -q "all good" "$T/out" || fail "doctor after init: $(cat "$T/out")"
agent=$(git config --local lfs.customtransfer.results.path)
git config --local lfs.customtransfer.results.path "$T/no-agent"
expect_status 8 "$RESULTS" doctor
grep -q "^FAIL.*no-agent" "$T/out" || fail "doctor did not name the missing agent: $(cat "$T/out")"
git config --local lfs.customtransfer.results.path "$agent"
echo file > "$T/not-a-folder"
git config --local results.remote "file://$T/not-a-folder"
expect_status 5 "$RESULTS" doctor
grep -q "^FAIL.*remote does not answer" "$T/out" || fail "doctor remote: $(cat "$T/out")"
git config --local results.remote "file://$STORE"
mv .git/hooks/pre-push "$T/pre-push.saved"
expect_status 8 "$RESULTS" doctor
grep -q "^FAIL.*pre-push" "$T/out" || fail "doctor hooks: $(cat "$T/out")"
mv "$T/pre-push.saved" .git/hooks/pre-push
(cd "$T/plain" && expect_status 3 "$RESULTS" doctor)

# Twice: nothing changes.
cp .git/config "$T/config.1"
head1=$(git rev-parse HEAD)
expect_status 0 "$RESULTS" init --remote "file://$STORE"
[ "$(git rev-parse HEAD)" = "$head1" ] || fail "second init made a commit"
cmp -s .git/config "$T/config.1" || fail "second init changed the config: $(diff "$T/config.1" .git/config)"
grep -q "nothing (already set up)" "$T/out" || fail "second init output: $(cat "$T/out")"

# A session committed with plain git travels through lfs-agent on push.
mkdir -p runs/2026/01/02/a
gen --seed 1 --size 300k -o runs/2026/01/02/a/one.pyisession
gen --seed 2 --size 200k -o runs/2026/01/02/a/two.pyisession
cp runs/2026/01/02/a/one.pyisession "$T/one.orig"
git add runs
git commit -q -m "two sessions"
[ "$(git cat-file -p HEAD:runs/2026/01/02/a/one.pyisession | head -n 1)" = "version https://git-lfs.github.com/spec/v1" ] ||
	fail "the session was not committed as a pointer"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push"; }
[ -n "$(find "$STORE" -type f | head -n 1)" ] || fail "nothing reached the store"
[ -z "$(find "$T/results.git" -path '*lfs/objects*' -type f | head -n 1)" ] ||
	fail "objects went to the bare repository, not through lfs-agent"

# --- developer clone ------------------------------------------------------------
git clone -q "$T/results.git" "$T/dev" 2>"$T/clone.err" || { cat "$T/clone.err"; fail "clone"; }
cd "$T/dev"
[ "$(head -n 1 runs/2026/01/02/a/one.pyisession)" = "version https://git-lfs.github.com/spec/v1" ] ||
	fail "the clone downloaded a session despite .lfsconfig"
[ -z "$(find .git/lfs/objects -type f 2>/dev/null | head -n 1)" ] || fail "the clone holds LFS objects"
expect_status 0 "$RESULTS" init
[ "$(git config --local results.remote)" = "file://$STORE" ] || fail "bare init did not read .results.json"
[ "$(git rev-parse HEAD)" = "$(git -C "$T/ci" rev-parse HEAD)" ] || fail "bare init made a commit"
git lfs pull --include=runs/2026/01/02/a/one.pyisession --exclude= 2>"$T/pull.err" ||
	{ cat "$T/pull.err"; fail "git lfs pull through the agent"; }
cmp -s runs/2026/01/02/a/one.pyisession "$T/one.orig" || fail "pulled session differs"
[ "$(head -n 1 runs/2026/01/02/a/two.pyisession)" = "version https://git-lfs.github.com/spec/v1" ] ||
	fail "pull fetched more than asked"

# A session committed as a raw blob is refused by the pre-push hook.
gen --seed 3 --size 50k -o "$T/raw.pyisession"
oid=$(git hash-object -w --no-filters "$T/raw.pyisession")
git update-index --add --cacheinfo "100644,$oid,runs/raw dir/raw.pyisession"
git commit -q -m "a raw session"
expect_status 1 git push origin main
grep -q "refusing to push" "$T/err" || fail "pre-push message: $(cat "$T/err")"
grep -q "runs/raw dir/raw.pyisession" "$T/err" || fail "pre-push does not name the file"
[ "$(git -C "$T/results.git" rev-parse main)" = "$(git -C "$T/ci" rev-parse HEAD)" ] ||
	fail "the raw session reached the remote"

# --- machine-wide (--global) ---------------------------------------------------
export HOME="$T/home2" GIT_CONFIG_GLOBAL="$T/home2/.gitconfig"
mkdir -p "$HOME"
git config --global user.name "Dev"
git config --global user.email "dev@example.com"
cd "$T"
expect_status 2 "$RESULTS" init --global
expect_status 0 "$RESULTS" init --global --repo "$T/results.git" --remote "file://$STORE"
cp "$GIT_CONFIG_GLOBAL" "$T/global.1"
expect_status 0 "$RESULTS" init --global --repo "$T/results.git" --remote "file://$STORE"
cmp -s "$GIT_CONFIG_GLOBAL" "$T/global.1" || fail "second --global changed the config"
# The key must name the endpoint exactly as git-lfs spells it.
git clone -q "$T/results.git" "$T/machine" 2>"$T/clone.err" || { cat "$T/clone.err"; fail "clone"; }
cd "$T/machine"
endpoint=$(git lfs env 2>/dev/null | sed -n 's/^Endpoint=\([^ ]*\).*/\1/p' | head -n 1)
git config --global --get "lfs.$endpoint.standalonetransferagent" >/dev/null ||
	fail "no standalonetransferagent for git-lfs's endpoint '$endpoint': $(cat "$GIT_CONFIG_GLOBAL")"
[ -z "$(git config --local --get results.remote || true)" ] || fail "the machine clone was configured locally"
git lfs pull --include=runs/2026/01/02/a/one.pyisession --exclude= 2>"$T/pull.err" ||
	{ cat "$T/pull.err"; fail "git lfs pull with the global config only"; }
cmp -s runs/2026/01/02/a/one.pyisession "$T/one.orig" || fail "pulled session differs (global)"

# Credentials in the remote URL never reach a committed file or the output.
git init -q "$T/cred"
cd "$T/cred"
expect_status 0 "$RESULTS" init --remote "https://user:s3cret@127.0.0.1:9/store"
grep -q '"remote": "https://127.0.0.1:9/store"' .results.json || fail "marker: $(cat .results.json)"
! git grep -q s3cret HEAD -- . || fail "a credential was committed"
! grep -q s3cret "$T/out" "$T/err" || fail "a credential was printed"
expect_status 5 "$RESULTS" doctor      # nothing listens on port 9
! grep -q s3cret "$T/out" "$T/err" || fail "doctor printed a credential"

# A prefix ("<dir>/") covers every repository below it.
export HOME="$T/home3" GIT_CONFIG_GLOBAL="$T/home3/.gitconfig"
mkdir -p "$HOME"
cd "$T"
expect_status 0 "$RESULTS" init --global --repo "file://$T/" --remote "file://$STORE"
git config --global --get "lfs.file://$T/.standalonetransferagent" >/dev/null || fail "prefix key"
git clone -q "$T/results.git" "$T/machine2" 2>"$T/clone.err" || { cat "$T/clone.err"; fail "clone"; }
cd "$T/machine2"
git lfs pull --include=runs/2026/01/02/a/one.pyisession --exclude= 2>"$T/pull.err" ||
	{ cat "$T/pull.err"; fail "git lfs pull with a prefix key"; }
cmp -s runs/2026/01/02/a/one.pyisession "$T/one.orig" || fail "pulled session differs (prefix)"

echo "ok: test_results_init"
