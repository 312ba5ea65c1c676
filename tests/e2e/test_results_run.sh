#!/usr/bin/env bash
# `results run`: the command runs with its output passed through, is
# measured from outside over its whole process tree (CPU, memory, I/O,
# warnings, outputs), and is recorded as `results add` would record the
# files it wrote; a failing command records nothing unless asked.
set -euo pipefail
. "$(dirname "$0")/lib.sh" results_run

SHA=0123456789abcdef0123456789abcdef01234567
results_repo "$T/repo"

# A "model": a python script that writes a session (a real one, copied),
# a log, a stats file; emits Python warnings of two categories (through
# the warnings module, as a model's libraries do); allocates ~120 MB in a
# child process it starts; burns CPU; writes 8 MiB to a file.
mkdir -p "$T/model"
cp "$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_5.1.2.pyisession" "$T/model/session.src"
cat >"$T/model/model.py" <<'PY'
import os, shutil, subprocess, sys, time, warnings
out = sys.argv[1]
warnings.warn("old API", DeprecationWarning, stacklevel=1)
warnings.warn("chained assignment", FutureWarning, stacklevel=1)
warnings.warn("chained assignment again", FutureWarning, stacklevel=1)
print("model stdout line")
sys.stderr.write("a plain line on stderr: no Warning: here\n")
# a child process holding ~120 MB for 0.6 s: the tree's memory, not ours
subprocess.run([sys.executable, "-c",
    "import time; b = bytearray(120 * 1024 * 1024)\n"
    "for i in range(0, len(b), 4096): b[i] = 1\n"
    "time.sleep(0.6)"], check=True)
# an orphan: started in the background by a shell that exits at once
subprocess.run(["sh", "-c", "(sleep 0.4; dd if=/dev/zero of=%s/orphan.bin bs=1M count=3 2>/dev/null) &" % out], check=True)
x = 0
t = time.process_time()
while time.process_time() - t < 0.5:
    x += 1
with open(os.path.join(out, "big.bin"), "wb") as f:
    f.write(os.urandom(8 * 1024 * 1024))
    f.flush(); os.fsync(f.fileno())
shutil.copy(os.path.join(os.path.dirname(__file__), "session.src"), os.path.join(out, "run.pyisession"))
with open(os.path.join(out, "sim.log"), "w") as f:
    f.write("month 1\n")
with open(os.path.join(out, "model.stats.json"), "w") as f:
    f.write('{"population": 1000}')
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
PY

cd "$T/repo"
mkdir -p "$T/o1"
echo "an old file" >"$T/o1/old.txt"
touch -d '2020-01-01' "$T/o1/old.txt"
expect_status 0 "$RESULTS" run --commit "$SHA" --trigger nightly --out "$T/o1" -- \
	python3 "$T/model/model.py" "$T/o1"
grep -qx "model stdout line" "$T/out" || fail "the command's stdout was not passed through"
grep -q "DeprecationWarning: old API" "$T/err" || fail "the command's stderr was not passed through"
grep -q "a plain line on stderr" "$T/err" || fail "stderr lines were lost"
grep -q "^recorded run " "$T/out" || fail "nothing recorded: $(cat "$T/out" "$T/err")"
folder=$(sed -n 's/^recorded run [^ ]* in \([^ ]*\) .*/\1/p' "$T/out")
[ -f "$folder/run.json" ] || fail "no run.json in '$folder'"
pass "run: output passed through, run recorded"

# the files the command wrote are the run's; the one that was there before is not
[ -f "$folder/sim.log" ] || fail "the log the command wrote is not in the run"
[ -f "$folder/results-run.timeline.csv" ] || fail "no timeline beside the run"
[ -f "$folder/run.pyisession" ] || fail "no session pointer in the run"
[ ! -e "$folder/old.txt" ] || fail "a file older than the run was recorded as its output"
ls -a "$T/o1" | grep -q '^\.results-run' && fail "the staging folder was left in --out"
pass "run: the files written by the command recorded, older ones not"

m() { jq -r --arg k "$1" '.metrics[$k] // "absent"' "$folder/run.json"; }
command -v jq >/dev/null || fail "jq is needed"
# figures measured from outside, checked against what the model did
awk -v v="$(m proc.cpu_s)" 'BEGIN { exit !(v >= 0.5) }' || fail "proc.cpu_s $(m proc.cpu_s) < the 0.5 s the model burnt"
awk -v v="$(m proc.wall_s)" 'BEGIN { exit !(v >= 1.0) }' || fail "proc.wall_s $(m proc.wall_s) too small"
awk -v v="$(m proc.peak_rss_mb)" 'BEGIN { exit !(v >= 120) }' || fail "proc.peak_rss_mb $(m proc.peak_rss_mb): the child's 120 MB are missing"
awk -v v="$(m io.write_mb)" 'BEGIN { exit !(v >= 8) }' || fail "io.write_mb $(m io.write_mb) < the 8 MiB written"
awk -v v="$(m io.wchar_mb)" 'BEGIN { exit !(v >= 11) }' || fail "io.wchar_mb $(m io.wchar_mb): the orphan's 3 MiB are missing"
[ "$(m warnings.count)" = 3 ] || fail "warnings.count is $(m warnings.count), want 3"
[ "$(m warnings.FutureWarning)" = 2 ] || fail "warnings.FutureWarning is $(m warnings.FutureWarning), want 2"
[ "$(m warnings.DeprecationWarning)" = 1 ] || fail "warnings.DeprecationWarning is $(m warnings.DeprecationWarning)"
awk -v v="$(m proc.processes)" 'BEGIN { exit !(v >= 2) }' || fail "proc.processes $(m proc.processes) < 2"
[ "$(m proc.exit_status)" = 0 ] || fail "proc.exit_status $(m proc.exit_status)"
awk -v v="$(m out.file.big.bin)" 'BEGIN { exit !(v >= 7.9 && v <= 8.1) }' || fail "out.file.big.bin $(m out.file.big.bin), want 8 MiB"
[ "$(m out.file.old.txt)" = absent ] || fail "a file older than the run counted as output"
[ "$(m population)" = 1000 ] || fail "the model's own stats file was not read"
# the timeline: a header and one row per 100 ms or so, rss in MB
head -1 "$folder/results-run.timeline.csv" | grep -qx 't_s,rss_mb,cpu_s,processes,threads' || fail "timeline header"
rows=$(($(wc -l <"$folder/results-run.timeline.csv") - 1))
[ "$rows" -ge 5 ] || fail "timeline has $rows rows for a run of over a second"
awk -F, 'NR > 1 && $2 >= 120 { hit = 1 } END { exit !hit }' "$folder/results-run.timeline.csv" ||
	fail "the timeline never shows the child's 120 MB"
pass "run: CPU, peak RSS of the tree, I/O with orphans, warnings by category, output sizes, timeline"

# the stats are metrics like any other: list and check use them
expect_status 0 "$RESULTS" list --json
grep -q '"proc.peak_rss_mb"' "$T/out" || fail "list --json does not show proc.peak_rss_mb"
pass "run: the figures are metrics that list shows"

# a failing command: its own status, nothing recorded
before=$(git rev-parse HEAD)
mkdir -p "$T/o2"
expect_status 3 "$RESULTS" run --commit "$SHA" --out "$T/o2" -- python3 "$T/model/model.py" "$T/o2" 3
[ "$(git rev-parse HEAD)" = "$before" ] || fail "a failed command was recorded"
grep -q "nothing was recorded" "$T/err" || fail "no word that nothing was recorded"
# ... unless asked; the status is still the command's
mkdir -p "$T/o3"
expect_status 3 "$RESULTS" run --record-failed --commit "$SHA" --out "$T/o3" -- python3 "$T/model/model.py" "$T/o3" 3
[ "$(git rev-parse HEAD)" != "$before" ] || fail "--record-failed recorded nothing"
folder=$(sed -n 's/^recorded run [^ ]* in \([^ ]*\) .*/\1/p' "$T/out")
[ "$(m proc.exit_status)" = 3 ] || fail "proc.exit_status of a failed run is $(m proc.exit_status)"
pass "run: a failing command exits with its status, records only with --record-failed"

# two runs: trend, compare and check read the measured figures
expect_status 0 "$RESULTS" trend --metric proc.peak_rss_mb --format json
grep -q 'proc.peak_rss_mb' "$T/out" || fail "trend does not draw proc.peak_rss_mb: $(cat "$T/out")"
[ "$(jq '[.. | numbers] | length' "$T/out")" -gt 0 ] || fail "trend has no values"
ids=$("$RESULTS" list --json | jq -r '.[].id' | head -2 | tr '\n' ' ')
# shellcheck disable=SC2086
expect_status 0 "$RESULTS" compare $ids
grep -q 'proc.peak_rss_mb' "$T/out" || fail "compare does not show proc.peak_rss_mb"
pass "run: trend and compare use the measured figures"

# a command that cannot start; usage errors
expect_status 127 "$RESULTS" run --commit "$SHA" --out "$T/o4" -- /nonexistent/model
grep -q "cannot run '/nonexistent/model'" "$T/err" || fail "no message for a missing command: $(cat "$T/err")"
expect_status 2 "$RESULTS" run --commit "$SHA"
grep -q "give the command to run" "$T/err" || fail "no message for a missing command line"
expect_status 2 "$RESULTS" run -- true
grep -q -- "--commit <sha> is required" "$T/err" || fail "no message for a missing --commit"
expect_status 2 "$RESULTS" run --interval 5 --commit "$SHA" -- true
expect_status 0 "$RESULTS" run --help
grep -q "record-failed" "$T/out" || fail "run --help"
pass "run: clear errors for a missing command, --commit or a bad --interval"

# the command's own options are never ours, even without "--"
mkdir -p "$T/o5"
expect_status 0 "$RESULTS" run --commit "$SHA" --out "$T/o5" python3 -c 'import sys; print(sys.argv[1:])' --trigger x
grep -qx "\['--trigger', 'x'\]" "$T/out" || fail "an option after the command was taken by results run: $(cat "$T/out")"
pass "run: options after the command's first word are the command's"

# a daemon left behind is not waited for forever
mkdir -p "$T/o6"
start=$(date +%s)
# (its pid in a file, so that only this daemon is killed after: a pkill of
# every 'sleep 30' killed another suite's daemon, running this test at the
# same time on the same machine, before its linger was over)
expect_status 0 "$RESULTS" run --commit "$SHA" --out "$T/o6" -- \
	sh -c 'sleep 30 >/dev/null 2>&1 & echo $! >"$1"' sh "$T/daemon.pid"
end=$(date +%s)
[ $((end - start)) -lt 25 ] || fail "results run waited for a leftover daemon"
grep -q "still running" "$T/err" || fail "no word about the leftover process"
kill "$(cat "$T/daemon.pid")" 2>/dev/null || true
pass "run: leftover descendants waited for at most the linger"
