#!/bin/bash
# verify --repair on real transform-1 sessions, on a folder store: every
# case of tests/e2e/repair_cases.sh (damage that the checksums agree
# with, parts missing on the remote, a newer writer's store and session),
# then gc. test_radosgw.sh runs the same cases against Ceph's S3 gateway.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_repair_real
. "$(dirname "$0")/repair_cases.sh"

repair_scenario folder "file://$T/store"
echo ok
