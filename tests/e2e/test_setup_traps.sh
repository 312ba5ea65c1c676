#!/bin/bash
# Set-up traps (issues 9 and 13), end to end against the real git and
# git-lfs. Each section is a trap that today's users fell into:
#  1. remote URLs results can never use are refused at init (exit 2, the
#     problem named; the unknown-scheme message lists every scheme; --help
#     offers only schemes the parser takes);
#  2. no credential of a remote URL or the environment in any output, in
#     the committed files, or in the commit history;
#  3. a hooks folder init cannot write: the real reason, not "unknown error";
#  4. `results add` in a clone whose LFS uploads would not go through
#     lfs-agent records nothing; the pre-push hook refuses the same; a
#     session that went to the wrong LFS server is recovered as the user
#     guide says;
#  5. changing the remote is explicit; a pulled change is noticed by
#     doctor, fetch, compare --deep and export, and followed only by
#     `init --follow-remote` (test_remote_redirect.sh has the rest);
#  6. a run file over 1 MiB is committed so that the committed attributes
#     and the content agree (a fresh clone gets the content back);
#  7. a fetch that checks a session out into the work tree says so and how
#     to free the space.
set -euo pipefail

. "$(dirname "$0")/lib.sh" test_setup_traps

SHA1=1111111111111111111111111111111111111111
SHA2=2222222222222222222222222222222222222222
STORE="$T/store"
STORE2="$T/store2"
gen --seed 1 --size 200k -o "$T/a.pyisession"
gen --seed 2 --size 150k -o "$T/b.pyisession"
lfs_objects() { find .git/lfs/objects -type f 2>/dev/null | sort; }

# --- 1. URLs init can never use --------------------------------------------
git init -q "$T/urls"
cd "$T/urls"
check_refused() { # URL MESSAGE-SUBSTRING
	expect_status 2 "$RESULTS" init --remote "$1"
	grep -qF -- "$2" "$T/err" || fail "init --remote '$1': message lacks '$2': $(cat "$T/err")"
	[ -z "$(git config --local --get results.remote || true)" ] || fail "a refused URL ('$1') left config behind"
	! git rev-parse -q --verify HEAD >/dev/null || fail "a refused URL ('$1') made a commit"
}
check_refused "https://127.0.0.1:99999/store" "port '99999' is not a port number"
check_refused "https://127.0.0.1:0/store" "port '0' is not a port number"
check_refused "http://host:8x/store" "port '8x' is not a port number"
check_refused "https://host/my store" "holds a space"
check_refused "$(printf 'https://host/a\tb')" "control character"
check_refused "$(printf 'file:///srv/a\nb')" "control character"
check_refused "https:///store" "names no host"
check_refused "https://:443/store" "names no host"
check_refused "s3:///prefix" "names no host"
check_refused "ftp://host/store" "'ftp://' is not a remote kind this build knows"
# The unknown-scheme message lists every scheme this build takes ...
for s in file:// s3:// azure:// https:// http://; do
	grep -qF "$s" "$T/err" || fail "unknown-scheme message does not list $s: $(cat "$T/err")"
done
check_refused "az://account/container" "for Azure write azure://"
# ... and --help offers no scheme the parser refuses (it offered az://).
"$RESULTS" init --help >"$T/help"
! grep -q 'az://' "$T/help" || fail "init --help offers az://"
offered=$(grep -o '[a-z0-9]*://' "$T/help" | sort -u)
[ "$(echo $offered)" = "azure:// file:// http:// https:// s3://" ] || fail "init --help offers: $offered"
for s in $offered; do
	case "$s" in
	file://) url="file://$T/s-file" ;;
	*) url="${s}acct.example/container/prefix" ;;
	esac
	git init -q "$T/urls-${s%%:*}"
	(cd "$T/urls-${s%%:*}" && expect_status 0 "$RESULTS" init --remote "$url") ||
		fail "--help offers $s but init refuses '$url'"
done
# A space is fine in a folder path.
mkdir -p "$T/my store"
expect_status 0 "$RESULTS" init --remote "$T/my store"
echo "ok - 1. unusable URLs refused with exit 2; schemes listed; --help honest"

# --- 2. credentials never shown, never committed -----------------------------
PW=pw-S3CR3T-1
SIG=sig-S3CR3T-2
AWSS=aws-S3CR3T-3
AZK=YXotUzNDUjNULTQ=
export AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=$AWSS AWS_REGION=us-east-1 \
	AZURE_STORAGE_KEY=$AZK
: >"$T/all"
run_all() { # STATUS COMMAND...: expect_status, keeping every output
	local want=$1
	shift
	expect_status "$want" "$@"
	cat "$T/out" "$T/err" >>"$T/all"
}
git init -q --bare "$T/cred.git"
git clone -q "$T/cred.git" "$T/cred" 2>/dev/null
cd "$T/cred"
run_all 2 "$RESULTS" init --remote "s3://AKIDEXAMPLE:$PW@bucket/x"
grep -q "takes no user name or password" "$T/err" || fail "s3 userinfo message: $(cat "$T/err")"
run_all 2 "$RESULTS" init --remote "s3://AKIDEXAMPLE:$PW@bucket/x?sig=$SIG"
run_all 2 "$RESULTS" init --remote "azure://k:$PW@acct/c/p"
run_all 2 "$RESULTS" init --remote "https://user:$PW@127.0.0.1:99999/store?sig=$SIG"
run_all 2 "$RESULTS" init --remote "https://user:$PW@127.0.0.1:9/store?sig=$SIG"  # WebDAV takes no query
run_all 0 "$RESULTS" init --remote "https://user:$PW@127.0.0.1:9/store"
grep -q "^credentials: .*never committed" "$T/out" || fail "init does not say where the credentials went: $(cat "$T/out")"
grep -q '"remote": "https://127.0.0.1:9/store"' .results.json || fail "marker: $(cat .results.json)"
run_all 5 "$RESULTS" doctor         # nothing listens on port 9
run_all 0 "$RESULTS" add "$T/a.pyisession" --commit $SHA1 --trigger ci
run_all 0 "$RESULTS" list
rm -rf .git/lfs/objects .git/results/unpushed  # so that fetch asks the remote
run_all 5 "$RESULTS" fetch 1111111 -o "$T/cred-out"
# An Azure SAS in the query string: kept in this clone's config only.
run_all 0 "$RESULTS" init --change-remote --remote "https://acct.blob.core.windows.net/c/p?sv=2022-11-02&sig=$SIG"
grep -q '"remote": "https://acct.blob.core.windows.net/c/p"' .results.json || fail "SAS marker: $(cat .results.json)"
run_all 0 "$RESULTS" init --change-remote --remote "azure://acct/c/p?sv=2022-11-02&sig=$SIG"
git config --local results.remote >"$T/cfg"
grep -q "sig=$SIG" "$T/cfg" || fail "the SAS did not reach this clone's config"
# (into files, not pipes: with pipefail an early grep -q exit would pass)
git log -p --all >"$T/history"
[ -s "$T/history" ] || fail "no history to search"
for s in "$PW" "$SIG" "$AWSS" "$AZK"; do
	! grep -qF -- "$s" "$T/all" || fail "a credential was printed: $(grep -F -- "$s" "$T/all")"
	! grep -qF -- "$s" "$T/history" || fail "a credential was committed"
	! git grep -qF -- "$s" || fail "a credential is in the work tree's tracked files"
done
grep -qF "127.0.0.1:9/store" "$T/all" || fail "the outputs searched hold nothing of the remote"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION AZURE_STORAGE_KEY
echo "ok - 2. no credential printed or committed (init, doctor, add, list, fetch)"

# --- 3. hooks init cannot install: the reason, not "unknown error" ------------
git init -q "$T/hooks"
cd "$T/hooks"
echo "a file, not a folder" >"$T/hooks-file"
git config core.hooksPath "$T/hooks-file"
expect_status 8 "$RESULTS" init --remote "file://$STORE"
! grep -q "unknown error" "$T/err" || fail "init says 'unknown error': $(cat "$T/err")"
grep -q "cannot install the git hooks" "$T/err" || fail "hooks message: $(cat "$T/err")"
grep -qF "$T/hooks-file" "$T/err" || fail "hooks message does not name the path: $(cat "$T/err")"
mkdir "$T/hooks-dir"
git config core.hooksPath "$T/hooks-dir"
mkdir "$T/hooks-dir/pre-push"        # a folder where the hook goes: cannot write it
expect_status 8 "$RESULTS" init --remote "file://$STORE"
! grep -q "unknown error" "$T/err" || fail "init says 'unknown error': $(cat "$T/err")"
grep -qF "$T/hooks-dir/pre-push" "$T/err" || fail "hook message does not name the hook: $(cat "$T/err")"
echo "ok - 3. a hooks folder init cannot write is named (exit 8)"

# --- 4. add refuses a clone whose LFS uploads bypass lfs-agent ---------------
results_ci "$STORE" "$T/a.pyisession" $SHA1

git clone -q "$T/results.git" "$T/noinit" 2>/dev/null
cd "$T/noinit"
head0=$(git rev-parse HEAD)
lfs_objects >"$T/lfs.before"
check_add_refused() { # WHAT
	expect_status 8 "$RESULTS" add "$T/b.pyisession" --commit $SHA2 --trigger ci
	grep -q "run 'results init'" "$T/err" || fail "add ($1): message does not name results init: $(cat "$T/err")"
	grep -q "nothing was recorded" "$T/err" || fail "add ($1): message: $(cat "$T/err")"
	[ "$(git rev-parse HEAD)" = "$head0" ] || fail "add ($1) made a commit"
	[ -z "$(git status --porcelain)" ] || fail "add ($1) left files: $(git status --porcelain)"
	lfs_objects | cmp -s - "$T/lfs.before" || fail "add ($1) left LFS objects"
}
check_add_refused "no init"
grep -qF "file://$T/results.git" "$T/err" || fail "add does not say where git-lfs would send it: $(cat "$T/err")"
git config lfs.standalonetransferagent other
git config lfs.customtransfer.other.path /usr/bin/true
check_add_refused "another agent"
grep -q "/usr/bin/true" "$T/err" || fail "add does not name the other agent: $(cat "$T/err")"
git config --unset lfs.customtransfer.other.path
check_add_refused "agent without a path"
git config --unset lfs.standalonetransferagent
# A url-specific agent (what init --global writes) counts, prefix or not.
git config --global "lfs.file://$T/.standalonetransferagent" results-x
git config --global lfs.customtransfer.results-x.path "$AGENT"
git config --global lfs.customtransfer.results-x.args "--remote 'file://$STORE'"
RESULTS_RECORDED_AT=1764494100 expect_status 0 "$RESULTS" add "$T/b.pyisession" --commit $SHA2 --trigger ci
expect_status 8 "$RESULTS" doctor       # results.remote is not set here: that is all
grep -q "^ok    git-lfs transfers through the agent 'results-x'" "$T/out" ||
	fail "doctor does not find the url-matched agent add uses: $(cat "$T/out")"
git reset -q --hard "$head0"
lfs_objects >"$T/lfs.before"
git config --global --unset "lfs.file://$T/.standalonetransferagent"
git config --global "lfs.file://$T/other.git/info/lfs.standalonetransferagent" results-x
check_add_refused "a url-specific agent for another repository"
git config --global --remove-section lfs.customtransfer.results-x
git config --global --unset "lfs.file://$T/other.git/info/lfs.standalonetransferagent"
expect_status 8 "$RESULTS" doctor
grep -q "^FAIL.*results init" "$T/out" || fail "doctor does not name the missing agent: $(cat "$T/out")"

# The pre-push hook refuses a push whose sessions would bypass lfs-agent.
cd "$T/ci"
RESULTS_RECORDED_AT=1764494100 expect_status 0 "$RESULTS" add "$T/b.pyisession" --commit $SHA2 --trigger ci
git config --unset lfs.standalonetransferagent
remote_head=$(git -C "$T/results.git" rev-parse main)
expect_status 1 git push origin main
grep -q "refusing to push: git-lfs would upload the sessions" "$T/err" || fail "pre-push: $(cat "$T/err")"
grep -q "Run 'results init'" "$T/err" || fail "pre-push does not name results init: $(cat "$T/err")"
[ "$(git -C "$T/results.git" rev-parse main)" = "$remote_head" ] || fail "the push went through"
[ -z "$(find "$T/results.git" -path '*lfs/objects*' -type f)" ] || fail "a session reached the git host's LFS"
# A push with no LFS object is not held up.
git config lfs.standalonetransferagent results
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push after re-init"; }
git config --unset lfs.standalonetransferagent
git commit -q --allow-empty -m "no sessions here"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "a push without sessions was refused"; }
git config lfs.standalonetransferagent results

# Recovery, as docs/user-guide.md says: a session that went to the git
# host's own LFS (here: git-lfs's file transfer into results.git/lfs).
git clone -q "$T/results.git" "$T/wrong" 2>/dev/null
cd "$T/wrong"
gen --seed 5 --size 120k -o "$T/c.pyisession"
mkdir -p runs/manual && cp "$T/c.pyisession" runs/manual/c.pyisession
git add runs/manual && git -c core.hooksPath=/dev/null commit -q -m "a session pushed the wrong way"
git lfs push origin main >/dev/null 2>&1 || fail "git lfs push to the host's LFS"
git -c core.hooksPath=/dev/null push -q origin main 2>/dev/null
[ -n "$(find "$T/results.git/lfs/objects" -type f)" ] || fail "the wrong LFS server holds nothing"
# The documented recovery, from a clone that does not hold the object:
git clone -q "$T/results.git" "$T/recover" 2>/dev/null
cd "$T/recover"
git lfs fetch origin --include=runs/manual/c.pyisession --exclude= >/dev/null 2>"$T/fetch.err" ||
	{ cat "$T/fetch.err"; fail "git lfs fetch from the wrong server"; }
expect_status 0 "$RESULTS" init
oid=$(git lfs ls-files -l --include=runs/manual/c.pyisession --exclude= | cut -d' ' -f1)
[ "$oid" = "$(sha256sum "$T/c.pyisession" | cut -d' ' -f1)" ] || fail "ls-files oid '$oid'"
git lfs push --object-id origin "$oid" >/dev/null 2>"$T/lpush.err" || { cat "$T/lpush.err"; fail "git lfs push --object-id"; }
git clone -q "$T/results.git" "$T/after" 2>/dev/null
cd "$T/after"
expect_status 0 "$RESULTS" init
git lfs pull --include=runs/manual/c.pyisession --exclude= 2>"$T/pull.err" || { cat "$T/pull.err"; fail "pull after recovery"; }
cmp -s runs/manual/c.pyisession "$T/c.pyisession" || fail "the recovered session differs"
echo "ok - 4. add and pre-push refuse a clone whose LFS bypasses lfs-agent; recovery works"

# --- 5. changing the remote is explicit; a pulled change is noticed ----------
cd "$T/ci"
git pull -q --no-rebase origin main 2>/dev/null
git clone -q "$T/results.git" "$T/dev" 2>/dev/null
(cd "$T/dev" && expect_status 0 "$RESULTS" init)
head1=$(git rev-parse HEAD)
cp .git/config "$T/ci.config"
expect_status 2 "$RESULTS" init --remote "file://$T/stroe"      # a typo
grep -qF "'file://$STORE'" "$T/err" && grep -qF "'file://$T/stroe'" "$T/err" ||
	fail "init with another --remote does not name both: $(cat "$T/err")"
grep -q -- "--change-remote" "$T/err" || fail "message does not name --change-remote"
[ "$(git rev-parse HEAD)" = "$head1" ] || fail "a refused --remote made a commit"
cmp -s .git/config "$T/ci.config" || fail "a refused --remote changed the config"
[ ! -e "$T/stroe" ] || fail "a refused --remote created a store"
cp -a "$STORE" "$STORE2"                 # the store moves: a copy
expect_status 0 "$RESULTS" init --change-remote --remote "file://$STORE2"
grep -qF "file://$STORE2 (changed from file://$STORE)" "$T/out" || fail "change-remote output: $(cat "$T/out")"
[ "$(git config --local results.remote)" = "file://$STORE2" ] || fail "results.remote not changed"
grep -qF "\"remote\": \"file://$STORE2\"" .results.json || fail "marker not changed"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push the change"; }
# The other clone pulls the change: everything that talks to the store says so.
cd "$T/dev"
git pull -q --no-rebase origin main 2>/dev/null
msg="the committed remote is 'file://$STORE2' (set in .results.json by commit $(git rev-parse --short=12 HEAD) by CI <ci@example.com> on "
expect_status 8 "$RESULTS" doctor
grep -qF "FAIL  $msg" "$T/out" || fail "doctor after a pulled change: $(cat "$T/out")"
expect_status 8 "$RESULTS" fetch 1111111
grep -qF "$msg" "$T/err" || fail "fetch after a pulled change: $(cat "$T/err")"
expect_status 8 "$RESULTS" compare 1111111 2222222 --deep
grep -qF "$msg" "$T/err" || fail "compare --deep after a pulled change: $(cat "$T/err")"
expect_status 8 "$RESULTS" export 1111111 --format collapsed -o "$T/x.collapsed"
grep -qF "$msg" "$T/err" || fail "export after a pulled change: $(cat "$T/err")"
# ... and so does the pre-push hook: lfs-agent would upload to the old store.
gen --seed 6 --size 100k -o "$T/d.pyisession"
RESULTS_RECORDED_AT=1764494250 expect_status 0 "$RESULTS" add "$T/d.pyisession" --commit $SHA2 --trigger dev
remote_head=$(git -C "$T/results.git" rev-parse main)
expect_status 1 git push origin main
grep -qF "the committed remote is 'file://$STORE2'
(set in .results.json by commit $(git rev-parse --short=12 HEAD~1) by CI <ci@example.com> on " "$T/err" ||
	fail "pre-push after a pulled change: $(cat "$T/err")"
grep -qF "this clone uses 'file://$STORE' and keeps it" "$T/err" || fail "pre-push: $(cat "$T/err")"
[ "$(git -C "$T/results.git" rev-parse main)" = "$remote_head" ] || fail "the push went through"
# A bare init keeps this clone's remote and says why (issue 18, item 14) ...
expect_status 2 "$RESULTS" init
grep -qF "$msg" "$T/err" || fail "bare init after a pulled change: $(cat "$T/err")"
[ "$(git config --local results.remote)" = "file://$STORE" ] || fail "bare init followed the change"
# ... and --follow-remote follows it, naming the commit.
expect_status 0 "$RESULTS" init --follow-remote
grep -qF "file://$STORE2 (changed from file://$STORE: followed .results.json of commit " "$T/out" ||
	fail "init --follow-remote after a pulled change: $(cat "$T/out")"
[ "$(git config --local results.remote)" = "file://$STORE2" ] || fail "bare init kept the stale remote"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push after following the change"; }
(cd "$T/ci" && git pull -q --no-rebase origin main 2>/dev/null) || fail "pull in ci"
git clone -q "$T/results.git" "$T/check" 2>/dev/null
(cd "$T/check" && "$RESULTS" init >/dev/null && "$RESULTS" fetch 2222222 -o "$T/d-out" >/dev/null) ||
	fail "fetch of the session pushed after the change"
cmp -s "$T"/d-out/*/d.pyisession "$T/d.pyisession" || fail "the session pushed after the change is not in the new store"
expect_status 2 "$RESULTS" init --change-remote
# A results.remote set by hand (a mirror of the committed store) is this
# clone's choice, not a missed change: init recorded which committed
# remote it followed (results.committedremote) ...
[ "$(git config --local results.committedremote)" = "file://$STORE2" ] || fail "results.committedremote"
cp -a "$STORE2" "$T/mirror"
git config results.remote "file://$T/mirror"
expect_status 0 "$RESULTS" fetch 1111111 -o "$T/mirror-out"
# ... while a clone set up before that key existed compares results.remote.
git config --unset results.committedremote
expect_status 8 "$RESULTS" fetch 1111111 -o "$T/mirror-out2"
grep -qF "the committed remote is 'file://$STORE2' (set in .results.json by commit " "$T/err" &&
	grep -qF "this clone uses 'file://$T/mirror' and keeps it" "$T/err" ||
	fail "fetch in a clone without results.committedremote: $(cat "$T/err")"
expect_status 2 "$RESULTS" init
expect_status 0 "$RESULTS" init --follow-remote
[ "$(git config --local results.remote)" = "file://$STORE2" ] || fail "init --follow-remote did not follow the committed remote"
echo "ok - 5. --change-remote is explicit; a pulled change is noticed and followed only with --follow-remote"

# --- 6. a run file over 1 MiB: attributes and content agree -------------------
cd "$T/ci"
mkdir -p "$T/folder"
cp "$T/a.pyisession" "$T/folder/pop.pyisession"
head -c 1300000 /dev/urandom | base64 >"$T/folder/report.html"     # > 1 MiB
RESULTS_RECORDED_AT=1764494300 expect_status 0 "$RESULTS" add "$T/folder" --commit $SHA2 --trigger big
run=$(git show --name-only --format= HEAD | sed -n 's,^\(runs/.*\)/run.json$,\1,p')
[ -n "$run" ] || fail "no run folder in the commit"
git cat-file -p "HEAD:$run/report.html" >"$T/blob"
cmp -s "$T/blob" "$T/folder/report.html" || fail "report.html is not committed as it is"
attrs_agree() { # RUN-FOLDER
	local f attr
	git ls-tree -r --name-only HEAD -- "$1" >"$T/files"
	while IFS= read -r f; do
	attr=$(git check-attr filter -- "$f" | sed 's/.*: filter: //')
	git cat-file -p "HEAD:$f" >"$T/blob"
	if [ "$(head -n 1 "$T/blob")" = "version https://git-lfs.github.com/spec/v1" ]; then
		[ "$attr" = lfs ] || fail "$f is committed as an LFS pointer but its attributes say filter=$attr"
	else
		[ "$attr" != lfs ] || fail "$f is committed as a plain file but its attributes say filter=lfs"
	fi
	done <"$T/files"
}
attrs_agree "$run"
git lfs ls-files -n >"$T/lfs-files"
grep -qxF "$run/pop.pyisession" "$T/lfs-files" || fail "git lfs ls-files does not list the session"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push the big run"; }
git clone -q "$T/results.git" "$T/fresh" 2>"$T/clone.err" || { cat "$T/clone.err"; fail "fresh clone"; }
cmp -s "$T/fresh/$run/report.html" "$T/folder/report.html" || fail "a fresh clone does not get report.html back"
# A session under another name: still LFS, so its run's attributes say so.
cp "$T/b.pyisession" "$T/odd name [1].prof"
RESULTS_RECORDED_AT=1764494400 expect_status 0 "$RESULTS" add "$T/odd name [1].prof" --commit $SHA1 --trigger odd
run=$(git show --name-only --format= HEAD | sed -n 's,^\(runs/.*\)/run.json$,\1,p')
git cat-file -p "HEAD:$run/odd name [1].prof" >"$T/blob"
[ "$(head -n 1 "$T/blob")" = "version https://git-lfs.github.com/spec/v1" ] || fail "the odd session is not a pointer"
attrs_agree "$run"
git lfs ls-files -n >"$T/lfs-files"
grep -qxF "$run/odd name [1].prof" "$T/lfs-files" || fail "git lfs ls-files does not list the odd session"
git lfs fsck >/dev/null 2>&1 || fail "git lfs fsck"
echo "ok - 6. a file over 1 MiB is committed as the attributes say; a fresh clone gets it"

# --- 7. a fetch into the work tree says where the session went -------------------
cd "$T/fresh"
expect_status 0 "$RESULTS" init
rm -rf .git/lfs/objects
expect_status 0 "$RESULTS" fetch 1111111
path=$(cat "$T/out")
rel=${path#"$T/fresh/"}
grep -qF "results: $rel (" "$T/err" || fail "fetch does not say where the session went: $(cat "$T/err")"
grep -q "is checked out in the work tree" "$T/err" || fail "fetch message: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" = 1 ] || fail "more than one line on stderr: $(cat "$T/err")"
free=$(sed -n 's/.*to free the space: //p' "$T/err")
[ -n "$free" ] || fail "fetch does not say how to free the space"
sh -c "$free" || fail "the advice '$free' fails"
[ "$(head -n 1 "$rel")" = "version https://git-lfs.github.com/spec/v1" ] || fail "the advice did not restore the pointer"
[ -z "$(lfs_objects)" ] || fail "the advice left the object in .git/lfs/objects"
[ -z "$(git status --porcelain)" ] || fail "the advice left the work tree dirty: $(git status --porcelain)"
echo "ok - 7. fetch says where the session went and how to free the space"

echo "ok: test_setup_traps"
