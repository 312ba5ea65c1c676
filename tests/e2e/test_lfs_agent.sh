#!/bin/bash
# The storage layer and lfs-agent under the real git and git-lfs (issue 2):
#  - two generated sessions (a base run and the "next commit") are pushed
#    through the agent to a folder remote;
#  - a fresh clone, with concurrent=true and with concurrent=false, checks
#    them out byte-identical;
#  - a GIT_LFS_SKIP_SMUDGE clone holds pointers only; `git lfs pull
#    --include` fetches exactly the one file named;
#  - pushing the same content again uploads nothing;
#  - a manifest that rebuilds another object of the same size: git-lfs's
#    hash refuses the download, the agent removes the refused file;
#  - a corrupted pack makes the download fail with a clear message and
#    leaves no bad file in the working tree;
#  - a missing remote is a clear error at init; a mistyped folder remote
#    is not created, and its message is the one results fetch gives;
#  - a pointer whose size is wrong blames the pointer, not the store;
#  - stale temporary files of killed agents (store folder, local cache,
#    .git/lfs/tmp) are removed at the next session, fresh ones are kept.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_lfs_agent

unset GIT_DIR GIT_WORK_TREE

STORE="$T/store"
# The keys a clone needs to use the agent (what `results init` writes).
agent_config() { # concurrent
	echo -c lfs.standalonetransferagent=results \
	     -c "lfs.customtransfer.results.path=$AGENT" \
	     -c "lfs.customtransfer.results.concurrent=$1" \
	     -c "results.remote=file://$STORE"
}
# Every file but the touch marks a push of an object already there writes (docs/store-format.md).
store_listing() { (cd "$STORE" && find . -type f -not -path './gc/touched/*' -printf '%p %s %T@\n' | sort); }

"$GEN" --seed 1 --size 3M -o "$T/base.pyisession"
"$GEN" --seed 1 --size 3M --variant next -o "$T/next.pyisession"
cmp -s "$T/base.pyisession" "$T/next.pyisession" && fail "the next-commit variant is identical"

# --- push --------------------------------------------------------------------
git init -q --bare "$T/results.git"
agent_repo "$T/ci" "$STORE"
mkdir -p runs/1 runs/2
cp "$T/base.pyisession" runs/1/session.pyisession
cp "$T/next.pyisession" runs/2/session.pyisession
git add .gitattributes runs
git commit -qm "two runs"
git remote add origin "$T/results.git"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push failed"; }
[ -f "$STORE/FORMAT" ] || fail "no FORMAT file in the store"
nobj=$(find "$STORE/objects" -type f | wc -l)
[ "$nobj" = 2 ] || fail "expected 2 manifests in the store, found $nobj"
stored=$(du -sb "$STORE" | cut -f1)
raw=$(( $(stat -c %s "$T/base.pyisession") + $(stat -c %s "$T/next.pyisession") ))
echo "stored $stored bytes for $raw raw bytes"
[ "$stored" -lt $((raw / 10)) ] || fail "store holds $stored bytes for $raw raw: not compressed"

# --- pushing the same content again uploads nothing ----------------------------
before=$(store_listing)
GIT_TRACE=1 git lfs push --all origin main >"$T/repush.out" 2>&1 || { cat "$T/repush.out"; fail "re-push failed"; }
grep -q "already present" "$T/repush.out" || fail "the agent was not asked, or did not see the objects present"
[ "$(store_listing)" = "$before" ] || fail "re-pushing the same content changed the store"
[ "$(find "$STORE/gc/touched" -type f | wc -l)" = 2 ] || fail "the re-push did not touch both manifests"

# --- leftovers of killed agents: stale ones go at the next push, live ones stay --------
CACHE=$(find "$HOME/.cache/results" -mindepth 1 -maxdepth 1 -type d | head -1)
[ -n "$CACHE" ] || fail "no local cache folder under $HOME/.cache/results"
mkdir -p "$CACHE/tmp"
for f in "$STORE/packs/x.pack.tmp-Stale1" "$STORE/objects/y.tmp-Stale2" "$STORE/FORMAT.tmp-Stale3" \
	 "$CACHE/tmp/pack-Stale4" "$CACHE/z.idx.tmp-Stale5"; do
	head -c 1000 /dev/zero >"$f"
	touch -d '2 hours ago' "$f"
done
for f in "$STORE/packs/x.pack.tmp-Fresh1" "$CACHE/tmp/pack-Fresh2"; do
	head -c 1000 /dev/zero >"$f"
	touch -d '10 minutes ago' "$f"
done
touch -d '2 hours ago' "$STORE/packs/not-ours.bin"
if [ "$(id -u)" = 0 ]; then # another user's stale file is never ours to remove
	head -c 10 /dev/zero >"$STORE/packs/other.tmp-Other1"
	chown 65534 "$STORE/packs/other.tmp-Other1"
	touch -d '2 hours ago' "$STORE/packs/other.tmp-Other1"
fi
"$GEN" --seed 2 --size 1M -o runs/1/extra.pyisession
git add runs/1/extra.pyisession
git commit -qm "a third session"
git push -q origin main 2>"$T/push3.err" || { cat "$T/push3.err"; fail "push of a third session failed"; }
for f in "$STORE/packs/x.pack.tmp-Stale1" "$STORE/objects/y.tmp-Stale2" "$STORE/FORMAT.tmp-Stale3" \
	 "$CACHE/tmp/pack-Stale4" "$CACHE/z.idx.tmp-Stale5"; do
	[ ! -e "$f" ] || fail "the stale temporary file $f was not removed"
done
for f in "$STORE/packs/x.pack.tmp-Fresh1" "$CACHE/tmp/pack-Fresh2" "$STORE/packs/not-ours.bin"; do
	[ -e "$f" ] || fail "$f was removed: it is not stale, or not a temporary file"
done
if [ "$(id -u)" = 0 ]; then
	[ -e "$STORE/packs/other.tmp-Other1" ] || fail "another user's temporary file was removed"
	rm -f "$STORE/packs/other.tmp-Other1"
fi
rm -f "$STORE/packs/x.pack.tmp-Fresh1" "$STORE/packs/not-ours.bin"

# --- fresh clones, both agent modes -------------------------------------------
for conc in true false; do
	# shellcheck disable=SC2046
	git clone -q $(agent_config $conc) "$T/results.git" "$T/clone-$conc" 2>"$T/clone.err" ||
		{ cat "$T/clone.err"; fail "clone (concurrent=$conc) failed"; }
	cmp "$T/base.pyisession" "$T/clone-$conc/runs/1/session.pyisession" || fail "run 1 differs (concurrent=$conc)"
	cmp "$T/next.pyisession" "$T/clone-$conc/runs/2/session.pyisession" || fail "run 2 differs (concurrent=$conc)"
done

# --- pointers only, then one file -------------------------------------------------
# shellcheck disable=SC2046
GIT_LFS_SKIP_SMUDGE=1 git clone -q $(agent_config true) "$T/results.git" "$T/lazy"
cd "$T/lazy"
for f in runs/1/session.pyisession runs/2/session.pyisession; do
	head -1 "$f" | grep -q '^version https://git-lfs.github.com/spec/v1$' || fail "$f is not a pointer"
done
[ -z "$(find .git/lfs/objects -type f 2>/dev/null)" ] || fail "a skip-smudge clone downloaded objects"
# Downloads a killed agent left in .git/lfs/tmp: the stale ones go at the next session.
mkdir -p .git/lfs/tmp
H=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
head -c 1000 /dev/zero >".git/lfs/tmp/results-$H.tmp-Stale6"
head -c 1000 /dev/zero >".git/lfs/tmp/results-$H"
touch -d '2 hours ago' ".git/lfs/tmp/results-$H.tmp-Stale6" ".git/lfs/tmp/results-$H"
head -c 1000 /dev/zero >".git/lfs/tmp/results-$H.tmp-Fresh3"
git lfs pull --include=runs/2/session.pyisession
[ ! -e ".git/lfs/tmp/results-$H.tmp-Stale6" ] || fail "a stale partial download was not removed"
[ ! -e ".git/lfs/tmp/results-$H" ] || fail "a stale download was not removed"
[ -e ".git/lfs/tmp/results-$H.tmp-Fresh3" ] || fail "a fresh partial download was removed"
rm -f ".git/lfs/tmp/results-$H.tmp-Fresh3"
cmp "$T/next.pyisession" runs/2/session.pyisession || fail "the pulled file differs"
head -1 runs/1/session.pyisession | grep -q '^version ' || fail "run 1 was pulled too"
n=$(find .git/lfs/objects -type f | wc -l)
[ "$n" = 1 ] || fail "git lfs pull --include fetched $n objects, not 1"

# --- a manifest that rebuilds another object: git-lfs's hash refuses it --------------
# Every chunk is whole and the manifest valid, but it rebuilds base.pyisession
# for the oid of a file of the same size that differs in one byte. The agent
# does not hash its downloads (git-lfs checks each one: results/store.h): the
# file git-lfs refuses goes, nothing enters .git/lfs/objects, and the work
# tree keeps no bad file.
python3 - "$T/base.pyisession" "$T/other.pyisession" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 1
open(sys.argv[2], "wb").write(b)
PY
base_oid=$(sha256sum "$T/base.pyisession" | cut -d' ' -f1)
other_oid=$(sha256sum "$T/other.pyisession" | cut -d' ' -f1)
base_manifest=$(find "$STORE/objects" -type f -name "$base_oid")
[ -n "$base_manifest" ] || fail "no manifest for the base session"
python3 - "$base_manifest" "$other_oid" "${base_manifest%"$base_oid"}$other_oid" <<'PY'
import hashlib, sys
m = bytearray(open(sys.argv[1], "rb").read())
m[16:48] = bytes.fromhex(sys.argv[2])
m[-32:] = hashlib.sha256(bytes(m[:-32])).digest()
open(sys.argv[3], "wb").write(m)
PY
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %s\n' "$other_oid" \
	"$(stat -c %s "$T/other.pyisession")" >"$T/other.pointer"
git update-index --add --cacheinfo "100644,$(git hash-object -w --stdin <"$T/other.pointer"),runs/3/session.pyisession"
git commit -qm "a session whose manifest rebuilds another" --no-verify
# (LC_ALL=C: git-lfs's own message is matched, and git-lfs translates it)
if LC_ALL=C LANGUAGE= git lfs pull --include=runs/3/session.pyisession 2>"$T/other.err"; then
	fail "a pull of an object its manifest does not rebuild succeeded"
fi
grep -q "invalid hash" "$T/other.err" || { cat "$T/other.err"; fail "git-lfs did not refuse the wrong bytes by their hash"; }
[ -z "$(find .git/lfs/objects -name "$other_oid")" ] || fail "the wrong bytes entered .git/lfs/objects"
[ -z "$(find .git/lfs/tmp -name 'results-*' -type f 2>/dev/null)" ] ||
	fail "the refused download was left in .git/lfs/tmp: $(ls .git/lfs/tmp)"
if [ -e runs/3/session.pyisession ]; then
	head -1 runs/3/session.pyisession | grep -q '^version ' || fail "the wrong bytes reached the work tree"
fi
git rm -q --cached runs/3/session.pyisession
git commit -qm "the wrong session goes" --no-verify
rm -f "${base_manifest%"$base_oid"}$other_oid" runs/3/session.pyisession

# --- a damaged store: clear failure, nothing bad in the working tree -----------------
for p in "$STORE"/packs/*.pack; do
	python3 - "$p" <<'PY'
import sys
path = sys.argv[1]
with open(path, "r+b") as f:
    f.seek(0, 2)
    n = f.tell()
    f.seek(n // 2)
    b = f.read(1)
    f.seek(n // 2)
    f.write(bytes([b[0] ^ 0x55]))
PY
done
if git lfs pull --include=runs/1/session.pyisession 2>"$T/bad.err"; then
	fail "pull from a corrupted store succeeded"
fi
# The pack is at fault, not the manifest: deleting the manifest and pushing again
# would borrow the same damaged chunks.
grep -q "do not delete it" "$T/bad.err" || { cat "$T/bad.err"; fail "no advice to keep the manifest"; }
grep -q "delete objects/" "$T/bad.err" && { cat "$T/bad.err"; fail "advice to delete a good manifest"; }
grep -q "damaged" "$T/bad.err" || { cat "$T/bad.err"; fail "no clear message for the corrupted pack"; }
head -1 runs/1/session.pyisession | grep -q '^version ' || fail "a bad file replaced the pointer"
n=$(find .git/lfs/objects -type f | wc -l)
[ "$n" = 1 ] || fail "a damaged object entered the LFS store"
[ -z "$(find .git/lfs/tmp -name 'results-*' -type f 2>/dev/null)" ] || fail "a partial download was left in .git/lfs/tmp"

# --- no remote configured: a clear error at init -------------------------------------
cd "$T"
if git clone -q -c lfs.standalonetransferagent=results -c "lfs.customtransfer.results.path=$AGENT" \
	"$T/results.git" "$T/noremote" 2>"$T/noremote.err"; then
	fail "a clone without a results remote succeeded"
fi
grep -q "no results remote configured" "$T/noremote.err" || { cat "$T/noremote.err"; fail "unclear error without a remote"; }

# --- a remote that holds no store, or cannot exist: clear errors at init ---------------
if git clone -q $(agent_config true | sed "s|results.remote=file://$STORE|results.remote=file://$T/empty|") \
	"$T/results.git" "$T/empty-clone" 2>"$T/empty.err"; then
	fail "a clone from an empty store succeeded"
fi
grep -q "holds no results store (no FORMAT file): check results.remote" "$T/empty.err" ||
	{ cat "$T/empty.err"; fail "unclear error for an empty store"; }
[ ! -e "$T/empty" ] || fail "reading from a mistyped folder remote created the folder"
# The same in a clone that exists: git lfs pull with a mistyped folder remote.
cd "$T/lazy"
git config results.remote "file://$T/typo-store"
if git lfs pull 2>"$T/typo-pull.err"; then
	fail "git lfs pull from a mistyped folder remote succeeded"
fi
git config results.remote "file://$STORE"
grep -q "holds no results store (no FORMAT file)" "$T/typo-pull.err" || { cat "$T/typo-pull.err"; fail "unclear error for a mistyped folder remote"; }
[ ! -e "$T/typo-store" ] || fail "git lfs pull created the folder of a mistyped remote"

# --- a pointer whose size is wrong: the pointer is blamed, not the store --------------
git show HEAD:runs/2/session.pyisession >"$T/pointer"
sz=$(sed -n 's/^size //p' "$T/pointer")
[ -n "$sz" ] || fail "no size in the pointer"
sed -i "s/^size .*/size $((sz + 1))/" "$T/pointer"
git update-index --cacheinfo "100644,$(git hash-object -w --stdin <"$T/pointer"),runs/2/session.pyisession"
git commit -qm "a pointer with a wrong size" --no-verify
rm -rf .git/lfs/objects
if git lfs pull --include=runs/2/session.pyisession 2>"$T/size.err"; then
	fail "a pull with a wrong pointer size succeeded"
fi
grep -q "the repository's pointer for object" "$T/size.err" || { cat "$T/size.err"; fail "the wrong pointer size is not named"; }
grep -q "objects/" "$T/size.err" && { cat "$T/size.err"; fail "advice to delete a manifest for a wrong pointer"; }
cd "$T"
if git clone -q $(agent_config true | sed "s|results.remote=file://$STORE|results.remote=/nonexistent/deep/store|") \
	"$T/results.git" "$T/typo-clone" 2>"$T/typo.err"; then
	fail "a clone from a mistyped remote path succeeded"
fi
grep -q "does not exist, nor does its parent" "$T/typo.err" || { cat "$T/typo.err"; fail "unclear error for a mistyped path"; }
[ ! -e /nonexistent ] || fail "the agent created folders for a mistyped path"

# --- a store written in a newer format: refused at init, named ------------------------
mkdir -p "$T/future"
printf 'results-store 99\n' >"$T/future/FORMAT"
if git clone -q $(agent_config true | sed "s|results.remote=file://$STORE|results.remote=file://$T/future|") \
	"$T/results.git" "$T/future-clone" 2>"$T/future.err"; then
	fail "a clone from a store in another format succeeded"
fi
grep -q "in another format ('results-store 99" "$T/future.err" || { cat "$T/future.err"; fail "unclear error for another format"; }

echo "test_lfs_agent: all checks passed"
