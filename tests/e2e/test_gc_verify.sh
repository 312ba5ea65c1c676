#!/bin/bash
# results pin, gc, verify end to end on a folder remote: a retention
# policy committed in .results.json drops the raw sessions of old runs
# (pinned runs kept), gc frees their packs over three runs (clock, mark,
# sweep), fetch then says "removed by retention", every other session
# reads back byte-identical; a flipped byte is found by verify --deep and
# repaired by verify --repair from the clone that holds the sessions.
# The same scenario runs on a folder remote and on WebDAV (nginx on
# loopback, tests/servers/webdav.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_gc_verify

on_exit() { bash "$SERVERS/webdav.sh" stop "$T/dav" 2>/dev/null || true; }
for i in 1 2 3 4; do gen --seed $i --size 1M -o "$T/s$i.pyisession"; done

# scenario NAME REMOTE-URL STORE-DIR: STORE-DIR is where the server keeps the files.
scenario() {
local name=$1 REMOTE=$2 STORE=$3
echo "== $name"
rm -rf "$T/results.git" "$T/ci" "$T/dev" "$T/o" "$T/o2"

git init -q --bare "$T/results.git"
git init -q --bare "$T/results.git"

git clone -q "$T/results.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "$REMOTE" >/dev/null
for i in 1 2 3 4; do
	RESULTS_RECORDED_AT=$((1700000000 + i * 100)) "$RESULTS" add "$T/s$i.pyisession" \
		--commit "$(printf '%040d' $i)" --trigger ci --branch main >/dev/null
done
# Not pushed yet: doctor's spot check of the newest runs says so.
expect_status 6 "$RESULTS" doctor
grep -q "FAIL  the session .* of run .* is not on the remote: 'git push'" "$T/out" || fail "doctor: $(cat "$T/out")"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push"; }
expect_status 0 "$RESULTS" doctor
grep -q "ok    the newest runs' sessions are on the remote" "$T/out" || fail "doctor after push: $(cat "$T/out")"
ids() { git show HEAD:index/2023-11.jsonl | python3 -c 'import sys,json; [print(json.loads(l)["id"]) for l in sys.stdin if l.strip()]'; }
local -a ID
mapfile -t ID < <(ids)
[ "${#ID[@]}" = 4 ] || fail "expected 4 runs, got ${#ID[@]}"

expect_status 0 "$RESULTS" verify
grep -q '^4 runs, 4 objects: 4 ok, 0 removed' "$T/out" || fail "verify summary: $(cat "$T/out")"
expect_status 0 "$RESULTS" verify --deep
grep -q '4 objects (deep): 4 ok' "$T/out" || fail "verify --deep summary: $(cat "$T/out")"

# Without a policy gc removes no session. It tidies what killed writers
# left in a folder store: stale temporaries go, a live writer's stays.
# A killed gc leaves its own: in gc/seen, gc/marked and the other folders it writes.
leftovers="packs/0000.pack.tmp-AbC123 gc/seen/0000.tmp-AbC123 gc/marked/0000.tmp-AbC123
	gc/touched/0000.tmp-AbC123 gc/sweeping/0000.tmp-AbC123 trash/0000.tmp-AbC123 removed/0000.tmp-AbC123"
if [ "$name" = folder ]; then
	for f in $leftovers; do
		mkdir -p "$(dirname "$STORE/$f")"
		echo partial >"$STORE/$f"
		touch -d '2 days ago' "$STORE/$f"
	done
	echo live >"$STORE/packs/1111.pack.tmp-XyZ789"
	echo live >"$STORE/gc/seen/1111.tmp-XyZ789"
fi
expect_status 0 "$RESULTS" gc --grace 0 --force
if [ "$name" = folder ]; then
	for f in $leftovers; do [ ! -e "$STORE/$f" ] || fail "gc left the stale temporary file $f"; done
	[ -e "$STORE/packs/1111.pack.tmp-XyZ789" ] || fail "gc removed a fresh temporary file"
	[ -e "$STORE/gc/seen/1111.tmp-XyZ789" ] || fail "gc removed a fresh temporary file in gc/seen"
	rm -f "$STORE/packs/1111.pack.tmp-XyZ789" "$STORE/gc/seen/1111.tmp-XyZ789"
fi
grep -q '^removed 0 raw sessions' "$T/out" || fail "gc without a policy removed something: $(cat "$T/out")"

# Policy: the newest 2 runs of each branch; run 1 pinned. Run 2 goes.
python3 - <<'PY'
import json
d = json.load(open('.results.json'))
d['retention'] = {'keep_last': 2}
json.dump(d, open('.results.json', 'w'), indent=2)
PY
git commit -qam "results: keep the newest two runs"
expect_status 0 "$RESULTS" pin "${ID[0]}"
grep -qx "${ID[0]}" pins.txt || fail "pins.txt does not name ${ID[0]}"
[ -z "$(git status --porcelain)" ] || fail "pin left the work tree dirty: $(git status --porcelain)"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push"; }

before=$(find "$STORE" -type f | sort | xargs sha256sum)
expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
grep -q "would remove raw session of run ${ID[1]}" "$T/out" || fail "dry run: $(cat "$T/out")"
for k in 0 2 3; do ! grep -q "${ID[$k]}" "$T/out" || fail "dry run would remove ${ID[$k]}"; done
grep -q '^would remove 1 raw sessions' "$T/out" || fail "dry-run count: $(cat "$T/out")"
[ "$before" = "$(find "$STORE" -type f | sort | xargs sha256sum)" ] || fail "--dry-run changed the store"
# What the whole protocol frees, now and by later runs (bytes), summed over the real runs below.
# figure LABEL: the bytes of gc's line starting with LABEL, in $FIG (a failure without one).
figure() {
	FIG=$(sed -n "s/^$1.* MB (\([0-9]*\) bytes)\$/\1/p" "$T/out")
	[ -n "$FIG" ] || fail "gc printed no '$1' figure: $(cat "$T/out")"
}
figure 'would free now:'; predicted=$FIG
figure 'freed by later runs'; predicted=$((predicted + FIG))
[ "$predicted" -gt 0 ] || fail "the dry run predicts nothing freed: $(cat "$T/out")"
freed=0

packs_before=$(find "$STORE/packs" -name '*.pack' | wc -l)
bytes_before=$(du -sb "$STORE/packs" | cut -f1)
expect_status 0 "$RESULTS" gc --grace 0 --force       # tombstone, manifest set aside
grep -q '^removed 1 raw sessions' "$T/out" || fail "gc: $(cat "$T/out")"
figure 'freed now:'; freed=$((freed + FIG))
expect_status 0 "$RESULTS" gc --grace 0 --force       # set-aside manifest deleted, clock started
grep -q ', 1 deleted,' "$T/out" || fail "second gc did not delete the set-aside manifest: $(cat "$T/out")"
figure 'freed now:'; freed=$((freed + FIG))
expect_status 0 "$RESULTS" gc --grace 0 --force       # mark
grep -q ' 1 marked' "$T/out" || fail "third gc did not mark: $(cat "$T/out")"
figure 'freed now:'; freed=$((freed + FIG))
expect_status 0 "$RESULTS" gc --grace 0 --force       # sweep
grep -q ' 1 swept' "$T/out" || fail "fourth gc did not sweep: $(cat "$T/out")"
figure 'freed now:'; freed=$((freed + FIG))
[ "$freed" = "$predicted" ] || fail "the dry run predicted $predicted bytes freed, the runs freed $freed"
grep -q '^freed by later runs.* (0 bytes)$' "$T/out" || fail "after the sweep: $(cat "$T/out")"
[ "$(find "$STORE/packs" -name '*.pack' | wc -l)" = $((packs_before - 1)) ] || fail "no pack was freed"
[ "$(du -sb "$STORE/packs" | cut -f1)" -lt "$bytes_before" ] || fail "the store did not shrink"

expect_status 0 "$RESULTS" verify
grep -q "^removed .*run ${ID[1]}.*removed by retention on 20" "$T/out" || fail "verify: $(cat "$T/out")"
grep -q '4 runs, 4 objects: 3 ok, 1 removed by retention' "$T/out" || fail "verify summary after gc: $(cat "$T/out")"
# show says so, as its last line, and only for that run; never an error
expect_status 0 "$RESULTS" show "${ID[1]}"
grep -q '^# Profiling run' "$T/out" || fail "show ${ID[1]}: no summary: $(cat "$T/out")"
tail -n 1 "$T/out" | grep -qx 'raw session removed by retention on 20[0-9][0-9]-[01][0-9]-[0-3][0-9]; summary kept' ||
	fail "show of a removed session: $(tail -n 3 "$T/out")"
expect_status 0 "$RESULTS" show "${ID[2]}"
! grep -q 'removed by retention' "$T/out" || fail "show of a kept session: $(tail -n 3 "$T/out")"
expect_status 0 "$RESULTS" show "${ID[1]}" --json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" || fail "show --json of a removed session is not JSON"
grep -q "^raw session removed by retention on 20..-..-..; summary kept" "$T/err" || fail "show --json: $(cat "$T/err")"
# a remote that cannot be opened: the summary, no note, no error
saved=$(git config results.remote)
git config results.remote "file://$T/nowhere"
expect_status 0 "$RESULTS" show "${ID[1]}"
! grep -q 'removed by retention' "$T/out" "$T/err" || fail "show with an unreachable remote: $(cat "$T/out" "$T/err")"
git config results.remote "$saved"

# A developer clone: the removed session is reported as such, the others are intact.
git clone -q "$T/results.git" "$T/dev" 2>/dev/null
cd "$T/dev"
"$RESULTS" init >/dev/null
expect_status 6 "$RESULTS" fetch "${ID[1]}" -o "$T/o"
grep -q 'removed by retention on 20..-..-..; summary kept' "$T/err" || fail "fetch of a removed session: $(cat "$T/err")"
[ ! -e "$T/o/${ID[1]}" ] || fail "a failed fetch -o left the run folder $T/o/${ID[1]}"
expect_status 6 "$RESULTS" export "${ID[1]}" --format collapsed -o "$T/o.collapsed"
grep -q 'removed by retention on 20..-..-..; summary kept' "$T/err" || fail "export of a removed session: $(cat "$T/err")"
expect_status 6 "$RESULTS" compare "${ID[1]}" "${ID[2]}" --deep
grep -q 'removed by retention on 20..-..-..; summary kept' "$T/err" || fail "compare --deep of a removed session: $(cat "$T/err")"
for k in 0 2 3; do
	expect_status 0 "$RESULTS" fetch "${ID[$k]}" -o "$T/o"
	cmp -s "$(cat "$T/out")" "$T/s$((k + 1)).pyisession" || fail "run ${ID[$k]} does not read back"
done

# Damage: a flipped byte in the pack of run 4. Shallow verify cannot see it, deep can.
cd "$T/ci"
oid4=$(sha256sum "$T/s4.pyisession" | cut -d' ' -f1)
pack=$(python3 - "$STORE/objects/$oid4" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
print(b[72 + 32:72 + 64].hex())
PY
)
printf '\x00\x00\x00\x00' | dd of="$STORE/packs/$pack.pack" bs=1 seek=300 conv=notrunc status=none
expect_status 0 "$RESULTS" verify
expect_status 7 "$RESULTS" verify --deep
grep -q "^damaged .*run ${ID[3]}.*in pack ${pack:0:12}" "$T/out" || fail "verify --deep: $(cat "$T/out")"
expect_status 0 "$RESULTS" verify --repair
grep -q "quarantined pack ${pack:0:12}" "$T/out" || fail "repair did not quarantine: $(cat "$T/out")"
grep -q "pushed again ${oid4:0:12}" "$T/out" || fail "repair did not push again: $(cat "$T/out")"
[ ! -e "$STORE/packs/$pack.idx" ] || fail "the damaged pack still has its index"
[ -e "$STORE/packs/$pack.quarantine" ] || fail "the damaged pack has no quarantine mark"
expect_status 0 "$RESULTS" verify --deep
cd "$T/dev"
expect_status 0 "$RESULTS" fetch "${ID[3]}" -o "$T/o2"
cmp -s "$(cat "$T/out")" "$T/s4.pyisession" || fail "run 4 does not read back after repair"
}

scenario folder "file://$T/store" "$T/store"
eval "$(bash "$SERVERS/webdav.sh" start "$T/dav")"
scenario webdav "$RS_WEBDAV_URL" "$RS_WEBDAV_ROOT/store"
echo "ok"
