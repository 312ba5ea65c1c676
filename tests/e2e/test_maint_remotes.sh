#!/bin/bash
# The store-maintenance unit tests (tests/unit/test_maint.c: verify, the gc
# clock/mark/sweep, a push in flight rescued, gc cut off after every write,
# repair, repack) run again against a network backend: WebDAV (nginx on
# loopback). The folder remote is covered by the unit test itself.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_maint_remotes

on_exit() { bash "$SERVERS/webdav.sh" stop "$T/dav" 2>/dev/null || true; }
eval "$(bash "$SERVERS/webdav.sh" start "$T/dav")"
[ -n "${RS_WEBDAV_URL:-}" ] || fail "the WebDAV server did not start"
export RS_TEST_REMOTE_URL=$RS_WEBDAV_URL RS_TEST_REMOTE_ROOT=$RS_WEBDAV_ROOT/store
"$RS_BIN_DIR/tests/test_maint" || fail "test_maint against WebDAV"
# The tests really went through the server.
grep -q '"DELETE /store/' "$T/dav/logs/access.log" || fail "no DELETE reached the server"
grep -q '"PROPFIND /store/' "$T/dav/logs/access.log" || fail "no listing reached the server"
echo ok
