#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds and installs results, then runs
# the main job end to end on the default remote, a local folder:
#   a CI clone records two profiling runs and pushes them (the sessions go
#   through lfs-agent into a chunked, compressed store in a folder), a
#   developer clones the results repository, lists and compares the runs
#   without downloading any session, then fetches one raw session.
# Everything happens in a temporary folder (kept, and printed, at the end).
#
# usage: scripts/demo.sh [SESSION_SIZE]   (default 30M)
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
SIZE=${1:-30M}

bash scripts/install-deps.sh --build   # no test servers or browser needed here
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
cmake --install build --prefix "$SRC/_install" >/dev/null
export PATH="$SRC/_install/bin:$PATH"
GEN="$SRC/build/tests/gen-session"

W=$(mktemp -d "${TMPDIR:-/tmp}/results-demo.XXXXXX")
STORE="$W/store"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# A throwaway identity and global config, so the demo leaves yours alone.
export HOME="$W/home" GIT_CONFIG_GLOBAL="$W/home/.gitconfig"
mkdir -p "$HOME"
git config --global user.name "Demo CI"
git config --global user.email "ci@example.com"
git config --global init.defaultBranch main
git lfs install --skip-repo >/dev/null

say "a results repository and a CI clone set up with one command"
git init -q --bare "$W/results.git"
git clone -q "$W/results.git" "$W/ci" 2>/dev/null
cd "$W/ci"
results init --remote "file://$STORE"

say "two profiling runs of a simulation model ($SIZE sessions each)"
"$GEN" --seed 1 --size "$SIZE" -o "$W/run1.pyisession"
"$GEN" --seed 2 --size "$SIZE" --variant next --new-function "validate_households:0.10" -o "$W/run2.pyisession"
results add "$W/run1.pyisession" --commit 1111111111111111111111111111111111111111 --branch main --trigger nightly
results add "$W/run2.pyisession" --commit 2222222222222222222222222222222222222222 --branch main --trigger nightly
git log --oneline | head -3

say "git push: the sessions go through lfs-agent into the folder store"
git push -q origin main
raw=$(( $(stat -c %s "$W/run1.pyisession") + $(stat -c %s "$W/run2.pyisession") ))
stored=$(du -sb "$STORE" | cut -f1)
echo "raw sessions: $raw bytes; store: $stored bytes in $(find "$STORE" -type f | wc -l) files" \
     "($(python3 -c "print(f'{$raw / $stored:.0f}')")x smaller)"
find "$STORE" -type f | sed "s|$STORE/|  |" | sort | head -12

say "a developer clone: plain git clone + results init, no session downloaded"
git clone -q "$W/results.git" "$W/dev"
cd "$W/dev"
results init
echo "clone size: $(du -sh .git | cut -f1) (.git), sessions in the working tree are pointers:"
find . -name '*.pyisession' -not -path './.git/*' -exec cat {} \; -quit
results list
results compare 1111111 2222222 || true

say "fetch one raw session on demand, verified byte for byte"
fetched=$(results fetch 2222222 -o "$W/fetched" | tail -1)
echo "$fetched"
cmp "$W/run2.pyisession" "$fetched" && echo "the fetched session is identical to the recorded one"

say "done: everything is in $W"
