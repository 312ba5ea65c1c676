#!/bin/bash
# A hostile session container on the remote (issue 23): a writer with access
# to the store puts a 6-13 KB container that claims a 400 MiB frame string or
# a 32M-node tree, as the object of a pointer that claims a 1 GiB session;
# and the version-7 container that makes the decoder hold the most (the
# stacks at the caps, 435 KB: test_session_codec_hostile's
# hostile_stacks_cap_v7, which claims 64 MiB, behind a pointer of 64 MiB so
# that its levels' budget ends the decode within a second).
# `results fetch` and `git lfs pull` (through lfs-agent) must refuse it with a
# clear error, leave no file behind, and peak under 64 MB of RSS (the
# unbounded decoder took 1.17 GB). Peak RSS is a memory bound, not a timing:
# it is read from GNU time's report of the child.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_codec_hostile_fetch

unset GIT_DIR GIT_WORK_TREE
DAMAGE=$RS_BIN_DIR/tests/store-damage
CORPUS=$RS_SOURCE_DIR/tests/fuzz/corpus/codec
[ -x /usr/bin/time ] || fail "GNU time (/usr/bin/time, Debian package 'time') is needed"
LIMIT_KB=$((64 * 1024))
case "${ASAN_OPTIONS:-}${RS_SANITIZE:-}" in
	'') ;;
	*) LIMIT_KB=$((320 * 1024)) ;; # ASan's shadow memory and quarantine
esac

# peak_kb FILE: the "Maximum resident set size" GNU time wrote to FILE.
peak_kb() { sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$1"; }

git init -q --bare "$T/results.git"
STORE="$T/store"
SHA1=1111111111111111111111111111111111111111
gen --seed 3 --size 1M -o "$T/a.pyisession"

git clone -q "$T/results.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "file://$STORE" >/dev/null
RESULTS_RECORDED_AT=1764494000 "$RESULTS" add "$T/a.pyisession" --commit $SHA1 --trigger ci >/dev/null
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push"; }
pointer=$(git lfs ls-files -n | head -n 1)
[ -n "$pointer" ] || fail "no LFS file recorded"
oid=$(sha256sum "$T/a.pyisession" | cut -d' ' -f1)

for hostile in hostile_frame_400MiB_v2 hostile_tree_32M_v2 hostile_frame_400MiB_v1 hostile_stacks_cap_v7; do
	case $hostile in
	*_v7) big=$((64 << 20)) ;;
	*) big=1073741824 ;;
	esac
	# The container (the corpus file without its two marker bytes) becomes
	# the object's, written by the store's own pack and manifest writers.
	tail -c +3 "$CORPUS/$hostile" >"$T/container"
	"$DAMAGE" "file://$STORE" container "$oid" $big "$T/container" ||
		fail "cannot store the hostile container"
	# The hostile writer's pointer claims a 1 GiB session, so that the
	# container's own claim passes the size check and its streams are read.
	cd "$T/ci"
	printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %s\n' "$oid" $big >"$T/pointer"
	git rm -q --cached "$pointer"
	cp "$T/pointer" "$pointer"
	git -c filter.lfs.clean= -c filter.lfs.smudge= -c filter.lfs.process= -c filter.lfs.required=false \
		add "$pointer"
	git -c filter.lfs.clean= -c filter.lfs.process= -c filter.lfs.required=false \
		commit -q -m "hostile pointer ($hostile)" --allow-empty
	# (no pre-push hook: git-lfs would check the local copy against the lie)
	git push -q --no-verify origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push of the pointer"; }

	rm -rf "$T/dev"
	GIT_LFS_SKIP_SMUDGE=1 git clone -q "$T/results.git" "$T/dev" 2>"$T/clone.err" ||
		{ cat "$T/clone.err"; fail "clone"; }
	cd "$T/dev"
	"$RESULTS" init >/dev/null

	# results fetch: refused, clearly, under the bound.
	status=0
	/usr/bin/time -v -o "$T/time" "$RESULTS" fetch 1111111 >"$T/out" 2>"$T/err" || status=$?
	[ "$status" != 0 ] || fail "$hostile: results fetch took the hostile container"
	grep -q "session container is damaged\|too large\|larger than" "$T/err" ||
		fail "$hostile: results fetch's error does not say what is wrong: $(cat "$T/err")"
	[ -z "$(find .git/lfs/objects -type f 2>/dev/null)" ] || fail "$hostile: fetch left an object"
	kb=$(peak_kb "$T/time")
	[ -n "$kb" ] || fail "no peak RSS in $(cat "$T/time")"
	[ "$kb" -lt $LIMIT_KB ] || fail "$hostile: results fetch peaked at $kb KB (limit $LIMIT_KB)"
	echo "$hostile: results fetch refused it at $kb KB: $(head -c 200 "$T/err")"

	# git lfs pull through lfs-agent (the child git-lfs starts): the agent's
	# peak is what time -v reports for the largest descendant waited for.
	status=0
	/usr/bin/time -v -o "$T/time" git lfs pull --include='*.pyisession' --exclude= >"$T/out" 2>"$T/err" || status=$?
	[ "$status" != 0 ] || { cat "$T/out" "$T/err"; git lfs ls-files; git config -l | grep -i lfs; fail "$hostile: git lfs pull took the hostile container"; }
	grep -q "session container is damaged\|too large\|larger than" "$T/err" ||
		fail "$hostile: git lfs pull's error does not say what is wrong: $(cat "$T/err")"
	[ -z "$(find .git/lfs/objects -type f 2>/dev/null)" ] || fail "$hostile: git lfs pull left an object"
	kb=$(peak_kb "$T/time")
	[ "$kb" -lt $LIMIT_KB ] || fail "$hostile: git lfs pull peaked at $kb KB (limit $LIMIT_KB)"
	echo "$hostile: git lfs pull refused it at $kb KB: $(grep -m1 'damaged\|large' "$T/err" | head -c 200)"
done
echo "ok"
