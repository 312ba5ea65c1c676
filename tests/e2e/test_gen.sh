#!/usr/bin/env bash
# End-to-end test of tests/gen-session, the session generator every other
# end-to-end test and benchmark relies on.  It checks what the project's code
# will assume about real sessions: byte-exact pyinstrument JSON (Python's own
# json.dumps must reproduce the file), the key orders of the real 5.x and
# 4.x files in tests/data, consistent headers, determinism, and that the
# "next commit" variant and the regression modifiers change what they claim
# and nothing else.  It also bounds the realism figures (depth, prefix
# sharing, vocabulary, zstd ratio) so that a change to the generator cannot
# silently make sessions unrealistic.
set -euo pipefail

BIN=${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}/tests/gen-session
SRC=${RS_SOURCE_DIR:?set RS_SOURCE_DIR to the source root}
DATA=$SRC/tests/data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

[ -x "$BIN" ] || fail "no generator at $BIN"
command -v python3 >/dev/null || fail "python3 is needed"

# One Python checker, called with a mode; every check prints what it saw.
cat >"$T/check.py" <<'EOF'
import json, sys, re

def load(path):
    raw = open(path, 'rb').read()
    text = raw.decode('ascii')  # pyinstrument writes ASCII only
    return raw, json.loads(text)

def keys_of(path):
    return list(load(path)[1].keys())

FRAME = re.compile(r'^[^\x00\x01]+\x00[^\x00\x01]+\x00\d+(\x01c[A-Za-z_][A-Za-z0-9_]*)?(\x01l\d+)?$')

def check_valid(path, layout, ref):
    raw, d = load(path)
    # json.dumps with Python's defaults must give back the exact bytes:
    # separators, escapes, float reprs, key order, no trailing newline.
    if json.dumps(d).encode('ascii') != raw:
        sys.exit('%s: not byte-identical to json.dumps of itself' % path)
    want = keys_of(ref)
    if list(d.keys()) != want:
        sys.exit('%s: keys %s, real %s has %s' % (path, list(d.keys()), ref, want))
    fr = d['frame_records']
    if d['sample_count'] != len(fr):
        sys.exit('sample_count %d but %d records' % (d['sample_count'], len(fr)))
    total = sum(t for s, t in fr)
    if not (total <= d['duration'] <= total + 0.005 + 0.001 * total):
        sys.exit('duration %r vs sum of intervals %r' % (d['duration'], total))
    if not (0.98 * d['duration'] <= d['cpu_time'] <= d['duration']):
        sys.exit('cpu_time %r not slightly below duration %r' % (d['cpu_time'], d['duration']))
    thread = None
    for stack, t in fr:
        if not (isinstance(t, float) and 0.0005 < t < 0.1):
            sys.exit('odd interval %r' % t)
        if not re.match(r'^MainThread\x00<thread>\x00\d+$', stack[0]):
            sys.exit('first frame is not the thread: %r' % stack[0])
        thread = thread or stack[0]
        if stack[0] != thread:
            sys.exit('thread changed')
        for f in stack[1:]:
            if not FRAME.match(f):
                sys.exit('bad frame %r' % f)
            builtin = f.split('\x00')[1] == '<built-in>'
            if layout == '4.3' and '\x01' in f:
                sys.exit('4.3 layout has attributes: %r' % f)
            if layout != '4.3' and not builtin and '\x01l' not in f:
                sys.exit('frame without line attribute: %r' % f)
    scs = d['start_call_stack']
    if (thread and scs[0] != thread) or len(scs) < 2 or not scs[0].startswith('MainThread\x00<thread>\x00'):
        sys.exit('start_call_stack %r does not start with the thread' % scs)
    print('%s: %d records, keys as in %s, header consistent' % (path, len(fr), ref.split('/')[-1]))

def stats(path):
    raw, d = load(path)
    fr = d['frame_records']
    depth = sum(len(s) for s, t in fr) / len(fr)
    frames = set()
    stacks = set()
    shared = 0
    prev = []
    for s, t in fr:
        frames.update(s)
        stacks.add(tuple(s))
        k = 0
        while k < min(len(s), len(prev)) and s[k] == prev[k]:
            k += 1
        shared += k
        prev = s
    return dict(n=len(fr), depth=depth, frames=len(frames), stacks=len(stacks),
                shared=shared / max(1, len(fr) - 1))

def check_realism(path, zratio):
    st = stats(path)
    print('%s: depth %.2f, shared prefix %.2f, %d distinct frames, %.2f samples per distinct stack, zstd -3 ratio %.1f'
          % (path, st['depth'], st['shared'], st['frames'], st['n'] / st['stacks'], float(zratio)))
    # real sessions: depth ~17.5, shares 9-10, 2,700-4,500 frames (big ones),
    # 1 distinct stack per 3 samples (big ones), zstd -3 48-55x
    if not 15.5 <= st['depth'] <= 20: sys.exit('depth out of the real range')
    if not 7.5 <= st['shared'] <= 11.5: sys.exit('prefix sharing out of the real range')
    if st['frames'] < 1800: sys.exit('vocabulary too small')
    if not 1.3 <= st['n'] / st['stacks'] <= 5: sys.exit('stack repetition out of range')
    if not 38 <= float(zratio) <= 70: sys.exit('zstd ratio out of range')

def check_next(base, nxt):
    _, a = load(base)
    _, b = load(nxt)
    fa, fb = a['frame_records'], b['frame_records']
    if len(fa) != len(fb):
        sys.exit('next has %d records, base %d' % (len(fb), len(fa)))
    n = len(fa)
    same_stack = sum(1 for x, y in zip(fa, fb) if x[0] == y[0]) / n
    same_time = sum(1 for x, y in zip(fa, fb) if x[1] == y[1]) / n
    files = set()
    for x, y in zip(fa, fb):
        if x[0] != y[0]:
            if len(x[0]) != len(y[0]):
                sys.exit('a changed stack changed depth')
            for p, q in zip(x[0], y[0]):
                if p != q:
                    fp, fq = p.split('\x00'), q.split('\x00')
                    if fp[0] != fq[0] or fp[1] != fq[1]:
                        sys.exit('next changed more than line numbers: %r -> %r' % (p, q))
                    files.add(fp[1])
    print('next: %.2f%% records with a changed stack, %.2f%% with a changed time, files %s'
          % (100 * (1 - same_stack), 100 * (1 - same_time), sorted(files)))
    if not (0.80 <= same_stack < 1.0): sys.exit('next should change a few stacks, not none or most')
    if not (0.80 <= same_time < 1.0): sys.exit('next should change a few times, not none or most')
    if len(files) != 1: sys.exit('the inserted line should touch one file')

def share(path, name):
    _, d = load(path)
    fr = d['frame_records']
    inc = sum(1 for s, t in fr if any(f.startswith(name + '\x00') for f in s))
    own = sum(1 for s, t in fr if s[-1].startswith(name + '\x00'))
    return len(fr), inc / len(fr), own / len(fr)

mode = sys.argv[1]
if mode == 'valid':
    check_valid(sys.argv[2], sys.argv[3], sys.argv[4])
elif mode == 'realism':
    check_realism(sys.argv[2], sys.argv[3])
elif mode == 'next':
    check_next(sys.argv[2], sys.argv[3])
elif mode == 'share':
    n, inc, own = share(sys.argv[2], sys.argv[3])
    print('%d %.5f %.5f' % (n, inc, own))
elif mode == 'count':
    print(load(sys.argv[2])[1]['sample_count'])
EOF
py() { python3 "$T/check.py" "$@"; }

step "help and errors"
"$BIN" --help | grep -q -- "--variant" || fail "--help does not document --variant"
if "$BIN" --bogus >/dev/null 2>&1; then fail "unknown option accepted"; fi
if "$BIN" --size 12X >/dev/null 2>&1; then fail "bad size accepted"; fi
if "$BIN" --slow no_such_function:2 -o "$T/x" 2>/dev/null; then fail "--slow of an unknown function accepted"; fi

step "valid, byte-exact JSON in the three layouts, key order as in the real files"
"$BIN" --seed 7 -o "$T/m1.pyisession"
py valid "$T/m1.pyisession" 5 "$DATA/tiny_pyinstrument_5.1.2.pyisession"
"$BIN" --seed 7 --size 3M --layout 4 -o "$T/l4.pyisession"
py valid "$T/l4.pyisession" 4 "$DATA/tiny_pyinstrument_4.6.2.pyisession"
"$BIN" --seed 7 --size 3M --layout 4.3 -o "$T/l43.pyisession"
py valid "$T/l43.pyisession" 4.3 "$DATA/tiny_pyinstrument_4.3.0.pyisession"
# the real files themselves pass the same checks (the checker is not tuned
# to the generator's quirks)
py valid "$DATA/real_small_pop1k.pyisession" 5 "$DATA/tiny_pyinstrument_5.1.2.pyisession"
py valid "$DATA/tiny_pyinstrument_4.6.2.pyisession" 4 "$DATA/tiny_pyinstrument_4.6.2.pyisession"
py valid "$DATA/tiny_pyinstrument_4.3.0.pyisession" 4.3 "$DATA/tiny_pyinstrument_4.3.0.pyisession"
"$BIN" --samples 0 -o "$T/empty.pyisession"
py valid "$T/empty.pyisession" 5 "$DATA/tiny_pyinstrument_5.1.2.pyisession"
[ "$(py count "$T/empty.pyisession")" = 0 ] || fail "--samples 0"
"$BIN" --samples 123 -o "$T/s123.pyisession"
[ "$(py count "$T/s123.pyisession")" = 123 ] || fail "--samples 123"

step "--size stops at the record that crosses it"
"$BIN" --size 2M -o "$T/s2m.pyisession"
sz=$(stat -c %s "$T/s2m.pyisession")
[ "$sz" -ge 2000000 ] && [ "$sz" -le 2010000 ] || fail "--size 2M gave $sz bytes"
"$BIN" --size 2M --layout 4 -o "$T/s2m4.pyisession"
sz=$(stat -c %s "$T/s2m4.pyisession")
[ "$sz" -ge 2000000 ] && [ "$sz" -le 2010000 ] || fail "--size 2M --layout 4 gave $sz bytes"

step "determinism: same options, same bytes; another seed, other bytes"
"$BIN" --seed 7 -o "$T/m1b.pyisession"
cmp -s "$T/m1.pyisession" "$T/m1b.pyisession" || fail "same seed, different output"
"$BIN" --seed 7 | cmp -s - "$T/m1.pyisession" || fail "stdout differs from -o"
"$BIN" --seed 8 -o "$T/m8.pyisession"
if cmp -s "$T/m1.pyisession" "$T/m8.pyisession"; then fail "seeds 7 and 8 gave the same output"; fi
# --size is a prefix of a longer run with the same seed
"$BIN" --seed 7 --size 1M --layout 4 -o "$T/p1.pyisession"
"$BIN" --seed 7 --size 2M --layout 4 -o "$T/p2.pyisession"
n1=$(($(stat -c %s "$T/p1.pyisession") - 2000))
cmp -s -n "$n1" "$T/p1.pyisession" "$T/p2.pyisession" || fail "a shorter run is not a prefix of a longer one"

step "--variant next: same samples, one inserted line, a few timings"
"$BIN" --seed 7 --size 8M -o "$T/base.pyisession"
"$BIN" --seed 7 --size 8M --variant next -o "$T/next.pyisession"
if cmp -s "$T/base.pyisession" "$T/next.pyisession"; then fail "next is identical to base"; fi
py next "$T/base.pyisession" "$T/next.pyisession"
# mostly shared content: together they compress to little more than one
zb=$(zstd -q -3 --long=27 -c "$T/base.pyisession" | wc -c)
zbn=$(cat "$T/base.pyisession" "$T/next.pyisession" | zstd -q -3 --long=27 -c | wc -c)
echo "zstd --long: base $zb bytes, base+next $zbn bytes"
[ "$zbn" -lt $((zb * 13 / 10)) ] || fail "next shares too little with base"

step "realism figures on a 24 MB session"
"$BIN" --seed 3 --size 24M -o "$T/big.pyisession"
zb=$(zstd -q -3 -T1 -c "$T/big.pyisession" | wc -c)
ratio=$(python3 -c "print($(stat -c %s "$T/big.pyisession") / $zb)")
py realism "$T/big.pyisession" "$ratio"

step "regression modifiers"
"$BIN" --seed 4 --months 3 -o "$T/r_base.pyisession"
"$BIN" --list-functions >"$T/functions"
fn=$(awk '$3 ~ /^\/tmp\/model\/src\// {print $2, $3; exit}' "$T/functions")
[ -n "$fn" ] || fail "--list-functions lists no model function"
name=${fn%% *}
file=${fn#* }
module=$(basename "${file%%:*}" .py)
echo "target function: $module.$name"
# rename: the same run with one name changed, nothing else
"$BIN" --seed 4 --months 3 --rename "$module.$name:renamed_fn" -o "$T/r_ren.pyisession"
grep -q 'renamed_fn\\u0000' "$T/r_ren.pyisession" || fail "renamed function absent"
sed "s/\"renamed_fn\\\\u0000/\"$name\\\\u0000/g" "$T/r_ren.pyisession" | cmp -s - "$T/r_base.pyisession" ||
	fail "--rename changed more than the name"
# slow: the function's own time grows
read -r _ _ own0 <<<"$(py share "$T/r_base.pyisession" "$name")"
"$BIN" --seed 4 --months 3 --slow "$module.$name:3" -o "$T/r_slow.pyisession"
read -r _ _ own1 <<<"$(py share "$T/r_slow.pyisession" "$name")"
echo "own share of $name: $own0 -> $own1 with --slow 3"
python3 -c "import sys; sys.exit(not (1.8 < $own1 / $own0 < 4.5))" || fail "--slow 3 did not triple own time"
# new function: about the requested share of samples
"$BIN" --seed 4 --months 3 --new-function added_work:0.10 -o "$T/r_new.pyisession"
read -r _ inc _ <<<"$(py share "$T/r_new.pyisession" added_work)"
echo "share of samples in added_work: $inc"
python3 -c "import sys; sys.exit(not (0.07 < $inc < 0.13))" || fail "--new-function 0.10 gave $inc"
# months: work grows in proportion
"$BIN" --seed 4 --months 6 --stats "$T/r_m6.json" -o "$T/r_m6.pyisession"
python3 - "$T/r_m6.json" "$T/r_m6.pyisession" <<'EOF2' || fail "--stats"
import json, sys
st = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
assert st['simulated_months'] == 6 and st['samples'] == d['sample_count'], st
assert st['duration'] == d['duration'] and st['cpu_time'] == d['cpu_time'], st
print('stats:', st)
EOF2
c3=$(py count "$T/r_base.pyisession")
c6=$(py count "$T/r_m6.pyisession")
echo "samples: 3 months $c3, 6 months $c6"
python3 -c "import sys; sys.exit(not (1.7 < $c6 / $c3 < 2.2))" || fail "--months 6 vs 3"
# noise: different seeds and noise give different but comparable totals
"$BIN" --seed 5 --months 3 --noise 5 -o "$T/r_n5.pyisession"
py valid "$T/r_n5.pyisession" 5 "$DATA/tiny_pyinstrument_5.1.2.pyisession"
cn=$(py count "$T/r_n5.pyisession")
python3 -c "import sys; sys.exit(not (0.75 < $cn / $c3 < 1.33))" || fail "--noise 5 run too far off ($cn vs $c3)"

# run: repeats of one run (same events) differ only by timing and --noise
"$BIN" --seed 4 --months 3 --run 1 --noise 2 -o "$T/r_run1.pyisession"
"$BIN" --seed 4 --months 3 --run 2 --noise 2 -o "$T/r_run2.pyisession"
if cmp -s "$T/r_run1.pyisession" "$T/r_run2.pyisession"; then fail "--run 1 and 2 are identical"; fi
c1=$(py count "$T/r_run1.pyisession")
c2=$(py count "$T/r_run2.pyisession")
echo "repeats with --noise 2: $c3 (run 0, no noise), $c1, $c2 samples"
python3 -c "import sys; sys.exit(not (0.92 < $c1 / $c3 < 1.08 and 0.92 < $c2 / $c3 < 1.08))" || fail "--run repeats too far apart"

# load: a loaded runner stretches every sample, not the program's CPU time
# (the real loaded run in tests/data: wall/CPU 2.00 at 4% more samples)
# (py valid wants CPU time just below wall time: not so on a loaded machine)
"$BIN" --seed 4 --months 3 --load 2 -o "$T/r_load.pyisession"
python3 - "$T/r_run1.pyisession" "$T/r_load.pyisession" <<'PY' || fail "--load 2"
import json, sys
q, l = (json.load(open(p)) for p in sys.argv[1:])
ratio = l["duration"] / l["cpu_time"]
assert 1.9 < ratio < 2.1, ratio                                       # wall x2, CPU flat
assert 0.98 < l["sample_count"] / q["sample_count"] < 1.12, (l["sample_count"], q["sample_count"])
assert 1.9 < (l["duration"] / l["sample_count"]) / (q["duration"] / q["sample_count"]) < 2.1
PY
# wall noise: reruns a few % apart in wall time, CPU time within 1%
for r in 1 2 3 4 5; do
	"$BIN" --seed 4 --months 3 --run "$r" --noise 0.5 --wall-noise 3 -o "$T/r_w$r.pyisession"
done
python3 - "$T"/r_w[1-5].pyisession <<'PY' || fail "--wall-noise 3"
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
q = [r["duration"] / r["cpu_time"] for r in runs]
cpu = [r["cpu_time"] for r in runs]
assert all(1.0 <= x < 1.15 for x in q) and max(q) - min(q) > 0.01, q
assert (max(cpu) - min(cpu)) / min(cpu) < 0.03, cpu
PY

step "streaming: bounded memory and fast on 100 MB"
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f "%M %e" -o "$T/time" "$BIN" --size 100M -o /dev/null
	read -r rss secs <"$T/time"
	echo "100 MB: peak RSS ${rss} KB, ${secs} s"
	[ "$rss" -lt 65536 ] || fail "peak RSS $rss KB"
fi
echo "PASS"
