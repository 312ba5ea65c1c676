#!/usr/bin/env bash
# A results repository with RUNS recorded runs, built in minutes (issue 21):
#
#   RS_BIN_DIR=build bench/scale_history.sh RUNS DIR
#
# makes
#   DIR/remote.git  the bare git remote (branch main), as a team's server holds it
#   DIR/clone       a clone of it set up with `results init --remote file://DIR/store`
#                   (the folder remote, lfs-agent, hooks), at the same commit
#   DIR/store       the folder remote, holding the template run's session
#   DIR/home        the HOME these were made with (committer, git-lfs filters)
#
# How: one real run is recorded with `results add` from the real session
# tests/data/real_small_pop1k.pyisession (SESSION=... another one), so
# its run.json (about 100 KB, like real runs), summary.md, session pointer,
# index line and README.md are what `results add` writes, and it is pushed
# (the store gets the session). bench/scale_history.py then writes RUNS-1
# more runs straight into git with `git fast-import`: one commit per run
# with exactly the files `results add` commits (the run folder, the index
# shard, README.md once a day), PER_DAY runs a day (default 50: three
# configurations nightly plus pull-request runs), a 10% step half-way.
# The packs are hard-linked into remote.git, whose main is set to the same
# commit (what a push would have sent, without git-lfs's pre-push scan and
# receive-pack's connectivity walk of RUNS commits).
#
# Settings (environment):
#   LAYOUT=bounded|month  the index layout written (docs/run-format.md):
#                         shards of at most 128 runs (default: what
#                         results add writes) or one shard a month (what
#                         it wrote before issue 21)
#   PER_DAY=50  T0=<epoch> (default 2021-01-01)
#   LAST_MONTH_RUNS=K     the last K runs in one month (K/28 a day)
#   CHECKOUT=sparse|full  the clone's work tree: sparse (default: every
#                         file but runs/, plus the newest month's run
#                         folders; the rest skip-worktree) or every file
#   SESSIONS=same         every run points at the one session in DIR/store
#                         (default: a pointer of its own each, to no object)
#   REPACK=1              git repack -ad in remote.git afterwards (slow)
#   MAP=0|branches        no branch or commit map (a repository recorded
#                         before them), or the branch map only (before the
#                         commit map); default both, as results add writes
#
# Prints the time taken and the sizes. RS_BIN_DIR: the build directory
# (results, lfs-agent).
set -euo pipefail

usage() { echo "usage: RS_BIN_DIR=build $0 RUNS DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
RUNS=$1 DIR=$2
case $RUNS in '' | *[!0-9]*) usage ;; esac
[ "$RUNS" -ge 1 ] || usage
: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
here=$(cd "$(dirname "$0")" && pwd)
LAYOUT=${LAYOUT:-bounded}
CHECKOUT=${CHECKOUT:-sparse}
T0=${T0:-1609459200}    # 2021-01-01
SESSION=${SESSION:-$here/../tests/data/real_small_pop1k.pyisession}
export PER_DAY=${PER_DAY:-50}

find_bin() {
	local d
	for d in "$RS_BIN_DIR" "$RS_BIN_DIR/src" "$RS_BIN_DIR/lfs-agent"; do
		[ -f "$d/$1" ] && [ -x "$d/$1" ] && { (cd "$d" && echo "$PWD/$1"); return 0; }
	done
	return 1
}
RESULTS=$(find_bin results) || { echo "no results under $RS_BIN_DIR" >&2; exit 2; }
AGENT=$(find_bin lfs-agent) || { echo "no lfs-agent under $RS_BIN_DIR" >&2; exit 2; }
[ ! -e "$DIR/remote.git" ] && [ ! -e "$DIR/clone" ] ||
	{ echo "$DIR already holds remote.git or clone" >&2; exit 2; }
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_home "$DIR"
export GIT_TERMINAL_PROMPT=0 RUNNER_NAME=bench-runner
unset GITHUB_REF_NAME GITHUB_HEAD_REF RESULTS_RECORDED_AT || true

t_start=$(now)
git init -q --bare "$DIR/remote.git"
git clone -q "$DIR/remote.git" "$DIR/clone" 2>/dev/null
cd "$DIR/clone"
"$RESULTS" init --remote "file://$DIR/store" --agent "$AGENT" >/dev/null
printf '{"population": 1000}\n' >"$DIR/stats.json"
RESULTS_RECORDED_AT=$T0 "$RESULTS" add "$SESSION" --commit "$(printf 'a%.0s' {1..40})" \
	--branch main --trigger nightly --stats "$DIR/stats.json" >/dev/null
git push -q origin main 2>"$DIR/push.err" || { cat "$DIR/push.err" >&2; exit 1; }

python3 "$here/scale_history.py" "$DIR/clone" "$RUNS" "$T0" "$LAYOUT" |
	git -c core.bigFileThreshold=64m fast-import --quiet --depth=50
# what a push would send: the new packs, and main at the new commit
for p in .git/objects/pack/*.pack .git/objects/pack/*.idx; do
	[ ! -e "$p" ] || [ -e "$DIR/remote.git/objects/pack/${p##*/}" ] ||
		ln "$p" "$DIR/remote.git/objects/pack/" 2>/dev/null || cp "$p" "$DIR/remote.git/objects/pack/"
done
# (not a push: receive-pack's connectivity walk of RUNS commits takes minutes)
git -C "$DIR/remote.git" update-ref refs/heads/main "$(git rev-parse HEAD)"
git update-ref refs/remotes/origin/main HEAD

# the work tree (libgit2 and git alike honour skip-worktree)
if [ "$CHECKOUT" = sparse ]; then
	newest=$(git log -1 --format=%cd --date=format-local:runs/%Y/%m/ HEAD)
	git config core.sparseCheckout true
	printf '/*\n!/runs/\n/%s\n' "$newest" >.git/info/sparse-checkout
	GIT_LFS_SKIP_SMUDGE=1 git read-tree -mu HEAD
else
	GIT_LFS_SKIP_SMUDGE=1 git read-tree -mu HEAD
fi
[ -z "${REPACK:-}" ] || git -C "$DIR/remote.git" repack -adq
t_build=$(echo "$(now) - $t_start" | bc -l)

printf 'history: %d runs (%s index, %d a day) in %.0f s; remote.git %.0f MB, clone .git %.0f MB, %d shards\n' \
	"$RUNS" "$LAYOUT" "$PER_DAY" "$t_build" \
	"$(echo "$(du -sb "$DIR/remote.git" | cut -f1) / 1048576" | bc -l)" \
	"$(echo "$(du -sb "$DIR/clone/.git" | cut -f1) / 1048576" | bc -l)" \
	"$(git ls-tree -r --name-only HEAD index/ | grep -vEc "^index/(branches|commits)/")"
