#!/usr/bin/env bash
# The GitHub Action's one step (action.yml passes its inputs as INPUT_*):
# install the results package, set up the results repository clone,
# record one profiling run, push it, run the regression check and write
# the check and the comparison with its baseline to the job summary.
#
# Inputs (environment):
#   INPUT_SESSION     session file or run folder to record (required)
#   INPUT_COMMIT      profiled commit, full id (default: $GITHUB_SHA)
#   INPUT_TRIGGER     what started the run (default: ci)
#   INPUT_STATS       a stats JSON file (optional)
#   INPUT_REMOTE      the store URL for `results init --remote` (default:
#                     the one committed in .results.json). Given, the step
#                     fails (exit 2) when .results.json names another store,
#                     naming the commit and author that set it: a pushed
#                     change of remote never redirects the job's sessions
#   INPUT_REPOSITORY  the checked-out results repository (default: .), or
#                     with INPUT_CLONE the folder to clone it into (default:
#                     results-repo)
#   INPUT_CLONE       the results repository's git URL: the action makes the
#                     clone itself with `results clone` (the newest commit,
#                     no run folder in the work tree, git's sparse index: a
#                     few seconds and tens of MB at 100,000 runs, and every
#                     add as fast as at 1,000 runs) instead of using a
#                     checkout. A folder already holding a clone of that URL
#                     (a self-hosted runner's workspace) is brought to the
#                     remote's tip instead. For an http(s) URL the token
#                     (INPUT_CLONE_TOKEN, else INPUT_TOKEN) goes to git as
#                     actions/checkout sends it (an Authorization header for
#                     that host), through git's environment only: it is
#                     neither written to the clone's config nor printed
#   INPUT_CLONE_BRANCH  the results repository's branch to clone (default:
#                     the remote's HEAD)
#   INPUT_CLONE_TOKEN the token to clone and push with (default: INPUT_TOKEN)
#   INPUT_PACKAGE     the .deb to install: a path or an http(s) URL
#                     (default: none; results must then be on PATH)
#   INPUT_SPARSE      `results init --sparse` (default: false): the checkout
#                     gets the work tree and sparse index of `results clone`
#                     (no runs/, no index/), so that the add splices a small
#                     .git/index instead of rewriting one entry per file of
#                     every run; for a checkout kept from job to job (its
#                     run folders are deleted once, which costs what writing
#                     them did). Refused (exit 2) when it has uncommitted changes
#   INPUT_PUSH        push the new run commit (default: true)
#   INPUT_FAIL_ON_REGRESSION  exit 1 when the check finds a regression
#                     (default: true)
#   INPUT_META        KEY=VALUE lines, one `results add --meta` each
#                     (accept=REASON marks an accepted slowdown)
#   INPUT_BRANCH      the profiled branch (default: the pull request's head
#                     branch, else what `results add` guesses)
#   INPUT_MESSAGE     a note kept with the run
#   INPUT_PROFILED_REPOSITORY  the model's checkout: its HEAD is the default
#                     commit, and its history finds a pull request's merge base
#   INPUT_BASELINE    the commit to check against (default on a pull request:
#                     the nearest profiled first-parent ancestor of the merge
#                     base; else `results check`'s own baseline)
#   INPUT_COMMENT     auto (default: on a pull request), true or false: post the
#                     report as one pull-request comment, updated in place
#   INPUT_TOKEN       the token for the comment (default: $GITHUB_TOKEN)
#   INPUT_PULL_REQUEST  the pull request's number (default: from the event)
#   INPUT_PUSH_ATTEMPTS  how often a rejected push is redone on top of the
#                     remote's new state (default 5, 1 to 20)
# Outputs (appended to $GITHUB_OUTPUT): run-id, verdict (pass, regression
# or no-baseline), baseline (the baseline commit, if any), pushed (true or
# false), comment (created, updated, failed or none).
# Markdown appended to $GITHUB_STEP_SUMMARY.
# Exit status: 0 recorded (and no regression), 1 regression, 2 bad input,
# 10 the push was still rejected after every attempt (another job kept
# pushing first: nothing is lost, run the job again), else the status of
# the results command that failed (docs/cli.md).
set -euo pipefail

say() { echo "results-action: $*" >&2; }
die() { say "$2"; exit "$1"; }

SESSION=${INPUT_SESSION:-}
COMMIT=${INPUT_COMMIT:-}
TRIGGER=${INPUT_TRIGGER:-ci}
STATS=${INPUT_STATS:-}
REMOTE=${INPUT_REMOTE:-}
CLONE=${INPUT_CLONE:-}
CLONE_BRANCH=${INPUT_CLONE_BRANCH:-}
REPOSITORY=${INPUT_REPOSITORY:-}
[ -n "$REPOSITORY" ] || { [ -n "$CLONE" ] && REPOSITORY=results-repo; } || REPOSITORY=.
PACKAGE=${INPUT_PACKAGE:-}
SPARSE=${INPUT_SPARSE:-false}
PUSH=${INPUT_PUSH:-true}
FAIL_ON_REGRESSION=${INPUT_FAIL_ON_REGRESSION:-true}
META=${INPUT_META:-}
BRANCH=${INPUT_BRANCH:-}
MESSAGE=${INPUT_MESSAGE:-}
PROFILED=${INPUT_PROFILED_REPOSITORY:-}
BASELINE=${INPUT_BASELINE:-}
COMMENT=${INPUT_COMMENT:-auto}
TOKEN=${INPUT_TOKEN:-${GITHUB_TOKEN:-}}
CLONE_TOKEN=${INPUT_CLONE_TOKEN:-$TOKEN}
PR=${INPUT_PULL_REQUEST:-}
ATTEMPTS=${INPUT_PUSH_ATTEMPTS:-5}
API=${GITHUB_API_URL:-https://api.github.com}
OUT=${GITHUB_OUTPUT:-/dev/null}
SUMMARY=${GITHUB_STEP_SUMMARY:-/dev/null}

[ -n "$SESSION" ] || die 2 "the input 'session' is required (a .pyisession file or a run folder)"
[ -e "$SESSION" ] || die 2 "session '$SESSION' does not exist"
[ -z "$STATS" ] || [ -f "$STATS" ] || die 2 "stats file '$STATS' does not exist"
case $PUSH in true | false) ;; *) die 2 "the input 'push' must be true or false, not '$PUSH'" ;; esac
case $SPARSE in true | false) ;; *) die 2 "the input 'sparse' must be true or false, not '$SPARSE'" ;; esac
case $FAIL_ON_REGRESSION in true | false) ;;
*) die 2 "the input 'fail-on-regression' must be true or false, not '$FAIL_ON_REGRESSION'" ;;
esac
case $COMMENT in auto | true | false) ;; *) die 2 "the input 'comment' must be auto, true or false, not '$COMMENT'" ;; esac
case $ATTEMPTS in [1-9] | 1[0-9] | 20) ;; *) die 2 "the input 'push-attempts' must be 1 to 20, not '$ATTEMPTS'" ;; esac
case $PR in '' | [1-9] | [1-9][0-9]*) ;; *) die 2 "the input 'pull-request' must be a number, not '$PR'" ;; esac
case $CLONE in
'' | https://?* | http://?* | ssh://?* | file://?* | git@?*:?* | /?*) ;;
*) die 2 "the input 'clone' must be a git URL (https://, ssh://, git@host:path, file:// or a path), not '$CLONE'" ;;
esac
[ -n "$CLONE" ] || [ -z "$CLONE_BRANCH" ] || die 2 "the input 'clone-branch' needs the input 'clone'"
case $CLONE_BRANCH in -*) die 2 "the input 'clone-branch' must be a branch name, not '$CLONE_BRANCH'" ;; esac
[ -z "$PROFILED" ] || git -C "$PROFILED" rev-parse -q --verify HEAD >/dev/null ||
	die 2 "the input 'profiled-repository' ('$PROFILED') is not a git checkout"
while IFS= read -r line; do
	[ -z "$line" ] || [[ $line == *=* ]] || die 2 "the input 'meta' takes KEY=VALUE lines, not '$line'"
done <<<"$META"
# paths given relative to the workspace stay valid after the cd below
SESSION=$(realpath "$SESSION")
[ -z "$STATS" ] || STATS=$(realpath "$STATS")
[ -z "$PROFILED" ] || PROFILED=$(realpath "$PROFILED")

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# --- the pull request, if any ---------------------------------------------------
# A pull_request event names it; an issue_comment on a pull request (a
# "/profile" comment) names the issue, and the API says the rest.
event_json() { [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -r "$GITHUB_EVENT_PATH" ] && command -v jq >/dev/null; }
if [ -z "$PR" ] && event_json; then
	PR=$(jq -r '.pull_request.number // (if .issue.pull_request then .issue.number else empty end) // empty' \
		"$GITHUB_EVENT_PATH")
fi
api_headers() { # the token goes in a file, never on a command line
	umask 077
	printf 'Authorization: Bearer %s\nAccept: application/vnd.github+json\nX-GitHub-Api-Version: 2022-11-28\nContent-Type: application/json\n' \
		"$TOKEN" >"$W/headers"
}
api() { # api METHOD PATH [JSON-FILE]: the answer's body on stdout, headers in $W/api.head
	curl -sS --fail-with-body --max-time 30 --retry 2 -D "$W/api.head" -X "$1" -H @"$W/headers" \
		${3:+--data-binary @"$3"} "$API$2"
}
PR_BASE= PR_HEAD_REF= PR_HEAD_SHA=
if [ -n "$PR" ]; then
	command -v jq >/dev/null || die 2 "a pull-request run needs jq (to read the event and the API)"
	if event_json && [ "$(jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH")" = "$PR" ]; then
		PR_BASE=$(jq -r '.pull_request.base.sha // empty' "$GITHUB_EVENT_PATH")
		PR_HEAD_REF=$(jq -r '.pull_request.head.ref // empty' "$GITHUB_EVENT_PATH")
		PR_HEAD_SHA=$(jq -r '.pull_request.head.sha // empty' "$GITHUB_EVENT_PATH")
	elif [ -n "$TOKEN" ] && [ -n "${GITHUB_REPOSITORY:-}" ]; then
		api_headers
		api GET "/repos/$GITHUB_REPOSITORY/pulls/$PR" >"$W/pull.json" ||
			die 5 "cannot read pull request #$PR from $API: $(cat "$W/pull.json")"
		PR_BASE=$(jq -r '.base.sha // empty' "$W/pull.json")
		PR_HEAD_REF=$(jq -r '.head.ref // empty' "$W/pull.json")
		PR_HEAD_SHA=$(jq -r '.head.sha // empty' "$W/pull.json")
	fi
fi
[ -n "$BRANCH" ] || BRANCH=$PR_HEAD_REF
if [ -z "$COMMIT" ]; then
	if [ -n "$PROFILED" ]; then
		COMMIT=$(git -C "$PROFILED" rev-parse HEAD)
	else
		COMMIT=${PR_HEAD_SHA:-${GITHUB_SHA:-}}
	fi
fi
[ -n "$COMMIT" ] || die 2 "the input 'commit' is required (or GITHUB_SHA, or 'profiled-repository')"

# --- install ----------------------------------------------------------------
if [ -n "$PACKAGE" ]; then
	SUDO=
	[ "$(id -u)" = 0 ] || SUDO=sudo
	case $PACKAGE in
	http://* | https://*)
		deb=$(mktemp -d)/results.deb
		say "downloading $PACKAGE"
		curl -fsSL --retry 3 --max-time 300 -o "$deb" "$PACKAGE" ||
			die 5 "cannot download the package from '$PACKAGE'"
		;;
	*)
		[ -f "$PACKAGE" ] || die 2 "package '$PACKAGE' does not exist"
		deb=$(realpath "$PACKAGE")
		;;
	esac
	# apt resolves the package's dependencies (git, git-lfs, the libraries)
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >/dev/null ||
		{ $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >/dev/null; } ||
		die 8 "cannot install '$PACKAGE' with apt-get"
fi
command -v results >/dev/null || die 2 "no 'results' on PATH: give the input 'package' (a .deb path or URL)"
say "using $(command -v results) ($(results --version))"

# --- the clone, when the action makes it ------------------------------------------
# The token reaches git as actions/checkout gives it (an Authorization
# header for the URL's host), but through git's environment
# (GIT_CONFIG_COUNT, git 2.31), which every git this step runs inherits,
# results' own fetches of files the partial clone lacks included: it is
# never on a command line, in the clone's config or in the log.
clone_auth() {
	local origin n
	origin=$(printf '%s\n' "$CLONE" | sed -n 's#^\(https\{0,1\}://[^/@]*\)/.*#\1#p')
	[ -n "$origin" ] && [ -n "$CLONE_TOKEN" ] || return 0
	n=${GIT_CONFIG_COUNT:-0}
	case $n in [0-9] | [1-9][0-9]) ;; *) die 2 "GIT_CONFIG_COUNT is '$n', not a count" ;; esac
	export "GIT_CONFIG_KEY_$n=http.$origin/.extraheader"
	export "GIT_CONFIG_VALUE_$n=AUTHORIZATION: basic $(printf 'x-access-token:%s' "$CLONE_TOKEN" | base64 -w0)"
	export GIT_CONFIG_COUNT=$((n + 1))
}
if [ -n "$CLONE" ]; then
	clone_auth
	if [ -d "$REPOSITORY/.git" ] && [ "$(git -C "$REPOSITORY" config remote.origin.url)" = "$CLONE" ]; then
		# kept from an earlier job: the branch at the remote's tip, checked out
		# (what an earlier job left in the work tree goes, as the push's retry's
		# reset does)
		b=${CLONE_BRANCH:-$(git -C "$REPOSITORY" symbolic-ref --short -q HEAD)} ||
			die 8 "the clone in '$REPOSITORY' is not on a branch"
		say "bringing the clone in '$REPOSITORY' to the tip of '$b'"
		git -C "$REPOSITORY" fetch -q origin "$b" && git -C "$REPOSITORY" checkout -q -f -B "$b" FETCH_HEAD ||
			die 5 "cannot fetch '$b' from '$CLONE' into '$REPOSITORY'"
	elif [ -e "$REPOSITORY" ] && [ -n "$(ls -A "$REPOSITORY")" ]; then
		die 2 "the input 'clone' needs an empty folder or a clone of '$CLONE': '$REPOSITORY' holds other files"
	else
		clone_args=()
		[ -z "$CLONE_BRANCH" ] || clone_args+=(--branch "$CLONE_BRANCH")
		[ -z "$REMOTE" ] || clone_args+=(--remote "$REMOTE")
		results clone "${clone_args[@]}" "$CLONE" "$REPOSITORY" >&2 ||
			die $? "results clone of '$CLONE' failed (exit $?)"
	fi
fi

# --- set up the clone ---------------------------------------------------------
cd "$REPOSITORY" || die 2 "cannot enter the results repository '$REPOSITORY'"
git config user.name >/dev/null || git config user.name "github-actions[bot]"
git config user.email >/dev/null ||
	git config user.email "41898282+github-actions[bot]@users.noreply.github.com"
# the LFS filters for this clone; not its hooks: `results init` installs
# its own pre-push hook, and git-lfs refuses to overwrite it on a second
# run in the same checkout ("Hook already exists: pre-push")
git lfs install --local --skip-repo >/dev/null
init_args=()
[ -z "$REMOTE" ] || init_args+=(--remote "$REMOTE")
[ "$SPARSE" = false ] || init_args+=(--sparse)
results init "${init_args[@]}" >&2

# --- record -------------------------------------------------------------------
args=("$SESSION" --commit "$COMMIT" --trigger "$TRIGGER")
[ -z "$STATS" ] || args+=(--stats "$STATS")
[ -z "$BRANCH" ] || args+=(--branch "$BRANCH")
[ -z "$MESSAGE" ] || args+=(--message "$MESSAGE")
while IFS= read -r line; do
	[ -z "$line" ] || args+=(--meta "$line")
done <<<"$META"
record() { # sets run_id
	local added
	added=$(results add "${args[@]}") || die $? "results add failed (exit $?)"
	echo "$added" >&2
	run_id=$(printf '%s\n' "$added" | sed -n 's/^recorded run \([^ ]*\) .*/\1/p' | head -1)
	[ -n "$run_id" ] || die 8 "results add did not name the recorded run: $added"
}
# Two jobs at once: the second push is refused as non-fast-forward. Then
# start again from the remote's state and record once more (the session is
# still in .git/lfs/objects), a bounded number of times.
push_run() {
	local branch attempt=1
	branch=$(git symbolic-ref --short -q HEAD) || die 8 "the results repository is not on a branch"
	while :; do
		if git push -q origin "HEAD:refs/heads/$branch" 2>"$W/push.err"; then
			cat "$W/push.err" >&2
			return 0
		fi
		cat "$W/push.err" >&2
		grep -qE 'non-fast-forward|fetch first|\[rejected\]|failed to update ref|cannot lock ref' "$W/push.err" ||
			die 8 "git push failed (not because another job pushed first): $(tail -n 3 "$W/push.err")"
		[ "$attempt" -lt "$ATTEMPTS" ] || return 1
		attempt=$((attempt + 1))
		say "the push was rejected: another job pushed first; recording again on top (attempt $attempt of $ATTEMPTS)"
		sleep "$attempt"
		git fetch -q origin "$branch" && git reset -q --hard FETCH_HEAD ||
			die 8 "cannot fetch '$branch' to record again on top of it"
		record
	done
}
record
if [ "$PUSH" = true ]; then
	if ! push_run; then
		{
			echo "run-id=$run_id"
			echo "pushed=false"
			echo "comment=none"
		} >>"$OUT"
		echo "**results**: the run was recorded but not pushed: the push was rejected $ATTEMPTS times (other jobs kept pushing first). Nothing is lost; run the job again." >>"$SUMMARY"
		die 10 "the push was rejected $ATTEMPTS times (other jobs kept pushing first); run the job again"
	fi
	printf 'run-id=%s\npushed=true\n' "$run_id" >>"$OUT"
else
	printf 'run-id=%s\npushed=false\n' "$run_id" >>"$OUT"
fi

# A pull request is judged against its merge base with the base branch, not
# against the newest run there (which may hold commits the pull request
# does not): the nearest profiled commit on the first-parent line of the
# merge base, as the profiled repository's history says. `results list
# --first-profiled` answers through the index's commit map, reading the
# map's buckets of those commits, not every shard of the history.
nearest_profiled() { # nearest_profiled COMMIT: a profiled commit, or nothing
	if [ -n "$PROFILED" ] && git -C "$PROFILED" cat-file -e "$1^{commit}" 2>/dev/null; then
		git -C "$PROFILED" rev-list --first-parent --max-count=500 "$1" >"$W/candidates" ||
			die 8 "git rev-list of $1 in the profiled repository failed"
	else
		printf '%s\n' "$1" >"$W/candidates"
	fi
	results list --first-profiled "$W/candidates" || die $? "results list --first-profiled failed (exit $?)"
}
BASE_NOTE=
if [ -z "$BASELINE" ] && [ -n "$PR" ] && [ -n "$PR_BASE" ]; then
	mb=$PR_BASE
	if [ -n "$PROFILED" ]; then
		mb=$(git -C "$PROFILED" merge-base "$COMMIT" "$PR_BASE" 2>/dev/null) || mb=$PR_BASE
	fi
	BASELINE=$(nearest_profiled "$mb")
	if [ -n "$BASELINE" ]; then
		BASE_NOTE="against the merge base with the base branch (${mb:0:12}; profiled at ${BASELINE:0:12})"
	else
		BASE_NOTE="no profiled commit at or before the merge base ${mb:0:12}: checked against the branch's own history"
	fi
fi

# --- check and compare ----------------------------------------------------------
status=0
check_args=("$run_id")
[ -z "$BASELINE" ] || check_args+=(--baseline "$BASELINE")
results check "${check_args[@]}" --format markdown >"$W/check.md" || status=$?
case $status in
0 | 1) ;;
*) die "$status" "results check failed (exit $status)" ;;
esac
results check "${check_args[@]}" --format json >"$W/check.json" || [ $? = 1 ]
baseline=$(sed -n 's/^ *"baseline_commit": "\([0-9a-f]*\)".*/\1/p' "$W/check.json" | head -1)
if [ "$status" = 1 ]; then
	verdict=regression
elif [ -z "$baseline" ]; then
	verdict=no-baseline
else
	verdict=pass
fi
{
	echo "verdict=$verdict"
	echo "baseline=$baseline"
} >>"$OUT"
{
	[ -z "$BASE_NOTE" ] || printf 'Pull request #%s: %s.\n\n' "$PR" "$BASE_NOTE"
	cat "$W/check.md"
	echo
	if [ -n "$baseline" ]; then
		results compare "$baseline" "$run_id" --format markdown
		echo
	fi
} >"$W/report.md"
cat "$W/report.md" >>"$SUMMARY"

# --- the pull-request comment: one, updated in place --------------------------------
MARKER='<!-- results-action: profiling report -->'
comment_state=none
post_comment() {
	local id= page=1 n
	[ -n "$TOKEN" ] || { say "no token for the pull-request comment (input 'token' or GITHUB_TOKEN)"; return 1; }
	[ -n "${GITHUB_REPOSITORY:-}" ] || { say "GITHUB_REPOSITORY is not set"; return 1; }
	command -v jq >/dev/null && command -v curl >/dev/null || { say "the pull-request comment needs jq and curl"; return 1; }
	api_headers
	{
		echo "$MARKER"
		echo "### Profiling: $verdict"
		echo
		printf 'Run `%s` of commit `%s`.\n\n' "$run_id" "${COMMIT:0:12}"
		# GitHub refuses a comment over 65,536 characters
		head -c 60000 "$W/report.md"
		[ "$(wc -c <"$W/report.md")" -le 60000 ] || printf '\n\n(cut here: the whole report is in the job summary)\n'
	} >"$W/comment.md"
	jq -Rs '{body: .}' "$W/comment.md" >"$W/comment.json"
	# the existing comment, if any: at most 20 pages of 100
	while [ -z "$id" ] && [ "$page" -le 20 ]; do
		api GET "/repos/$GITHUB_REPOSITORY/issues/$PR/comments?per_page=100&page=$page" >"$W/comments.json" ||
			{ say "cannot list the comments of #$PR: $(head -c 300 "$W/comments.json")"; return 1; }
		id=$(jq -r --arg m "$MARKER" '[.[] | select(.body | type == "string" and contains($m))][0].id // empty' "$W/comments.json")
		n=$(jq 'length' "$W/comments.json")
		[ "$n" -ge 100 ] || break
		page=$((page + 1))
	done
	if [ -n "$id" ] && api PATCH "/repos/$GITHUB_REPOSITORY/issues/comments/$id" "$W/comment.json" >"$W/answer.json"; then
		comment_state=updated
		return 0
	fi
	[ -z "$id" ] || say "cannot update comment $id: $(head -c 300 "$W/answer.json"); posting a new one"
	api POST "/repos/$GITHUB_REPOSITORY/issues/$PR/comments" "$W/comment.json" >"$W/answer.json" ||
		{ say "cannot comment on #$PR: $(head -c 300 "$W/answer.json")"; return 1; }
	comment_state=created
}
if [ -n "$PR" ] && [ "$COMMENT" != false ] || [ "$COMMENT" = true ]; then
	if [ -z "$PR" ]; then
		say "comment: true, but this is no pull request (input 'pull-request')"
		comment_state=failed
	elif ! post_comment; then
		comment_state=failed
		echo "::warning::results: the pull-request comment could not be posted; the report is in the job summary"
	fi
fi
echo "comment=$comment_state" >>"$OUT"
say "recorded $run_id; check: $verdict${baseline:+ (baseline ${baseline:0:12})}"
if [ "$verdict" = regression ] && [ "$FAIL_ON_REGRESSION" = true ]; then
	exit 1
fi
exit 0
