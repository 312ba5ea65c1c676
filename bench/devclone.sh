#!/usr/bin/env bash
# The developer clone on a long history (issue 21): what `results clone`
# makes, how long it takes, and what the first commands cost in it.
#
#   RS_BIN_DIR=build bench/devclone.sh DIR
#
# DIR is a history made by bench/scale_history.sh (DIR/remote.git,
# DIR/home); the script sets uploadpack.allowFilter in DIR/remote.git (a
# host must allow filters) and works in DIR/devclone-bench, which it
# removes first. Prints, against references measured in the same run:
#   - `results clone` (seconds, .git and work tree sizes) against a plain
#     `git clone --no-checkout` of the same remote (every commit, every
#     file: what a developer had to make before) and against `git clone
#     --depth 1 --filter=blob:limit=1k --no-checkout` alone (the git part
#     of results clone, which it cannot go below);
#   - list, check, check --branch main and trend in the new clone, cold
#     (the first time: what they fetch) and warm, with how many times
#     each ran git (a git on PATH that counts its calls);
#   - ADDS (default 20) `results add` in the new clone, late in the
#     history's last month: the medians of their wall time and of their
#     CPU time (perf stat task-clock, when perf runs: the machine may be
#     loaded by others), the size of .git/index after them, and whether
#     `git status` is clean.
# Asserts nothing; figures are for reading (docs/benchmarks.md).
set -euo pipefail

: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
DIR=${1:?usage: RS_BIN_DIR=build $0 DIR}
DIR=$(cd "$DIR" && pwd)
RESULTS=$(cd "$RS_BIN_DIR" && pwd)/src/results
export HOME=$DIR/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
W=$DIR/devclone-bench
rm -rf "$W"
mkdir -p "$W/bin"
git -C "$DIR/remote.git" config uploadpack.allowFilter true
URL=file://$DIR/remote.git

REAL_GIT=$(command -v git)
cat >"$W/bin/git" <<EOF
#!/bin/sh
[ -z "\${GITLOG:-}" ] || echo x >>"\$GITLOG"
exec "$REAL_GIT" "\$@"
EOF
chmod +x "$W/bin/git"
export PATH="$W/bin:$PATH"

now() { date +%s.%N; }
timed() { # seconds of the command line, output discarded
	local t0 t1
	t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now)
	echo "$t1 - $t0" | bc -l
}
kb() { du -sk "$1" | cut -f1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "# the developer clone of $URL ($(git -C "$DIR/remote.git" rev-list --count HEAD) commits), load $(load)"
full_s=$(timed git clone -q --no-checkout "$URL" "$W/full")
full_kb=$(kb "$W/full/.git")
rm -rf "$W/full"
git_s=$(timed git clone -q --depth 1 --filter=blob:limit=1k --no-checkout "$URL" "$W/gitonly")
git_kb=$(kb "$W/gitonly/.git")
rm -rf "$W/gitonly"
dev_s=$(timed "$RESULTS" clone "$URL" "$W/dev")
[ -d "$W/dev/.git" ] || { echo "results clone failed" >&2; exit 1; }
dev_kb=$(kb "$W/dev/.git")
printf '%-52s %8.2f s %8d KB .git\n' "reference: git clone --no-checkout (full)" "$full_s" "$full_kb"
printf '%-52s %8.2f s %8d KB .git\n' "reference: git clone --depth 1 --filter (git only)" "$git_s" "$git_kb"
printf '%-52s %8.2f s %8d KB .git  %d KB .git/index  %d KB work tree\n' "results clone" "$dev_s" "$dev_kb" \
	"$(( $(stat -c %s "$W/dev/.git/index") / 1024 ))" "$(( $(du -sk --exclude=.git "$W/dev" | cut -f1) ))"
printf '%-52s x%.2f time  x%.3f size\n' "results clone / full clone" "$(echo "$dev_s / $full_s" | bc -l)" \
	"$(echo "$dev_kb / $full_kb" | bc -l)"
printf '%-52s x%.2f time  x%.3f size\n' "results clone / its git clone" "$(echo "$dev_s / $git_s" | bc -l)" \
	"$(echo "$dev_kb / $git_kb" | bc -l)"

cd "$W/dev"
cmd_row() { # label command...
	local label=$1 s calls
	shift
	: >"$W/calls"
	s=$(GITLOG="$W/calls" timed "$@")
	calls=$(wc -l <"$W/calls")
	printf '%-52s %8.2f s  %3d git calls  (load %s)\n' "$label" "$s" "$calls" "$(load)"
}
for pass in cold warm; do
	cmd_row "$pass: results list" "$RESULTS" list
	cmd_row "$pass: results check --branch main" "$RESULTS" check --branch main
	cmd_row "$pass: results check" "$RESULTS" check
	cmd_row "$pass: results trend" "$RESULTS" trend
done
printf '%-52s %8d KB .git\n' "after them" "$(kb "$W/dev/.git")"

ADDS=${ADDS:-20}
GEN=$(cd "$RS_BIN_DIR" && pwd)/tests/gen-session
"$GEN" --seed 2 --samples 400 -o "$W/b.pyisession"
printf '{"population": 1000}\n' >"$W/stats.json"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
perf_ok=0
perf stat -x, -e task-clock -o "$W/perf" true 2>/dev/null && perf_ok=1
last=$(git log -1 --format=%ct)
: >"$W/adds"
for k in $(seq 1 "$ADDS"); do
	t0=$(now)
	if [ "$perf_ok" = 1 ]; then
		RESULTS_RECORDED_AT=$((last + k * 10)) perf stat -x, -e task-clock -o "$W/perf" \
			"$RESULTS" add "$W/b.pyisession" --commit "$(printf '%040x' "$k")" --branch main \
			--trigger nightly --stats "$W/stats.json" >/dev/null 2>"$W/add.err" ||
			{ cat "$W/add.err" >&2; exit 1; }
	else
		RESULTS_RECORDED_AT=$((last + k * 10)) "$RESULTS" add "$W/b.pyisession" \
			--commit "$(printf '%040x' "$k")" --branch main --trigger nightly \
			--stats "$W/stats.json" >/dev/null 2>"$W/add.err" || { cat "$W/add.err" >&2; exit 1; }
	fi
	t1=$(now)
	cpu=$( [ "$perf_ok" = 1 ] && awk -F, '$3 == "task-clock" { print $1 / 1000 }' "$W/perf" || echo 0)
	echo "$(echo "$t1 - $t0" | bc -l) $cpu" >>"$W/adds"
done
printf '%-52s %8.3f s wall  %8.3f s CPU  (medians of %d; load %s)\n' "results add in it" \
	"$(cut -d' ' -f1 "$W/adds" | median)" "$(cut -d' ' -f2 "$W/adds" | median)" "$ADDS" "$(load)"
printf '%-52s %8d bytes .git/index  git status: %s\n' "after the adds" "$(stat -c %s .git/index)" \
	"$( [ -z "$(git status --porcelain)" ] && echo clean || echo "NOT CLEAN")"
