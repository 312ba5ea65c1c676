# shellcheck shell=bash
# Sourced by test_repair_real.sh (a folder store) and test_radosgw.sh
# (Ceph's S3 gateway): the life of a store of real sessions, and every way
# of damaging it that verify --repair must see through, on one backend.
#
#   repair_scenario NAME REMOTE
#
# Real pyinstrument sessions (tests/data/real_small_pop1k.pyisession, and
# two more runs of it with other timings: what successive CI runs of one
# program look like) go through the session codec (store transform 1),
# sharing its dictionary chunk. $DAMAGE (tests/tools/store_damage.c)
# damages the store through the remote layer with checksums and chunk ids
# recomputed, so the damage reaches the last proof: the rebuilt session
# hashed against its oid. Two clones: $T/ci recorded the runs and holds
# their bytes; $T/dev is a fresh clone that holds none (.lfsconfig's
# fetchexclude). A repair counts only when the session then reads back
# byte for byte in the other clone.

DAMAGE=$RS_BIN_DIR/tests/store-damage

# want CASE: the case is to run; RS_REPAIR_CASES="wrong-chunks size ..."
# runs only those (each starts from a healthy store), for a post-mortem.
want() { [ -z "${RS_REPAIR_CASES:-}" ] || [[ " $RS_REPAIR_CASES " == *" $1 "* ]]; }

# real_sessions: $T/r1..r3.pyisession, r1 the real session itself.
real_sessions() {
	cp "$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession" "$T/r1.pyisession"
	python3 - "$T/r1.pyisession" "$T/r2.pyisession" "$T/r3.pyisession" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
for n, out in enumerate(sys.argv[2:], 2):
    # another run: other start time and duration, every 7th sample's time
    u = t.replace('"start_time": 1796028654.0114212', '"start_time": 17960286%02d.5' % (54 + n), 1)
    u = u.replace('"duration": 2.4007604122161865', '"duration": 2.40%d' % n, 1)
    parts = u.split('], 0.00')
    u = ''.join(p + (('], 0.00' if (i % 7) else '], 0.0%d' % n) if i < len(parts) - 1 else '')
                for i, p in enumerate(parts))
    open(out, 'w').write(u)
PY
	python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "$T"/r[123].pyisession ||
		fail "the derived sessions are not JSON"
}

oid_of() { sha256sum "$1" | cut -d' ' -f1; }

# in_dev_reads_back N: in $T/dev, run N fetches byte for byte.
in_dev_reads_back() {
	(cd "$T/dev" && expect_status 0 "$RESULTS" fetch "${RID[$1]}" -o "$T/o$1" &&
		cmp -s "$(cat "$T/out")" "$T/r$(($1 + 1)).pyisession") || fail "run $(($1 + 1)) does not read back"
}

# verdict STATUS WHERE ARGS...: results verify ARGS in WHERE exits STATUS.
verdict() {
	local want=$1 where=$2
	shift 2
	(cd "$where" && expect_status "$want" "$RESULTS" verify "$@") || fail "verify $* in $where"
}

# damaged_then_repaired SHALLOW CASE N...: the store was just damaged
# (CASE says how); a shallow verify exits SHALLOW (0: it cannot see it);
# runs N... are found damaged by verify --deep (exit 7), the clone
# that holds nothing cannot repair them and says so (exit 7, nothing
# "repaired"), the clone that holds them repairs them (exit 0), and they
# read back in the other clone.
damaged_then_repaired() {
	local shallow=$1 what=$2 n
	shift 2
	echo "-- $what"
	verdict "$shallow" "$T/dev"
	verdict 7 "$T/dev" --deep
	for n in "$@"; do
		grep -q "^damaged .*run ${RID[$n]}" "$T/out" || fail "$what: run $((n + 1)) not damaged: $(cat "$T/out")"
	done
	verdict 7 "$T/dev" --repair
	grep -q "repaired 0, not restorable here $#" "$T/out" || fail "$what: repair without the bytes: $(cat "$T/out")"
	! grep -q '^re-pointed\|^pushed again' "$T/out" || fail "$what: a clone without the bytes repaired: $(cat "$T/out")"
	verdict 7 "$T/dev" --deep # still damaged: nothing claimed, nothing changed
	verdict 0 "$T/ci" --repair
	grep -q "repaired $#, not restorable here 0" "$T/out" || fail "$what: repair: $(cat "$T/out")"
	for n in "$@"; do
		grep -q "^pushed again ${OID[$n]:0:12}" "$T/out" || fail "$what: run $((n + 1)) not pushed again: $(cat "$T/out")"
	done
	verdict 0 "$T/dev" --deep
	for n in "$@"; do in_dev_reads_back "$n"; done
}

# lost_then_restored CASE N: run N lost a part on the remote (CASE); the
# clone without its bytes cannot restore it (exit 6, it says so), the
# clone with them pushes it again, and it reads back in the other clone.
lost_then_restored() {
	local what=$1 n=$2
	verdict 6 "$T/dev" --repair
	grep -q "cannot restore ${OID[$n]:0:12}.*no clone here holds it" "$T/out" ||
		fail "repair without the bytes of $what: $(cat "$T/out")"
	verdict 0 "$T/ci" --repair
	grep -q "^pushed again ${OID[$n]:0:12}" "$T/out" || fail "repair of $what: $(cat "$T/out")"
	verdict 0 "$T/dev" --deep
	in_dev_reads_back "$n"
}

repair_scenario() {
	local name=$1 REMOTE=$2 i
	echo "== $name"
	rm -rf "${T:?}/results.git" "${T:?}/ci" "${T:?}/dev" "${T:?}"/o?
	real_sessions
	git init -q --bare "$T/results.git"
	git clone -q "$T/results.git" "$T/ci" 2>/dev/null
	cd "$T/ci" || fail "no clone $T/ci"
	expect_status 0 "$RESULTS" init --remote "$REMOTE"
	for i in 1 2 3; do
		RESULTS_RECORDED_AT=$((1764500000 + i * 100)) "$RESULTS" add "$T/r$i.pyisession" \
			--commit "$(printf '%040d' $i)" --trigger ci --branch main >/dev/null
	done
	git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push to $REMOTE"; }
	RID=() OID=()
	mapfile -t RID < <(git show HEAD:index/2025-11.jsonl |
		python3 -c 'import sys,json; [print(json.loads(l)["id"]) for l in sys.stdin if l.strip()]')
	[ "${#RID[@]}" = 3 ] || fail "expected 3 runs, got ${#RID[@]}"
	for i in 0 1 2; do
		OID[i]=$(oid_of "$T/r$((i + 1)).pyisession")
		"$DAMAGE" "$REMOTE" manifest "${OID[$i]}" >"$T/m$i" || fail "no manifest for run $((i + 1))"
		head -n 1 "$T/m$i" | grep -q '^transform 1 ' || fail "run $((i + 1)) is not stored with the session codec"
	done
	# Three runs of one program share the codec's dictionary chunk.
	[ "$(sed -n 2p "$T/m0" | cut -d' ' -f2)" = "$(sed -n 2p "$T/m1" | cut -d' ' -f2)" ] ||
		fail "runs 1 and 2 do not share their dictionary chunk"

	git clone -q "$T/results.git" "$T/dev" 2>/dev/null
	(cd "$T/dev" && expect_status 0 "$RESULTS" init) || fail "init in a fresh clone"
	for i in 0 1 2; do in_dev_reads_back $i; done
	[ ! -e "$T/dev/.git/lfs/objects/${OID[0]:0:2}/${OID[0]:2:2}/${OID[0]}" ] ||
		fail "the fresh clone holds the session: the cases need one that does not"
	verdict 0 "$T/dev" --deep
	grep -q '3 runs, 3 objects (deep): 3 ok' "$T/out" || fail "verify --deep: $(cat "$T/out")"

	# --- item 8: damage that every checksum and chunk id agrees with -----
	if want wrong-chunks; then
		"$DAMAGE" "$REMOTE" wrong-chunks "${OID[0]}" "${OID[1]}" || fail "wrong-chunks"
		damaged_then_repaired 0 "a manifest listing another run's chunks" 0
	fi
	if want size; then
		"$DAMAGE" "$REMOTE" size "${OID[1]}" 1 || fail "size"
		damaged_then_repaired 7 "a manifest one byte too long" 1
	fi
	if want flip; then
		"$DAMAGE" "$REMOTE" set-byte "${OID[2]}" -1 -1 flip || fail "set-byte"
		damaged_then_repaired 0 "a container byte flipped, chunk id recomputed" 2
	fi
	if want dict; then
		"$DAMAGE" "$REMOTE" set-byte "${OID[0]}" 0 -1 flip --all || fail "set-byte --all"
		damaged_then_repaired 0 "the shared dictionary chunk changed" 0 1 2
	fi

	# A pack whose index lies (it claims a chunk it holds damaged) is what a
	# push again may borrow from: the proof finds it, the pack is
	# quarantined and the session pushed once more.
	if want lying-pack; then
		echo "-- a push again borrows from a pack whose index lies"
		"$DAMAGE" "$REMOTE" manifest "${OID[2]}" >"$T/m2"
		last=$(($(head -n 1 "$T/m2" | sed 's/.* chunks //') - 1))
		pack=$(tail -n 1 "$T/m2" | cut -d' ' -f3)
		"$DAMAGE" "$REMOTE" list packs/ | sort >"$T/packs.before"
		"$DAMAGE" "$REMOTE" lying-pack "${OID[2]}" "$last" || fail "lying-pack"
		liar=$("$DAMAGE" "$REMOTE" list packs/ | sort | comm -13 "$T/packs.before" - |
			sed -n 's|^packs/\([0-9a-f]*\)\.pack .*|\1|p')
		[ -n "$liar" ] || fail "no lying pack was written"
		"$DAMAGE" "$REMOTE" del "packs/$pack.pack" || fail "del pack"
		"$DAMAGE" "$REMOTE" del "packs/$pack.idx" || fail "del idx"
		verdict 6 "$T/dev"
		verdict 0 "$T/ci" --repair
		grep -q "^quarantined pack ${liar:0:12}" "$T/out" || fail "the lying pack was not quarantined: $(cat "$T/out")"
		grep -q "^pushed again ${OID[2]:0:12}" "$T/out" || fail "not pushed again past the lying pack: $(cat "$T/out")"
		verdict 0 "$T/dev" --deep
		in_dev_reads_back 2
	fi

	# --- item 7: parts missing on the remote ------------------------------
	if want pack; then
		echo "-- a pack missing"
		"$DAMAGE" "$REMOTE" manifest "${OID[2]}" >"$T/m2"
		pack=$(tail -n 1 "$T/m2" | cut -d' ' -f3)
		"$DAMAGE" "$REMOTE" del "packs/$pack.pack" || fail "del pack"
		"$DAMAGE" "$REMOTE" del "packs/$pack.idx" || fail "del idx"
		verdict 6 "$T/dev"
		grep -q "^incomplete .*run ${RID[2]}" "$T/out" || fail "verify of a missing pack: $(cat "$T/out")"
		# The push path does not take the manifest for the object: it checks its packs.
		(cd "$T/ci" && git lfs push --object-id origin "${OID[2]}" >"$T/out" 2>&1) ||
			fail "git lfs push --object-id: $(cat "$T/out")"
		verdict 0 "$T/dev" --deep
		in_dev_reads_back 2
		"$DAMAGE" "$REMOTE" manifest "${OID[2]}" >"$T/m2"
		pack=$(tail -n 1 "$T/m2" | cut -d' ' -f3)
		"$DAMAGE" "$REMOTE" del "packs/$pack.pack" || fail "del pack"
		lost_then_restored "a missing pack" 2
	fi

	if want manifest; then
		echo "-- a manifest missing"
		"$DAMAGE" "$REMOTE" del "objects/${OID[1]}" || fail "del manifest"
		verdict 6 "$T/dev"
		grep -q "^missing .*run ${RID[1]}" "$T/out" || fail "verify of a missing manifest: $(cat "$T/out")"
		(cd "$T/dev" && expect_status 6 "$RESULTS" fetch "${RID[1]}" -o "$T/o1") || fail "fetch of a missing manifest"
		! grep -q planned "$T/err" || fail "fetch points to a planned feature: $(cat "$T/err")"
		lost_then_restored "a missing manifest" 1
	fi

	# --- item 9: a newer writer's store or session is not damage ----------
	if want format; then
		echo "-- a store of format version 2"
		"$DAMAGE" "$REMOTE" put FORMAT $'results-store 2\n' || fail "put FORMAT"
		(cd "$T/dev" && expect_status 9 "$RESULTS" verify --deep) || fail "verify --deep of a newer store"
		grep -q "upgrade results" "$T/err" || fail "verify of a newer store: $(cat "$T/out" "$T/err")"
		(cd "$T/dev" && expect_status 9 "$RESULTS" doctor) || fail "doctor of a newer store"
		grep -q "upgrade results" "$T/out" || fail "doctor of a newer store: $(cat "$T/out")"
		"$DAMAGE" "$REMOTE" list "" | sort >"$T/keys.before"
		(cd "$T/ci" && expect_status 9 "$RESULTS" gc --grace 0 --force) || fail "gc of a newer store"
		(cd "$T/ci" && expect_status 9 "$RESULTS" verify --repair) || fail "verify --repair of a newer store"
		"$DAMAGE" "$REMOTE" list "" | sort >"$T/keys.after"
		cmp -s "$T/keys.before" "$T/keys.after" || fail "gc or repair changed a newer store"
		"$DAMAGE" "$REMOTE" put FORMAT $'results-store 1\n' || fail "put FORMAT back"
		verdict 0 "$T/dev" --deep
	fi

	if want codec; then
		echo "-- a session of a newer codec version"
		"$DAMAGE" "$REMOTE" set-byte "${OID[2]}" 0 8 200 || fail "set-byte version"
		"$DAMAGE" "$REMOTE" manifest "${OID[2]}" >"$T/m2.newer"
		(cd "$T/dev" && expect_status 9 "$RESULTS" verify --deep) || fail "verify --deep of a newer session"
		grep -q "^newer .*run ${RID[2]}.*needs a newer results" "$T/out" || fail "verify of a newer session: $(cat "$T/out")"
		! grep -q "^damaged" "$T/out" || fail "a newer session reported damaged: $(cat "$T/out")"
		(cd "$T/dev" && expect_status 9 "$RESULTS" fetch "${RID[2]}" -o "$T/o2") || fail "fetch of a newer session"
		grep -q "upgrade results" "$T/err" || fail "fetch of a newer session: $(cat "$T/err")"
		"$DAMAGE" "$REMOTE" list packs/ | grep -c '\.quarantine ' >"$T/q.before" || true
		(cd "$T/ci" && expect_status 9 "$RESULTS" verify --repair) || fail "verify --repair of a newer session"
		! grep -q "^pushed again\|^quarantined\|^re-pointed" "$T/out" || fail "a newer session was repaired: $(cat "$T/out")"
		"$DAMAGE" "$REMOTE" list packs/ | grep -c '\.quarantine ' >"$T/q.after" || true
		cmp -s "$T/q.before" "$T/q.after" || fail "a newer session's pack was quarantined"
		"$DAMAGE" "$REMOTE" manifest "${OID[2]}" | cmp -s - "$T/m2.newer" || fail "a newer session's manifest was rewritten"
		# A push of it leaves a newer writer's manifest alone, too.
		(cd "$T/ci" && git lfs push --object-id origin "${OID[2]}" >/dev/null 2>&1) || fail "git lfs push of a newer session"
		"$DAMAGE" "$REMOTE" manifest "${OID[2]}" | cmp -s - "$T/m2.newer" || fail "a push overwrote a newer session's manifest"
		# Put it back as this version wrote it: the case after is gc's.
		"$DAMAGE" "$REMOTE" del "objects/${OID[2]}" || fail "del"
		verdict 0 "$T/ci" --repair
		verdict 0 "$T/dev" --deep
	fi

	if want manifest-version; then
		echo "-- a manifest of format version 2"
		"$DAMAGE" "$REMOTE" manifest-version "${OID[1]}" 2 || fail "manifest-version"
		verdict 9 "$T/dev" --deep
		grep -q "^newer .*run ${RID[1]}.*needs a newer results.*upgrade results" "$T/out" ||
			fail "verify of a newer manifest: $(cat "$T/out")"
		"$DAMAGE" "$REMOTE" list "" | sort >"$T/keys.before"
		verdict 9 "$T/ci" --repair
		! grep -q "^pushed again\|^quarantined\|^re-pointed" "$T/out" || fail "a newer manifest was repaired: $(cat "$T/out")"
		# gc cannot know which packs a newer manifest names: it collects nothing.
		(cd "$T/ci" && expect_status 9 "$RESULTS" gc --grace 0 --force) || fail "gc with a newer manifest"
		grep -q "nothing was collected" "$T/err" || fail "gc with a newer manifest: $(cat "$T/err")"
		"$DAMAGE" "$REMOTE" list "" | sort >"$T/keys.after"
		cmp -s "$T/keys.before" "$T/keys.after" || fail "gc or repair changed the store around a newer manifest"
		"$DAMAGE" "$REMOTE" del "objects/${OID[1]}" || fail "del"
		verdict 0 "$T/ci" --repair
		verdict 0 "$T/dev" --deep
	fi

	# --- gc: a policy drops the oldest run, its packs go over three runs --
	if want gc; then
		echo "-- gc"
		cd "$T/ci" || fail "no clone $T/ci"
		python3 - <<'PY'
import json
d = json.load(open('.results.json'))
d['retention'] = {'keep_last': 2}
json.dump(d, open('.results.json', 'w'), indent=2)
PY
		git commit -qam "results: keep the newest two runs"
		git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push"; }
		expect_status 0 "$RESULTS" gc --grace 0 --force
		grep -q '^removed 1 raw sessions' "$T/out" || fail "gc: $(cat "$T/out")"
		expect_status 0 "$RESULTS" gc --grace 0 --force
		expect_status 0 "$RESULTS" gc --grace 0 --force
		grep -q ' [1-9][0-9]* swept' "$T/out" || fail "the third gc swept nothing: $(cat "$T/out")"
		(cd "$T/dev" && git pull -q 2>/dev/null) || fail "git pull in dev"
		verdict 0 "$T/dev" --deep
		grep -q "^removed .*run ${RID[0]}" "$T/out" || fail "verify after gc: $(cat "$T/out")"
		grep -q '3 runs, 3 objects (deep): 2 ok, 1 removed by retention' "$T/out" || fail "verify after gc: $(cat "$T/out")"
		in_dev_reads_back 1
		in_dev_reads_back 2
	fi
}
