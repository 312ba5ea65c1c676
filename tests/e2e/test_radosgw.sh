#!/bin/bash
# The store on a real S3 implementation: Ceph's radosgw from Debian's
# packages, a single-node cluster on loopback (tests/servers/radosgw.sh).
# Through the real git, git-lfs and lfs-agent: results init --remote
# s3://..., real sessions added and pushed, a fresh clone fetches them
# byte-identical, verify --deep, every repair case of repair_cases.sh
# (damage the checksums agree with, a pack and a manifest missing, a
# newer writer's store and session), then gc over its three runs. s3rver
# (test_remote_s3.sh) keeps covering what it covered. If the cluster
# cannot start this fails, it never skips.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_radosgw
. "$(dirname "$0")/repair_cases.sh"

on_exit() { bash "$SERVERS/radosgw.sh" stop "$T/rgw" 2>/dev/null || true; }

mkdir -p "$T/rgw"
start=$(date +%s)
RS_RGW_BUCKET=results-e2e bash "$SERVERS/radosgw.sh" start "$T/rgw" >/dev/null ||
	fail "the radosgw cluster did not start (tests/servers/radosgw.sh; Debian packages ceph-mon ceph-osd radosgw ceph-common)"
echo "radosgw up in $(($(date +%s) - start)) s"
# shellcheck disable=SC1091
. "$T/rgw/env"
[ -n "${RS_RGW_URL:-}" ] || fail "radosgw.sh wrote no URL"

unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION AWS_ENDPOINT_URL_S3
export AWS_ENDPOINT_URL="$RS_RGW_URL" AWS_ACCESS_KEY_ID="$RS_RGW_ACCESS_KEY" \
	AWS_SECRET_ACCESS_KEY="$RS_RGW_SECRET_KEY" AWS_REGION=us-east-1
export RESULTS_HTTP_RETRY_BASE_MS=20

repair_scenario radosgw "s3://$RS_RGW_BUCKET/team/store"

# It really was the gateway: its log has the store's requests, and the
# keys are in the bucket under the prefix.
"$DAMAGE" "s3://$RS_RGW_BUCKET/team/store" list objects/ | grep -q '^objects/' ||
	fail "no manifest listed in the bucket"
grep -q 'PUT /results-e2e/team/store/' "$T/rgw/log/rgw.log" ||
	fail "no PUT under the prefix reached radosgw"
echo ok
