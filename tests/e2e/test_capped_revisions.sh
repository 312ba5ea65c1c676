#!/usr/bin/env bash
# Revisions are resolved and peeled one header at a time (issue 21,
# src/git/revision.c): a results repository whose HEAD is a 200 MB commit
# object (a valid header and a huge message), or whose HEAD commit names
# an 80 MB tree, is refused by every command that reads HEAD, with a
# message naming the object, before the object is read: the commands'
# memory stays far below its size. So is an 80 MB runs/ folder, by every
# command that reads a run's files. git_revparse_single and
# git_object_peel read each object of the chain whole (main before this
# test: over 400 MB for each command, which then went on as if nothing
# were wrong).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_capped_revisions
command -v python3 >/dev/null || fail "python3 is needed"
command -v jq >/dev/null || fail "jq is needed"

SESSION=$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_5.1.2.pyisession

store_repo
"$RESULTS" add "$SESSION" --commit 0123456789abcdef0123456789abcdef01234567 >/dev/null
git push -q origin main 2>"$T/push.err" || fail "the first push: $(cat "$T/push.err")"
id=$("$RESULTS" list --json | jq -r '.[0].id')
[ -n "$id" ] && [ "$id" != null ] || fail "no run id"
good=$(git rev-parse HEAD)
tree=$(git rev-parse 'HEAD^{tree}')

# The bound: what the commands take on this good HEAD (about 14 MB, more
# under the sanitizers), plus 40 MB; reading any of the objects below
# (80 to 200 MB) would pass it.
base=0
for cmd in "list" "check" "gc --dry-run" "verify" "show $id" "site $T/site0" "trend"; do
	# shellcheck disable=SC2086
	read -r mb st < <(peak "$RESULTS" $cmd)
	[ "$mb" -le "$base" ] || base=$mb
done
LIMIT_MB=$((base + 40))
pass "the good HEAD: at most $base MB a command, the bound $LIMIT_MB MB"

# every command that reads HEAD, and the exit status it fails with (docs/cli.md)
commands=(
	"7 list"
	"2 check"
	"7 gc --dry-run"
	"7 verify"
	"7 show $id"
	"7 site $T/site"
	"7 pin $id"
	"7 fetch $id"
	"7 trend"
	"7 prune --dry-run"
	"7 add $SESSION --commit 1123456789abcdef0123456789abcdef01234567"
	"7 init --remote file://$T/store"
	"3 doctor"
)

# hostile HEAD_ID WHAT: each command run with main at HEAD_ID (set again
# before each: a command that wrongly succeeded may have committed on
# top), refused naming WHAT within LIMIT_MB.
hostile() {
	local head=$1 what=$2 line want cmd mb st
	for line in "${commands[@]}"; do
		want=${line%% *}
		cmd=${line#* }
		git update-ref refs/heads/main "$head"
		# shellcheck disable=SC2086
		read -r mb st < <(peak "$RESULTS" $cmd)
		[ "$mb" -lt "$LIMIT_MB" ] ||
			fail "'results $cmd' read the $what: peak RSS $mb MB (limit $LIMIT_MB), exit $st: $(head -c 300 "$T/err")"
		[ "$st" = "$want" ] || fail "'results $cmd' with the $what exited $st, want $want: $(head -c 300 "$T/err")"
		# doctor says it on stdout, as one of its checks
		cat "$T/out" "$T/err" >"$T/said"
		grep -q "revision 'HEAD': the $what is too large" "$T/said" ||
			fail "'results $cmd' does not name the $what: $(head -c 300 "$T/said")"
		pass "$what: 'results $cmd' refuses it before reading it (exit $st, peak RSS $mb MB)"
	done
}

# A 200 MB commit object on top of the good one: a valid header, a huge message.
big=$(python3 - "$tree" "$good" <<'PY' | git hash-object -t commit -w --literally --stdin
import sys
out = sys.stdout.buffer
out.write(("tree %s\nparent %s\nauthor t <t@localhost> 1700000000 +0000\n"
           "committer t <t@localhost> 1700000000 +0000\n\nhuge\n" % (sys.argv[1], sys.argv[2])).encode())
block = b"x" * (1 << 20)
for _ in range(200):
    out.write(block)
PY
)
[ "$(git cat-file -t "$big")" = commit ] && [ "$(git cat-file -s "$big")" -gt 200000000 ] ||
	fail "set-up: $big is no 200 MB commit"
hostile "$big" "commit $big"
git update-ref refs/heads/main "$good"
expect_status 0 "$RESULTS" list
grep -q "$id" "$T/out" || fail "the good HEAD again: list does not show $id"

# A commit of 150 bytes whose tree is 80 MB: HEAD's tree plus 2.2 million
# entries (a valid, sorted tree: the fillers' names sort after the real ones).
hugetree=$(python3 - "$tree" <<'PY' | git hash-object -t tree -w --literally --stdin
import subprocess, sys
out = sys.stdout.buffer
real = subprocess.run(["git", "cat-file", "tree", sys.argv[1]], check=True, capture_output=True).stdout
blob = bytes.fromhex(subprocess.run(["git", "rev-parse", sys.argv[1] + ":.gitattributes"], check=True,
                                    capture_output=True, text=True).stdout.strip())
out.write(real)
n, chunk = 2200000, []
for i in range(n):
    chunk.append(b"100644 zz%08d\0" % i + blob)
    if len(chunk) == 65536:
        out.write(b"".join(chunk)); chunk = []
out.write(b"".join(chunk))
PY
)
[ "$(git cat-file -s "$hugetree")" -gt 80000000 ] || fail "set-up: $hugetree is no 80 MB tree"
small=$(git commit-tree "$hugetree" -p "$good" -m "an 80 MB tree")
[ "$(git cat-file -s "$small")" -lt 1000 ] || fail "set-up: $small is not a small commit"
hostile "$small" "tree $hugetree"
git update-ref refs/heads/main "$good"

# HEAD's tree fine, its runs/ folder 80 MB: the paths below it are walked
# one folder at a time (rs_repo_tree_entry_bypath), each within the cap,
# where git_tree_entry_bypath read every folder on the way whole.
runs=$(git rev-parse HEAD:runs)
hugeruns=$(python3 - "$runs" <<'PY' | git hash-object -t tree -w --literally --stdin
import subprocess, sys
out = sys.stdout.buffer
real = subprocess.run(["git", "cat-file", "tree", sys.argv[1]], check=True, capture_output=True).stdout
blob = bytes.fromhex(subprocess.run(["git", "rev-parse", "HEAD:.gitattributes"], check=True,
                                    capture_output=True, text=True).stdout.strip())
out.write(real)
chunk = []
for i in range(2200000):
    chunk.append(b"100644 zz%08d\0" % i + blob)
    if len(chunk) == 65536:
        out.write(b"".join(chunk)); chunk = []
out.write(b"".join(chunk))
PY
)
[ "$(git cat-file -s "$hugeruns")" -gt 80000000 ] || fail "set-up: $hugeruns is no 80 MB tree"
root=$(git ls-tree HEAD | sed "s/$runs/$hugeruns/" | git mktree)
bigruns=$(git commit-tree "$root" -p "$good" -m "an 80 MB runs/")
# what reads a run's files fails naming the folder; what does not (the
# index, pins.txt, the store) works as ever; all within LIMIT_MB
for line in "7 show $id" "7 fetch $id" "7 site $T/site" "7 trend" "2 check" "7 gc --dry-run" \
	"7 verify" "7 add $SESSION --commit 1123456789abcdef0123456789abcdef01234567" \
	"0 list" "0 pin $id" "0 doctor"; do
	want=${line%% *}
	cmd=${line#* }
	git update-ref refs/heads/main "$bigruns"
	# shellcheck disable=SC2086
	read -r mb st < <(peak "$RESULTS" $cmd)
	[ "$mb" -lt "$LIMIT_MB" ] ||
		fail "'results $cmd' read the 80 MB runs/: peak RSS $mb MB (limit $LIMIT_MB), exit $st: $(head -c 300 "$T/err")"
	[ "$st" = "$want" ] || fail "'results $cmd' with an 80 MB runs/ exited $st, want $want: $(head -c 300 "$T/err")"
	[ "$want" = 0 ] || grep -q "runs: the tree $hugeruns is too large" "$T/err" ||
		fail "'results $cmd' does not name the 80 MB runs/: $(head -c 300 "$T/err")"
	pass "an 80 MB runs/ folder: 'results $cmd' exits $st within $mb MB"
done
git update-ref refs/heads/main "$good"

# A tag of the 200 MB commit beside a good HEAD: gc and verify judge every
# ref, peeled header first (rs_repo_peel_commit). That commit is not read,
# so what its runs hold is unknown: a doubt naming the tag, gc deletes
# nothing (docs/retention.md), verify still verifies HEAD's runs.
git tag huge-commit "$big"
read -r mb st < <(peak "$RESULTS" gc --dry-run)
[ "$mb" -lt "$LIMIT_MB" ] || fail "gc read the 200 MB commit a tag names: peak RSS $mb MB"
[ "$st" = 7 ] || fail "gc with a tag of a 200 MB commit exited $st: $(cat "$T/err")"
cat "$T/out" "$T/err" >"$T/said"
grep -q "tag 'huge-commit'.*the commit $big is too large" "$T/said" || fail "gc does not name the tag: $(cat "$T/said")"
grep -q "gc deletes nothing" "$T/said" || fail "gc does not say it deletes nothing: $(cat "$T/said")"
pass "a tag of a 200 MB commit: gc does not read it, and deletes nothing (exit 7, peak RSS $mb MB)"
read -r mb st < <(peak "$RESULTS" verify)
[ "$mb" -lt "$LIMIT_MB" ] || fail "verify read the 200 MB commit a tag names: peak RSS $mb MB"
cat "$T/out" "$T/err" >"$T/said"
[ "$st" = 7 ] || fail "verify with a tag of a 200 MB commit exited $st: $(cat "$T/said")"
grep -q "1 runs, 1 objects: 1 ok" "$T/said" || fail "verify did not verify HEAD's run: $(cat "$T/said")"
grep -q "tag 'huge-commit'.*the commit $big is too large" "$T/said" || fail "verify does not name the tag: $(cat "$T/said")"
pass "a tag of a 200 MB commit: verify does not read it, verifies the other runs and says so (exit 7, peak RSS $mb MB)"
git tag -d huge-commit >/dev/null
expect_status 0 "$RESULTS" gc --dry-run
pass "the tag gone: gc runs again"
