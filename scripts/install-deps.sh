#!/usr/bin/env bash
# Installs every build and test dependency on a fresh Debian 12 machine.
# Idempotent; run as root (or through sudo). Helpers for test servers that
# come from npm install into tests/servers/node_modules (see that folder).
set -euo pipefail

SUDO=
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
fi

# Build and unit-test dependencies.
APT_PACKAGES=(
  build-essential cmake pkg-config git git-lfs zstd python3 ca-certificates curl
  libgit2-dev libcurl4-openssl-dev libssl-dev libzstd-dev libjansson-dev libcmocka-dev
)
# Test servers and tools (issue 4, 5): appended by the parts that need them.
APT_PACKAGES+=(
  nginx libnginx-mod-http-dav-ext openssl   # WebDAV test server (+HTTPS with a CA made at test time)
  iproute2                                  # bench/remotes.sh: network namespace, veth, tc netem
  chromium                                  # tests/e2e/test_html.sh: headless rendering of trend/site pages (no Node.js)
)
# Node.js may come from another packager (nodesource bundles npm): only
# install Debian's when there is none.
if ! command -v npm >/dev/null 2>&1; then
  APT_PACKAGES+=(nodejs npm)
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

# npm packages of the test servers and the browser tests, each folder
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
