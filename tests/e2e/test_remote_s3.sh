#!/bin/bash
# An s3:// remote end to end, against s3rver on loopback behind the
# SigV4-verifying proxy (tests/servers/s3-verify-proxy.js), through the
# real git, git-lfs and lfs-agent:
#  - results init --remote s3://bucket/prefix, results add of two generated
#    3 MB sessions, git push; a fresh clone's git lfs pull and another
#    clone's results fetch give byte-identical sessions;
#  - a server that answers 503 to the first requests, then recovers
#    (tests/servers/fault-proxy.js in front): push and pull still work;
#  - a wrong secret key: push fails with a message that says the signature
#    was refused, the secret appears nowhere, and the bucket is unchanged.
# Settings come only from the AWS_* environment, as with AWS's own tools.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_remote_s3

on_exit() {
	bash "$SERVERS/fault-proxy.sh" stop "$T/fault" 2>/dev/null || true
	bash "$SERVERS/s3-servers.sh" stop "$T/s3" 2>/dev/null || true
}

bucket_files() { (cd "$T/s3/data" && find . -type f ! -name '*.tmp' | sort); }

command -v node >/dev/null || fail "node is needed (scripts/install-deps.sh)"

# A suite whose server cannot start fails, it is never skipped: with s3rver
# missing, the server script and the S3 unit suite both exit non-zero and
# say why.
if S3RVER_BIN=/nonexistent/s3rver bash "$SERVERS/s3-servers.sh" start "$T/nos3" >/dev/null 2>"$T/nos3.err"; then
	fail "s3-servers.sh started without s3rver"
fi
grep -q "s3rver is not installed at '/nonexistent/s3rver'" "$T/nos3.err" ||
	fail "s3-servers.sh did not say s3rver is missing: $(cat "$T/nos3.err")"
if S3RVER_BIN=/nonexistent/s3rver RS_TEST_DATA="$RS_SOURCE_DIR/tests/data" \
	"$RS_BIN_DIR/tests/test_s3_remote" >"$T/nos3-unit.out" 2>&1; then
	fail "test_s3_remote passed without its servers: $(cat "$T/nos3-unit.out")"
fi
grep -q "could not start the S3 test servers" "$T/nos3-unit.out" ||
	fail "test_s3_remote did not say why it failed: $(cat "$T/nos3-unit.out")"
S3_TEST_BUCKETS=results-e2e bash "$SERVERS/s3-servers.sh" start "$T/s3" >/dev/null
# shellcheck disable=SC1091
. "$T/s3/env"

unset GIT_DIR GIT_WORK_TREE AWS_PROFILE AWS_SESSION_TOKEN AWS_REGION AWS_DEFAULT_REGION AWS_ENDPOINT_URL_S3
export AWS_ENDPOINT_URL="$S3_VERIFY_URL" AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
export RESULTS_HTTP_RETRY_BASE_MS=20
REMOTE=s3://results-e2e/team/store
remote_sessions

# --- push two sessions --------------------------------------------------------
remote_push_two "$REMOTE"
[ -n "$(find "$T/s3/data/results-e2e" -path '*team/store/*' -type f | head -n 1)" ] ||
	fail "nothing reached the bucket under the prefix"
# (The start script's unsigned readiness probe of "/" is the only refusal.)
grep -v '^GET / ' "$T/s3/s3-verify-proxy.requests" | grep -q ' 403 \| 400 ' &&
	fail "the verifying proxy refused requests of a good push: $(grep ' 40[03] ' "$T/s3/s3-verify-proxy.requests" | head -3)"
grep -q '^PUT /results-e2e/team/store/.* 200$' "$T/s3/s3-verify-proxy.requests" ||
	fail "no signed PUT went through the verifying proxy"
[ -z "$(find "$T/results.git" -path '*lfs/objects*' -type f | head -n 1)" ] ||
	fail "objects went to the bare repository, not through lfs-agent"

# --- fresh clone: git lfs pull; another clone: results fetch -------------------
remote_pull_two

# --- 503 three times, then the server recovers --------------------------------
eval "$(bash "$SERVERS/fault-proxy.sh" start "$T/fault" --target "$S3_VERIFY_URL" --fail 3 --status 503)"
export AWS_ENDPOINT_URL="$RS_PROXY_URL"
remote_push_third
grep -q '503' "$T/fault/proxy.log" || fail "the fault proxy failed nothing: $(cat "$T/fault/proxy.log")"
bash "$SERVERS/fault-proxy.sh" stop "$T/fault"
eval "$(bash "$SERVERS/fault-proxy.sh" start "$T/fault" --target "$S3_VERIFY_URL" --fail 3 --status 503)"
export AWS_ENDPOINT_URL="$RS_PROXY_URL"
cd "$T/dev"
remote_pull_three
bash "$SERVERS/fault-proxy.sh" stop "$T/fault"
export AWS_ENDPOINT_URL="$S3_VERIFY_URL"

# --- a wrong secret key: a clear error and nothing half-written ---------------
bucket_files >"$T/bucket.before"
SECRET="wrong-secret-$RANDOM-do-not-print"
remote_push_refused "$SECRET" "signature was refused\|SignatureDoesNotMatch" AWS_SECRET_ACCESS_KEY="$SECRET"
bucket_files >"$T/bucket.after"
cmp -s "$T/bucket.before" "$T/bucket.after" ||
	fail "a refused push changed the bucket: $(diff "$T/bucket.before" "$T/bucket.after")"
# ... and with a wrong key a fetch says so too, and writes nothing.
cd "$T/dev2"
git pull -q 2>/dev/null || true
got=0
AWS_SECRET_ACCESS_KEY="$SECRET" "$RESULTS" fetch 3333333 -o "$T/out-wrong" >"$T/out" 2>"$T/err" || got=$?
[ "$got" != 0 ] || fail "a fetch with a wrong key succeeded"
grep -q "signature was refused\|SignatureDoesNotMatch" "$T/err" || fail "fetch message: $(cat "$T/err")"
grep -q "$SECRET" "$T/out" "$T/err" && fail "the secret key appears in the fetch output"
[ -z "$(find "$T/out-wrong" -type f 2>/dev/null)" ] || fail "a refused fetch left a file"

# doctor with a wrong key: the remote check fails (5) and says why; the
# spot check of the newest runs could not run and says so, instead of
# calling their sessions missing.
AWS_SECRET_ACCESS_KEY="$SECRET" expect_status 5 "$RESULTS" doctor
grep -q "^FAIL.*remote does not answer" "$T/out" || fail "doctor, wrong key: $(cat "$T/out")"
grep -q "not on the remote" "$T/out" && fail "doctor, wrong key, calls a session missing: $(cat "$T/out")"
grep -q "^warn .*could not check the newest runs' sessions on the remote: .*\(signature was refused\|SignatureDoesNotMatch\)" "$T/out" ||
	fail "doctor, wrong key, does not say what it could not check and why: $(cat "$T/out")"
grep -q "$SECRET" "$T/out" "$T/err" && fail "the secret key appears in doctor's output"
# ... and without credentials at all
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$T/nocreds" "$RESULTS" doctor >"$T/out" 2>"$T/err" || true
grep -q "not on the remote" "$T/out" && fail "doctor, no credentials, calls a session missing: $(cat "$T/out")"
grep -q "^warn .*could not check the newest runs' sessions on the remote" "$T/out" ||
	fail "doctor, no credentials, does not say what it could not check: $(cat "$T/out")"
# A bucket that does not exist is a remote problem (5), not a usage error.
git config results.remote s3://no-such-bucket-e2e/team/store
expect_status 5 "$RESULTS" fetch 3333333 -o "$T/out-nobucket"
grep -q "no such bucket" "$T/err" || fail "a missing bucket is not named: $(cat "$T/err")"
[ -z "$(find "$T/out-nobucket" -type f 2>/dev/null)" ] || fail "a fetch from no bucket left a file"
git config results.remote "$REMOTE"

echo "ok: test_remote_s3"
