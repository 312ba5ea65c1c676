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
  chromium                                  # tests/e2e/test_html.sh: headless rendering of trend/site pages
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

# npm test servers, pinned by tests/servers/package-lock.json.
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -f "$here/tests/servers/package.json" ]; then
  (cd "$here/tests/servers" && npm ci --no-audit --no-fund --loglevel=error)
fi
# S3 test servers (s3rver, @smithy/signature-v4), pinned by
# tests/servers/s3/package-lock.json.
if [ -f "$here/tests/servers/s3/package.json" ]; then
  (cd "$here/tests/servers/s3" && npm ci --no-audit --no-fund --loglevel=error)
fi
# Headless Chromium driver for the HTML tests (playwright-core drives
# Debian's chromium; it downloads no browser), pinned by
# tests/browser/package-lock.json.
if [ -f "$here/tests/browser/package.json" ]; then
  (cd "$here/tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
fi
