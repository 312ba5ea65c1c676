# Sourced by the end-to-end tests: one temporary folder, a HOME and git
# configuration of their own (never the user's), the programs under test,
# and the helpers every test uses.
#
#   . "$(dirname "$0")/lib.sh" test_name
#
# A test that starts servers defines on_exit() to stop them; it runs before
# the temporary folder is removed (KEEP=1 keeps the folder for a post-mortem).

: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
: "${RS_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
RESULTS=$RS_BIN_DIR/src/results
AGENT=$RS_BIN_DIR/lfs-agent/lfs-agent
GEN=$RS_BIN_DIR/tests/gen-session
SERVERS=$RS_SOURCE_DIR/tests/servers

T=$(mktemp -d "${TMPDIR:-/tmp}/${1:-e2e}.XXXXXX")
on_exit() { :; }
rs_e2e_cleanup() {
	on_exit || true
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap rs_e2e_cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_status STATUS COMMAND...: run it, output in $T/out and $T/err.
expect_status() {
	local want=$1 got=0
	shift
	"$@" >"$T/out" 2>"$T/err" || got=$?
	[ "$got" = "$want" ] || { cat "$T/out" "$T/err" >&2; fail "'$*' exited $got, want $want"; }
}

# The generator is a test tool, not under test: its leaks at exit (if any)
# must not fail the sanitizer run of these tests.
gen() { ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$GEN" "$@"; }
# Leaks of the libraries below us, not ours (each is explained there).
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$RS_SOURCE_DIR/tests/lsan.supp

export HOME="$T/home" GIT_CONFIG_GLOBAL="$T/home/.gitconfig" GIT_CONFIG_NOSYSTEM=1 \
	GIT_TERMINAL_PROMPT=0
unset GIT_DIR GIT_WORK_TREE GITHUB_REF_NAME GITHUB_HEAD_REF RUNNER_NAME RESULTS_RECORDED_AT || true
mkdir -p "$HOME"
git config --global user.name "CI"
git config --global user.email "ci@example.com"
git config --global init.defaultBranch main
git config --global advice.detachedHead false
# git-lfs's filters, in this test's own global config (GIT_CONFIG_NOSYSTEM
# keeps the machine's out: a fresh machine may have none).
git lfs install --skip-repo >/dev/null

pass() { echo "ok - $*"; }

# partial_clone_setup STORE_URL: in a partial clone just checked out sparse
# (the current directory), the settings results needs (the store's remote,
# lfs-agent), and $T/missing: the ids of the objects the clone lacks, asked
# without a lazy fetch. libgit2 does not open a repository with
# extensions.worktreeConfig, which `git sparse-checkout set` turns on, so
# it goes and core.sparseCheckout is set in the repository's own config.
partial_clone_setup() {
	git config --unset extensions.worktreeConfig || [ $? = 5 ] || fail "unset extensions.worktreeConfig"
	git config core.sparseCheckout true
	git config results.remote "$1"
	git config lfs.standalonetransferagent results
	git config lfs.customtransfer.results.path "$AGENT"
	git rev-list --objects --missing=print HEAD >"$T/objects" || fail "git rev-list --missing=print"
	sed -n 's/^?//p' "$T/objects" >"$T/missing"
}

# peak COMMAND...: run it (output in $T/out, $T/err), print its peak RSS in MB and its status
peak() {
	T=$T python3 - "$@" <<'PY'
import resource, subprocess, sys, os
t = os.environ["T"]
with open(t + "/out", "wb") as o, open(t + "/err", "wb") as e:
    st = subprocess.call(sys.argv[1:], stdout=o, stderr=e)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, st)
PY
}

# --- results repositories ----------------------------------------------------

# store_url: the store the retention, gc and verify tests record to: a
# folder, file://$T/store, unless RS_E2E_STORE names another one (an S3
# URL of a server the caller started, with its settings in the
# environment, and RS_E2E_STORE_DIR the folder where it keeps the
# objects). One place, so that those tests run on any store.
store_url() { echo "${RS_E2E_STORE:-file://$T/store}"; }

# store_repo: a bare $T/results.git and its clone $T/ci (the current
# folder), set up with `results init --remote $(store_url)`.
store_repo() {
	git init -q --bare "$T/results.git"
	git clone -q "$T/results.git" "$T/ci" 2>/dev/null
	cd "$T/ci"
	"$RESULTS" init --remote "$(store_url)" >/dev/null
}

# store_state: every file of the store and its sum, to compare the store
# before and after a gc that must change nothing: the folder of the
# file:// URL, or RS_E2E_STORE_DIR (where the server of RS_E2E_STORE
# keeps its objects).
store_state() {
	local dir
	dir=$(store_url)
	dir=${RS_E2E_STORE_DIR:-${dir#file://}}
	find "$dir" -type f | sort | xargs sha256sum
}

# gc_refuses STATUS PATTERN: `results gc --grace 0 --force` exits STATUS saying
# PATTERN (grep) and that it deletes nothing, and the store is as it was.
gc_refuses() {
	local before
	before=$(store_state)
	expect_status "$1" "$RESULTS" gc --grace 0 --force
	grep -q "$2" "$T/err" || fail "gc does not say '$2': $(cat "$T/err")"
	grep -q "gc deletes nothing" "$T/err" || fail "gc does not say it deletes nothing: $(cat "$T/err")"
	! grep -q "^removed\|removing" "$T/out" || fail "gc removed something: $(cat "$T/out")"
	[ "$(store_state)" = "$before" ] || fail "gc changed the store"
}

# set_retention JSON: .results.json's "retention" set to JSON, committed.
set_retention() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open('.results.json'))
d['retention'] = json.loads(sys.argv[1])
json.dump(d, open('.results.json', 'w'), indent=2)
PY
	git commit -qam "results: retention $1"
}

# run_ids [REV]: the run ids of the index at REV (HEAD), oldest first.
run_ids() {
	local rev=${1:-HEAD}
	git ls-tree -r --name-only "$rev" index | grep -vE '^index/(branches|commits)/' | xargs -I{} git show "$rev:{}" |
		python3 -c 'import sys,json; [print(json.loads(l)["id"]) for l in sys.stdin if l.strip()]'
}

# results_repo_setup: the current git repository made a results repository
# by hand, as `results init` would (so that a test depends on add and what
# it checks only): store file://$T/store, lfs-agent as the standalone
# transfer agent (results add refuses without it), sessions in LFS.
results_repo_setup() {
	git config results.remote "file://$T/store"
	git config lfs.standalonetransferagent results
	git config lfs.customtransfer.results.path "$AGENT"
	printf '*.pyisession filter=lfs diff=lfs merge=lfs -text\n' >.gitattributes
	git add .gitattributes && git commit -qm "results repository"
}

# results_repo DIR: a new results repository at DIR, the current folder.
results_repo() {
	git init -q "$1"
	cd "$1"
	results_repo_setup
}

# results_ci STORE [SESSION SHA]: a bare $T/results.git and its clone $T/ci
# (the current folder) set up with `results init --remote file://STORE`
# and pushed; with SESSION, that session recorded first for commit SHA
# (trigger ci, at a fixed time).
results_ci() {
	git init -q --bare "$T/results.git"
	git clone -q "$T/results.git" "$T/ci" 2>/dev/null
	cd "$T/ci"
	expect_status 0 "$RESULTS" init --remote "file://$1"
	if [ -n "${2:-}" ]; then
		RESULTS_RECORDED_AT=1764494000 expect_status 0 "$RESULTS" add "$2" --commit "$3" --trigger ci
	fi
	git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "the first push of $T/ci"; }
}

# agent_repo DIR STORE: a new git repository at DIR, the current folder,
# whose *.pyisession files go through lfs-agent to the store folder STORE.
agent_repo() {
	git init -q "$1"
	cd "$1"
	git config lfs.standalonetransferagent results
	git config lfs.customtransfer.results.path "$AGENT"
	git config results.remote "file://$2"
	git lfs track '*.pyisession' >/dev/null
}

# record_session RUNNER SHA [ADD-OPTIONS...]: $T/s.pyisession recorded by
# `results add` for commit SHA on branch main, trigger nightly, runner
# RUNNER, an hour after the previous run (the caller's $CLOCK).
record_session() {
	local runner=$1 sha=$2
	shift 2
	CLOCK=$((CLOCK + 3600))
	RUNNER_NAME=$runner RESULTS_RECORDED_AT=$CLOCK "$RESULTS" add "$T/s.pyisession" \
		--commit "$sha" --branch main --trigger nightly "$@" >/dev/null
}

# runner_sha N: the commit "cN000..." of the noisy-runner series.
runner_sha() { printf 'c%s%038d\n' "$1" 0; }

# record_runner N POPULATION|- GEN-OPTIONS...: a run of the noisy-runner
# series (the same code and events, --seed 3, with a runner's noise) for
# commit cN on runner ci-1, with the workload stats of POPULATION; "-":
# recorded without stats. test_regress_runner.sh, test_site_verdicts.sh.
record_runner() {
	local n=$1 pop=$2
	shift 2
	gen --seed 3 --months 3 --noise 0.5 --wall-noise 3 "$@" -o "$T/s.pyisession"
	if [ "$pop" = - ]; then
		record_session ci-1 "$(runner_sha "$n")"
	else
		printf '{"months": 3, "population": %s}\n' "$pop" >"$T/stats.json"
		record_session ci-1 "$(runner_sha "$n")" --stats "$T/stats.json"
	fi
}

# need_chromium: Debian's chromium ($CHROMIUM) and python3 for
# tests/browser/check_html.py ($BROWSER_DIR); a failure without them.
need_chromium() {
	BROWSER_DIR=$RS_SOURCE_DIR/tests/browser
	CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
	[ -x "$CHROMIUM" ] || fail "no $CHROMIUM: run scripts/install-deps.sh (Debian package chromium)"
	command -v python3 >/dev/null || fail "no python3: run scripts/install-deps.sh"
}

# --- the store of the gc race tests ---------------------------------------------

# gc_store: the store remote the gc race tests (test_gc_race.sh) use, from
# one place: RS_E2E_STORE_URL when a suite points them at a server (its
# files, if on this machine, in RS_E2E_STORE_DIR), else a folder store
# $T/store. Sets STORE_URL and STORE_DIR (empty when the files cannot be
# looked at).
gc_store() {
	if [ -n "${RS_E2E_STORE_URL:-}" ]; then
		STORE_URL=$RS_E2E_STORE_URL
		STORE_DIR=${RS_E2E_STORE_DIR:-}
	else
		STORE_URL="file://$T/store"
		STORE_DIR="$T/store"
	fi
}

# paused_run DIR CALL MATCH END WHEN COMMAND...: COMMAND in the background
# with tests/shim/pause_at.c preloaded: it stops at its first CALL (rename
# or unlink) of a path containing MATCH and ending with END ("" for any),
# WHEN (before or after) it, until `resume DIR`. Its pid in $PAUSED_PID,
# its output in DIR/out and DIR/err.
paused_run() {
	local dir=$1 call=$2 match=$3 end=$4 when=$5
	shift 5
	mkdir -p "$dir"
	rm -f "$dir/paused" "$dir/go"
	RS_PAUSE_DIR=$dir RS_PAUSE_CALL=$call RS_PAUSE_AT=$match RS_PAUSE_END=$end \
		RS_PAUSE_WHEN=$when LD_PRELOAD=$RS_BIN_DIR/tests/libpause_at.so \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		"$@" >"$dir/out" 2>"$dir/err" &
	PAUSED_PID=$!
}

# wait_paused DIR: until the paused_run command stopped (a failure when it
# ended without, or after 300 s).
wait_paused() {
	local i
	for i in $(seq 3000); do
		[ -e "$1/paused" ] && return 0
		kill -0 "$PAUSED_PID" 2>/dev/null ||
			{ cat "$1/out" "$1/err" >&2; fail "it ended without reaching its pause point"; }
		sleep 0.1
	done
	fail "it did not reach its pause point in 300 s"
}

# resume DIR: let it go, and wait for it; its exit status is returned.
resume() {
	local st=0
	touch "$1/go"
	wait "$PAUSED_PID" || st=$?
	return $st
}

# --- the round trip of the remote tests (test_remote_*.sh) --------------------

# sums FILE...: their sha256 sums, sorted, on one line.
sums() { sha256sum "$@" | cut -d' ' -f1 | sort | tr '\n' ' '; }
# pulled_sums: the same for the sessions of the current clone.
pulled_sums() { git ls-files '*.pyisession' | xargs sha256sum | cut -d' ' -f1 | sort | tr '\n' ' '; }

# remote_sessions: $T/a, b and c.pyisession of 3 MB (seeds 1 to 3) and
# $T/d.pyisession of 1 MB (seed 4).
remote_sessions() {
	gen --seed 1 --size 3M -o "$T/a.pyisession"
	gen --seed 2 --size 3M -o "$T/b.pyisession"
	gen --seed 3 --size 3M -o "$T/c.pyisession"
	gen --seed 4 --size 1M -o "$T/d.pyisession"
}

# remote_push_two REMOTE: a bare $T/results.git and its clone $T/ci (the
# current folder), set up with `results init --remote REMOTE`; sessions a
# and b added (commits 1111111... and 2222222...) and pushed.
remote_push_two() {
	git init -q --bare "$T/results.git"
	git clone -q "$T/results.git" "$T/ci" 2>/dev/null
	cd "$T/ci"
	expect_status 0 "$RESULTS" init --remote "$1"
	RESULTS_RECORDED_AT=1764494000 "$RESULTS" add "$T/a.pyisession" \
		--commit 1111111111111111111111111111111111111111 --trigger ci >/dev/null
	RESULTS_RECORDED_AT=1764494100 "$RESULTS" add "$T/b.pyisession" \
		--commit 2222222222222222222222222222222222222222 --trigger ci >/dev/null
	git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push to $1"; }
}

# remote_pull_two: a fresh clone $T/dev pulls sessions a and b with git lfs
# pull, another, $T/dev2 (the current folder), gets b with `results fetch`:
# the same bytes both ways.
remote_pull_two() {
	git clone -q "$T/results.git" "$T/dev" 2>"$T/clone.err" || { cat "$T/clone.err"; fail "clone"; }
	cd "$T/dev"
	expect_status 0 "$RESULTS" init
	git lfs pull --include='*.pyisession' --exclude= 2>"$T/pull.err" || { cat "$T/pull.err"; fail "git lfs pull"; }
	[ "$(sums "$T/a.pyisession" "$T/b.pyisession")" = "$(pulled_sums)" ] ||
		fail "pulled sessions differ: want $(sums "$T/a.pyisession" "$T/b.pyisession") got $(pulled_sums)"
	git clone -q "$T/results.git" "$T/dev2" 2>/dev/null
	cd "$T/dev2"
	expect_status 0 "$RESULTS" init
	expect_status 0 "$RESULTS" fetch 2222222
	cmp -s "$(cat "$T/out")" "$T/b.pyisession" || fail "results fetch gave different bytes"
}

# remote_push_third: session c added in $T/ci (the current folder; commit
# 3333333...) and pushed through a server that fails, then recovers.
remote_push_third() {
	cd "$T/ci"
	RESULTS_RECORDED_AT=1764494200 "$RESULTS" add "$T/c.pyisession" \
		--commit 3333333333333333333333333333333333333333 --trigger ci >/dev/null
	git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push through a server that recovers"; }
}

# remote_push_refused SECRET SAYS VAR=VALUE...: session d added in $T/ci
# (the current folder; commit 4444444...) and pushed with VAR=VALUE (a
# wrong key) in the environment: the push fails saying SAYS (a grep
# pattern), and SECRET appears nowhere in what it printed.
remote_push_refused() {
	local secret=$1 says=$2 got=0
	shift 2
	cd "$T/ci"
	RESULTS_RECORDED_AT=1764494300 "$RESULTS" add "$T/d.pyisession" \
		--commit 4444444444444444444444444444444444444444 --trigger ci >/dev/null
	env "$@" GIT_TRACE=1 git push origin main >"$T/out" 2>"$T/err" || got=$?
	[ "$got" != 0 ] || fail "a push with a wrong key succeeded"
	grep -q "$says" "$T/err" ||
		fail "the wrong-key push does not say the signature was refused: $(grep -i 'error' "$T/err" | tail -5)"
	! grep -q "$secret" "$T/out" "$T/err" || fail "the key appears in the output"
}

# remote_pull_three: the current clone pulls the commits, then sessions a,
# b and c through a server that fails, then recovers: the same bytes.
remote_pull_three() {
	git pull -q 2>/dev/null || fail "git pull of the commits"
	git lfs pull --include='*.pyisession' --exclude= 2>"$T/pull.err" ||
		{ cat "$T/pull.err"; fail "pull through a server that recovers"; }
	[ "$(sums "$T/a.pyisession" "$T/b.pyisession" "$T/c.pyisession")" = "$(pulled_sums)" ] ||
		fail "sessions pulled through the recovering server differ"
}
