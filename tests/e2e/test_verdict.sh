#!/usr/bin/env bash
# The one-line verdict against the earlier comparable runs (issue 10),
# written by `results add` into the run's summary.md and the README
# table: the first run has nothing to compare with, the slow run names
# the new function, a run of another configuration is not judged.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_verdict

has() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$1 lacks '$2' ($3)"; }; }

results_repo "$T/repo"

CLOCK=1796097200
record() {
	local sha=$1 pop=$2; shift 2
	gen --population "$pop" --months 6 "$@" -o "$T/s.pyisession"
	printf '{"months": 6, "population": %s}\n' "$pop" >"$T/stats.json"
	record_session ci-1 "$sha" --stats "$T/stats.json"
}
summary_of() { # the committed summary.md of the run of commit $1
	local path
	path=$("$RESULTS" list --json | python3 -c 'import json,sys; print([r["path"] for r in json.load(sys.stdin) if r["commit"].startswith(sys.argv[1])][0])' "$1")
	git show "HEAD:$path/summary.md" >"$T/summary-$1.md"
}

record a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1 100 --seed 1 --noise 1
summary_of a1a1
has "$T/summary-a1a1.md" "**Verdict** (against the earlier comparable runs): no earlier run to compare with" "first run"
git show HEAD:README.md >"$T/readme"
has "$T/readme" "| verdict | summary |" "the README table has a verdict column"
has "$T/readme" "| no earlier run to compare with | [" "the first run's row"
pass "the first run says there is no earlier run to compare with"

record b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2 100 --seed 5 --noise 1 --new-lib-function trace_contacts:0.14
summary_of b2b2
grep -qE '^\*\*Verdict\*\* \(against the earlier comparable runs\): \+[0-9]+% vs a1a1a1a: new call HealthSystemScheduler\.apply -&gt; trace\\_contacts \([0-9.]+ s\)$' \
	"$T/summary-b2b2.md" || { cat "$T/summary-b2b2.md" >&2; fail "summary.md of the slow run lacks the verdict naming trace_contacts"; }
# the verdict sits under the title, before the run's table
[ "$(sed -n 3p "$T/summary-b2b2.md" | cut -c1-11)" = "**Verdict**" ] ||
	{ cat "$T/summary-b2b2.md" >&2; fail "the verdict is not the line under the title"; }
git show HEAD:README.md >"$T/readme"
grep -qE '\| \+[0-9]+% vs a1a1a1a: new call HealthSystemScheduler\.apply -&gt; trace\\_contacts \([0-9.]+ s\) \| \[[^]]*b2b2b2b\]' "$T/readme" ||
	{ cat "$T/readme" >&2; fail "README row of the slow run lacks its verdict"; }
has "$T/readme" "| no earlier run to compare with | [" "the first run's row keeps its verdict"
# the index line carries it (what the README is rendered from)
git show "HEAD:index/$(date -u -d @$CLOCK +%Y-%m).jsonl" | grep -q '"verdict":"+[0-9]*% vs a1a1a1a: new call HealthSystemScheduler.apply -> trace_contacts (' ||
	fail "the index line lacks the verdict"
pass "the slow run's summary.md and README row name the new function"

record c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3 400 --seed 2 --noise 1
summary_of c3c3
has "$T/summary-c3c3.md" "**Verdict** (against the earlier comparable runs): no comparable baseline (another configuration)" \
	"another population"
pass "a run of another configuration is not judged"
