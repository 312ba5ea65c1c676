#!/usr/bin/env bash
# Builds the Debian package: a Release build of results and lfs-agent (no
# tests), with man pages and bash completion, then `cpack -G DEB`.
# Prints the path of the .deb (build-release/results_<version>_<arch>.deb).
#
# usage: scripts/package.sh [BUILD_DIR [extra cmake args...]]   (default build-release)
#   CI adds -DRS_BUILD_TESTS=ON -DRS_WERROR=ON: the whole tree must build
#   as Release without a warning (the tests install nothing).
# Needs the build dependencies (scripts/install-deps.sh --build), which
# include dpkg-dev for the package's library dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-release}
shift || true

# RS_SOURCE_TREE_RESOURCES=OFF: the installed results finds its hooks and
# template only in /usr/share/results, never in this source tree.
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DRS_BUILD_TESTS=OFF \
	-DRS_SOURCE_TREE_RESOURCES=OFF -DRS_WERROR=OFF "$@" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >/dev/null
rm -f "$BUILD"/results_*.deb
(cd "$BUILD" && cpack -G DEB >/dev/null)
deb=$(ls "$BUILD"/results_*.deb)
echo "$deb"
