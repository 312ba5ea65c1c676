#!/bin/bash
# git-lfs's own prune against the only copy of a session (issue 18, item
# 4), with Debian's git-lfs 3.3 and the .lfsconfig `results init`
# commits (lfs.fetchexclude = *.pyisession, which makes git-lfs count
# every session as unreachable):
#  1. a commit pushed with `git push --no-verify` uploads no session;
#     `git lfs prune` and `git lfs prune --verify-remote` (also with the
#     store unreachable, so that lfs-agent's verification fails) delete
#     .git/lfs/objects' copy; the copy `results add` holds outside git-lfs's
#     reach survives: `results fetch` and `git lfs pull` rebuild the
#     sessions byte for byte;
#  2. the next push uploads them (the pre-push hook) and drops the held
#     copies; a fresh clone fetches them from the store;
#  3. `results verify --repair` uploads a held session the store lacks;
#  4. `results prune` frees only the local copies the store proved it
#     can rebuild (`--dry-run` first, which deletes nothing), never a
#     held one the store lacks;
#  5. the same with lfs.storage on another file system (/dev/shm), where
#     the held copy cannot be a hard link.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_lfs_prune

case "$(git lfs version)" in
git-lfs/3.3.*) ;;
*) fail "this test is about Debian 12's git-lfs 3.3, found: $(git lfs version)" ;;
esac

STORE="$T/store"
REAL=$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession
cp "$REAL" "$T/a.pyisession"
cp "$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_4.6.2.pyisession" "$T/b.pyisession"
gen --seed 3 --size 300k -o "$T/c.pyisession"
gen --seed 4 --size 200k -o "$T/d.pyisession"
SHA1=1111111111111111111111111111111111111111
SHA2=2222222222222222222222222222222222222222
SHA3=3333333333333333333333333333333333333333
SHA4=4444444444444444444444444444444444444444
oid_of() { sha256sum "$1" | cut -d' ' -f1; }
in_store() { [ -f "$STORE/objects/$1" ]; }
held() { [ -f .git/results/unpushed/"$1" ]; }
lfs_objects() { find .git/lfs/objects -type f 2>/dev/null | wc -l; }

results_ci "$STORE"
[ "$(git config -f .lfsconfig lfs.fetchexclude)" = "*.pyisession" ] || fail "init's .lfsconfig"

# --- 1. pushed without its session, then git lfs prune ---------------------
RESULTS_RECORDED_AT=1764494000 expect_status 0 "$RESULTS" add "$T/a.pyisession" --commit $SHA1 --trigger ci
RESULTS_RECORDED_AT=1764494100 expect_status 0 "$RESULTS" add "$T/b.pyisession" --commit $SHA2 --trigger ci
A=$(oid_of "$T/a.pyisession")
B=$(oid_of "$T/b.pyisession")
held "$A" && held "$B" || fail "results add holds no copy of its sessions"
git push -q --no-verify origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push --no-verify"; }
! in_store "$A" && ! in_store "$B" || fail "push --no-verify uploaded a session"
git lfs prune >"$T/prune.out" 2>&1 || { cat "$T/prune.out"; fail "git lfs prune"; }
[ "$(lfs_objects)" = 0 ] || fail "git lfs prune kept the sessions here (the premise of the test is gone)"
held "$A" && held "$B" || fail "git lfs prune deleted the held copies"
expect_status 0 "$RESULTS" fetch 1111111 -o "$T/out1"
cmp -s "$(tail -n 1 "$T/out")" "$T/a.pyisession" || fail "the real session does not rebuild after git lfs prune"
# --verify-remote, with the store unreachable: lfs-agent cannot confirm
# anything, and git-lfs 3.3 deletes anyway.
git lfs fetch --include='*.pyisession' --exclude= >/dev/null 2>&1 || true
git config results.remote "file://$T/nowhere/store"
git lfs prune --verify-remote >"$T/prune.out" 2>&1 || true
git config results.remote "file://$STORE"
[ "$(lfs_objects)" = 0 ] || fail "git lfs prune --verify-remote kept the sessions (the premise is gone): $(cat "$T/prune.out")"
held "$A" && held "$B" || fail "git lfs prune --verify-remote deleted the held copies"
# git lfs pull downloads through lfs-agent, which takes the held copy.
git lfs pull --include='runs/**' --exclude= 2>"$T/pull.err" || { cat "$T/pull.err"; fail "git lfs pull after prune"; }
got=$(git ls-files '*.pyisession' | xargs sha256sum | cut -d' ' -f1 | sort | tr '\n' ' ')
want=$(printf '%s\n' "$A" "$B" | sort | tr '\n' ' ')
[ "$got" = "$want" ] || fail "git lfs pull after prune: $got, want $want"
git lfs prune >/dev/null 2>&1
expect_status 0 "$RESULTS" fetch 2222222 -o "$T/out2"
cmp -s "$(tail -n 1 "$T/out")" "$T/b.pyisession" || fail "the second session does not rebuild"
pass "1. git lfs prune and prune --verify-remote leave the held copies; fetch and git lfs pull rebuild them"

# --- 2. the next push uploads them ---------------------------------------------
git lfs prune >/dev/null 2>&1
git commit -q --allow-empty -m "a later commit, no session"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "the next push"; }
grep -q "uploading 2 session(s) recorded in this clone" "$T/push.err" || fail "push message: $(cat "$T/push.err")"
in_store "$A" && in_store "$B" || fail "the next push did not upload the held sessions"
! held "$A" && ! held "$B" || fail "the held copies stay after the store has them"
git clone -q "$T/results.git" "$T/fresh" 2>/dev/null
cd "$T/fresh"
expect_status 0 "$RESULTS" init
expect_status 0 "$RESULTS" fetch 1111111 -o "$T/fresh1"
cmp -s "$(tail -n 1 "$T/out")" "$T/a.pyisession" || fail "a fresh clone fetches another session"
cd "$T/ci"
# A normal push (through the hook) leaves nothing held either.
RESULTS_RECORDED_AT=1764494150 expect_status 0 "$RESULTS" add "$T/d.pyisession" --commit $SHA4 --trigger ci
D=$(oid_of "$T/d.pyisession")
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push d"; }
in_store "$D" && ! held "$D" || fail "a normal push left a held copy or uploaded nothing"
pass "2. the next push uploads the held sessions and drops the copies; a fresh clone fetches them"

# --- 3. verify --repair uploads a held session the store lacks -----------------
RESULTS_RECORDED_AT=1764494200 expect_status 0 "$RESULTS" add "$T/c.pyisession" --commit $SHA3 --trigger ci
C=$(oid_of "$T/c.pyisession")
git push -q --no-verify origin main 2>/dev/null
git lfs prune >/dev/null 2>&1
[ "$(lfs_objects)" = 0 ] && held "$C" || fail "set-up of the repair case"
expect_status 6 "$RESULTS" verify
expect_status 0 "$RESULTS" verify --repair
grep -q "$(echo "$C" | cut -c1-12)" "$T/out" || fail "verify --repair does not name the session: $(cat "$T/out")"
in_store "$C" && ! held "$C" || fail "verify --repair did not upload the held session"
expect_status 0 "$RESULTS" verify --deep
pass "3. verify --repair uploads a held session the store lacks and drops the copy"

# --- 4. results prune frees only what the store holds ----------------------------
RESULTS_RECORDED_AT=1764494300 expect_status 0 "$RESULTS" add "$T/b.pyisession" --commit $SHA4 --trigger again \
	--meta again=1
gen --seed 9 --size 100k -o "$T/e.pyisession"
RESULTS_RECORDED_AT=1764494400 expect_status 0 "$RESULTS" add "$T/e.pyisession" --commit $SHA4 --trigger e
E=$(oid_of "$T/e.pyisession")
git push -q --no-verify origin main 2>/dev/null
expect_status 0 "$RESULTS" fetch 1111111      # a and b back in .git/lfs/objects
expect_status 0 "$RESULTS" fetch 2222222
before=$(lfs_objects)
expect_status 0 "$RESULTS" prune --dry-run
grep -q "^would free " "$T/out" || fail "prune --dry-run: $(cat "$T/out")"
grep -q "not in the store" "$T/out" || fail "prune --dry-run does not name what it keeps: $(cat "$T/out")"
[ "$(lfs_objects)" = "$before" ] || fail "prune --dry-run deleted something"
expect_status 0 "$RESULTS" prune
grep -q "^freed " "$T/out" || fail "prune: $(cat "$T/out")"
for o in "$A" "$B" "$C" "$D"; do
	[ ! -e ".git/lfs/objects/${o:0:2}/${o:2:2}/$o" ] || fail "prune kept ${o:0:12}, which the store holds"
done
[ -f ".git/lfs/objects/${E:0:2}/${E:2:2}/$E" ] && held "$E" || fail "prune deleted a session the store lacks"
in_store "$E" && fail "the store holds e already (the case is gone)"
# What prune freed comes back from the store.
expect_status 0 "$RESULTS" fetch 1111111 -o "$T/out3"
cmp -s "$(tail -n 1 "$T/out")" "$T/a.pyisession" || fail "a session pruned here does not come back"
git push -q origin main 2>/dev/null || true
git commit -q --allow-empty -m "push e" && git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push e"; }
in_store "$E" && ! held "$E" || fail "e was not uploaded by the next push"
expect_status 0 "$RESULTS" prune
[ "$(lfs_objects)" = 0 ] || fail "prune left objects the store holds: $(find .git/lfs/objects -type f)"
pass "4. results prune frees only what the store can rebuild; a dry run deletes nothing"

# --- 5. lfs.storage on another file system: the held copy is a copy ----------------
SHM=$(mktemp -d /dev/shm/test_lfs_prune.XXXXXX)
on_exit() { rm -rf "$SHM"; }
[ "$(stat -c %d "$SHM")" != "$(stat -c %d "$T")" ] || fail "/dev/shm is on the file system of $T: no cross-device case"
git clone -q "$T/results.git" "$T/far" 2>/dev/null
cd "$T/far"
git config lfs.storage "$SHM/lfs"
expect_status 0 "$RESULTS" init
gen --seed 11 --size 120k -o "$T/f.pyisession"
F=$(oid_of "$T/f.pyisession")
RESULTS_RECORDED_AT=1764494500 expect_status 0 "$RESULTS" add "$T/f.pyisession" --commit $SHA4 --trigger far
[ -f "$SHM/lfs/objects/${F:0:2}/${F:2:2}/$F" ] && held "$F" || fail "lfs.storage elsewhere: no object or no held copy"
[ "$(stat -c %i "$SHM/lfs/objects/${F:0:2}/${F:2:2}/$F")" != "$(stat -c %i ".git/results/unpushed/$F")" ] ||
	fail "a hard link across file systems?"
git push -q --no-verify origin main 2>/dev/null
git lfs prune >/dev/null 2>&1
[ ! -e "$SHM/lfs/objects/${F:0:2}/${F:2:2}/$F" ] || fail "git lfs prune kept the object (the premise is gone)"
expect_status 0 "$RESULTS" fetch $SHA4 -o "$T/far-out"
cmp -s "$(tail -n 1 "$T/out")" "$T/f.pyisession" || fail "lfs.storage elsewhere: the session does not rebuild after prune"
git lfs prune >/dev/null 2>&1
git commit -q --allow-empty -m "push f"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push f"; }
in_store "$F" && ! held "$F" || fail "lfs.storage elsewhere: the next push did not upload the held copy"
pass "5. lfs.storage on another file system: the held copy is a copy, put back and uploaded the same way"

echo "ok: test_lfs_prune"
