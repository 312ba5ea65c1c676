#!/usr/bin/env bash
# Installs the dependencies of results on a Debian 12 machine. Idempotent;
# run as root (or through sudo).
#
# usage: scripts/install-deps.sh [--runtime | --build | --all]
#   --runtime  what the programs need to run (git, git-lfs, the shared
#              libraries): a profiling job that installs the .deb needs
#              no more (apt-get install ./results_*.deb pulls these in)
#   --build    runtime + compiler, -dev packages, cmocka, python3 (man
#              pages), dpkg-dev (the package's library dependencies)
#   --all      (default) build + the test servers and tools: nginx
#              (WebDAV), Ceph's radosgw (S3), chromium (HTML checks),
#              Node.js and the npm packages of tests/servers (azurite, s3rver)
set -euo pipefail

LEVEL=all
case "${1:-}" in
"" | --all) LEVEL=all ;;
--runtime) LEVEL=runtime ;;
--build) LEVEL=build ;;
-h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "install-deps.sh: unknown option '$1'; use --runtime, --build or --all" >&2; exit 2 ;;
esac

SUDO=
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
fi

# Runtime: what results, lfs-agent and the hooks run or link.
APT_PACKAGES=(
  git git-lfs ca-certificates
  libgit2-1.5 libcurl4 libssl3 libzstd1 libjansson4 libexpat1
)
# Build, unit tests and the package.
if [ "$LEVEL" != runtime ]; then
  APT_PACKAGES+=(
    build-essential cmake pkg-config zstd python3 curl
    dpkg-dev file                           # scripts/package.sh: dpkg-shlibdeps and CPack use both
    libgit2-dev libcurl4-openssl-dev libssl-dev libzstd-dev libjansson-dev libcmocka-dev
    libexpat1-dev                           # src/remote/xml.c: the XML answers of S3, Azure, WebDAV
  )
fi
# Test servers and tools (issue 4, 5).
if [ "$LEVEL" = all ]; then
  APT_PACKAGES+=(
    nginx libnginx-mod-http-dav-ext openssl   # WebDAV test server (+HTTPS with a CA made at test time)
    iproute2                                  # bench/remotes.sh: network namespace, veth, tc netem
    chromium                                  # tests/e2e/test_html.sh: headless rendering of trend/site pages (no Node.js)
    strace                                    # tests/e2e/test_results_crash.sh: kills at exact system calls
    faketime                                  # tests/e2e/test_gc_race.sh: gc runs at clocks a day apart
    jq                                        # tests/e2e/test_hostile_repo.sh: edits committed JSON
    time                                      # tests/e2e/test_codec_hostile_fetch.sh: GNU time -v, the peak RSS of fetch and git lfs pull
    bc                                        # bench/scale_history.sh (tests/e2e/test_index_shards.sh builds its histories with it), bench/*.sh figures
    cmark-gfm                                 # tests/e2e/test_hostile_text.sh: renders the Markdown as GitHub does
    ceph-mon ceph-osd radosgw ceph-common     # tests/servers/radosgw.sh: Ceph's S3 gateway on loopback (test_radosgw.sh)
  )
  # Node.js 18 (Debian 12's) or newer runs azurite and s3rver. It may come
  # from another packager (nodesource bundles npm): only install Debian's
  # when there is none.
  if ! command -v npm >/dev/null 2>&1; then
    APT_PACKAGES+=(nodejs npm)
  fi
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$LEVEL" = all ] || exit 0

# npm packages of the test servers, each folder
# pinned by its package-lock.json. `npm ci` reinstalls from scratch, which
# takes minutes for azurite, so a folder whose lock file has not changed
# since the last install is left alone.
here=$(cd "$(dirname "$0")/.." && pwd)
npm_folder() {
  local dir="$here/$1" stamp want
  [ -f "$dir/package.json" ] || return 0
  stamp="$dir/node_modules/.results-installed"
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
}
npm_folder tests/servers      # azurite (Azure Storage emulator), fault proxy
npm_folder tests/servers/s3   # s3rver, @smithy/signature-v4 (SigV4 cross-check)
npm_folder tests/tools        # @action-validator/cli (action.yml, the example workflow)
