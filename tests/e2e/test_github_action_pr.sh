#!/usr/bin/env bash
# The GitHub Action on pull requests and busy repositories
# (docs/github-action/run.sh), against a fake GitHub REST API on loopback
# that records every request (tests/servers/fake-github.js):
#  - a pull-request run is recorded on the pull request's branch and judged
#    against the merge base with main, not against the newest run on main,
#    found with `results list --first-profiled` (the commit map), never by
#    listing every run; without the profiled repository, against the base
#    commit when it is profiled, and against the branch's own runs when not;
#  - it posts ONE comment with the verdict and the report, authenticated,
#    found again (past a page of other comments) and updated in place by
#    the next run, also from a "/profile" comment event;
#  - the second run in the same checkout works (git-lfs's hook clash);
#  - a push rejected because another job pushed first is redone on top,
#    bounded, and a push still rejected exits 10 with its own output;
#  - the meta (accept=...), branch and message inputs reach the run;
#  - action.yml and the example workflow of docs/regressions.md pass a
#    GitHub workflow validator (which rejects a broken one).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_github_action_pr

ACTION=$RS_SOURCE_DIR/docs/github-action/run.sh
VALIDATOR=$RS_SOURCE_DIR/tests/tools/node_modules/.bin/action-validator
command -v jq >/dev/null || fail "jq is needed (scripts/install-deps.sh)"
mkdir -p "$T/bin"
# results as the action calls it, each call logged (what the pull-request path asks)
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"%s/calls"\nexec "%s" "$@"\n' "$T" "$RESULTS" >"$T/bin/results"
chmod +x "$T/bin/results"
ln -s "$AGENT" "$T/bin/lfs-agent"
export PATH="$T/bin:$PATH"

# --- validation of the workflow files -----------------------------------------------
[ -x "$VALIDATOR" ] || fail "no $VALIDATOR: run scripts/install-deps.sh (npm ci in tests/tools)"
"$VALIDATOR" "$RS_SOURCE_DIR/docs/github-action/action.yml" >"$T/v.out" 2>&1 ||
	fail "action.yml does not validate: $(cat "$T/v.out")"
mkdir -p "$T/wf"
awk '/^## GitHub Actions: profile, record, check, report/ { s = 1 }
     s && /^```yaml$/ { on = 1; next }
     on && /^```$/ { exit }
     on { print }' "$RS_SOURCE_DIR/docs/regressions.md" >"$T/wf/profile.yml"
grep -q 'issue_comment' "$T/wf/profile.yml" && grep -q 'schedule' "$T/wf/profile.yml" &&
	grep -q 'workflow_dispatch' "$T/wf/profile.yml" || fail "the example workflow was not found in docs/regressions.md"
"$VALIDATOR" "$T/wf/profile.yml" >"$T/v.out" 2>&1 || fail "the example workflow does not validate: $(cat "$T/v.out")"
sed 's/^    runs-on:/    runs-onn:/' "$T/wf/profile.yml" >"$T/wf/broken.yml"
! "$VALIDATOR" "$T/wf/broken.yml" >/dev/null 2>&1 || fail "the validator accepts a broken workflow"
pass "action.yml and the example workflow validate; a broken one does not"

# --- the model: main A -> B, a pull request branch F from A ---------------------------
git init -q "$T/model"
cd "$T/model"
git commit -q --allow-empty -m A && A=$(git rev-parse HEAD)
git commit -q --allow-empty -m B && B=$(git rev-parse HEAD)
git checkout -q -b feature "$A"
git commit -q --allow-empty -m F && F=$(git rev-parse HEAD)
cd "$T"
# A and F are alike; B (newest on main) is much faster: judged against B the
# pull request would look like a regression, against its merge base A it does not
gen --seed 1 --population 100 --months 1 --new-function "validate_households:0.30" -o "$T/sA.pyisession"
gen --seed 1 --population 100 --months 1 -o "$T/sB.pyisession"
gen --seed 1 --population 100 --months 1 --variant next --new-function "validate_households:0.30" -o "$T/sF.pyisession"
git init -q --bare "$T/origin.git"

job() { # job DIR NAME [VAR=VALUE...]: the action in DIR (cloned if new)
	local dir=$1 name=$2 st=0
	shift 2
	[ -d "$T/$dir" ] || git clone -q "$T/origin.git" "$T/$dir" 2>/dev/null
	: >"$T/$name.output"
	: >"$T/$name.summary"
	env GITHUB_OUTPUT="$T/$name.output" GITHUB_STEP_SUMMARY="$T/$name.summary" \
		INPUT_REPOSITORY="$T/$dir" "$@" bash "$ACTION" >"$T/$name.out" 2>"$T/$name.err" || st=$?
	echo "$st" >"$T/$name.status"
}
out() { sed -n "s/^$2=//p" "$T/$1.output"; }
status_is() { [ "$(cat "$T/$1.status")" = "$2" ] || { cat "$T/$1.err" >&2; fail "$1 exited $(cat "$T/$1.status"), want $2"; }; }

job main1 m1 INPUT_SESSION="$T/sA.pyisession" INPUT_COMMIT="$A" INPUT_TRIGGER=ci INPUT_BRANCH=main \
	INPUT_REMOTE="file://$T/store"
status_is m1 0
job main2 m2 INPUT_SESSION="$T/sB.pyisession" INPUT_COMMIT="$B" INPUT_TRIGGER=ci INPUT_BRANCH=main
status_is m2 0

# --- a pull request ------------------------------------------------------------------
TOKEN=ghs_fake_$RANDOM$RANDOM$RANDOM
cat >"$T/pulls.json" <<JSON
{"7": {"number": 7, "base": {"ref": "main", "sha": "$B"}, "head": {"ref": "feature", "sha": "$F"}}}
JSON
on_exit() { bash "$SERVERS/fake-github.sh" stop "$T/gh" || true; }
url=$(bash "$SERVERS/fake-github.sh" start "$T/gh" --token "$TOKEN" --pulls "$T/pulls.json" --comments 150 | sed -n 's/^RS_GITHUB_URL=//p')
[ -n "$url" ] || fail "the fake GitHub API did not start"
LOG=$T/gh/github.log
cat >"$T/event.json" <<JSON
{"action": "synchronize", "number": 7,
 "pull_request": {"number": 7, "base": {"ref": "main", "sha": "$B"}, "head": {"ref": "feature", "sha": "$F"}}}
JSON
git -C "$T/model" checkout -q feature
PRENV=(GITHUB_EVENT_NAME=pull_request GITHUB_EVENT_PATH="$T/event.json" GITHUB_REPOSITORY=org/model
	GITHUB_API_URL="$url" GITHUB_TOKEN="$TOKEN" GITHUB_HEAD_REF=feature GITHUB_REF_NAME=7/merge)
: >"$T/calls"
job pr pr1 "${PRENV[@]}" INPUT_SESSION="$T/sF.pyisession" INPUT_PROFILED_REPOSITORY="$T/model" INPUT_TRIGGER=pr
status_is pr1 0
grep -q '^list --first-profiled ' "$T/calls" || fail "the nearest profiled commit was not asked of list --first-profiled: $(cat "$T/calls")"
grep -q -- '--limit 0' "$T/calls" && fail "the pull-request path listed every run: $(cat "$T/calls")"
grep -q "^check .* --baseline $A" "$T/calls" || fail "check was not given the merge base: $(cat "$T/calls")"
[ "$(out pr1 baseline)" = "$A" ] || fail "baseline '$(out pr1 baseline)', want the merge base A $A (not B $B)"
[ "$(out pr1 verdict)" = pass ] || fail "verdict against the merge base: '$(out pr1 verdict)'"
run=$(out pr1 run-id)
case $run in *-pr-"${F:0:7}") ;; *) fail "the pull request's run id '$run' is not of commit F" ;; esac
rj=$(git --git-dir="$T/origin.git" show --name-only --format= main | grep "/run.json$")
git --git-dir="$T/origin.git" show "main:$rj" >"$T/pr1.json"
jq -e '.branch == "feature"' "$T/pr1.json" >/dev/null || fail "the run was not recorded on the pull request's branch"
grep -q "merge base" "$T/pr1.summary" || fail "the summary does not say what the run was judged against"
[ "$(out pr1 comment)" = created ] || fail "comment output '$(out pr1 comment)': $(cat "$T/pr1.err")"
[ "$(jq -s '[.[] | select(.method == "POST")] | length' "$LOG")" = 1 ] || fail "not exactly one comment created: $(cat "$LOG")"
jq -s -e 'all(.[]; .authorised)' "$LOG" >/dev/null || fail "a request without the token: $(jq -c 'select(.authorised | not)' "$LOG")"
post=$(jq -s -r '[.[] | select(.method == "POST")][0]' "$LOG")
[ "$(jq -r .path <<<"$post")" = /repos/org/model/issues/7/comments ] || fail "comment posted to $(jq -r .path <<<"$post")"
body=$(jq -r .body.body <<<"$post")
grep -q "Profiling: pass" <<<"$body" || fail "the comment lacks the verdict"
grep -q "results-action: profiling report" <<<"$body" || fail "the comment lacks its marker"
grep -q "${A:0:7}" <<<"$body" || fail "the comment does not name the baseline"
! grep -rqF "$TOKEN" "$T/pr1.out" "$T/pr1.err" "$T/pr1.summary" "$T/pr1.output" || fail "the token was printed"
pass "pull request: recorded on its branch, judged against the merge base, one authenticated comment"

# the next run, in the SAME checkout: comment found past 150 others, updated in place
: >"$LOG"
job pr pr2 "${PRENV[@]}" INPUT_SESSION="$T/sF.pyisession" INPUT_PROFILED_REPOSITORY="$T/model" INPUT_TRIGGER=pr
status_is pr2 0
grep -q "Hook already exists" "$T/pr2.err" && fail "the second run in one checkout hit git-lfs's hook clash"
[ "$(out pr2 comment)" = updated ] || fail "second comment output '$(out pr2 comment)': $(cat "$T/pr2.err")"
[ "$(jq -s '[.[] | select(.method == "POST")] | length' "$LOG")" = 0 ] || fail "a second comment was created"
[ "$(jq -s '[.[] | select(.method == "PATCH")] | length' "$LOG")" = 1 ] || fail "the comment was not updated once"
[ "$(jq -s '[.[] | select(.method == "GET" and .query.page == "2")] | length' "$LOG")" = 1 ] ||
	fail "the comment list was not paged: $(jq -c '.query' "$LOG")"
pass "pull request, second run in the same checkout: the one comment updated in place"

# a "/profile" comment on the pull request: the API names its head and base
cat >"$T/comment-event.json" <<JSON
{"action": "created", "issue": {"number": 7, "pull_request": {"url": "x"}}, "comment": {"body": "/profile"}}
JSON
: >"$LOG"
job pr pr3 GITHUB_EVENT_NAME=issue_comment GITHUB_EVENT_PATH="$T/comment-event.json" GITHUB_REPOSITORY=org/model \
	GITHUB_API_URL="$url" GITHUB_TOKEN="$TOKEN" GITHUB_SHA="$B" GITHUB_REF_NAME=main \
	INPUT_SESSION="$T/sF.pyisession" INPUT_TRIGGER=comment INPUT_PROFILED_REPOSITORY="$T/model"
status_is pr3 0
[ "$(out pr3 baseline)" = "$A" ] || fail "/profile: baseline '$(out pr3 baseline)', want A"
jq -s -e '[.[] | select(.method == "GET" and .path == "/repos/org/model/pulls/7")] | length == 1' "$LOG" >/dev/null ||
	fail "/profile: the pull request was not read from the API"
[ "$(out pr3 comment)" = updated ] || fail "/profile: comment '$(out pr3 comment)'"
case $(out pr3 run-id) in *-comment-"${F:0:7}") ;; *) fail "/profile recorded $(out pr3 run-id), not the head F" ;; esac
pass "a /profile comment: the pull request's head profiled, the same comment updated"

# a wrong token: the comment fails visibly, the run is still recorded and checked
job pr pr4 "${PRENV[@]}" GITHUB_TOKEN=wrong INPUT_SESSION="$T/sF.pyisession" INPUT_PROFILED_REPOSITORY="$T/model" INPUT_TRIGGER=pr
status_is pr4 0
[ "$(out pr4 comment)" = failed ] || fail "a refused token: comment '$(out pr4 comment)'"
grep -q "::warning::" "$T/pr4.out" || fail "no warning for the failed comment"
pass "a refused token: a warning, comment=failed, the run recorded all the same"

# without the profiled repository: the base commit itself when it is profiled (B)
job pr pr5 "${PRENV[@]}" INPUT_SESSION="$T/sF.pyisession" INPUT_TRIGGER=pr INPUT_COMMENT=false \
	INPUT_FAIL_ON_REGRESSION=false
status_is pr5 0
[ "$(out pr5 baseline)" = "$B" ] || fail "without the profiled repository: baseline '$(out pr5 baseline)', want B $B"
# a base commit never profiled: judged against the branch's own runs, and says so
sed "s/$B/$(printf '0%.0s' {1..40})/g" "$T/event.json" >"$T/event-unprofiled.json"
job pr pr6 GITHUB_EVENT_NAME=pull_request GITHUB_EVENT_PATH="$T/event-unprofiled.json" GITHUB_REPOSITORY=org/model \
	GITHUB_API_URL="$url" GITHUB_TOKEN="$TOKEN" GITHUB_HEAD_REF=feature GITHUB_REF_NAME=7/merge \
	INPUT_SESSION="$T/sF.pyisession" INPUT_TRIGGER=pr INPUT_COMMENT=false INPUT_FAIL_ON_REGRESSION=false
status_is pr6 0
grep -q "no profiled commit at or before the merge base" "$T/pr6.summary" ||
	fail "an unprofiled base: $(head -5 "$T/pr6.summary")"
[ "$(out pr6 baseline)" != "$(printf '0%.0s' {1..40})" ] || fail "an unprofiled base was taken as the baseline"
pass "without the profiled repository: the profiled base commit, else the branch's own runs"

# --- inputs: meta (accept included), branch, message -----------------------------------
job main3 m3 INPUT_SESSION="$T/sA.pyisession" INPUT_COMMIT="$A" INPUT_BRANCH=release-1 \
	INPUT_MESSAGE="rerun after the fix" INPUT_META=$'accept=slower on purpose\nowner=model team'
status_is m3 0
rj=$(git --git-dir="$T/origin.git" show --name-only --format= main | grep "/run.json$")
git --git-dir="$T/origin.git" show "main:$rj" >"$T/m3.json"
jq -e '.branch == "release-1" and .message == "rerun after the fix"' "$T/m3.json" >/dev/null ||
	fail "branch/message inputs: $(jq -c '{branch, message}' "$T/m3.json")"
jq -e '.meta.accept == "slower on purpose" and .meta.owner == "model team"' "$T/m3.json" >/dev/null ||
	fail "meta input: $(jq -c .meta "$T/m3.json")"
job main3 bad INPUT_SESSION="$T/sA.pyisession" INPUT_COMMIT="$A" INPUT_META="no equals sign"
status_is bad 2
grep -q "KEY=VALUE" "$T/bad.err" || fail "a bad meta line is not named"
pass "inputs meta (accept), branch and message reach the run; a bad meta line exits 2"

# --- two jobs at once ------------------------------------------------------------------
git clone -q "$T/origin.git" "$T/stale1" 2>/dev/null
git clone -q "$T/origin.git" "$T/stale2" 2>/dev/null
job main4 m4 INPUT_SESSION="$T/sB.pyisession" INPUT_COMMIT="$B" INPUT_BRANCH=main   # pushes first
status_is m4 0
job stale1 s1 INPUT_SESSION="$T/sA.pyisession" INPUT_COMMIT="$A" INPUT_BRANCH=main INPUT_FAIL_ON_REGRESSION=false
status_is s1 0
[ "$(out s1 pushed)" = true ] || fail "a rejected push was not redone"
grep -q "recording again on top" "$T/s1.err" || fail "no word of the retry"
git --git-dir="$T/origin.git" show main:index/"$(date -u +%Y-%m)".jsonl >"$T/index.jsonl"
grep -q "$(out m4 run-id)" "$T/index.jsonl" || fail "the retry lost the other job's run"
grep -q "$(out s1 run-id)" "$T/index.jsonl" || fail "the retried run is not on main"
job stale2 s2 INPUT_SESSION="$T/sA.pyisession" INPUT_COMMIT="$A" INPUT_BRANCH=main INPUT_PUSH_ATTEMPTS=1 INPUT_FAIL_ON_REGRESSION=false
status_is s2 10
[ "$(out s2 pushed)" = false ] || fail "pushed output after a rejected push: '$(out s2 pushed)'"
grep -q "rejected 1 times" "$T/s2.err" || fail "the failed push is not explained: $(cat "$T/s2.err")"
grep -q "not pushed" "$T/s2.summary" || fail "the job summary does not say the run was not pushed"
pass "a push rejected by another job's push: redone on top; still rejected: exit 10, pushed=false"
echo "all pull-request action tests passed"
