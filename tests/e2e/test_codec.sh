#!/bin/bash
# The session codec (store transform 1) under the real git and git-lfs:
#  - generated sessions in the 5.x, 4.x and 4.3 layouts, with non-ASCII and
#    escaped names (--names unicode), and the real 4 MB session, are pushed
#    through the agent: each manifest says transform 1, and the store holds
#    far less than the generic path would;
#  - a fresh clone checks every file out byte for byte;
#  - five successive runs of the same program cost less than five times one
#    (the shared dictionary block is sent once).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_codec

unset GIT_DIR GIT_WORK_TREE

STORE="$T/store"
agent_config() {
	echo -c lfs.standalonetransferagent=results \
	     -c "lfs.customtransfer.results.path=$AGENT" \
	     -c lfs.customtransfer.results.concurrent=false \
	     -c "results.remote=file://$STORE"
}
# the transform field of a manifest: 4 bytes at offset 12
transform_of() { od -An -tu4 -j12 -N4 "$1" | tr -d ' '; }

gen --names unicode --seed 3 --size 3M -o "$T/u5.pyisession"
gen --names unicode --layout 4 --seed 4 --size 2M -o "$T/u4.pyisession"
gen --layout 4.3 --seed 5 --size 2M -o "$T/u43.pyisession"
cp "$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession" "$T/real.pyisession"
# 20 MB: large enough to be mapped and tokenized on a thread of its own
gen --seed 6 --size 20M -o "$T/big.pyisession"
# the same with one separator spelled otherwise near the end: the codec
# must decline it (the generic path stores it)
python3 - "$T/big.pyisession" "$T/odd.pyisession" <<'PY'
import sys
t = open(sys.argv[1]).read()
i = t.rindex('], 0.')
open(sys.argv[2], 'w').write(t[:i] + '],  0.' + t[i + 5:])
PY
grep -q 'u00e9' "$T/u5.pyisession" || fail "--names unicode wrote no escaped non-ASCII name"
grep -q 'ud83d' "$T/u5.pyisession" || fail "--names unicode wrote no surrogate pair"

git init -q --bare "$T/results.git"
agent_repo "$T/ci" "$STORE"
cp "$T/u5.pyisession" "$T/u4.pyisession" "$T/u43.pyisession" "$T/real.pyisession" "$T/big.pyisession" .
git add .gitattributes ./*.pyisession
git commit -qm "five sessions"
git remote add origin "$T/results.git"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push failed"; }
raw=0
for f in u5 u4 u43 real big; do
	oid=$(sha256sum "$T/$f.pyisession" | cut -d' ' -f1)
	[ -f "$STORE/objects/$oid" ] || fail "no manifest for $f"
	[ "$(transform_of "$STORE/objects/$oid")" = 1 ] || fail "$f was not stored with the session codec"
	raw=$((raw + $(stat -c %s "$T/$f.pyisession")))
done
stored=$(du -sb "$STORE/packs" | cut -f1)
echo "stored $stored bytes of packs for $raw raw bytes"
# the generic path keeps about 1/40 of such files
[ "$stored" -lt $((raw / 70)) ] || fail "packs hold $stored bytes for $raw raw: the codec did not apply"

cp "$T/odd.pyisession" .
git add odd.pyisession
git commit -qm "a session in another spelling"
git push -q origin main >/dev/null 2>"$T/push.err" || { cat "$T/push.err"; fail "push failed"; }
oid=$(sha256sum "$T/odd.pyisession" | cut -d' ' -f1)
[ "$(transform_of "$STORE/objects/$oid")" = 0 ] || fail "a record in another spelling was not left to the generic path"

# shellcheck disable=SC2046
git clone -q $(agent_config) "$T/results.git" "$T/clone" 2>"$T/clone.err" ||
	{ cat "$T/clone.err"; fail "clone failed"; }
for f in u5 u4 u43 real big odd; do
	cmp "$T/$f.pyisession" "$T/clone/$f.pyisession" || fail "$f differs after the round trip"
done

# --- five successive runs ------------------------------------------------------------
cost_of_push() { # dir: bytes the store grew by
	local before after
	before=$( (du -sb "$1" 2>/dev/null || echo 0) | cut -f1)
	git push -q origin main >/dev/null 2>"$T/push.err" || { cat "$T/push.err"; fail "push failed"; }
	after=$(du -sb "$1" | cut -f1)
	echo $((after - before))
}
STORE="$T/series"
git init -q --bare "$T/series.git"
agent_repo "$T/s" "$STORE"
git add .gitattributes
git commit -qm start
git remote add origin "$T/series.git"
git push -q origin main >/dev/null 2>&1
total=0
for run in 1 2 3 4 5; do
	gen --seed 9 --run "$run" --size 3M -o session.pyisession
	git add session.pyisession
	git commit -qm "run $run"
	cost=$(cost_of_push "$STORE")
	[ "$run" = 1 ] && first=$cost
	total=$((total + cost))
	echo "run $run: $cost bytes"
done
echo "five runs: $total bytes, one run: $first bytes"
[ "$total" -lt $((5 * first)) ] || fail "five runs cost $total bytes, not less than five times one ($first)"
echo "ok"
