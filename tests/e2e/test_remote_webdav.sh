#!/bin/bash
# A WebDAV remote (http:// and https://) end to end against nginx on
# loopback (tests/servers/webdav.sh), through the real git, git-lfs and
# lfs-agent:
#  A. http:// with basic auth from git's credential helper (store): results
#     init --remote, results add of two generated 3 MB sessions, git push; a
#     fresh clone's git lfs pull and another clone's results fetch give
#     byte-identical sessions; no temporary files are left on the server;
#  B. the fault proxy answers 503 to the first requests, then forwards:
#     push and pull still work;
#  C. a wrong password: push fails saying the credentials were refused, the
#     password appears nowhere, nothing new is on the server, and git's
#     credential helper forgets the refused password;
#  D. https:// with a CA made for this run and a bearer token: without the
#     CA the push fails and says how to configure one; with
#     results.http.cainfo it works, and a fresh clone pulls the same bytes.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_remote_webdav

on_exit() {
	bash "$SERVERS/fault-proxy.sh" stop "$T/fault" 2>/dev/null || true
	bash "$SERVERS/webdav.sh" stop "$T/dav" 2>/dev/null || true
	bash "$SERVERS/webdav.sh" stop "$T/davs" 2>/dev/null || true
}

store_files() { (cd "$1" && find . -type f | sort); }

unset GIT_DIR GIT_WORK_TREE RESULTS_HTTP_TOKEN RESULTS_HTTP_USER RESULTS_HTTP_PASSWORD \
	RESULTS_CA_BUNDLE GIT_SSL_CAINFO
# A test must never wait for a password prompt.
export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false SSH_ASKPASS=/bin/false
export RESULTS_HTTP_RETRY_BASE_MS=20
SHA1=1111111111111111111111111111111111111111
SHA4=4444444444444444444444444444444444444444

remote_sessions

# --- A. http:// + basic auth from git's credential helper ---------------------
eval "$(bash "$SERVERS/webdav.sh" start "$T/dav" --user alice:wonder)"
DAV_URL=$RS_WEBDAV_URL DAV_ROOT=$RS_WEBDAV_ROOT
REMOTE="$DAV_URL/team/store"
hostport=${DAV_URL#http://}
hostport=${hostport%%/*}
git config --global credential.helper "store --file=$T/home/.git-credentials"
printf 'http://alice:wonder@%s\n' "$hostport" >"$T/home/.git-credentials"

remote_push_two "$REMOTE"
[ -n "$(find "$DAV_ROOT/store/team/store" -type f | head -n 1)" ] ||
	fail "nothing reached the WebDAV server under the prefix"
[ -z "$(find "$DAV_ROOT" -name '*.tmp-*' | head -n 1)" ] ||
	fail "temporary files left on the server: $(find "$DAV_ROOT" -name '*.tmp-*')"
grep -q '"MOVE /store/team/store/' "$T/dav/logs/access.log" || fail "puts did not go through MOVE"
grep -q '"MKCOL /store/' "$T/dav/logs/access.log" || fail "no collection was made with MKCOL"
[ -z "$(find "$T/results.git" -path '*lfs/objects*' -type f | head -n 1)" ] ||
	fail "objects went to the bare repository, not through lfs-agent"

remote_pull_two

# --- B. 503 three times, then the server recovers -----------------------------
eval "$(bash "$SERVERS/fault-proxy.sh" start "$T/fault" --target "http://$hostport" --fail 3 --status 503)"
PROXY_REMOTE="$RS_PROXY_URL/store/team/store"
printf 'http://alice:wonder@%s\n' "${RS_PROXY_URL#http://}" >>"$T/home/.git-credentials"
git -C "$T/ci" config results.remote "$PROXY_REMOTE"
remote_push_third
grep -q -- '-> 503' "$T/fault/proxy.log" || fail "the fault proxy failed nothing"
bash "$SERVERS/fault-proxy.sh" stop "$T/fault"
eval "$(bash "$SERVERS/fault-proxy.sh" start "$T/fault" --target "http://$hostport" --fail 3 --status 503)"
printf 'http://alice:wonder@%s\n' "${RS_PROXY_URL#http://}" >>"$T/home/.git-credentials"
cd "$T/dev"
git config results.remote "$RS_PROXY_URL/store/team/store"
remote_pull_three
[ "$(grep -c -- '-> 503' "$T/fault/proxy.log")" = 3 ] || fail "expected 3 injected failures on pull"
bash "$SERVERS/fault-proxy.sh" stop "$T/fault"
git -C "$T/ci" config results.remote "$REMOTE"
git config results.remote "$REMOTE"

# --- C. a wrong password: a clear error and nothing half-written -------------
store_files "$DAV_ROOT" >"$T/store.before"
PASSWORD="wrong-$RANDOM-do-not-print"
printf 'http://alice:%s@%s\n' "$PASSWORD" "$hostport" >"$T/home/.git-credentials"
cd "$T/ci"
RESULTS_RECORDED_AT=1764494300 "$RESULTS" add "$T/d.pyisession" --commit $SHA4 --trigger ci >/dev/null
got=0
GIT_TRACE=1 git push origin main >"$T/out" 2>"$T/err" || got=$?
[ "$got" != 0 ] || fail "a push with a wrong password succeeded"
grep -q "refused the username and password" "$T/err" ||
	fail "the wrong-password push does not say the credentials were refused: $(grep -i 'error\|refused' "$T/err" | tail -5)"
grep -q "$PASSWORD" "$T/out" "$T/err" && fail "the password appears in the output"
store_files "$DAV_ROOT" >"$T/store.after"
cmp -s "$T/store.before" "$T/store.after" ||
	fail "a refused push changed the server: $(diff "$T/store.before" "$T/store.after")"
grep -q "$PASSWORD" "$T/home/.git-credentials" && fail "the refused password was not rejected from the helper"
# doctor with the wrong password, then with none: the remote check fails
# (5) saying why, and the spot check of the newest runs says it could not
# run instead of calling their sessions missing ('git push' would not help).
printf 'http://alice:%s@%s\n' "$PASSWORD" "$hostport" >"$T/home/.git-credentials"
expect_status 5 "$RESULTS" doctor
grep -q "^FAIL.*remote does not answer: .*refused the username and password" "$T/out" ||
	fail "doctor, wrong password: $(cat "$T/out")"
grep -q "not on the remote" "$T/out" && fail "doctor, wrong password, calls a session missing: $(cat "$T/out")"
grep -q "^warn .*could not check the newest runs' sessions on the remote: .*refused the username and password" "$T/out" ||
	fail "doctor, wrong password, does not say what it could not check: $(cat "$T/out")"
grep -q "$PASSWORD" "$T/out" "$T/err" && fail "the password appears in doctor's output"
: >"$T/home/.git-credentials"
expect_status 5 "$RESULTS" doctor
grep -q "not on the remote" "$T/out" && fail "doctor, no password, calls a session missing: $(cat "$T/out")"
grep -q "^warn .*could not check the newest runs' sessions on the remote" "$T/out" ||
	fail "doctor, no password, does not say what it could not check: $(cat "$T/out")"
# With the right password back, the same push goes through.
printf 'http://alice:wonder@%s\n' "$hostport" >"$T/home/.git-credentials"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push after fixing the password"; }

# --- D. https:// with a CA made for this run, bearer token --------------------
eval "$(bash "$SERVERS/webdav.sh" start "$T/davs" --https --token t0k-secret)"
export RESULTS_HTTP_TOKEN=t0k-secret
git init -q --bare "$T/tls.git"
git clone -q "$T/tls.git" "$T/tls-ci" 2>/dev/null
cd "$T/tls-ci"
expect_status 0 "$RESULTS" init --remote "$RS_WEBDAV_URL/s"
RESULTS_RECORDED_AT=1764494000 "$RESULTS" add "$T/a.pyisession" --commit $SHA1 --trigger ci >/dev/null
got=0
GIT_TRACE=1 git push origin main >"$T/out" 2>"$T/err" || got=$?
[ "$got" != 0 ] || fail "a push to a server with an unknown CA succeeded"
grep -q "certificate" "$T/err" || fail "no word about the certificate: $(tail -5 "$T/err")"
grep -q "t0k-secret" "$T/out" "$T/err" && fail "the token appears in the output"
git config --global results.http.cainfo "$RS_WEBDAV_CA"
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push over https with the CA"; }
git clone -q "$T/tls.git" "$T/tls-dev" 2>/dev/null
cd "$T/tls-dev"
expect_status 0 "$RESULTS" init
git lfs pull --include='*.pyisession' --exclude= 2>"$T/pull.err" || { cat "$T/pull.err"; fail "git lfs pull over https"; }
[ "$(sums "$T/a.pyisession")" = "$(pulled_sums)" ] || fail "session pulled over https differs"

echo "ok: test_remote_webdav"
