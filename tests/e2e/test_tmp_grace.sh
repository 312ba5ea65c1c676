#!/bin/bash
# One setting for the age of stale temporary files (issue 14): git config
# results.tmpGracePeriod governs every folder that is cleaned, not only the
# repository's own:
#  - a push through lfs-agent with results.tmpGracePeriod=60 removes a
#    killed writer's 10-minute-old temporaries from the folder store and
#    from the local cache (the store's sweep), and keeps a fresh one;
#  - a pull removes a 10-minute-old partial download from .git/lfs/tmp;
#  - unset, the default (one hour) keeps 10-minute-old files;
#  - RESULTS_TMP_GRACE, the old environment variable, no longer counts;
#  - a bad value stops the agent at init with a message naming the key.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_tmp_grace

STORE="$T/store"
CACHE_ROOT="$HOME/.cache/results"

# leftovers AGE: a killed writer's temporaries, AGE old, in the store and the cache.
leftovers() {
	CACHE=$(find "$CACHE_ROOT" -mindepth 1 -maxdepth 1 -type d | head -1)
	[ -n "$CACHE" ] || fail "no local cache folder under $CACHE_ROOT"
	mkdir -p "$CACHE/tmp"
	for f in "$STORE/packs/x.pack.tmp-Stale1" "$STORE/objects/y.tmp-Stale2" \
		 "$CACHE/tmp/pack-Stale3" "$CACHE/z.idx.tmp-Stale4"; do
		head -c 100 /dev/zero >"$f"
		touch -d "$1" "$f"
	done
	head -c 100 /dev/zero >"$CACHE/tmp/pack-Fresh1"
}
gone() { for f in "$STORE/packs/x.pack.tmp-Stale1" "$STORE/objects/y.tmp-Stale2" \
			"$CACHE/tmp/pack-Stale3" "$CACHE/z.idx.tmp-Stale4"; do
		[ ! -e "$f" ] || fail "$1: $f was not removed"
	done
	[ -e "$CACHE/tmp/pack-Fresh1" ] || fail "$1: a fresh temporary file was removed"
	rm -f "$CACHE/tmp/pack-Fresh1"
}
kept() { for f in "$STORE/packs/x.pack.tmp-Stale1" "$STORE/objects/y.tmp-Stale2" \
			"$CACHE/tmp/pack-Stale3" "$CACHE/z.idx.tmp-Stale4"; do
		[ -e "$f" ] || fail "$1: $f was removed, though younger than the grace period"
		rm -f "$f"
	done
	rm -f "$CACHE/tmp/pack-Fresh1"
}
n=0
push_one() { # a new session, pushed through the agent
	n=$((n + 1))
	gen --seed "$n" --size 256K -o "runs/s$n.pyisession"
	git add "runs/s$n.pyisession"
	git commit -qm "session $n"
	git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push $n failed"; }
}

git init -q --bare "$T/results.git"
agent_repo "$T/ci" "$STORE"
mkdir runs
git add .gitattributes
git commit -qm "track sessions"
git remote add origin "$T/results.git"
push_one # creates the store and the cache folder

# --- unset: one hour; the environment variable is not read any more -------------
leftovers '10 minutes ago'
RESULTS_TMP_GRACE=1 push_one
kept "grace unset (RESULTS_TMP_GRACE=1 in the environment)"

# --- results.tmpGracePeriod=60: the store's sweep and the folder remote's follow it --
git config results.tmpGracePeriod 60
leftovers '10 minutes ago'
push_one
gone "results.tmpGracePeriod=60"

# --- a pull: the agent's own downloads folder follows it too ---------------------------
GIT_LFS_SKIP_SMUDGE=1 git clone -q -c lfs.standalonetransferagent=results -c "lfs.customtransfer.results.path=$AGENT" \
	-c "results.remote=file://$STORE" -c results.tmpGracePeriod=60 "$T/results.git" "$T/lazy" 2>"$T/clone.err" ||
	{ cat "$T/clone.err"; fail "clone failed"; }
cd "$T/lazy"
[ -z "$(find .git/lfs/objects -type f 2>/dev/null)" ] || fail "a skip-smudge clone downloaded objects"
mkdir -p .git/lfs/tmp
H=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
head -c 100 /dev/zero >".git/lfs/tmp/results-$H.tmp-Stale5"
touch -d '10 minutes ago' ".git/lfs/tmp/results-$H.tmp-Stale5"
head -c 100 /dev/zero >".git/lfs/tmp/results-$H.tmp-Fresh2"
git lfs pull --include=runs/s1.pyisession 2>"$T/pull.err" || { cat "$T/pull.err"; fail "pull failed"; }
[ ! -e ".git/lfs/tmp/results-$H.tmp-Stale5" ] || fail "a 10-minute-old partial download stayed with results.tmpGracePeriod=60"
[ -e ".git/lfs/tmp/results-$H.tmp-Fresh2" ] || fail "a fresh partial download was removed"
cmp runs/s1.pyisession "$T/ci/runs/s1.pyisession" || fail "the pulled session differs"

# --- a bad value: the agent refuses to start, naming the key -------------------------
cd "$T/ci"
git config results.tmpGracePeriod soon
gen --seed 99 --size 64K -o runs/bad.pyisession
git add runs/bad.pyisession
git commit -qm "bad grace"
if git push -q origin main 2>"$T/bad.err"; then fail "a push with results.tmpGracePeriod=soon succeeded"; fi
grep -q "results.tmpGracePeriod = 'soon' is not a number of seconds" "$T/bad.err" ||
	fail "bad grace message: $(cat "$T/bad.err")"
git config --unset results.tmpGracePeriod
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push after the fix failed"; }
echo "results.tmpGracePeriod governs the store, the cache, a folder remote and lfs-agent's downloads"
