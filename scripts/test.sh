#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs every test: unit tests
# (cmocka), fuzz-corpus replays, and end-to-end tests against the real git,
# git-lfs and test servers on loopback (each test starts what it needs).
#
# usage: scripts/test.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:-build}
shift || true

bash scripts/install-deps.sh
# -Werror here and in CI; off by default for users and distributions.
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRS_WERROR=ON "$@"
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j2 --timeout 900
