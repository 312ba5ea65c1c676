#!/bin/bash
# Benchmark of the session codec (store transform 1, docs/codec.md), on
# generated real-like sessions and the real 4 MB one. Measures, in one run:
#   ratios:  raw / container for 60-80 MB and 224 MB sessions, generated
#            and the real 78 MB run (targets 450 and 520), against zstd -3
#            -T1 of the same files measured here, with each stream's share;
#   series:  five successive runs of one program (gen-session --run 1..5),
#            each container after the first without the shared block its
#            predecessor already stored (target: less than five times one);
#   speed:   encode (parse, build, proof) and decode (rebuild + SHA-256) CPU
#            seconds, then bench/agent.sh on a 224 MB session: git push and
#            git lfs pull through lfs-agent against zstd -3 -T1 and git-lfs's
#            own file:// pull (targets 2.0x and 1.1x), the agent's peak RSS,
#            and the same for the real 78 MB run.
# Prints figures; never fails on a target (it is not a test).
#
# usage: bench/codec.sh [BUILD_DIR]      (default: build)
set -euo pipefail

BUILD=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
GEN="$BUILD/tests/gen-session"
RATIO="$BUILD/bench/codec_ratio"
T=$(mktemp -d "${TMPDIR:-/tmp}/bench_codec.XXXXXX")
trap 'rm -rf "$T"' EXIT

ratio() { python3 -c "print(f'{$1 / $2:.1f}')"; }

echo "generating sessions..."
zstd -q -d --long=27 "$HERE/../tests/data/real_medium_pop20k_2months.pyisession.zst" -o "$T/real78.pyisession"
"$GEN" --library wide --seed 42 --size 70M -o "$T/s70.pyisession"
"$GEN" --library wide --seed 43 --size 224M -o "$T/s224.pyisession"
"$GEN" --library wide --seed 44 --size 70M --names unicode --layout 4 -o "$T/s70u4.pyisession"
for run in 1 2 3 4 5; do
	"$GEN" --library wide --seed 45 --run "$run" --size 70M -o "$T/run$run.pyisession"
done

echo
echo "== ratios (raw / stored) =="
for f in real78 s70 s70u4 s224; do
	zstd -q -3 -T1 -f "$T/$f.pyisession" -o "$T/$f.zst"
	echo "$f: zstd -3 -T1 $(ratio "$(stat -c %s "$T/$f.pyisession")" "$(stat -c %s "$T/$f.zst")")"
done
CODEC_SECTIONS=1 "$RATIO" "$HERE/../tests/data/real_small_pop1k.pyisession" "$T/real78.pyisession" \
	"$T/s70.pyisession" "$T/s70u4.pyisession" "$T/s224.pyisession"
echo "targets: >= 450 for 60-80 MB, >= 520 for 200+ MB (moonshot 600)"

echo
echo "== five successive runs =="
CODEC_SERIES=1 "$RATIO" "$T"/run[1-5].pyisession | grep -E "series|run"
echo "target: the last 'x the first' below 4.6"

mv "$T/real78.pyisession" "$T/real78.keep"
rm -f "$T"/*.pyisession "$T"/*.zst
echo
echo "== push and pull of a 224 MB session through lfs-agent (bench/agent.sh) =="
"$HERE/agent.sh" "$BUILD" 224M
echo
echo "== push and pull of the real 78 MB run through lfs-agent (bench/agent.sh) =="
"$HERE/agent.sh" "$BUILD" "$T/real78.keep"
