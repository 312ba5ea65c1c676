#!/bin/bash
# An azure:// remote end to end against azurite on loopback
# (tests/servers/azurite.sh; it checks SharedKey signatures), through the
# real git, git-lfs and lfs-agent:
#  A. azurite's development connection string as the only setting:
#     results init --remote azure://devstoreaccount1/results/team/store,
#     results add of two generated 3 MB sessions (packs above 16 KiB go as
#     block blobs of 8 KiB blocks, uploaded in parallel), git push; a fresh
#     clone's git lfs pull and another clone's results fetch give
#     byte-identical sessions;
#  B. the fault proxy answers 503 to the first requests, then forwards
#     (reached through the results.azure.endpoint override): push and pull
#     still work;
#  C. a wrong account key: push fails saying the signature was refused, the
#     key appears nowhere, and the container holds exactly what it held.
# The container is listed independently with curl and an account SAS made
# here with openssl, so the checks do not trust the backend under test.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_remote_azure

on_exit() {
	bash "$SERVERS/fault-proxy.sh" stop "$T/fault" 2>/dev/null || true
	bash "$SERVERS/azurite.sh" stop "$T/azurite" 2>/dev/null || true
}


command -v node >/dev/null || fail "node is needed (scripts/install-deps.sh)"
eval "$(bash "$SERVERS/azurite.sh" start "$T/azurite")"
ENDPOINT=$RS_AZURITE_ENDPOINT

# An account SAS (read + list) for the independent listing.
DEV_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
KEYHEX=$(printf '%s' "$DEV_KEY" | base64 -d | od -An -tx1 -v | tr -d ' \n')
SIG=$(printf 'devstoreaccount1\nrl\nb\nsco\n\n2099-01-01T00:00:00Z\n\n\n2020-10-02\n' |
	openssl dgst -sha256 -mac HMAC -macopt "hexkey:$KEYHEX" -binary | base64 |
	sed 's/+/%2B/g; s|/|%2F|g; s/=/%3D/g')
LIST_SAS="sv=2020-10-02&ss=b&srt=sco&sp=rl&se=2099-01-01T00%3A00%3A00Z&sig=$SIG"
blobs() { # names (and sizes) of every blob in container "results"
	curl -fsS "$ENDPOINT/results?restype=container&comp=list&maxresults=5000&$LIST_SAS" |
		sed 's/<Blob>/\n/g' |
		sed -n 's|^<Name>\([^<]*\)</Name>.*<Content-Length>\([0-9]*\)</Content-Length>.*|\1 \2|p' |
		sort
}

# Small blocks so that packs go through Put Block / Put Block List.
git config --global results.azure.singleputmax 16384
git config --global results.azure.blocksize 8192
unset GIT_DIR GIT_WORK_TREE AZURE_STORAGE_ACCOUNT AZURE_STORAGE_KEY AZURE_STORAGE_SAS_TOKEN
export AZURE_STORAGE_CONNECTION_STRING="$RS_AZURITE_CONNECTION_STRING"
export RESULTS_HTTP_RETRY_BASE_MS=20
REMOTE=azure://devstoreaccount1/results/team/store
remote_sessions

# --- A. push two sessions, pull them back --------------------------------------
remote_push_two "$REMOTE"
blobs >"$T/blobs.a"
grep -q '^team/store/' "$T/blobs.a" || fail "nothing reached the container under the prefix"
grep -v '^team/store/' "$T/blobs.a" && fail "blobs outside the prefix"
awk '$2 > 16384' "$T/blobs.a" | grep -q . || fail "no blob large enough to have gone as blocks"
[ -z "$(find "$T/results.git" -path '*lfs/objects*' -type f | head -n 1)" ] ||
	fail "objects went to the bare repository, not through lfs-agent"

remote_pull_two

# --- B. 503 three times, then the server recovers -----------------------------
eval "$(bash "$SERVERS/fault-proxy.sh" start "$T/fault" --target "${ENDPOINT%/devstoreaccount1}" --fail 3 --status 503)"
git config --global results.azure.endpoint "$RS_PROXY_URL/devstoreaccount1"
remote_push_third
grep -q -- '-> 503' "$T/fault/proxy.log" || fail "the fault proxy failed nothing"
bash "$SERVERS/fault-proxy.sh" stop "$T/fault"
eval "$(bash "$SERVERS/fault-proxy.sh" start "$T/fault" --target "${ENDPOINT%/devstoreaccount1}" --fail 3 --status 503)"
git config --global results.azure.endpoint "$RS_PROXY_URL/devstoreaccount1"
cd "$T/dev"
remote_pull_three
[ "$(grep -c -- '-> 503' "$T/fault/proxy.log")" = 3 ] || fail "expected 3 injected failures on pull"
bash "$SERVERS/fault-proxy.sh" stop "$T/fault"
git config --global --unset results.azure.endpoint

# --- C. a wrong account key: a clear error and nothing half-written -----------
blobs >"$T/blobs.before"
WRONG_KEY="Zm9v${DEV_KEY:4}"
remote_push_refused "$WRONG_KEY" "signature was refused - check the key" \
	AZURE_STORAGE_CONNECTION_STRING="${RS_AZURITE_CONNECTION_STRING/$DEV_KEY/$WRONG_KEY}"
blobs >"$T/blobs.after"
cmp -s "$T/blobs.before" "$T/blobs.after" ||
	fail "a refused push changed the container: $(diff "$T/blobs.before" "$T/blobs.after")"
# ... and with the right key the same push goes through.
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "push with the right key"; }
[ "$(blobs | wc -l)" -gt "$(wc -l <"$T/blobs.after")" ] || fail "the good push added no blob"

echo "ok: test_remote_azure"
