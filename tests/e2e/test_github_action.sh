#!/usr/bin/env bash
# End-to-end test of the GitHub Action's script (docs/github-action/run.sh)
# on a folder remote, with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY in temp
# files, as three CI jobs would run it, each in a fresh clone:
#  1. first run: sets up the clone with --remote, records, pushes; verdict
#     no-baseline;
#  2. the same workload at a new commit, remote read from .results.json:
#     verdict pass, the summary holds the check and the comparison;
#  3. a new function taking 30%: verdict regression, exit 1 (and exit 0
#     with fail-on-regression false), outputs written either way;
# the checkouts of runs 1 and 2 made sparse (input sparse true: runs/ and
# index/ collapsed in git's sparse index, out of the work tree; not by
# default), and a second run on top in the same checkout works;
# then a developer clone fetches run 1's session byte for byte (it went
# through lfs-agent into the store); the action's own clone (input clone)
# over git's smart HTTP with a token: shallow and sparse, every git call
# authenticated, the token written nowhere, a kept clone reused; and bad
# inputs exit 2 naming them.
#
# The programs: the build's, or with RS_ACTION_INSTALLED=1 the installed
# package's (/usr/bin; .ci/run installs build-release/results_*.deb), and
# with RS_ACTION_PACKAGE=<deb> the first run installs that package itself.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_github_action

ACTION=$RS_SOURCE_DIR/docs/github-action/run.sh
if [ "${RS_ACTION_INSTALLED:-}" = 1 ]; then
	# only the system's programs: nothing of the build on PATH
	export PATH=/usr/bin:/bin:/usr/sbin:/sbin
	[ -z "${RS_ACTION_PACKAGE:-}" ] || [ -f "$RS_ACTION_PACKAGE" ] || fail "no package $RS_ACTION_PACKAGE"
	[ -n "${RS_ACTION_PACKAGE:-}" ] || [ -x /usr/bin/results ] ||
		fail "RS_ACTION_INSTALLED=1 but no /usr/bin/results: apt-get install ./build-release/results_*.deb"
	WANT_RESULTS=/usr/bin/results
else
	mkdir -p "$T/bin"
	ln -s "$RESULTS" "$T/bin/results"
	ln -s "$AGENT" "$T/bin/lfs-agent"
	export PATH="$T/bin:$PATH"
	WANT_RESULTS=$T/bin/results
fi

gen --seed 1 --population 100 --months 1 -o "$T/s1.pyisession"
gen --seed 1 --population 100 --months 1 --variant next -o "$T/s2.pyisession"
gen --seed 1 --population 100 --months 1 --new-function "validate_households:0.30" -o "$T/s3.pyisession"
printf '{"mem": {"peak_mb": 700}}\n' >"$T/stats.json"
git init -q --bare "$T/origin.git"
SHA1=1111111111111111111111111111111111111111
SHA2=2222222222222222222222222222222222222222
SHA3=3333333333333333333333333333333333333333

# job N: a fresh clone of the results repository, then the action's step
# run_action NAME [VAR=VALUE...]: the action's step; its output, summary,
# stdout, stderr and status in $T/NAME.*
run_action() {
	local name=$1 st=0
	shift
	: >"$T/$name.output"
	: >"$T/$name.summary"
	env GITHUB_OUTPUT="$T/$name.output" GITHUB_STEP_SUMMARY="$T/$name.summary" \
		"$@" bash "$ACTION" >"$T/$name.out" 2>"$T/$name.err" || st=$?
	echo "$st" >"$T/$name.status"
}
job() { # job NAME [VAR=VALUE...]: the action in a fresh clone $T/NAME
	git clone -q "$T/origin.git" "$T/$1" 2>/dev/null
	run_action "$1" INPUT_REPOSITORY="$T/$1" "${@:2}"
}
out() { sed -n "s/^$2=//p" "$T/$1.output"; }

# --- 1: first run, --remote ----------------------------------------------------
job ci1 INPUT_SESSION="$T/s1.pyisession" INPUT_COMMIT=$SHA1 INPUT_TRIGGER=nightly INPUT_SPARSE=true \
	INPUT_STATS="$T/stats.json" INPUT_REMOTE="file://$T/store" INPUT_PACKAGE="${RS_ACTION_PACKAGE:-}"
[ "$(cat "$T/ci1.status")" = 0 ] || { cat "$T/ci1.err" >&2; fail "first run exited $(cat "$T/ci1.status")"; }
grep -q "using $WANT_RESULTS " "$T/ci1.err" || fail "the action did not use $WANT_RESULTS: $(grep using "$T/ci1.err")"
RUN1=$(out ci1 run-id)
case "$RUN1" in 20*-nightly-1111111) ;; *) fail "run-id output '$RUN1'" ;; esac
[ "$(out ci1 verdict)" = no-baseline ] || fail "first verdict '$(out ci1 verdict)', want no-baseline"
grep -q "Performance check" "$T/ci1.summary" || fail "summary lacks the check: $(cat "$T/ci1.summary")"
git --git-dir="$T/origin.git" show --name-only --format= main | grep -q "runs/.*-nightly-1111111/run.json" ||
	fail "the run was not pushed"
git --git-dir="$T/origin.git" show main:.results.json | grep -q "file://$T/store" || fail ".results.json not pushed"
[ -n "$(find "$T/store" -type f 2>/dev/null)" ] || fail "nothing reached the folder store"
if [ "${RS_ACTION_INSTALLED:-}" = 1 ]; then
	# the hooks results init installed are the package's
	for h in pre-push post-checkout post-commit post-merge; do
		cmp "/usr/share/results/hooks/$h" "$T/ci1/.git/hooks/$h" || fail "hook $h is not /usr/share/results's"
	done
	[ "$(git -C "$T/ci1" config lfs.customtransfer.results.path)" = /usr/bin/lfs-agent ] ||
		fail "lfs-agent path: $(git -C "$T/ci1" config lfs.customtransfer.results.path)"
fi
pass "first run: installed, clone set up, recorded and pushed; outputs run-id and verdict no-baseline"

# --- 2: same workload, remote from .results.json ----------------------------------
job ci2 INPUT_SESSION="$T/s2.pyisession" INPUT_COMMIT=$SHA2 INPUT_TRIGGER=nightly INPUT_STATS="$T/stats.json" \
	INPUT_SPARSE=true
[ "$(cat "$T/ci2.status")" = 0 ] || { cat "$T/ci2.err" >&2; fail "second run exited $(cat "$T/ci2.status")"; }
[ "$(out ci2 verdict)" = pass ] || fail "second verdict '$(out ci2 verdict)', want pass: $(cat "$T/ci2.summary")"
[ "$(out ci2 baseline)" = $SHA1 ] || fail "baseline output '$(out ci2 baseline)'"
grep -q "Performance check" "$T/ci2.summary" || fail "summary lacks the check"
grep -q "1111111" "$T/ci2.summary" && grep -q "2222222" "$T/ci2.summary" ||
	fail "summary lacks the comparison of the two commits: $(cat "$T/ci2.summary")"
[ "$(grep -c '^run-id=' "$T/ci2.output")" = 1 ] || fail "run-id written more than once"
pass "second run: remote from .results.json, verdict pass, check and comparison in the summary"

# --- the checkout is made sparse (input sparse: true; off by default) -----------------
# is_sparse CLONE WHAT: runs/ and index/ collapsed in git's sparse index, out of the work tree
is_sparse() {
	(
		cd "$1"
		[ -z "$(git status --porcelain)" ] || fail "$2: git status is not clean: $(git status --porcelain | head -3)"
		[ "$(git write-tree)" = "$(git rev-parse 'HEAD^{tree}')" ] || fail "$2: the index's tree is not HEAD's"
		diff <(git ls-files --sparse -s | awk '{print $1, $2, $4}') \
			<(git ls-tree HEAD | awk '{print $1, $3, $4 ($2 == "tree" ? "/" : "")}') >/dev/null ||
			fail "$2: the index is not HEAD's top-level tree with runs/ and index/ collapsed"
		[ ! -e runs ] && [ ! -e index ] || fail "$2: runs/ or index/ in the work tree"
	)
}
is_sparse "$T/ci1" "the first run's checkout"
is_sparse "$T/ci2" "the second run's checkout"
# a second run on top, in the same checkout: init --sparse again, add, push
run_action ci2b INPUT_REPOSITORY="$T/ci2" INPUT_SPARSE=true INPUT_SESSION="$T/s2.pyisession" \
	INPUT_COMMIT=$SHA2 INPUT_TRIGGER=manual
[ "$(cat "$T/ci2b.status")" = 0 ] || { cat "$T/ci2b.err" >&2; fail "a second run in the same checkout exited $(cat "$T/ci2b.status")"; }
grep -q "^sparse: *already" "$T/ci2b.err" || fail "the second run's init: $(grep '^sparse' "$T/ci2b.err")"
[ "$(out ci2b pushed)" = true ] || fail "the second run in the same checkout was not pushed"
is_sparse "$T/ci2" "after a second run in the same checkout"
git -C "$T/ci2" fetch -q origin main && [ "$(git -C "$T/ci2" rev-parse FETCH_HEAD)" = "$(git -C "$T/ci2" rev-parse HEAD)" ] ||
	fail "the second run's commit is not the remote's main"
pass "the checkout is made sparse (runs/, index/ collapsed, status clean); a second run on top works"

# --- 3: a regression ----------------------------------------------------------------
job ci3 INPUT_SESSION="$T/s3.pyisession" INPUT_COMMIT=$SHA3 INPUT_TRIGGER=nightly INPUT_STATS="$T/stats.json"
[ "$(cat "$T/ci3.status")" = 1 ] || { cat "$T/ci3.err" >&2; fail "a regression should exit 1, got $(cat "$T/ci3.status")"; }
[ "$(out ci3 verdict)" = regression ] || fail "third verdict '$(out ci3 verdict)', want regression"
case "$(out ci3 run-id)" in 20*-nightly-3333333) ;; *) fail "run-id output on a regression: $(out ci3 run-id)" ;; esac
grep -q "validate_households" "$T/ci3.summary" || fail "summary does not name the new function"
git --git-dir="$T/origin.git" show --name-only --format= main | grep -q "3333333/run.json" ||
	fail "a regressed run is recorded and pushed all the same"
job ci4 INPUT_SESSION="$T/s3.pyisession" INPUT_COMMIT=$SHA3 INPUT_TRIGGER=nightly INPUT_FAIL_ON_REGRESSION=false
[ "$(cat "$T/ci4.status")" = 0 ] || { cat "$T/ci4.err" >&2; fail "fail-on-regression false should exit 0"; }
[ -d "$T/ci4/runs" ] && ! git -C "$T/ci4" ls-files --sparse | grep -qx 'runs/' ||
	fail "without the input sparse (default false) the checkout was made sparse"
pass "a regression: verdict regression, exit 1 (0 with fail-on-regression false), run pushed"

# --- the session went through lfs-agent into the store --------------------------------
git clone -q "$T/origin.git" "$T/dev" 2>/dev/null
cd "$T/dev"
results init >/dev/null
fetched=$(results fetch "$SHA1" -o "$T/fetched" | tail -1)
cmp "$T/s1.pyisession" "$fetched" || fail "run 1's session fetched from the store differs"
cd "$T"
pass "a developer clone fetches run 1's session from the store, byte for byte"

# --- the action makes its own clone (input clone), over authenticated HTTP --------------
# git's smart HTTP behind a token check (tests/servers/git-http.py): each
# git call of the step (the clone, the fetches of files the partial clone
# lacks, the push) must carry the token, which must show nowhere (the log,
# the outputs, the summary, the clone's config).
SECRET=tok-$$-s3cr3t
SECRET64=$(printf 'x-access-token:%s' "$SECRET" | base64 -w0)
git -C "$T/origin.git" config uploadpack.allowFilter true
git -C "$T/origin.git" config http.receivepack true
mkdir -p "$T/git-http"
setsid python3 "$SERVERS/git-http.py" "$T" "x-access-token:$SECRET" "$T/git-http" \
	>"$T/git-http/port" 2>"$T/git-http/log" </dev/null &
echo $! >"$T/git-http/pid"
on_exit() { kill "$(cat "$T/git-http/pid")" 2>/dev/null || true; }
for _ in $(seq 100); do grep -q '^PORT=' "$T/git-http/port" && break; sleep 0.1; done
URL="http://127.0.0.1:$(sed -n 's/^PORT=//p' "$T/git-http/port")/origin.git"
[ "$URL" != "http://127.0.0.1:/origin.git" ] || fail "the git HTTP server did not start: $(cat "$T/git-http/log")"
clone_job() { # clone_job NAME FOLDER [VAR=VALUE...]: the action with input clone
	run_action "$1" INPUT_CLONE="$URL" INPUT_CLONE_TOKEN="$SECRET" INPUT_REPOSITORY="$2" \
		INPUT_SESSION="$T/s2.pyisession" INPUT_TRIGGER=nightly "${@:3}"
}
no_secret() { # no_secret WHAT FILE...: the token, plain or in its header, in none of them
	! grep -q -e "$SECRET" -e "$SECRET64" "${@:2}" || fail "$1: the token shows in $(grep -l -e "$SECRET" -e "$SECRET64" "${@:2}")"
}
SHA5=5555555555555555555555555555555555555555
SHA6=6666666666666666666666666666666666666666
clone_job cl1 "$T/cl" INPUT_COMMIT=$SHA5
[ "$(cat "$T/cl1.status")" = 0 ] || { cat "$T/cl1.err" "$T/git-http/log" >&2; fail "the run with input clone exited $(cat "$T/cl1.status")"; }
[ "$(out cl1 pushed)" = true ] || fail "the run with input clone was not pushed"
[ "$(git --git-dir="$T/origin.git" rev-parse main)" = "$(git -C "$T/cl" rev-parse HEAD)" ] ||
	fail "the remote's main is not the clone's new commit"
git --git-dir="$T/origin.git" show --name-only --format= main | grep -q "5555555/run.json" || fail "run 5 not pushed"
[ -n "$(out cl1 baseline)" ] || fail "no baseline: the check did not read the earlier runs ($(out cl1 verdict))"
[ "$(git -C "$T/cl" rev-parse --is-shallow-repository)" = true ] || fail "the action's clone is not shallow"
is_sparse "$T/cl" "the action's own clone"
[ ! -s "$T/git-http/denied" ] || fail "git calls without the token: $(sort -u "$T/git-http/denied" | head -3)"
no_secret "the run with input clone" "$T/cl1.out" "$T/cl1.err" "$T/cl1.output" "$T/cl1.summary" "$T/cl/.git/config"
pass "input clone: results clone over authenticated HTTP (shallow, sparse), recorded, checked, pushed; the token never written"

# a clone kept from an earlier job, after another job pushed: brought to the tip, the run on top
job ci6 INPUT_SESSION="$T/s2.pyisession" INPUT_COMMIT=$SHA6 INPUT_TRIGGER=manual
[ "$(cat "$T/ci6.status")" = 0 ] || { cat "$T/ci6.err" >&2; fail "the job between the two clone runs exited $(cat "$T/ci6.status")"; }
clone_job cl2 "$T/cl" INPUT_COMMIT=$SHA5 INPUT_TRIGGER=manual
[ "$(cat "$T/cl2.status")" = 0 ] || { cat "$T/cl2.err" >&2; fail "the second run in the kept clone exited $(cat "$T/cl2.status")"; }
grep -q "bringing the clone in '$T/cl' to the tip of 'main'" "$T/cl2.err" || fail "the kept clone was not reused: $(cat "$T/cl2.err")"
[ "$(git --git-dir="$T/origin.git" rev-parse main)" = "$(git -C "$T/cl" rev-parse HEAD)" ] &&
	[ "$(git -C "$T/cl" rev-parse HEAD~1)" = "$(git --git-dir="$T/origin.git" rev-parse main~1)" ] &&
	git --git-dir="$T/origin.git" show --name-only --format= main~1 | grep -q "6666666/run.json" ||
	fail "the second run is not on top of the other job's"
is_sparse "$T/cl" "the kept clone after its second run"
[ ! -s "$T/git-http/denied" ] || fail "git calls without the token: $(sort -u "$T/git-http/denied" | head -3)"
pass "input clone: a clone kept from an earlier job is brought to the remote's tip and the run goes on top"

# the kept clone asked for another branch: that branch is checked out at its tip, main left alone
git --git-dir="$T/origin.git" branch other main~1
main_before=$(git --git-dir="$T/origin.git" rev-parse main)
clone_job cl5 "$T/cl" INPUT_COMMIT=$SHA6 INPUT_CLONE_BRANCH=other
[ "$(cat "$T/cl5.status")" = 0 ] || { cat "$T/cl5.err" >&2; fail "the kept clone on branch other exited $(cat "$T/cl5.status")"; }
[ "$(git --git-dir="$T/origin.git" rev-parse main)" = "$main_before" ] || fail "a run for branch other moved main"
[ "$(git -C "$T/cl" symbolic-ref --short HEAD)" = other ] &&
	[ "$(git --git-dir="$T/origin.git" rev-parse other)" = "$(git -C "$T/cl" rev-parse HEAD)" ] &&
	[ "$(git --git-dir="$T/origin.git" rev-parse other~1)" = "$(git --git-dir="$T/origin.git" rev-parse main~1)" ] ||
	fail "the run is not on top of branch other"
pass "input clone-branch: the kept clone checks that branch out at its tip and records there, main untouched"

# without the token the host refuses, and the step says so
clone_job cl3 "$T/cl3" INPUT_COMMIT=$SHA5 INPUT_CLONE_TOKEN= INPUT_TOKEN= GITHUB_TOKEN=
[ "$(cat "$T/cl3.status")" = 5 ] && grep -q "results clone of '$URL' failed" "$T/cl3.err" ||
	fail "a clone without the token: exit $(cat "$T/cl3.status"): $(cat "$T/cl3.err")"
[ -s "$T/git-http/denied" ] || fail "the server saw no request without the token"
mkdir -p "$T/full" && echo x >"$T/full/file"
clone_job cl4 "$T/full" INPUT_COMMIT=$SHA5
[ "$(cat "$T/cl4.status")" = 2 ] && grep -q "'$T/full' holds other files" "$T/cl4.err" ||
	fail "clone into a folder of other files: exit $(cat "$T/cl4.status"): $(cat "$T/cl4.err")"
job bad6 INPUT_SESSION="$T/s1.pyisession" INPUT_COMMIT=$SHA1 INPUT_CLONE=-upload-pack=evil
[ "$(cat "$T/bad6.status")" = 2 ] && grep -q "the input 'clone' must be a git URL" "$T/bad6.err" ||
	fail "an option as the clone URL: $(cat "$T/bad6.err")"
pass "input clone: refused without the token (exit 5), into a folder of other files and for a non-URL (exit 2)"

# --- bad inputs ------------------------------------------------------------------------
job bad1 INPUT_COMMIT=$SHA1
[ "$(cat "$T/bad1.status")" = 2 ] && grep -q "the input 'session' is required" "$T/bad1.err" ||
	fail "no session: $(cat "$T/bad1.status") $(cat "$T/bad1.err")"
job bad2 INPUT_SESSION="$T/nope.pyisession" INPUT_COMMIT=$SHA1
[ "$(cat "$T/bad2.status")" = 2 ] && grep -q "session '$T/nope.pyisession' does not exist" "$T/bad2.err" ||
	fail "missing session: $(cat "$T/bad2.err")"
job bad3 INPUT_SESSION="$T/s1.pyisession" INPUT_COMMIT=$SHA1 INPUT_PUSH=maybe
[ "$(cat "$T/bad3.status")" = 2 ] && grep -q "'push' must be true or false" "$T/bad3.err" || fail "bad push input"
job bad5 INPUT_SESSION="$T/s1.pyisession" INPUT_COMMIT=$SHA1 INPUT_SPARSE=yes
[ "$(cat "$T/bad5.status")" = 2 ] && grep -q "'sparse' must be true or false" "$T/bad5.err" || fail "bad sparse input"
job bad4 INPUT_SESSION="$T/s1.pyisession" INPUT_COMMIT=$SHA1 INPUT_PACKAGE="$T/nope.deb"
[ "$(cat "$T/bad4.status")" = 2 ] && grep -q "package '$T/nope.deb' does not exist" "$T/bad4.err" || fail "bad package"
[ ! -s "$T/bad1.output" ] && [ ! -s "$T/bad4.output" ] || fail "a refused input wrote outputs"
pass "bad inputs exit 2 naming the input, and write no output"
echo "all github action tests passed"
