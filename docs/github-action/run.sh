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
#   INPUT_REPOSITORY  the checked-out results repository (default: .)
#   INPUT_PACKAGE     the .deb to install: a path or an http(s) URL
#                     (default: none; results must then be on PATH)
#   INPUT_PUSH        push the new run commit (default: true)
#   INPUT_FAIL_ON_REGRESSION  exit 1 when the check finds a regression
#                     (default: true)
# Outputs (appended to $GITHUB_OUTPUT): run-id, verdict (pass, regression
# or no-baseline), baseline (the baseline commit, if any).
# Markdown appended to $GITHUB_STEP_SUMMARY.
# Exit status: 0 recorded (and no regression), 1 regression, 2 bad input,
# else the status of the results command that failed (docs/cli.md).
set -euo pipefail

say() { echo "results-action: $*" >&2; }
die() { say "$2"; exit "$1"; }

SESSION=${INPUT_SESSION:-}
COMMIT=${INPUT_COMMIT:-${GITHUB_SHA:-}}
TRIGGER=${INPUT_TRIGGER:-ci}
STATS=${INPUT_STATS:-}
REMOTE=${INPUT_REMOTE:-}
REPOSITORY=${INPUT_REPOSITORY:-.}
PACKAGE=${INPUT_PACKAGE:-}
PUSH=${INPUT_PUSH:-true}
FAIL_ON_REGRESSION=${INPUT_FAIL_ON_REGRESSION:-true}
OUT=${GITHUB_OUTPUT:-/dev/null}
SUMMARY=${GITHUB_STEP_SUMMARY:-/dev/null}

[ -n "$SESSION" ] || die 2 "the input 'session' is required (a .pyisession file or a run folder)"
[ -e "$SESSION" ] || die 2 "session '$SESSION' does not exist"
[ -n "$COMMIT" ] || die 2 "the input 'commit' is required (or GITHUB_SHA)"
[ -z "$STATS" ] || [ -f "$STATS" ] || die 2 "stats file '$STATS' does not exist"
case $PUSH in true | false) ;; *) die 2 "the input 'push' must be true or false, not '$PUSH'" ;; esac
case $FAIL_ON_REGRESSION in true | false) ;;
*) die 2 "the input 'fail-on-regression' must be true or false, not '$FAIL_ON_REGRESSION'" ;;
esac
# paths given relative to the workspace stay valid after the cd below
SESSION=$(realpath "$SESSION")
[ -z "$STATS" ] || STATS=$(realpath "$STATS")

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

# --- set up the clone ---------------------------------------------------------
cd "$REPOSITORY" || die 2 "cannot enter the results repository '$REPOSITORY'"
git config user.name >/dev/null || git config user.name "github-actions[bot]"
git config user.email >/dev/null ||
	git config user.email "41898282+github-actions[bot]@users.noreply.github.com"
git lfs install --local >/dev/null
if [ -n "$REMOTE" ]; then
	results init --remote "$REMOTE" >&2
else
	results init >&2
fi

# --- record -------------------------------------------------------------------
args=("$SESSION" --commit "$COMMIT" --trigger "$TRIGGER")
[ -z "$STATS" ] || args+=(--stats "$STATS")
added=$(results add "${args[@]}")
echo "$added" >&2
run_id=$(printf '%s\n' "$added" | sed -n 's/^recorded run \([^ ]*\) .*/\1/p' | head -1)
[ -n "$run_id" ] || die 8 "results add did not name the recorded run: $added"
echo "run-id=$run_id" >>"$OUT"
if [ "$PUSH" = true ]; then
	git push -q origin HEAD >&2
fi

# --- check and compare ----------------------------------------------------------
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
status=0
results check "$run_id" --format markdown >"$W/check.md" || status=$?
case $status in
0 | 1) ;;
*) die "$status" "results check failed (exit $status)" ;;
esac
results check "$run_id" --format json >"$W/check.json" || [ $? = 1 ]
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
	cat "$W/check.md"
	echo
	if [ -n "$baseline" ]; then
		results compare "$baseline" "$run_id" --format markdown
		echo
	fi
} >>"$SUMMARY"
say "recorded $run_id; check: $verdict${baseline:+ (baseline ${baseline:0:12})}"
if [ "$verdict" = regression ] && [ "$FAIL_ON_REGRESSION" = true ]; then
	exit 1
fi
exit 0
