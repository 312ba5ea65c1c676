#!/usr/bin/env bash
# The S3 test server answers a PUT only once the object is in its file
# (tests/servers/s3rver-durable-put.js). s3rver 3.7.1 alone answers when it
# has read the body and writes the file afterwards, so a HEAD right after
# the PUT could see a short or empty object: test_s3_remote failed so on a
# loaded fresh Debian 12 machine. Here every file write of s3rver is slowed
# down (S3RVER_SLOW_WRITES_MS) to make that race certain; with
# S3RVER_DURABLE_PUT=0 (s3rver as it is) this test fails.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_s3rver_put

on_exit() { bash "$SERVERS/s3-servers.sh" stop "$T/s3" 2>/dev/null || true; }
S3RVER_SLOW_WRITES_MS=300 S3_TEST_BUCKETS=durable bash "$SERVERS/s3-servers.sh" start "$T/s3" >/dev/null ||
	fail "the S3 test servers did not start (scripts/install-deps.sh)"
. "$T/s3/env"

sign=(--aws-sigv4 "aws:amz:us-east-1:s3" --user "S3RVER:S3RVER" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
for size in 4000 300000; do
	head -c "$size" /dev/urandom >"$T/obj"
	curl -fsS "${sign[@]}" -T "$T/obj" "$S3RVER_URL/durable/obj-$size" >/dev/null || fail "PUT of $size bytes"
	got=$(curl -fsS "${sign[@]}" -I "$S3RVER_URL/durable/obj-$size" | tr -d '\r' |
		sed -n 's/^[Cc]ontent-[Ll]ength: //p')
	[ "$got" = "$size" ] || fail "HEAD right after a PUT of $size bytes says $got bytes"
	curl -fsS "${sign[@]}" "$S3RVER_URL/durable/obj-$size" -o "$T/back" || fail "GET of $size bytes"
	cmp "$T/obj" "$T/back" || fail "GET right after a PUT of $size bytes differs"
done
pass "a HEAD or GET right after a PUT sees the whole object, even with slow disk writes"
