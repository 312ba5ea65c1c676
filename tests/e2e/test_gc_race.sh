#!/bin/bash
# gc racing pushes, with the race stopped at exact points (the LD_PRELOAD
# shim tests/shim/pause_at.c) and clocks that jump (Debian's faketime):
#
# 1. A push in flight, stopped after its pack is uploaded and before its
#    manifest is written, while three gc runs at +0 h, +25 h and +50 h of
#    a faked clock clock, mark and sweep its new pack: the push still
#    reports success only for a session that reads back.
# 2. gc, stopped just before it deletes the manifest of a session the
#    policy drops, while another clone records the same bytes as a new run
#    and pushes (the push finds the manifest and uploads nothing): the new
#    run's session is never "removed by retention".
# 3. --grace below the documented minimum is refused unless forced.
#
# The store comes from gc_store (lib.sh): a folder here.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_gc_race

command -v faketime >/dev/null || fail "no faketime: run scripts/install-deps.sh (Debian package faketime)"
[ -e "$RS_BIN_DIR/tests/libpause_at.so" ] || fail "no $RS_BIN_DIR/tests/libpause_at.so: build the tests"
# faketime preloads libfaketime: a sanitizer build must accept that.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
gc_store
gen --seed 71 --size 2M -o "$T/s1.pyisession"
gen --seed 72 --size 2M -o "$T/s2.pyisession"
gen --seed 73 --size 2M -o "$T/s3.pyisession"
gen --seed 74 --size 2M -o "$T/s4.pyisession"

# add_run AT SESSION N: $T/SESSION.pyisession recorded at AT for commit N (as 40 digits).
add_run() {
	RESULTS_RECORDED_AT=$1 "$RESULTS" add "$T/$2.pyisession" --commit "$(printf '%040d' "$3")" \
		--trigger nightly --branch main >/dev/null
}
# gc_stopped_while_recorded DIR SESSION AT N: gc run from the current
# clone, stopped (DIR: its pause folder) just before it deletes the
# manifest of $T/SESSION.pyisession; meanwhile $T/dev (the current
# folder afterwards) pulls and records the same bytes as run N at AT.
gc_stopped_while_recorded() {
	local oid
	oid=$(sha256sum "$T/$2.pyisession" | cut -d' ' -f1)
	paused_run "$1" unlink "/objects/$oid" "" before "$RESULTS" gc
	wait_paused "$1"
	cd "$T/dev"
	git pull -q 2>/dev/null
	add_run "$3" "$2" "$4"
}
# run_ids: the ids of the runs in this clone's index, oldest first.
run_ids() {
	git show HEAD:index/2023-11.jsonl |
		python3 -c 'import sys,json; [print(json.loads(l)["id"]) for l in sys.stdin if l.strip()]'
}
# verdict RUN: verify's word for the run (its line starts with it).
verdict() { expect_status 0 "$RESULTS" verify; grep " run $1" "$T/out" | cut -d' ' -f1; }

git init -q --bare "$T/results.git"
git clone -q "$T/results.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "$STORE_URL" >/dev/null
git push -q origin main 2>/dev/null

# --- 3. the grace period's minimum ---------------------------------------
for g in 0 1s 59m; do
	expect_status 2 "$RESULTS" gc --no-fetch --grace "$g"
	grep -q "grace '$g' is below the minimum of 1h" "$T/err" || fail "--grace $g: $(cat "$T/err")"
	grep -q -- "--force" "$T/err" || fail "--grace $g does not say how to force it: $(cat "$T/err")"
done
expect_status 0 "$RESULTS" gc --no-fetch --grace 1h --dry-run
expect_status 0 "$RESULTS" gc --no-fetch --grace 0 --force --dry-run
echo "ok - --grace 0, 1s and 59m refused, 1h and a forced 0 accepted"

# --- 1. a push in flight, three gc runs of a jumping clock ---------------
add_run 1700000100 s1 1
# Stopped once its pack and index are on the remote (the cache's copy of
# the index is written next) and before its manifest.
paused_run "$T/p1" rename "/.cache/results/" ".idx" after git push -q origin main
wait_paused "$T/p1"
[ -z "$STORE_DIR" ] || [ "$(find "$STORE_DIR/packs" -name '*.pack' | wc -l)" = 1 ] ||
	fail "the push has not uploaded its pack at its pause point"
for clock in +0h +25h +50h; do
	expect_status 0 faketime -f "$clock" "$RESULTS" gc --no-fetch
done
grep -q ' 1 swept' "$T/out" || fail "the third gc did not sweep the push's pack: $(cat "$T/out")"
resume "$T/p1" || { cat "$T/p1/out" "$T/p1/err"; fail "the push failed after gc swept its pack"; }
mapfile -t ID < <(run_ids)
git clone -q "$T/results.git" "$T/dev" 2>/dev/null
cd "$T/dev"
"$RESULTS" init >/dev/null
expect_status 0 "$RESULTS" fetch "${ID[0]}" -o "$T/o1"
cmp -s "$(cat "$T/out")" "$T/s1.pyisession" || fail "the pushed session does not read back"
expect_status 0 "$RESULTS" verify --deep
grep -q '1 objects (deep): 1 ok' "$T/out" || fail "verify --deep: $(cat "$T/out")"
echo "ok - a push outlives three gc runs at +0 h, +25 h and +50 h that swept its pack"

# --- 2. gc drops a session a new run's push relies on --------------------
cd "$T/ci"
git pull -q 2>/dev/null
python3 - <<'PY'
import json
d = json.load(open('.results.json'))
d['retention'] = {'keep_last': 1}
json.dump(d, open('.results.json', 'w'), indent=2)
PY
git commit -qam "results: keep the newest run"
add_run 1700000200 s2 2
git push -q origin main 2>/dev/null
oid1=$(sha256sum "$T/s1.pyisession" | cut -d' ' -f1)
# gc drops run 1's session: stopped just before it deletes its manifest.
# Meanwhile another clone records run 1's bytes again, as a new run, and
# sends them (lfs-agent finds the manifest and uploads nothing), then
# pushes the commit (git-lfs sends nothing: the remote's tree has the
# same pointer already).
gc_stopped_while_recorded "$T/p2" s1 1700000300 3
git lfs push --object-id origin "$oid1" 2>"$T/push.err" || { cat "$T/push.err"; fail "the new run's upload"; }
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "the new run's push"; }
mapfile -t ID < <(run_ids)
[ "${#ID[@]}" = 3 ] || fail "expected 3 runs, got ${#ID[@]}"
resume "$T/p2" || { cat "$T/p2/out" "$T/p2/err"; fail "the paused gc failed"; }
[ "$(verdict "${ID[2]}")" = ok ] || fail "the newest run's session after gc: $(cat "$T/out")"
grep -q '1 kept because a push relies on them' "$T/p2/out" || fail "gc: $(cat "$T/p2/out")"
# The next gc sees the new run: keep_last 1 keeps it; its session stays.
expect_status 0 "$RESULTS" gc
[ "$(verdict "${ID[2]}")" = ok ] || fail "the newest run's session after a second gc: $(cat "$T/out")"
git clone -q "$T/results.git" "$T/dev2" 2>/dev/null
cd "$T/dev2"
"$RESULTS" init >/dev/null
expect_status 0 "$RESULTS" fetch "${ID[2]}" -o "$T/o3"
cmp -s "$(cat "$T/out")" "$T/s1.pyisession" || fail "the newest run's session does not read back"
echo "ok - a session a concurrent push relies on is kept"

# --- 2b. the same, when git-lfs never asks lfs-agent ----------------------
# A 'git push --no-verify' of a run whose pointer the remote already has
# sends nothing through lfs-agent, so nothing can touch the manifest: gc
# sets it aside, and the next run, which sees the new run, brings it back.
# (Without --no-verify the results pre-push hook uploads the session that
# 'results add' holds through lfs-agent, which touches it: the case of 2.)
cd "$T/ci"
git pull -q 2>/dev/null
add_run 1700000400 s3 4
add_run 1700000450 s4 5
git push -q origin main 2>/dev/null
gc_stopped_while_recorded "$T/p3" s3 1700000500 6
git push -q --no-verify origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "the newest run's push"; }
mapfile -t ID < <(run_ids)
resume "$T/p3" || { cat "$T/p3/out" "$T/p3/err"; fail "the paused gc failed"; }
expect_status 0 "$RESULTS" gc
grep -q " 1 brought back" "$T/out" || fail "gc did not bring the session back: $(cat "$T/out" "$T/err")"
[ "$(verdict "${ID[5]}")" = ok ] || fail "the newest run's session: $(cat "$T/out")"
expect_status 0 "$RESULTS" verify --deep
echo "ok - a session set aside while its new run was pushed comes back at the next gc"

# --- 4. a set-aside session the policy keeps after all -------------------
# Run 2's session was set aside above (keep_last 1). Pinned now, it is
# kept: verify --repair brings it back while it is still set aside.
cd "$T/dev"
git pull -q 2>/dev/null
[ "$(verdict "${ID[1]}")" = removed ] || fail "run 2's session should be set aside: $(cat "$T/out")"
expect_status 0 "$RESULTS" pin "${ID[1]}"
git push -q origin main 2>/dev/null
expect_status 0 "$RESULTS" verify --repair
grep -q "^brought back .*(run ${ID[1]}): gc had set it aside" "$T/out" || fail "verify --repair: $(cat "$T/out")"
[ "$(verdict "${ID[1]}")" = ok ] || fail "run 2's session after verify --repair: $(cat "$T/out")"
expect_status 0 "$RESULTS" fetch "${ID[1]}" -o "$T/o4"
cmp -s "$(cat "$T/out")" "$T/s2.pyisession" || fail "run 2's session does not read back"
echo "ok - verify --repair brings back a set-aside session the policy keeps"
